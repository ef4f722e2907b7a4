// Incremental Markdown rendering for a streaming reply: complete blocks are rendered once, only the open tail again.
import { completeBlockEnds } from './blocks';
import { md, renderMarkdown } from './markdown';
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
    for (const end of ends) {
      this.commitBlock(tail.slice(start, end));
      start = end;
    }
    this.committed += start;
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

  private commitBlock(source: string): void {
    // If the open element already shows exactly this source, keep its nodes instead of rendering again.
    let block: HTMLElement;
    if (this.renderedOpen === source) {
      block = this.open;
      block.classList.remove('open');
      this.open = this.newBlock(true);
      block.after(this.open);
      this.renderedOpen = undefined;
    } else {
      block = this.newBlock(false);
      block.append(renderMarkdown(source, this.env));
      this.open.before(block);
    }
    this.onBlock?.(block);
  }

  private renderOpen(source: string): void {
    if (source === this.renderedOpen) return;
    this.renderedOpen = source;
    this.open.replaceChildren(source ? renderMarkdown(source, this.env) : '');
    this.onOpenRendered?.(this.open);
  }

  private newBlock(open: boolean): HTMLElement {
    const div = document.createElement('div');
    div.className = open ? 'blk open' : 'blk';
    return div;
  }
}
