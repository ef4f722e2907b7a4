// The workspace tools' pure parts: argument checks, binary detection, budgets and the text the model receives.
import { splitLines } from './lineMatch';
import { escapeRegExp } from './redact';
import { ToolError } from './toolPaths';

/** A tool's arguments as the model sent them, parsed from JSON. */
export type ToolArgs = Record<string, unknown>;

/** A required string argument (trimmed). Throws ToolError naming the tool and what is expected. */
export function requiredString(tool: string, args: ToolArgs, key: string, what: string): string {
  const v = args[key];
  if (typeof v !== 'string' || !v.trim()) throw new ToolError(`${tool}: "${key}" is required: ${what}.`);
  return v.trim();
}

/** An optional string argument; undefined when absent, null or blank. */
export function optionalString(tool: string, args: ToolArgs, key: string, what: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new ToolError(`${tool}: "${key}" must be a string: ${what}.`);
  return v.trim() || undefined;
}

/** An optional integer argument within [min, max]; numeric strings ("12") are accepted, as some models send them. */
export function optionalInt(tool: string, args: ToolArgs, key: string, min: number, max: number): number | undefined {
  let v = args[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) v = Number(v);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ToolError(`${tool}: "${key}" must be an integer from ${min} to ${max} (got ${JSON.stringify(v)}).`);
  }
  return v;
}

/** An optional boolean argument; "true" and "false" as strings are accepted. */
export function optionalBool(tool: string, args: ToolArgs, key: string): boolean | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (v === 'true' || v === 'false') return v === 'true';
  if (typeof v !== 'boolean') throw new ToolError(`${tool}: "${key}" must be true or false (got ${JSON.stringify(v)}).`);
  return v;
}

/** Binary by git's rule: a NUL byte in the first 8000 bytes. */
export function looksBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

/** Bytes as text: UTF-8 (a BOM dropped), invalid sequences replaced. */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(bytes);
}

/**
 * The text of read_file: a header line naming the range, then the lines as they are. Cut at a line end to stay within
 * `budget` characters, with a note saying where it stopped and which startLine reads on.
 */
export function fileExcerpt(shown: string, text: string, budget: number, startLine?: number, endLine?: number): string {
  const lines = splitLines(text);
  const total = lines.length;
  if (total === 0) return `${shown}: (empty file)`;
  const start = startLine ?? 1;
  if (start > total) throw new ToolError(`read_file: startLine ${start} is past the end of ${shown} (${total} lines).`);
  const end = Math.min(endLine ?? total, total);
  if (end < start) throw new ToolError(`read_file: endLine ${end} is before startLine ${start}.`);
  const room = Math.max(1, budget - 400);
  const out: string[] = [];
  let used = 0;
  let last = start - 1;
  for (let i = start - 1; i < end; i++) {
    if (used + lines[i].length + 1 > room) break;
    out.push(lines[i]);
    used += lines[i].length + 1;
    last = i + 1;
  }
  if (last === start - 1) {
    // A single line longer than the whole budget: show its start, so the model is not left with nothing.
    const head = lines[start - 1].slice(0, room);
    return `${shown}: line ${start} of ${total}, cut after ${head.length} of ${lines[start - 1].length} characters (parley.tools.maxResultChars is ${budget}):\n${head}\n[Cut: line ${start} is too long to show whole.${start < total ? ` Read on with startLine ${start + 1}.` : ''}]`;
  }
  const header = `${shown}: lines ${start}–${last} of ${total}`;
  if (last >= end) return `${header}\n${out.join('\n')}`;
  return `${header}\n${out.join('\n')}\n[Cut at line ${last} to stay within ${budget} characters (parley.tools.maxResultChars). Read the rest with startLine ${last + 1}${endLine ? ` and endLine ${end}` : ''}.]`;
}

/** Joins result lines, stopping before `budget` characters; says how many were left out and why. */
export function cappedList(lines: readonly string[], budget: number, more: string): string {
  const room = Math.max(1, budget - 300);
  let used = 0;
  let n = 0;
  for (; n < lines.length; n++) {
    if (used + lines[n].length + 1 > room) break;
    used += lines[n].length + 1;
  }
  if (n === lines.length) return lines.join('\n');
  return `${lines.slice(0, n).join('\n')}\n[Cut: ${lines.length - n} more lines not shown, to stay within ${budget} characters (parley.tools.maxResultChars). ${more}]`;
}

/** The search_text query as a RegExp: a literal (escaped) or the model's regex. A bad regex is a ToolError. */
export function compileQuery(query: string, isRegex: boolean, caseSensitive: boolean): RegExp {
  const source = isRegex ? query : escapeRegExp(query);
  try {
    return new RegExp(source, caseSensitive ? '' : 'i');
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new ToolError(`search_text: the query is not a valid regular expression (${why}). Fix it, or set isRegex to false to search for the text literally.`);
  }
}
