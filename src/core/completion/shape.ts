// What a completion may look like when it reaches ghost text: one line or several by where the cursor is, cut at the
// end of its block, never repeating what follows the cursor, and never a code fence, prose or a <think> block.
import { ALL_FIM_TOKENS } from './fim';

/** One line, or several. */
export type LineMode = 'single' | 'multi';

/**
 * Single-line where the line has text after the cursor (or text before it that opens nothing); multi-line at an empty
 * line or after an opening bracket, `:` (Python, YAML) or `=>`.
 */
export function lineMode(lineBefore: string, lineAfter: string): LineMode {
  if (lineAfter.trim() !== '') return 'single';
  const t = lineBefore.trimEnd();
  return t === '' || /(?:[{([:]|=>)$/.test(t) ? 'multi' : 'single';
}

/** What shapeCompletion needs to know about where the completion goes. */
export interface ShapeContext {
  mode: LineMode;
  /** The cursor's line before the cursor. */
  lineBefore: string;
  /** Everything after the cursor that was sent (its first line is the rest of the cursor's line). */
  suffix: string;
  languageId: string;
  /** More tokens to cut at (the FIM family's, when its tokens were used). */
  stops?: readonly string[];
}

/** The most lines a multi-line completion keeps. */
export const MAX_LINES = 24;

const FENCE = /^\s*(```|~~~)/;
/** A first line that is a chat model talking, not code. */
const PROSE = /^\s*(?:sure\b|certainly\b|of course\b|here(?:'s| is| are)\b|below is\b|the (?:completed?|missing|following|rest of the) (?:code|line|function|snippet)\b|to (?:complete|fill in)\b|i(?:'ve| have| will|'ll| can)\b|okay[,.!]|you can\b|let me\b|as an ai\b)/i;
const MARKDOWN = new Set(['markdown', 'mdx', 'quarto', 'rmd']);

/**
 * The completion as ghost text may show it, or '' when nothing of it is worth showing. Drops `<think>` blocks (and
 * everything after an unclosed one), cuts at FIM tokens a server let through, takes code out of a fence and drops a
 * chat model's prose, keeps one line or the lines up to the end of the block, a blank line or the suffix's next line,
 * and never repeats what already follows the cursor.
 */
export function shapeCompletion(raw: string, ctx: ShapeContext): string {
  let text = withoutThinking(raw);
  text = cutAtStops(text, [...ALL_FIM_TOKENS, ...(ctx.stops ?? [])]);
  if (!MARKDOWN.has(ctx.languageId)) {
    const code = withoutFencesAndProse(text);
    if (code === undefined) return '';
    text = code;
  }
  text = withoutRestatedLine(text, ctx.lineBefore);
  const firstSuffixLine = ctx.suffix.split('\n', 1)[0];
  text = ctx.mode === 'single' ? text.split('\n', 1)[0] : blockOf(text, ctx);
  if (ctx.mode === 'multi' || firstSuffixLine.trim() === '') text = text.replace(/\s+$/, '');
  if (text.trim() === '') return '';
  // The model wrote out what already follows the cursor, and nothing else.
  if (ctx.suffix.trimStart().startsWith(text.trim())) return '';
  return ctx.mode === 'single' ? withoutRepeatedRest(text, ctx.lineBefore, firstSuffixLine) : text;
}

/** The text without `<think>…</think>`; an unclosed `<think>` drops the rest, a lone `</think>` what came before it. */
export function withoutThinking(text: string): string {
  let t = text.replace(/<think>[\s\S]*?<\/think>/g, '');
  const open = t.indexOf('<think>');
  if (open >= 0) t = t.slice(0, open);
  const close = t.lastIndexOf('</think>');
  if (close >= 0) t = t.slice(close + '</think>'.length);
  // The blank lines a model leaves after its thinking; the code's own indentation stays.
  return t === text ? t : t.replace(/^(?:[ \t]*\n)+/, '');
}

/** The text up to the first of `stops`. */
export function cutAtStops(text: string, stops: readonly string[]): string {
  let end = text.length;
  for (const s of stops) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i >= 0 && i < end) end = i;
  }
  return text.slice(0, end);
}

/**
 * Code without a chat model's wrapping: a reply that opens with a fence gives what is inside it; one that opens with
 * prose gives the inside of its first fence, or undefined (nothing usable) when it has none; any later fence line ends
 * the code.
 */
function withoutFencesAndProse(text: string): string | undefined {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return text;
  let start = 0;
  if (FENCE.test(lines[first])) start = first + 1;
  else if (PROSE.test(lines[first])) {
    const fence = lines.findIndex((l, i) => i > first && FENCE.test(l));
    if (fence < 0) return undefined;
    start = fence + 1;
  }
  const body = lines.slice(start);
  const end = body.findIndex((l) => FENCE.test(l));
  return (end < 0 ? body : body.slice(0, end)).join('\n');
}

/** Without a first line that only says again what the cursor's line already holds (chat models restate it). */
function withoutRestatedLine(text: string, lineBefore: string): string {
  const said = lineBefore.trim();
  if (said.length < 8) return text;
  const lead = text.trimStart();
  return lead.startsWith(said) && lead.slice(said.length).startsWith('\n') ? lead.slice(said.length + 1) : text;
}

const indentOf = (line: string) => /^[ \t]*/.exec(line)![0].length;
const CLOSER = /^\s*(?:[}\])]|end\b|fi\b|done\b|esac\b)/;

/**
 * The lines of a multi-line completion that belong to the cursor's block: up to a blank line, the suffix's next line,
 * a line that leaves the block (less indented than the cursor's line; a closing line at its indent is kept when the
 * cursor's line opened the block and the suffix does not close it already), or MAX_LINES.
 */
function blockOf(text: string, ctx: ShapeContext): string {
  const lines = text.split('\n');
  const base = indentOf(ctx.lineBefore);
  const opened = /(?:[{([:]|=>)\s*$/.test(ctx.lineBefore);
  const next = ctx.suffix.split('\n').slice(1).find((l) => l.trim() !== '')?.trim();
  const out: string[] = [];
  for (let i = 0; i < lines.length && out.length < MAX_LINES; i++) {
    const line = lines[i];
    if (line.trim() === '') {
      if (out.some((l) => l.trim() !== '')) break;
      out.push(line);
      continue;
    }
    if (i > 0 && next !== undefined && line.trim() === next && next.length > 1) break;
    // The first line continues the cursor's line: its indent is the cursor's, whatever it shows.
    const indent = i === 0 ? base : indentOf(line);
    if (i > 0 && indent < base) break;
    if (i > 0 && indent === base && opened) {
      if (CLOSER.test(line) && next !== line.trim()) out.push(line);
      break;
    }
    out.push(line);
  }
  return out.join('\n');
}

/** Closing brackets in `text` that no bracket before them in `text` opened. */
function unmatchedClosers(text: string): number {
  let depth = 0;
  let unmatched = 0;
  for (const c of text) {
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth > 0) depth--;
      else unmatched++;
    }
  }
  return unmatched;
}

/**
 * A one-line completion without the rest of the line at its end (`foo)` before `)` becomes `foo`), when that rest's
 * closing brackets are ones the completion did not open: `bar(1)` before `)` stays as it is.
 */
function withoutRepeatedRest(text: string, lineBefore: string, rest: string): string {
  const after = rest.trim();
  if (!after || !text.endsWith(after)) return text;
  const closers = unmatchedClosers(after);
  const kept = text.slice(0, text.length - after.length);
  if (closers > 0 && unmatchedClosers(text) < closers) return text;
  // What is left must still say something beyond the line.
  return kept.trim() === '' && lineBefore.trim() === '' ? '' : kept;
}
