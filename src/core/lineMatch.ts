// Matching a file's text line by line, as search_text does: what its worker thread runs (so this file imports nothing).

/** Lines longer than this are searched in their first MAX_LINE_CHARS characters only. */
export const MAX_LINE_CHARS = 10_000;

/** Most characters of a matching line shown: a longer line is shown around the match. */
const SNIPPET = 200;

/** A file's lines, without their line ends (`\n` or `\r\n`); a final line end makes no extra empty line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** One matching line: its number (1-based) and its text, or an excerpt around the match. */
export interface LineMatch {
  line: number;
  text: string;
}

/**
 * The lines of `text` that match `re`, at most `max`. A line longer than MAX_LINE_CHARS is searched in its first
 * MAX_LINE_CHARS characters (`longLines` counts them): a regex that is slow on long input stays bounded per line.
 */
export function matchingLines(text: string, re: RegExp, max: number): { matches: LineMatch[]; longLines: number } {
  const matches: LineMatch[] = [];
  let longLines = 0;
  const lines = splitLines(text);
  for (let i = 0; i < lines.length && matches.length < max; i++) {
    const line = lines[i];
    if (line.length > MAX_LINE_CHARS) longLines++;
    const m = re.exec(line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line);
    if (m) matches.push({ line: i + 1, text: snippet(line, m.index) });
  }
  return { matches, longLines };
}

function snippet(line: string, at: number): string {
  const trimmed = line.trim();
  if (trimmed.length <= SNIPPET) return trimmed;
  const from = Math.max(0, at - SNIPPET / 4);
  return `${from > 0 ? '…' : ''}${line.slice(from, from + SNIPPET).trim()}…`;
}
