// Incremental Markdown rendering for a streaming reply: complete blocks are rendered once, only the open tail again.
import { completeBlockEnds } from './blocks';
import { md, renderMarkdown, renderMarkdownBlocks } from './markdown';
import { requestFlush } from './frame';

/** Shortest time between two renders of the open block: ~30 updates a second read as smooth streaming. */
const OPEN_INTERVAL_MS = 32;
/** The open block may take at most 1/OPEN_BUDGET of the time (a long code block re-renders less often). */
const OPEN_BUDGET = 20;

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

  /** How far src was looked at for complete blocks. */
  private scannedTo = 0;
  /** performance.now() before which the open block is not rendered again (see flush). */
  private openDueAt = 0;

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
      this.flush(true);
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

  /**
   * Renders whatever changed since the last frame. Called by the frame scheduler (or directly). Complete
   * blocks are committed at once; the open block re-renders at most every OPEN_INTERVAL_MS, and less often
   * when rendering it is slow (a long code block), so that it never takes more than ~1/OPEN_BUDGET of the time.
   */
  flush(force = false): void {
    if (this.finished) return;
    const tail = this.src.slice(this.committed);
    // Blocks can only complete when a line does: without a new newline there is nothing to look for.
    const newLine = this.src.indexOf('\n', this.scannedTo) !== -1;
    this.scannedTo = this.src.length;
    const ends = newLine ? completeBlockEnds(md, tail, this.env) : [];
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
    const now = performance.now();
    // After a commit the open element still shows the committed text: it must render now.
    if (force || start > 0 || now >= this.openDueAt) {
      this.renderOpen(tail.slice(start));
      const took = performance.now() - now;
      this.openDueAt = now + Math.max(OPEN_INTERVAL_MS, took * OPEN_BUDGET);
    } else if (tail.slice(start) !== this.renderedOpen) {
      requestFlush(this);
    }
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
      this.scannedTo = 0;
      this.renderedOpen = undefined;
      this.openRender = undefined;
      this.env = {};
      this.el.replaceChildren();
      this.open = this.newBlock(true);
      this.el.append(this.open);
    } else {
      this.flush(true);
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
