// Incremental Markdown rendering for a streaming reply: complete blocks are rendered once, only the open tail again.
import { completeBlockEnds } from './blocks';
import { codeNodes, startHighlighter } from './highlight';
import { md, renderFenceFrame, renderMarkdown, renderMarkdownBlocks } from './markdown';
import { h } from './dom';
import { requestFlush, whenIdle } from './frame';

/**
 * When the reply is updated on screen (a render of the open block, the blocks that completed meanwhile, or the new
 * lines of a streaming code block): on the next animation frame after new text arrives. The host already paces
 * the text into one delta per update worth making (src/core/deltaPacer.ts: ~8 a second in a fast stream); here
 * updates are only kept at least OPEN_INTERVAL_MS apart (below the host's 64 ms, so that its deltas are never held
 * back), and further apart when rendering is slow (OPEN_BUDGET).
 */
const OPEN_INTERVAL_MS = 40;
/** Rendering the open block may take at most 1/OPEN_BUDGET of the time (a long table re-renders less often). */
const OPEN_BUDGET = 20;
/**
 * Blocks are kept in groups of this many (.grp elements): each update lays out the reply's children again, and a
 * long reply has hundreds of blocks but only a few dozen groups (measured: half the layout time of an update, late
 * in a 20,000-token reply).
 */
const GROUP_SIZE = 16;

/**
 * An unclosed fence at the start of a block, whose info string is a plain language name. Nothing but the
 * fence rule can claim such a line (a table needs a "|", an indented code block four spaces), so the block
 * stays a code block, whatever follows, until a closing fence line.
 */
const FENCE_OPEN = /^\n*(`{3,}|~{3,})[\w+#.-]*[ \t]*\n/;
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/gm;

/**
 * If `open` (an open block) is a fence that streams as code (see FENCE_OPEN), its opening line and marker, and
 * where its complete lines end; undefined if it is not one, or if one of those lines already closes it.
 */
function unclosedFence(open: string): { opening: string; marker: string; lineEnd: number } | undefined {
  const m = FENCE_OPEN.exec(open);
  if (!m) return undefined;
  const lineEnd = open.lastIndexOf('\n') + 1;
  if (fenceCloseEnd(open.slice(m[0].length, lineEnd), m[1]) >= 0) return undefined;
  return { opening: m[0], marker: m[1], lineEnd };
}

/** Where (just past its newline) the first line in `lines` that closes a fence opened with `marker` ends, or -1. */
function fenceCloseEnd(lines: string, marker: string): number {
  FENCE_LINE.lastIndex = 0;
  for (let m = FENCE_LINE.exec(lines); m; m = FENCE_LINE.exec(lines)) {
    if (m[1][0] === marker[0] && m[1].length >= marker.length) return m.index + m[0].length + 1;
  }
  return -1;
}

/**
 * Makes `target`'s children equal to `fresh`'s (a new render of the same, grown, text), touching only what
 * differs: the nodes before the first difference stay, a text node that only grew is appended to, and an element
 * that differs only inside is patched the same way. Only then does the browser restyle and re-shape
 * just the new text, not the whole open block on every update.
 */
function patchChildren(target: Node, fresh: Node): void {
  const olds = target.childNodes;
  const news = fresh.childNodes;
  let i = 0;
  while (i < olds.length && i < news.length && olds[i].isEqualNode(news[i])) i++;
  if (i < olds.length && i < news.length) {
    const o = olds[i];
    const n = news[i];
    if (o.nodeType === Node.TEXT_NODE && n.nodeType === Node.TEXT_NODE && (n as Text).data.startsWith((o as Text).data)) {
      (o as Text).appendData((n as Text).data.slice((o as Text).data.length));
      i++;
    } else if (o instanceof Element && n instanceof Element && o.tagName === n.tagName && sameAttributes(o, n)) {
      patchChildren(o, n);
      i++;
    }
  }
  while (olds.length > i) target.lastChild!.remove();
  while (news.length > i) target.appendChild(news[i]);
}

function sameAttributes(a: Element, b: Element): boolean {
  if (a.attributes.length !== b.attributes.length) return false;
  for (const attr of a.attributes) if (b.getAttribute(attr.name) !== attr.value) return false;
  return true;
}

/** The open block while it is an unclosed code fence: its code streams in as plain text. */
interface LiveFence {
  marker: string;
  /** Offset in the open block's source up to which lines are shown in `done`. */
  shownTo: number;
  /** The complete lines so far (only ever appended to) and the partial last line. */
  done: Text;
  partial: Text;
}

/**
 * Renders one assistant reply into `el`. Text arrives with append(); work happens at most once per
 * animation frame. The trailing `.blk.open` element shows the open block, re-rendered from its source on each
 * update that changed it (only the nodes that differ are touched). When blocks complete, that element becomes
 * final where it is, holding them, and is never touched again; a new open element follows it. `.blk` elements
 * sit in `.grp` groups of GROUP_SIZE.
 */
export class MarkdownStream {
  readonly el: HTMLElement;
  /**
   * The reply so far, line endings normalised to \n (markdown-it's block maps count \n lines), in two parts: the
   * committed blocks' text, and the tail, from where the open block starts (at head.length in the reply). Only the
   * tail is ever read while the reply streams: a string built by appending is copied whole when first read, and the
   * whole reply copied on every update was 3.3 MB of garbage in a 20,000-token reply.
   */
  private head = '';
  private tail = '';
  /** A trailing \r held back until we know whether \n follows. */
  private heldCR = false;
  private renderedOpen: string | undefined;
  /** The open block's last render: its source, where its top-level blocks start, and their elements. */
  private openRender?: { source: string; starts: number[]; els: Element[] };
  private open: HTMLElement;
  private finished = false;
  /** Reference definitions seen so far, shared by every block's render. */
  private env: object = {};
  private hasReferences = false;

  /** How far the tail was looked at for complete blocks, and the block ends (in the tail) found there. */
  private scannedTo = 0;
  private ends: number[] = [];
  /** Set while the open block is an unclosed code fence (see streamFence). */
  private fence?: LiveFence;
  /**
   * The .code-block element whose code streamed in as text. Until it is committed, renders of the open block
   * move their highlighted code into it, so that the reader's <pre> (and its scroll position) stays.
   */
  private liveBlock?: HTMLElement;
  /** Offset in the reply of a block that starts with a fence but does not stream as text (it closed, or is odd). */
  private plainFenceAt = -1;
  /** performance.now() before which the reply is not updated again (see flush), and the timer waiting for then. */
  private openDueAt = 0;
  private wake: number | undefined;

  /** Called with each block element once it is final, in order; and with the open element after each render. */
  onBlock?: (el: HTMLElement) => void;
  onOpenRendered?: (el: HTMLElement) => void;

  constructor(initialText = '', streaming = true) {
    this.el = document.createElement('div');
    this.el.className = 'md';
    this.open = this.newBlock(true);
    this.el.append(this.newGroup(this.open));
    if (streaming) {
      this.append(initialText);
      this.flush(true);
    } else {
      // A finished reply (from a snapshot) renders in one go: one parse, references resolved everywhere.
      this.tail = initialText.replace(/\r\n?/g, '\n');
      this.renderOpen(this.tail);
      this.open.classList.remove('open');
      this.finished = true;
    }
  }

  get text(): string {
    return this.head + this.tail + (this.heldCR ? '\n' : '');
  }

  append(text: string): void {
    if (!text) return;
    let t = (this.heldCR ? '\r' : '') + text;
    this.heldCR = t.endsWith('\r');
    if (this.heldCR) t = t.slice(0, -1);
    this.tail += t.replace(/\r\n?/g, '\n');
    if (!this.finished) this.schedule();
  }

  /**
   * Asks for a flush on the next animation frame once the next update is due: at once, or from a timer that waits
   * for openDueAt (a frame asked for and then found too early would still cost the browser a frame).
   */
  private schedule(): void {
    if (this.wake !== undefined) return;
    // Whole milliseconds, rounded up: a timer for 0.3 ms fires at once and would find the update not yet due.
    const wait = Math.ceil(this.openDueAt - performance.now());
    if (wait <= 0) {
      requestFlush(this);
      return;
    }
    this.wake = window.setTimeout(() => {
      this.wake = undefined;
      if (!this.finished) this.schedule();
    }, wait);
  }

  /**
   * Shows whatever arrived since the last update. Called by the frame scheduler (or directly); does nothing
   * before the update is due (openDueAt) unless forced. While the open block is an unclosed code fence, its new text is appended
   * (cheap: no parsing, no highlighting of a Text node). Otherwise the open block re-renders, and
   * when rendering it is slow the next update waits longer, so that it never takes more than ~1/OPEN_BUDGET of
   * the time; blocks that completed meanwhile are committed then, from that same render.
   */
  flush(force = false): void {
    if (this.finished) return;
    const now = performance.now();
    if (!force && now < this.openDueAt) {
      this.schedule();
      return;
    }
    this.openDueAt = now + OPEN_INTERVAL_MS;
    const tail = this.tail;
    if (this.fence) {
      const closedAt = this.streamFence(tail);
      if (closedAt < 0) return;
      // The fence closed: nothing that follows can change it, so it is final now (highlighted, in the same
      // element). Committed here rather than when the next block starts, it is highlighted just once.
      this.commitFence(tail.slice(0, closedAt));
      this.streamed(this.tail, now);
      return;
    }
    this.streamed(tail, now);
  }

  /** The part of flush after fence mode: commits complete blocks and renders the open block. */
  private streamed(tail: string, now: number): void {
    // Blocks can only complete when a line does: without a new newline the last scan still holds.
    if (tail.indexOf('\n', this.scannedTo) !== -1) this.ends = completeBlockEnds(md, tail, this.env);
    this.scannedTo = tail.length;
    const ends = this.ends;
    const start = ends.length ? ends[ends.length - 1] : 0;
    if (ends.length) this.commitBlocks(tail, ends);
    // The open block now starts at head.length: an unclosed fence there streams as text.
    const open = tail.slice(start);
    if (this.head.length !== this.plainFenceAt && this.enterFence(open)) return;
    // Only the open block's own render counts: it is what repeats while the block grows.
    const before = performance.now();
    this.renderOpen(open);
    this.openDueAt = now + Math.max(OPEN_INTERVAL_MS, (performance.now() - before) * OPEN_BUDGET);
  }

  /**
   * Commits the blocks that end at `ends` (offsets in `tail`). One render of the whole tail serves both them and
   * the open block after them, unless the open block's last render already shows them. The open block's element
   * itself becomes final, holding those blocks where they were rendered; only what follows them moves on, into a
   * new open block. Moving an element makes the browser style and lay it out again, and a highlighted code block
   * has hundreds of elements.
   */
  private commitBlocks(tail: string, ends: number[]): void {
    const start = ends[ends.length - 1];
    if (!this.covers(tail.slice(0, start), ends)) {
      this.renderedOpen = undefined;
      // An open block that is about to stream as code (enterFence) gets its own frame: rendering it here as well
      // would parse its code, and ask the worker to highlight it, only to throw that away.
      this.renderOpen(unclosedFence(tail.slice(start)) ? tail.slice(0, start) : tail);
    }
    const r = this.openRender;
    const k = ends.length;
    const done = this.open;
    // What is left of that render is the render of the rest: the start of the new open block.
    const rest = r && r.source === tail && r.starts[k] === start && r.els.every((el) => el.parentNode === done) ? r.els.slice(k) : [];
    let from = 0;
    const blocks = ends.map((end, i) => {
      const block = this.finalBlock(tail, from, end, i);
      from = end;
      return block;
    });
    if (!r || !blocks.every((b, i) => b.length === 1 && b[0] === r.els[i])) {
      // A render that does not line up with the blocks (not seen with markdown-it's rules, in fuzzed streams; a
      // safety net): the final element gets exactly the blocks, each rendered on its own, in order.
      done.replaceChildren(...blocks.flat());
    } else if (!rest.length) {
      // All as rendered, and the rest of that render is out of date.
      for (const el of r.els.slice(k)) el.remove();
    }
    this.openNext(start, rest);
    if (this.liveBlock && this.liveBlock.parentNode !== this.open) this.liveBlock = undefined;
    if (rest.length) {
      this.openRender = { source: tail.slice(start), starts: r!.starts.slice(k).map((s) => s - start), els: rest };
      this.renderedOpen = tail.slice(start);
    }
  }

  /** True if the open block's last render shows `done` (the blocks about to be committed) as they are now. */
  private covers(done: string, ends: number[]): boolean {
    const r = this.openRender;
    if (!r || !r.source.startsWith(done)) return false;
    return ends.every((end, i) => r.starts[i + 1] === end);
  }

  /**
   * Starts streaming the open block as plain code if it is an unclosed fence: its frame (toolbar, <pre><code>)
   * comes from rendering the opening line, then the code goes in as Text nodes.
   */
  private enterFence(open: string): boolean {
    if (!FENCE_OPEN.test(open)) return false;
    this.plainFenceAt = this.head.length;
    const fence = unclosedFence(open);
    if (!fence) return false;
    const { opening, marker, lineEnd } = fence;
    this.openRender = undefined;
    this.renderedOpen = undefined;
    this.open.replaceChildren(renderFenceFrame(opening.replace(/^\n+/, '')));
    const block = this.open.firstElementChild;
    const code = block?.querySelector(':scope > pre > code');
    if (this.open.childElementCount !== 1 || !block?.classList.contains('code-block') || !code) return false;
    this.plainFenceAt = -1;
    const done = document.createTextNode(open.slice(opening.length, lineEnd));
    const partial = document.createTextNode(open.slice(lineEnd));
    code.replaceChildren(done, partial);
    this.fence = { marker, shownTo: lineEnd, done, partial };
    this.liveBlock = block as HTMLElement;
    return true;
  }

  /**
   * Shows the fence's new text. Returns -1, or once a closing fence line arrived (and fence mode is over),
   * the offset in `open` just past that line.
   */
  private streamFence(open: string): number {
    const f = this.fence!;
    const lineEnd = open.lastIndexOf('\n') + 1;
    if (lineEnd > f.shownTo) {
      const lines = open.slice(f.shownTo, lineEnd);
      const close = fenceCloseEnd(lines, f.marker);
      if (close >= 0) {
        // The code's last lines end where the closing line starts: the live <code> then holds all of the code.
        f.done.appendData(lines.slice(0, lines.lastIndexOf('\n', close - 2) + 1));
        f.partial.data = '';
        this.fence = undefined;
        return f.shownTo + close;
      }
      f.done.appendData(lines);
      f.shownTo = lineEnd;
    }
    const partial = open.slice(f.shownTo);
    if (f.partial.data !== partial) f.partial.data = partial;
    return -1;
  }

  /**
   * Commits `source` (the open block: a fence, through its closing line): the open block becomes final where it
   * is, its code highlighted in the same <pre>.
   */
  private commitFence(source: string): void {
    if (!this.highlightLiveBlock()) {
      const fragment = renderMarkdown(source, this.env);
      if (!this.fillLiveBlock(fragment)) this.open.replaceChildren(fragment);
    }
    this.liveBlock = undefined;
    this.openNext(source.length);
    this.scannedTo = 0;
  }

  /**
   * Highlights the code of the fence that streamed as text in place: its frame is already the rendering of its
   * opening line, and its <code> holds exactly the code (streamFence put the last lines in): nothing needs parsing.
   */
  private highlightLiveBlock(): boolean {
    const live = this.liveBlock;
    const code = live?.querySelector(':scope > pre > code');
    if (!live || live.parentNode !== this.open || this.open.childNodes.length !== 1 || !code) return false;
    code.replaceChildren(codeNodes(code.textContent ?? '', live.dataset.lang ?? ''));
    return true;
  }

  /**
   * The stream ended: the open block becomes final. When `finalText` (the host's reconciled text) differs
   * from what streamed, or a reference definition could not reach blocks above it, everything renders once more.
   */
  finish(finalText?: string): void {
    this.cancelWake();
    if (this.heldCR) {
      this.heldCR = false;
      this.tail += '\n';
    }
    const streamedText = this.head + this.tail;
    const normalised = finalText?.replace(/\r\n?/g, '\n');
    if ((normalised !== undefined && normalised !== streamedText) || this.referencesDefined()) {
      this.tail = normalised ?? streamedText;
      this.head = '';
      this.scannedTo = 0;
      this.ends = [];
      this.fence = undefined;
      this.plainFenceAt = -1;
      this.liveBlock = undefined;
      this.renderedOpen = undefined;
      this.openRender = undefined;
      this.env = {};
      this.open = this.newBlock(true);
      this.el.replaceChildren(this.newGroup(this.open));
    } else {
      this.flush(true);
    }
    // The open block becomes a plain final block; its content is already current unless the text changed
    // or it is a code fence that streamed as text.
    this.fence = undefined;
    this.renderOpen(this.tail);
    this.liveBlock = undefined;
    this.open.classList.remove('open');
    this.finished = true;
    this.onBlock?.(this.open);
  }

  /** The reply's element was thrown away (its turn replaced, or rendered anew): no more updates, no pending one. */
  dispose(): void {
    this.cancelWake();
    this.finished = true;
    this.onBlock = undefined;
    this.onOpenRendered = undefined;
  }

  private cancelWake(): void {
    window.clearTimeout(this.wake);
    this.wake = undefined;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  private referencesDefined(): boolean {
    const refs = (this.env as { references?: Record<string, unknown> }).references;
    this.hasReferences ||= !!refs && Object.keys(refs).length > 0;
    return this.hasReferences && this.head.length > 0;
  }

  /**
   * The nodes block `index` of the tail, tail[start, end), shows once final. Usually the open block's last render
   * already shows it, followed by the start of the next block: then it is that element, as it is.
   */
  private finalBlock(tail: string, start: number, end: number, index: number): Node[] {
    const r = this.openRender;
    const source = tail.slice(start, end);
    let reusable = false;
    if (r && r.els[index]?.parentNode === this.open && (index === 0 || r.starts[index] === start)) {
      if (r.starts[index + 1] === end) {
        // The render already saw the next block start: same text, same boundary, same output.
        reusable = r.source.slice(start, end) === source;
      } else if (index === r.starts.length - 1) {
        // It was the render's last block, and all that came since is blank: trailing blank lines
        // change nothing in a block's output.
        const seen = r.source.slice(start);
        reusable = seen.length > 0 && source.startsWith(seen) && !/\S/.test(source.slice(seen.length));
      }
    }
    if (reusable) return [r!.els[index]];
    return Array.from(this.adoptLiveBlock(renderMarkdown(source, this.env)).childNodes);
  }

  private renderOpen(source: string): void {
    if (source === this.renderedOpen) return;
    this.renderedOpen = source;
    if (!source) {
      this.openRender = undefined;
      this.open.replaceChildren();
    } else {
      const { fragment, starts } = renderMarkdownBlocks(source, this.env);
      this.adoptLiveBlock(fragment);
      if (this.liveBlock?.parentNode === fragment) this.open.replaceChildren(fragment);
      else patchChildren(this.open, fragment);
      const els = Array.from(this.open.children);
      this.openRender = els.length === starts.length ? { source, starts, els } : undefined;
    }
    this.onOpenRendered?.(this.open);
  }

  /**
   * If `fragment` starts with the rendering of the code block that streamed as text, puts the live element in
   * its place with the newly rendered (highlighted) code: same output, and the reader's <pre> stays.
   */
  private adoptLiveBlock(fragment: DocumentFragment): DocumentFragment {
    if (this.fillLiveBlock(fragment, false)) fragment.firstElementChild!.replaceWith(this.liveBlock!);
    return fragment;
  }

  /**
   * Moves the code of `fragment`'s first element, if it is the rendering of the code block that streamed as text,
   * into the live element (which stays where it is). With `whole`, only if that block is all the fragment holds.
   */
  private fillLiveBlock(fragment: DocumentFragment, whole = true): boolean {
    const live = this.liveBlock;
    const first = fragment.firstElementChild;
    if (!live || live.parentNode !== this.open || !first?.classList.contains('code-block')) return false;
    if (whole && (fragment.childNodes.length !== 1 || this.open.childNodes.length !== 1)) return false;
    if (first.getAttribute('data-lang') !== live.getAttribute('data-lang')) return false;
    const code = first.querySelector(':scope > pre > code');
    const liveCode = live.querySelector(':scope > pre > code');
    if (!code || !liveCode || code.className !== liveCode.className) return false;
    liveCode.replaceChildren(...code.childNodes);
    return true;
  }

  /**
   * The open block, the next `length` characters of the reply, just became final: a new one follows it, in its
   * group while that has room, starting with `rest` (what the last render showed after the final blocks).
   */
  private openNext(length: number, rest: Element[] = []): void {
    const done = this.open;
    done.classList.remove('open');
    this.open = this.newBlock(true);
    this.open.append(...rest);
    const group = done.parentElement!;
    if (group.childElementCount >= GROUP_SIZE) group.after(this.newGroup(this.open));
    else group.append(this.open);
    this.head += this.tail.slice(0, length);
    this.tail = this.tail.slice(length);
    this.scannedTo = Math.max(0, this.scannedTo - length);
    this.ends = [];
    this.openRender = undefined;
    this.renderedOpen = undefined;
    this.onBlock?.(done);
  }

  private newGroup(first: HTMLElement): HTMLElement {
    const group = document.createElement('div');
    group.className = 'grp';
    group.append(first);
    return group;
  }

  private newBlock(open: boolean): HTMLElement {
    const div = document.createElement('div');
    div.className = open ? 'blk open' : 'blk';
    return div;
  }
}

/**
 * Warms the renderer up in idle tasks once the panel shows the host's first snapshot: the highlighting worker started (it loads
 * highlight.js on its own thread), a sample rendered, then streamed through a MarkdownStream, then laid out
 * off-screen and dropped. The first reply in a page otherwise pays, in its first
 * updates, for V8 compiling markdown-it and this renderer, and for the browser's first layout of each kind of
 * element. Measured: three idle tasks of 5-20 ms at load, and the first reply's worst frame 0.67x (A/B).
 *
 * The sample uses every typeface a reply can: the text and code fonts, each upright and italic, regular and bold
 * (headings, table headers, emphasis, and highlighted comments are italic code), and bolder (strong text in a
 * heading or table header), at the heading sizes too. The browser looks a typeface up on its first layout, through
 * the browser process: seen in a trace as layouts of 4-25 ms early in the first reply, mostly waiting for that.
 */
export function warmUp(): void {
  const sample = '# Ready `now` **set** *go*\n\n## Ready `now` **set** *go*\n\n### Ready `now` **set** *go*\n\n' +
    'Some *text* with **bold**, ***both***, `code`, *`italic code`*, **`bold code`**, ***`both`*** and a ' +
    '[link](https://example.com).\n\n- one\n- two\n\n1. three\n\n> quote\n\n' +
    '| a **b** | `c` |\n|:--|--:|\n| d | `e` |\n\n```\ncode\n```\n\nEnd';
  let box: HTMLElement;
  const steps = [
    startHighlighter,
    () => renderMarkdown(sample),
    () => {
      const stream = new MarkdownStream(sample);
      stream.finish();
      stream.dispose();
      box = h('div', { class: 'warm-up', 'aria-hidden': 'true' }, stream.el);
    },
    () => {
      document.body.append(box);
      void box.offsetHeight;
      box.remove();
    },
  ];
  const next = () => whenIdle(() => {
    steps.shift()!();
    if (steps.length) next();
  }, 2000);
  next();
}
