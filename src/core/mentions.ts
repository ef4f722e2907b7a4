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

/**
 * The picker's list for a query: the special mentions that match, then files by score, those in `first` (open editors,
 * then recently mentioned) ahead of the rest at the same fit. At most `limit` entries.
 */
export function rankMentions(query: string, files: readonly string[], first: readonly string[], limit = 50): MentionCandidate[] {
  const q = query.trim();
  const specials = SPECIAL_MENTIONS.filter((m) => !q || m.label.slice(1).startsWith(q.toLowerCase()));
  const boost = new Map(first.map((p, i) => [p, first.length - i]));
  const seen = new Set<string>();
  const scored: { path: string; score: number }[] = [];
  for (const path of [...first, ...files]) {
    if (seen.has(path)) continue;
    seen.add(path);
    const s = fuzzyScore(q, path);
    if (s === undefined) continue;
    // Open and recent files come first for an empty query, and win among close matches.
    const b = boost.get(path);
    scored.push({ path, score: s + (b === undefined ? 0 : 20 + b / first.length) });
  }
  scored.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
  const files_ = scored.slice(0, Math.max(0, limit - specials.length)).map(({ path }): MentionCandidate => {
    const slash = path.lastIndexOf('/');
    return { kind: 'file', label: path.slice(slash + 1), detail: slash > 0 ? path.slice(0, slash) : '', path };
  });
  return [...specials, ...files_];
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
