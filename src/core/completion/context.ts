// What goes with a completion request besides the cursor's line: the text around it within a token budget, a ring
// of recent chunks of other files (as llama.vscode keeps), and how long to wait after a keystroke before asking.
import type { FimExtra } from './fim';

/** Characters per token for code, for budgets: a little under the 4 of prose (code has more symbols). */
const CHARS_PER_TOKEN = 3.5;

/** The token budget of one request's context. */
export interface ContextBudget {
  prefixTokens: number;
  suffixTokens: number;
  extraTokens: number;
}

/** Enough around the cursor for a small local model to answer fast (Continue sends 1,024 tokens in all; llama.vscode 512 + 128 lines around it, plus its ring). */
export const DEFAULT_BUDGET: ContextBudget = { prefixTokens: 1536, suffixTokens: 512, extraTokens: 1024 };

const chars = (tokens: number) => Math.floor(tokens * CHARS_PER_TOKEN);

/** The end of the text before the cursor within the budget, starting at a line's start when it had to be cut. */
export function clipPrefix(text: string, budget: ContextBudget = DEFAULT_BUDGET): string {
  const max = chars(budget.prefixTokens);
  if (text.length <= max) return text;
  const cut = text.slice(text.length - max);
  const nl = cut.indexOf('\n');
  return nl >= 0 && nl < cut.length - 1 ? cut.slice(nl + 1) : cut;
}

/** The start of the text after the cursor within the budget, ending at a line's end when it had to be cut. */
export function clipSuffix(text: string, budget: ContextBudget = DEFAULT_BUDGET): string {
  const max = chars(budget.suffixTokens);
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const nl = cut.lastIndexOf('\n');
  return nl > 0 ? cut.slice(0, nl + 1) : cut;
}

/** A chunk of a file, taken when it was edited or shown. */
export interface Chunk {
  /** The document's URI, as a string. */
  doc: string;
  /** Its path as the model sees it. */
  filename: string;
  startLine: number;
  text: string;
}

/**
 * The ring of recent chunks: newest first, at most `size`; a chunk that overlaps one of the same document by more than
 * half replaces it. Chunks are taken only from files the workspace gate lets out (the caller checks).
 */
export class ChunkRing {
  private chunks: Chunk[] = [];

  constructor(private readonly size = 16) {}

  add(c: Chunk): void {
    if (!c.text.trim()) return;
    const lines = c.text.split('\n').length;
    const overlaps = (o: Chunk) => {
      if (o.doc !== c.doc) return false;
      const oLines = o.text.split('\n').length;
      const shared = Math.min(o.startLine + oLines, c.startLine + lines) - Math.max(o.startLine, c.startLine);
      return shared > Math.min(oLines, lines) / 2;
    };
    this.chunks = [c, ...this.chunks.filter((o) => !overlaps(o))].slice(0, this.size);
  }

  /** Forgets a document's chunks (closed, renamed, or now excluded). */
  drop(doc: string): void {
    this.chunks = this.chunks.filter((c) => c.doc !== doc);
  }

  /** Chunks of other documents, newest first, within the budget; the oldest of them first in the list (nearest the cursor last). */
  pick(currentDoc: string, budget: ContextBudget = DEFAULT_BUDGET): FimExtra[] {
    let left = chars(budget.extraTokens);
    const out: FimExtra[] = [];
    for (const c of this.chunks) {
      if (c.doc === currentDoc || c.text.length > left) continue;
      left -= c.text.length;
      out.push({ filename: c.filename, text: c.text });
    }
    return out.reverse();
  }

  get length(): number {
    return this.chunks.length;
  }
}

/** The lines of a chunk around `line`: `radius` before and after it, clipped to the document. */
export function chunkAround(lines: readonly string[], line: number, radius = 32): { startLine: number; text: string } {
  const start = Math.max(0, line - radius);
  return { startLine: start, text: lines.slice(start, Math.min(lines.length, line + radius)).join('\n') };
}

/**
 * The wait after a keystroke before a request, from the person's own pace: a little longer than their usual gap
 * between keys, so that steady typing sends nothing and a pause asks at once. Between MIN and MAX.
 */
export class AdaptiveDebounce {
  static readonly MIN = 40;
  static readonly MAX = 300;
  static readonly FIRST = 120;
  private gaps: number[] = [];
  private last: number | undefined;

  /** Notes a keystroke (an edit that asks for a completion) at `now` ms. */
  keystroke(now: number): void {
    if (this.last !== undefined) {
      const gap = now - this.last;
      // A gap of seconds is a pause, not a pace.
      if (gap > 0 && gap < 1500) this.gaps = [...this.gaps, gap].slice(-9);
    }
    this.last = now;
  }

  /** How long to wait now, in ms. */
  delay(): number {
    if (this.gaps.length < 3) return AdaptiveDebounce.FIRST;
    const sorted = [...this.gaps].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    return Math.round(Math.min(AdaptiveDebounce.MAX, Math.max(AdaptiveDebounce.MIN, median * 1.2)));
  }
}
