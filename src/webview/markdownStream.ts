// Incremental Markdown rendering for a streaming reply: complete blocks are rendered once, only the open tail again.
import { completeBlockEnds } from './blocks';
import { md, renderMarkdown, renderMarkdownBlocks } from './markdown';
import { requestFlush } from './frame';

/**
 * Renders one assistant reply into `el`. Text arrives with append(); work happens at most once per
 * animation frame. Each complete top-level block gets its own `.blk` element that is never touched again;
 * the trailing `.blk.open` element is re-rendered from its source on each frame that changed it.
 */
export class MarkdownStream {
  readonly el: HTMLElement;
  /** The reply so far, line endings normalised to \n (markdown-it's block maps count \n lines). */
  private src = '';
  /** A trailing \r held back until we know whether \n follows. */
  private heldCR = false;
  /** Offset in src where the open (not yet complete) block starts. */
  private committed = 0;
  private renderedOpen: string | undefined;
  /** The open block's last render: its source, where its top-level blocks start, and their elements. */
  private openRender?: { source: string; starts: number[]; els: Element[] };
  private open: HTMLElement;
  private finished = false;
  /** Reference definitions seen so far, shared by every block's render. */
  private env: object = {};
  private hasReferences = false;

  /** Called with each block element once it is final, in order; and with the open element after each render. */
  onBlock?: (el: HTMLElement) => void;
  onOpenRendered?: (el: HTMLElement) => void;

  constructor(initialText = '', streaming = true) {
    this.el = document.createElement('div');
    this.el.className = 'md';
    this.open = this.newBlock(true);
    this.el.append(this.open);
    if (streaming) {
      this.append(initialText);
      this.flush();
    } else {
      // A finished reply (from a snapshot) renders in one go: one parse, references resolved everywhere.
      this.src = initialText.replace(/\r\n?/g, '\n');
      this.renderOpen(this.src);
      this.open.classList.remove('open');
      this.finished = true;
    }
  }

  get text(): string {
    return this.src + (this.heldCR ? '\n' : '');
  }

  append(text: string): void {
    if (!text) return;
    let t = (this.heldCR ? '\r' : '') + text;
    this.heldCR = t.endsWith('\r');
    if (this.heldCR) t = t.slice(0, -1);
    this.src += t.replace(/\r\n?/g, '\n');
    if (!this.finished) requestFlush(this);
  }

  /** Renders whatever changed since the last frame. Called by the frame scheduler (or directly). */
  flush(): void {
    if (this.finished) return;
    const tail = this.src.slice(this.committed);
    const ends = completeBlockEnds(md, tail, this.env);
    let start = 0;
    ends.forEach((end, i) => {
      this.commitBlock(tail, start, end, i);
      start = end;
    });
    if (start > 0) {
      this.committed += start;
      this.openRender = undefined;
      this.renderedOpen = undefined;
    }
    this.renderOpen(tail.slice(start));
  }

  /**
   * The stream ended: the open block becomes final. When `finalText` (the host's reconciled text) differs
   * from what streamed, or a reference definition could not reach blocks above it, everything renders once more.
   */
  finish(finalText?: string): void {
    if (this.heldCR) {
      this.heldCR = false;
      this.src += '\n';
    }
    const normalised = finalText?.replace(/\r\n?/g, '\n');
    if ((normalised !== undefined && normalised !== this.src) || this.referencesDefined()) {
      this.src = normalised ?? this.src;
      this.committed = 0;
      this.renderedOpen = undefined;
      this.openRender = undefined;
      this.env = {};
      this.el.replaceChildren();
      this.open = this.newBlock(true);
      this.el.append(this.open);
    } else {
      this.flush();
    }
    // The open block becomes a plain final block; its content is already current unless the text changed.
    this.renderOpen(this.src.slice(this.committed));
    this.open.classList.remove('open');
    this.finished = true;
    this.onBlock?.(this.open);
  }

  get isFinished(): boolean {
    return this.finished;
  }

  private referencesDefined(): boolean {
    const refs = (this.env as { references?: Record<string, unknown> }).references;
    this.hasReferences ||= !!refs && Object.keys(refs).length > 0;
    return this.hasReferences && this.committed > 0;
  }

  /**
   * Makes tail[start, end) (block `index` of the tail) a final block. Usually the open block's last render
   * already shows it, followed by the start of the next block: then its element moves over as it is.
   */
  private commitBlock(tail: string, start: number, end: number, index: number): void {
    const block = this.newBlock(false);
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
    if (reusable) block.append(r!.els[index]);
    else block.append(renderMarkdown(tail.slice(start, end), this.env));
    this.open.before(block);
    this.onBlock?.(block);
  }

  private renderOpen(source: string): void {
    if (source === this.renderedOpen) return;
    this.renderedOpen = source;
    if (!source) {
      this.openRender = undefined;
      this.open.replaceChildren();
    } else {
      const { fragment, starts } = renderMarkdownBlocks(source, this.env);
      const els = Array.from(fragment.children);
      this.openRender = els.length === starts.length ? { source, starts, els } : undefined;
      this.open.replaceChildren(fragment);
    }
    this.onOpenRendered?.(this.open);
  }

  private newBlock(open: boolean): HTMLElement {
    const div = document.createElement('div');
    div.className = open ? 'blk open' : 'blk';
    return div;
  }
}
