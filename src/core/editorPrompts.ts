// Prompts for the editor commands (Explain Selection, Generate Code); their JSON replies are parsed in generatedCode.ts.
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
