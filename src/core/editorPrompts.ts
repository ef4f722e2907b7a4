// Prompts for the editor commands (Explain Selection, Generate Code) and the parsing of JSON-mode replies.
import type { ChatMessage } from './types';
import { contextBlock } from './conversation';

/** A piece of a document sent as context. */
export interface CodeContext {
  path: string;
  language: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  code: string;
  truncated: boolean;
}

/** Cuts code to at most maxChars, at a line end when one is near. */
export function cutToLimit(code: string, maxChars: number): { code: string; truncated: boolean } {
  if (code.length <= maxChars) return { code, truncated: false };
  let cut = code.slice(0, maxChars);
  const nl = cut.lastIndexOf('\n');
  if (nl > maxChars * 0.8) cut = cut.slice(0, nl);
  return { code: cut, truncated: true };
}

/**
 * The block that encloses a line, found without a language server: upward to the nearest line
 * that opens a block (ends with `{`, `(`, `[` or `:`) with less indentation, downward to where
 * indentation returns to that level. A blank line counts at the level of the next line that is not
 * blank (a closing bracket belongs one level deeper). Returns 0-based inclusive lines, or undefined
 * when the line is not inside any block.
 */
export function enclosingBlock(lines: readonly string[], line: number): { start: number; end: number } | undefined {
  const indent = (s: string) => s.length - s.trimStart().length;
  const blank = (s: string) => s.trim().length === 0;
  if (line < 0 || line >= lines.length) return undefined;
  // A line that opens a block is its own start.
  let start = -1;
  const here = lines[line];
  if (!blank(here) && /[{([:]\s*$/.test(here)) start = line;
  else {
    const level = blank(here) ? blankLevel(lines, line, indent) : indent(here);
    for (let i = line - 1; i >= 0; i--) {
      const l = lines[i];
      if (blank(l)) continue;
      if (indent(l) < level && /[{([:]\s*$/.test(l)) {
        start = i;
        break;
      }
    }
  }
  if (start < 0) return undefined;
  const base = indent(lines[start]);
  let end = start;
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i];
    if (blank(l)) continue;
    if (indent(l) <= base) {
      // A closing bracket at the opening level belongs to the block.
      if (/^\s*[}\])]/.test(l)) end = i;
      break;
    }
    end = i;
  }
  if (end === start || line > end) return undefined;
  return { start, end };
}

/** The level a blank line sits at: that of the next line with text, one deeper if it closes a bracket. */
function blankLevel(lines: readonly string[], line: number, indent: (s: string) => number): number {
  for (let i = line + 1; i < lines.length; i++) {
    if (lines[i].trim().length === 0) continue;
    return indent(lines[i]) + (/^\s*[}\])]/.test(lines[i]) ? 1 : 0);
  }
  return 0;
}

/** The user message for Explain Selection. */
export function explainMessage(ctx: CodeContext): string {
  return `Explain the following code: what it does, how, and anything surprising or risky.\n\n${contextBlock(ctx)}`;
}

/** The system message for Generate Code. It says "JSON", which OpenAI requires with json_object. */
export const GENERATE_SYSTEM_PROMPT =
  'You write code for a VS Code user. Reply with a single JSON object and nothing else, of this shape: ' +
  '{"language": "<VS Code language id>", "filename": "<suggested file name>", "code": "<the whole file>"}. ' +
  'The code value holds the complete file content as a JSON string, with no Markdown fences.';

/** Messages for Generate Code: the JSON instruction, then the description with optional context. */
export function generateMessages(description: string, ctx?: CodeContext): ChatMessage[] {
  const user = ctx ? `${description}\n\nContext from the editor:\n\n${contextBlock(ctx)}` : description;
  return [
    { role: 'system', content: GENERATE_SYSTEM_PROMPT },
    { role: 'user', content: user },
  ];
}

export interface GeneratedCode {
  language: string;
  filename: string;
  code: string;
}

/**
 * The first complete JSON object in text: the whole text when it parses, else the first balanced
 * `{…}` (string-aware) that parses. Models without JSON mode wrap it in prose or fences.
 */
export function firstJsonObject(text: string): unknown {
  const trimmed = text.trim();
  try {
    const v = JSON.parse(trimmed);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    // fall through to scanning
  }
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        try {
          return JSON.parse(text.slice(start, i + 1));
        } catch {
          break;
        }
      }
    }
  }
  return undefined;
}

/** Parses a Generate Code reply, or says in words what is wrong with it. */
export function parseGenerated(text: string): { ok: true; value: GeneratedCode } | { ok: false; reason: string } {
  const v = firstJsonObject(text);
  if (v === undefined || typeof v !== 'object' || v === null) return { ok: false, reason: 'The reply is not valid JSON.' };
  const o = v as Record<string, unknown>;
  if (typeof o.code !== 'string') return { ok: false, reason: 'The reply is JSON but has no "code" string.' };
  const language = typeof o.language === 'string' && /^[\w.+#-]{1,64}$/.test(o.language) ? o.language : 'plaintext';
  // Keep only a plain file name: a model must not choose where a file is saved.
  const filename = typeof o.filename === 'string' ? (o.filename.split(/[\\/]/).pop() ?? '').replace(/[^\w.+-]/g, '_').slice(0, 128) : '';
  return { ok: true, value: { language, filename, code: o.code } };
}
