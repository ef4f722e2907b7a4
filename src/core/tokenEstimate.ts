// Token estimates for when the server reports no usage (a cancelled or failed stream, or a server that never sends it).
//
// No tokenizer ships with Parley: a BPE table for one model family costs more than the whole bundle and is
// wrong for the others. We use OpenAI's documented rule of thumb instead: about 4 characters per token for
// English text and code, counted with a minimum of one token per word-like run so that short,
// punctuation-heavy text is not undercounted. Each message adds 4 tokens of framing and each reply 3
// (OpenAI's "tokens per message" accounting); each image counts 765 tokens, OpenAI's figure for a
// 1024x1024 image at high detail. Estimates are always marked as such.
import type { ChatMessage, Usage } from './types';

export const TOKENS_PER_MESSAGE = 4;
export const TOKENS_PER_REPLY = 3;
export const TOKENS_PER_IMAGE = 765;

/** Estimated tokens in a piece of text. */
export function estimateTokens(text: string): number {
  return text ? tokensFor(text.length, wordsIn(text)) : 0;
}

/** The word-like runs and symbols in a text: estimateTokens of text counted piece by piece is tokensFor of the sums. */
export function wordsIn(text: string): number {
  let words = 0;
  for (const _ of text.matchAll(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu)) words++;
  return words;
}

/** Estimated tokens of text with `chars` characters and `words` word-like runs (wordsIn). */
export function tokensFor(chars: number, words: number): number {
  // Words and symbols are each at least one token, but long words span several: take the blend.
  return Math.max(Math.ceil(chars / 4), Math.ceil(words * 0.75));
}

/** Estimated prompt tokens of a request's messages. */
export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  let n = TOKENS_PER_REPLY;
  for (const m of messages) {
    n += TOKENS_PER_MESSAGE;
    if (typeof m.content === 'string') n += estimateTokens(m.content);
    else if (Array.isArray(m.content)) {
      for (const p of m.content) n += p.type === 'text' ? estimateTokens(p.text) : TOKENS_PER_IMAGE;
    }
    if (m.tool_calls) for (const t of m.tool_calls) n += estimateTokens(t.function.name) + estimateTokens(t.function.arguments);
    if (m.reasoning_content) n += estimateTokens(m.reasoning_content);
  }
  return n;
}

/** An estimated usage, marked `estimated: true`. */
export function estimateUsage(messages: readonly ChatMessage[], completionText: string): Usage {
  const prompt = estimatePromptTokens(messages);
  const completion = estimateTokens(completionText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated: true };
}
