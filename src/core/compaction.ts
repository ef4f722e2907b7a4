// Compaction: which older turns to summarize, the request that asks the model for the summary, and the summary turn.
import { isSummary, lastSummaryIndex, toMessages, userTurnText, type Turn } from './conversation';
import { DEFAULT_CONTEXT_TOKENS, type WindowInfo } from './contextWindow';
import { estimatePromptTokens, estimateTokens } from './tokenEstimate';
import type { ChatMessage } from './types';

/** What to summarize, and the index of the first turn kept verbatim (where the summary turn goes). */
export interface CompactionPlan {
  summarize: Turn[];
  keepFrom: number;
}

/**
 * Compaction aims well below the point where it starts, so that one compaction buys several turns: the summary and
 * the turns kept word for word take at most half of what the conversation has (the prompt's room up to the threshold,
 * less `fixed`: the system prompt and the tool definitions), a quarter each. Returns that quarter in tokens, or
 * undefined with the window unknown.
 */
export function compactionBudget(w: WindowInfo, threshold: number, fixed: number): number | undefined {
  if (w.window === undefined) return undefined;
  const room = w.window - w.reserve;
  const limit = threshold > 0 ? Math.min(room, Math.floor((w.window * threshold) / 100)) : room;
  return Math.max(0, Math.floor((limit - fixed) / 4));
}

/** The estimated tokens of turns as they are sent. */
function sentTokens(turns: readonly Turn[]): number {
  return estimatePromptTokens(toMessages('', turns, { sendReasoningBack: false }));
}

/**
 * Keeps the last `keepTurns` questions, each with everything after it (its reply, its tool steps), and summarizes the
 * turns before them, back to and including the last summary, so the new summary supersedes it. With `keepTokens`,
 * fewer are kept when those would take more (always the last question). A streaming turn and its question are always
 * kept. Undefined when no older question is left to summarize.
 *
 * Insert the summary turn at `keepFrom`: toMessages sends only what follows the last summary.
 */
export function planCompaction(turns: readonly Turn[], keepTurns: number, keepTokens?: number): CompactionPlan | undefined {
  const start = Math.max(0, lastSummaryIndex(turns));
  const questions: number[] = [];
  for (let i = start; i < turns.length; i++) if (turns[i].role === 'user') questions.push(i);
  let keep = Number.isFinite(keepTurns) ? Math.max(0, Math.min(questions.length, Math.floor(keepTurns))) : 0;
  while (keepTokens !== undefined && keep > 1 && sentTokens(turns.slice(questions[questions.length - keep])) > keepTokens) keep--;
  let keepFrom = keep === 0 ? turns.length : questions[questions.length - keep] ?? start;
  const streaming = turns.findIndex((t, i) => i >= start && t.status === 'streaming');
  if (streaming >= 0 && streaming < keepFrom) {
    // Keep the streaming turn's question with it; a question that is itself still streaming stands alone.
    keepFrom = questions.filter((q) => q <= streaming).pop() ?? streaming;
  }
  if (!questions.some((q) => q < keepFrom)) return undefined;
  return { summarize: turns.slice(start, keepFrom), keepFrom };
}

/** The instruction for the summary. Fixed text, with nothing that varies, so servers can cache it as a prefix. */
export const SUMMARY_INSTRUCTION = [
  'You summarize a conversation between a user and an AI assistant, so that the conversation can continue from your summary alone.',
  'Write a concise summary. Keep the decisions made, facts established, names, code identifiers, file paths, commands, and open questions or unfinished tasks.',
  'If the transcript starts with an earlier summary, fold it in. Leave out greetings and repetition.',
  'Reply with the summary only.',
].join('\n');

/** Put before the transcript; the note says when its start was dropped to fit the window. */
const TRANSCRIPT_HEAD = 'Summarize this conversation:\n\n';
const CUT_NOTE = '[The start of the conversation was cut to fit.]\n\n';
/** A tool result is evidence, not content to keep: its first characters say enough for a summary. */
const TOOL_RESULT_CHARS = 200;
/** The part of the window left unused, since token counts are estimates. */
const SAFETY_MARGIN = 0.1;

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/** One turn as plain transcript text; empty for a turn that says nothing (a failed reply). */
function transcriptOf(t: Turn): string {
  if (isSummary(t)) return `Earlier summary: ${t.text}`;
  if (t.summaryOf !== undefined) return '';
  if (t.role === 'user') {
    const images = (t.images ?? []).map((i) => `[image: ${i.name}]`);
    return `User: ${[userTurnText(t), ...images].filter((s) => s).join('\n')}`;
  }
  const lines: string[] = [];
  for (const step of t.steps ?? []) {
    if (step.text) lines.push(`Assistant: ${step.text}`);
    for (const c of step.calls) {
      const result = c.result === undefined ? 'no result' : oneLine(c.result, TOOL_RESULT_CHARS);
      lines.push(`Tool ${c.name}${c.summary ? ` (${oneLine(c.summary, 120)})` : ''}: ${result}`);
    }
  }
  if (t.text) lines.push(`Assistant: ${t.text}`);
  return lines.join('\n');
}

/** The reply's room: a quarter of a known window, between 128 and 1,024 tokens, and no more than `hint` allows. */
function summaryMaxTokens(window: number | undefined, hint: number | undefined): number {
  const base = window === undefined ? 1024 : Math.min(1024, Math.max(128, Math.floor(window * 0.25)));
  return hint !== undefined && Number.isFinite(hint) && hint >= 1 ? Math.min(base, Math.floor(hint)) : base;
}

function request(transcript: string, cut: boolean): ChatMessage[] {
  return [
    { role: 'system', content: SUMMARY_INSTRUCTION },
    { role: 'user', content: TRANSCRIPT_HEAD + (cut ? CUT_NOTE : '') + transcript },
  ];
}

/** The last characters of text whose estimate fits `budget` tokens (the oldest part goes first). */
function tailWithin(text: string, budget: number): string {
  if (budget <= 0) return '';
  let length = Math.min(text.length, budget * 4);
  let tail = text.slice(text.length - length);
  for (let cost = estimateTokens(tail); cost > budget && length > 0; cost = estimateTokens(tail)) {
    // Punctuation-heavy code costs more than 4 characters a token: shrink in proportion, a little further each time.
    length = Math.floor(length * (budget / cost) * 0.95);
    tail = text.slice(text.length - length);
  }
  return tail;
}

/**
 * The request that asks the conversation's own model for a summary of `summarize`. It fits the window: the reply's
 * room plus a 10 % margin are set aside and the transcript's oldest parts are dropped until the rest fits (`cut`).
 * With the window unknown it is fitted to DEFAULT_CONTEXT_TOKENS, since compaction often follows a "context too long"
 * error, where the whole transcript is known not to fit. `reserveHint` caps the reply (the model's output limit).
 */
export function summaryRequest(input: { summarize: readonly Turn[]; window?: number; reserveHint?: number }): { messages: ChatMessage[]; maxTokens: number; cut: boolean } {
  const maxTokens = summaryMaxTokens(input.window, input.reserveHint);
  const window = input.window ?? DEFAULT_CONTEXT_TOKENS;
  const budget = window - maxTokens - Math.ceil(window * SAFETY_MARGIN);
  const blocks = input.summarize.map(transcriptOf).filter((b) => b);
  const whole = blocks.join('\n\n');
  if (estimatePromptTokens(request(whole, false)) <= budget) return { messages: request(whole, false), maxTokens, cut: false };

  // Newest first, while they fit; each block's estimate plus one for the blank line joining it is an upper bound.
  let room = budget - estimatePromptTokens(request('', true));
  const kept: string[] = [];
  for (let i = blocks.length - 1; i >= 0 && room > 0; i--) {
    const cost = estimateTokens(blocks[i]) + 1;
    if (cost <= room) {
      kept.unshift(blocks[i]);
      room -= cost;
    } else {
      const tail = tailWithin(blocks[i], room - 2);
      if (tail) kept.unshift('…' + tail);
      break;
    }
  }
  // The sums above are upper bounds; this only guards against rounding we did not foresee.
  while (kept.length > 0 && estimatePromptTokens(request(kept.join('\n\n'), true)) > budget) kept.shift();
  return { messages: request(kept.join('\n\n'), true), maxTokens, cut: true };
}

/** The summary as a turn: an assistant turn standing for the `summarized` turns before it. */
export function summaryTurn(id: string, text: string, summarized: number, model?: string): Turn {
  const turn: Turn = { id, role: 'assistant', text, status: 'done', summaryOf: summarized };
  if (model) turn.model = model;
  return turn;
}
