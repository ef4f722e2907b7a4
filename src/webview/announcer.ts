// Feeds a polite live region with sentence-sized pieces of a streaming reply, never per token.

const KEEP = 4;

/** Text of a rendered block as it should be spoken; code blocks are named, not read out. */
export function speakable(node: Node, insideOpenBlock: boolean): string {
  if (node.nodeType === Node.TEXT_NODE) return (node as Text).data;
  if (node instanceof HTMLElement && node.classList.contains('code-block')) {
    if (insideOpenBlock) return '';
    const lang = node.dataset.lang;
    return `\n${lang ? `${lang} code block` : 'Code block'}.\n`;
  }
  // Most blocks hold no code block: their text is what the browser already has, without a walk in script.
  if (node instanceof Element && !node.querySelector('.code-block')) return node.textContent ?? '';
  let out = '';
  for (const child of node.childNodes) out += speakable(child, insideOpenBlock);
  return out;
}

/** Index just past the last sentence end in `text` at or after `from`, or -1. */
function lastSentenceEnd(text: string, from: number): number {
  const re = /[.!?…:;](?=\s)|\n/g;
  re.lastIndex = from;
  let end = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) end = m.index + 1;
  return end;
}

/**
 * One per panel. The streaming reply reports its open block after each render and each block once it is
 * final; only completed sentences are spoken, so a screen reader hears whole sentences at reading pace.
 */
export class Announcer {
  readonly el: HTMLElement;
  /** How much of the current open block's speakable text was already announced. */
  private spokenInOpen = 0;

  constructor() {
    this.el = document.createElement('div');
    this.el.className = 'sr-only';
    this.el.setAttribute('aria-live', 'polite');
    this.el.setAttribute('aria-atomic', 'false');
  }

  /** A new reply starts. */
  reset(): void {
    this.spokenInOpen = 0;
  }

  /** The open block was re-rendered: speak any sentences it completed. */
  openRendered(el: HTMLElement): void {
    // The open block's final newline is markup, not the end of a sentence.
    const text = speakable(el, true).trimEnd();
    if (text.length < this.spokenInOpen) this.spokenInOpen = 0;
    const end = lastSentenceEnd(text, this.spokenInOpen);
    if (end > this.spokenInOpen) {
      this.say(text.slice(this.spokenInOpen, end));
      this.spokenInOpen = end;
    }
  }

  /** A block became final: speak what the open block had not yet said of it. */
  blockDone(el: HTMLElement): void {
    const text = speakable(el, false);
    const spoken = Math.min(this.spokenInOpen, text.length);
    this.spokenInOpen -= spoken;
    this.say(text.slice(spoken));
  }

  /** Speaks a short status ("Reply stopped"). */
  say(text: string): void {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (!clean) return;
    const p = document.createElement('p');
    p.textContent = clean;
    this.el.append(p);
    while (this.el.childElementCount > KEEP) this.el.firstElementChild?.remove();
  }
}
