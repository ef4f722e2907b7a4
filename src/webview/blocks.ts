// Finds where complete top-level Markdown blocks end in a reply that is still streaming.
// Written by hand: markdown-it parses whole documents and has no notion of "this block can no longer change".
import type MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

/**
 * Offsets (into `src`) where each complete top-level block ends. A block is complete when a later
 * top-level block has started on a complete line: only then can no further text change it (a partial
 * line like "2" could still turn into "2. item" and join the list above). The last block is never complete
 * here; the caller finishes it when the stream ends. `env` collects reference definitions across calls.
 */
export function completeBlockEnds(md: MarkdownIt, src: string, env: object): number[] {
  const lastNewline = src.lastIndexOf('\n');
  if (lastNewline < 0) return [];
  const complete = src.slice(0, lastNewline + 1);
  const tokens: Token[] = [];
  // Block-level parse only: inline parsing is wasted work for finding boundaries.
  md.block.parse(complete, md, env, tokens);
  const startLines: number[] = [];
  for (const t of tokens) {
    if (t.level === 0 && t.nesting !== -1 && t.map) startLines.push(t.map[0]);
  }
  if (startLines.length < 2) return [];
  const lineStarts = lineOffsets(complete, startLines[startLines.length - 1]);
  return startLines.slice(1).map((line) => lineStarts[line]);
}

/** Char offset of the start of each line, up to and including line `upTo`. */
function lineOffsets(text: string, upTo: number): number[] {
  const starts = [0];
  let i = 0;
  while (starts.length <= upTo) {
    i = text.indexOf('\n', i) + 1;
    if (i === 0) break;
    starts.push(i);
  }
  return starts;
}
