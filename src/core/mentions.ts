// `@` mentions, the host's pure part: how files rank for a query, and one budget for all the attached context.
import type { ContextItem } from './conversation';
import { cutToLimit } from './editorPrompts';
import type { MentionCandidate, MentionKind } from '../shared/protocol';

/** The mentions that are not files, with what each sends. */
export const SPECIAL_MENTIONS: readonly MentionCandidate[] = [
  { kind: 'selection', label: '@selection', detail: 'The selected code in the editor, as it is when you send' },
  { kind: 'problems', label: '@problems', detail: "The current file's problems (errors, warnings)" },
  { kind: 'open', label: '@open', detail: 'The files open in editors' },
];

/**
 * How well `query` matches `path` as a subsequence, ignoring case (higher is better), or undefined when it does not.
 * Written by hand: a few lines, where a fuzzy-search library would cost bundle size for nothing we need. Letters at
 * the start of a name or a word, runs of letters in a row and matches in the file name count most; shorter paths win ties.
 */
export function fuzzyScore(query: string, path: string): number | undefined {
  const q = query.toLowerCase();
  const p = path.toLowerCase();
  if (!q) return 0;
  const nameStart = p.lastIndexOf('/') + 1;
  let score = 0;
  let from = 0;
  let previous = -2;
  for (const ch of q) {
    const i = p.indexOf(ch, from);
    if (i < 0) return undefined;
    let s = 1;
    if (i === previous + 1) s += 5;
    if (i === 0 || /[/._\-\s]/.test(p[i - 1]) || (path[i] !== p[i] && path[i - 1] === p[i - 1])) s += 3;
    if (i >= nameStart) s += 2;
    score += s;
    previous = i;
    from = i + 1;
  }
  // The whole query in the file name, as typed: what a person usually means.
  if (p.slice(nameStart).includes(q)) score += 10;
  return score - path.length / 100;
}

/** A file that fits a query, and how well. */
interface Scored {
  path: string;
  score: number;
}

/** Better fit first; at the same fit, by path (a total order, so the best `limit` are the same however they arrive). */
function better(a: Scored, b: Scored): number {
  return b.score - a.score || a.path.localeCompare(b.path);
}

/** Keeps the best `limit` of what it is offered, in order: the picker shows a few of possibly 100,000 files. */
class Best {
  readonly kept: Scored[] = [];
  constructor(private readonly limit: number) {}
  offer(s: Scored): void {
    const k = this.kept;
    if (this.limit <= 0 || (k.length >= this.limit && better(s, k[k.length - 1]) >= 0)) return;
    // A path offered twice (an open file is also in the listing) is kept once.
    if (k.some((x) => x.path === s.path)) return;
    let i = k.length;
    while (i > 0 && better(s, k[i - 1]) < 0) i--;
    k.splice(i, 0, s);
    if (k.length > this.limit) k.pop();
  }
}

/** The ranking of one query: the special mentions that match, then files offered to it in any number of slices. */
class Ranking {
  readonly specials: MentionCandidate[];
  private readonly q: string;
  private readonly boost: Map<string, number>;
  private readonly best: Best;

  constructor(query: string, private readonly first: readonly string[], limit: number) {
    this.q = query.trim();
    this.specials = SPECIAL_MENTIONS.filter((m) => !this.q || m.label.slice(1).startsWith(this.q.toLowerCase()));
    this.boost = new Map(first.map((p, i) => [p, first.length - i]));
    this.best = new Best(Math.max(0, limit - this.specials.length));
    this.offer(first, 0, first.length);
  }

  offer(files: readonly string[], from: number, to: number): void {
    for (let i = from; i < to; i++) {
      const path = files[i];
      const s = fuzzyScore(this.q, path);
      if (s === undefined) continue;
      // Open and recent files come first for an empty query, and win among close matches.
      const b = this.boost.get(path);
      this.best.offer({ path, score: s + (b === undefined ? 0 : 20 + b / this.first.length) });
    }
  }

  result(): MentionCandidate[] {
    const files = this.best.kept.map(({ path }): MentionCandidate => {
      const slash = path.lastIndexOf('/');
      return { kind: 'file', label: path.slice(slash + 1), detail: slash > 0 ? path.slice(0, slash) : '', path };
    });
    return [...this.specials, ...files];
  }
}

/**
 * The picker's list for a query: the special mentions that match, then files by score, those in `first` (open editors,
 * then recently mentioned) ahead of the rest at the same fit. At most `limit` entries.
 */
export function rankMentions(query: string, files: readonly string[], first: readonly string[], limit = 50): MentionCandidate[] {
  const r = new Ranking(query, first, limit);
  r.offer(files, 0, files.length);
  return r.result();
}

/** Files scored between two pauses of rankMentionsInSlices: a few milliseconds of work. */
export const RANK_SLICE = 2000;

/**
 * rankMentions over a list of any length without holding the thread: scores `slice` files at a time and lets other
 * work run between slices. Gives up, returning undefined, as soon as `dropped()` says a newer query has come.
 */
export async function rankMentionsInSlices(
  query: string, files: readonly string[], first: readonly string[], limit: number, dropped: () => boolean, slice = RANK_SLICE,
): Promise<MentionCandidate[] | undefined> {
  const r = new Ranking(query, first, limit);
  for (let from = 0; from < files.length; from += slice) {
    if (from > 0) await new Promise((resolve) => setTimeout(resolve, 0));
    if (dropped()) return undefined;
    r.offer(files, from, Math.min(files.length, from + slice));
  }
  return dropped() ? undefined : r.result();
}

/**
 * The workspace's file list for the picker, listed once and kept until the files change (a watcher calls markStale),
 * so a keystroke ranks a kept list instead of listing 100,000 files again. A use after a change waits for a new
 * listing: a file just made is always found. Listings never overlap: one asked for while another runs starts after it.
 */
export class FileListCache {
  private changes = 0;
  private kept: { key: string; changes: number; files: readonly string[] } | undefined;
  private pending: { key: string; changes: number; files: Promise<readonly string[]> } | undefined;
  private last: Promise<unknown> = Promise.resolve();

  /** The files changed: the next use lists them again. */
  markStale(): void {
    this.changes++;
  }

  /**
   * The files for `key` (which names the folders and excludes) as they are since the last change: the kept list, else
   * the listing under way, else a new one made by `list`. A listing that fails gives an empty list, and the next use lists again.
   */
  get(key: string, list: () => Promise<readonly string[]>): Promise<readonly string[]> {
    const changes = this.changes;
    if (this.kept?.key === key && this.kept.changes === changes) return Promise.resolve(this.kept.files);
    if (this.pending?.key === key && this.pending.changes === changes) return this.pending.files;
    const files = this.last.then(list).then((listed) => {
      // Kept only when nothing changed since it started: a later change needs a listing of its own.
      if (this.changes === changes) this.kept = { key, changes, files: listed };
      return listed;
    }, () => {
      if (this.pending?.files === files) this.pending = undefined;
      return [] as readonly string[];
    });
    this.pending = { key, changes, files };
    this.last = files;
    return files;
  }
}

/** The file extensions a mention attaches as an image rather than as text. */
export function isImagePath(path: string): boolean {
  return /\.(png|jpe?g|gif|webp)$/i.test(path);
}

/**
 * Cuts the attached context to `maxChars` in all: items keep their order, the first ones whole, the one that crosses
 * the limit cut at a line end, those after it empty (marked cut). Returns the items and the paths that were cut.
 */
export function applyContextBudget(items: readonly ContextItem[], maxChars: number): { items: ContextItem[]; cut: string[] } {
  let left = maxChars;
  const cut: string[] = [];
  const out = items.map((item) => {
    const { code, truncated } = cutToLimit(item.code, Math.max(0, left));
    // Once one is cut, the rest is too: a later small file never slips into the room a line end left.
    left = truncated ? 0 : left - code.length;
    if (truncated && !item.truncated) cut.push(item.path);
    return truncated ? { ...item, code, truncated: true } : item;
  });
  return { items: out, cut };
}

/** The line that tells the reader context was cut, for the user turn. */
export function budgetNote(cut: readonly string[], maxChars: number): string {
  const what = cut.length <= 3 ? cut.join(', ') : `${cut.slice(0, 3).join(', ')} and ${cut.length - 3} more`;
  return `Attached context cut to ${maxChars.toLocaleString('en-US')} characters (parley.maxContextChars): ${what}`;
}

/** What a chip that waits to be read says in the composer: its path, or `@selection`, `@problems`, `@open`. */
export function mentionLabel(kind: MentionKind, path: string): string {
  return kind === 'file' ? path : `@${kind}`;
}
