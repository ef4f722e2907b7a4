// The tool loop of one assistant turn: request, run the calls it asks for, send the results back, request again;
// until the model answers without calls, the reader stops, or a guard ends it (rounds, a repeated call, tokens).
import type { ChatMessage, ChatResult, ToolCall } from './types';

/** How one call ended. `stopped`: the turn was stopped before it finished (or before it started). */
export type ToolCallEnd = 'done' | 'failed' | 'denied' | 'stopped';

/** What running one call gave: the text the model receives as its result, and how the call ended. */
export interface ToolOutcome {
  status: ToolCallEnd;
  content: string;
}

/**
 * One call of a round as the loop runs it. A server's ids are only its own: some reuse one in every round ("0"), or
 * write them from the tool's name ("read_file:0"). So the card and the approval go by Parley's id, and the server's
 * goes only back to the server.
 */
export interface RoundCall {
  /** Parley's id for the call's card and its approval: unique in the conversation, never taken from the server. */
  id: string;
  /**
   * The call as it goes back to the server (the assistant message's tool_calls, the tool message's tool_call_id): with
   * the server's id, or Parley's wire id when the server gave none or one already used in the round.
   */
  wire: ToolCall;
}

/** What the loop needs from the turn it runs in. */
export interface ToolLoopHost {
  /** Sends one request of the turn with these messages, streaming its text to the reader. Never throws. */
  request(messages: ChatMessage[]): Promise<{ result: ChatResult; tokens: number }>;
  /** Parley's id for call `index` (from 0) of round `round` (from 1): unique in the conversation (see RoundCall). */
  callId(round: number, index: number): string;
  /** A round ended in tool calls: its text and its calls become a step of the turn, before they run. */
  round(text: string, calls: RoundCall[]): void;
  /** Runs one call, asking the reader first when its tool needs it. Never throws. */
  run(call: RoundCall): Promise<ToolOutcome>;
  /** Whether the reader stopped the turn. */
  stopped(): boolean;
}

export interface ToolLoopLimits {
  /** Rounds of tool calls in one turn. */
  maxRounds: number;
  /** Tokens (every request's total, summed) after which no further round starts. */
  maxTurnTokens: number;
}

/** The same call (name and arguments) this many times in a row is a loop. */
export const REPEAT_LIMIT = 3;

/** Why a turn that used tools ended early. */
export type ToolGuard = 'rounds' | 'repeat' | 'tokens';

export interface ToolLoopEnd {
  /** The last request's result: its text is the turn's closing text. */
  result: ChatResult;
  /** Requests made. */
  requests: number;
  /** Set when a guard ended the turn instead of the model. */
  guard?: ToolGuard;
}

/** The words a reader sees when a guard ended a turn (the turn then offers Continue). */
export function guardMessage(guard: ToolGuard, limits: ToolLoopLimits): string {
  switch (guard) {
    case 'rounds':
      return `Stopped after ${limits.maxRounds} rounds of tool calls (parley.tools.maxRounds). Continue to let the model go on.`;
    case 'repeat':
      return `Stopped: the model asked for the same tool call ${REPEAT_LIMIT} times in a row. Continue to let it try again.`;
    case 'tokens':
      return `Stopped: this turn used more than ${limits.maxTurnTokens.toLocaleString('en-US')} tokens (parley.tools.maxTurnTokens). Continue to let the model go on.`;
  }
}

/** A call's identity for the repeat guard: its name and its arguments, whatever their spacing. */
function callKey(call: ToolCall): string {
  let args = call.function.arguments;
  try {
    args = JSON.stringify(JSON.parse(args));
  } catch {
    // Arguments that are not JSON compare as written.
  }
  return `${call.function.name}\u0000${args}`;
}

/**
 * A round's calls with Parley's ids, and wire ids unique in the round: the server's id when it gave one not used before
 * in the round; else `call_<round>_<n>` (with a suffix if the server itself used that), which the result then carries.
 */
export function roundCalls(calls: readonly ToolCall[], round: number, callId: (round: number, index: number) => string): RoundCall[] {
  const given = new Set(calls.map((c) => c.id).filter((id) => id));
  const seen = new Set<string>();
  return calls.map((c, i) => {
    let wire = c.id;
    if (!wire || seen.has(wire)) {
      wire = `call_${round}_${i}`;
      for (let k = 1; given.has(wire) || seen.has(wire); k++) wire = `call_${round}_${i}_${k}`;
    }
    seen.add(wire);
    return { id: callId(round, i), wire: { id: wire, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } } };
  });
}

/**
 * Tracks consecutive identical calls over the whole turn. `add` returns true when the call would be the
 * REPEAT_LIMIT-th in a row, so that it never runs.
 */
class RepeatGuard {
  private last = '';
  private count = 0;

  add(call: ToolCall): boolean {
    const key = callKey(call);
    this.count = key === this.last ? this.count + 1 : 1;
    this.last = key;
    return this.count >= REPEAT_LIMIT;
  }
}

/** The guard that ends the turn before these calls run, if any. */
function guardBefore(calls: readonly RoundCall[], rounds: number, tokens: number, limits: ToolLoopLimits, repeats: RepeatGuard): ToolGuard | undefined {
  if (rounds > limits.maxRounds) return 'rounds';
  if (tokens >= limits.maxTurnTokens) return 'tokens';
  for (const c of calls) if (repeats.add(c.wire)) return 'repeat';
  return undefined;
}

/**
 * Runs a turn's requests and tool calls. Parallel calls of one reply all run, in order, and are all answered: the
 * next request carries the assistant message with the calls and one `tool` message per call, in the same order, each
 * under the server's own id.
 * Calls are taken from the end of a stream whatever its finish reason (some servers say "stop"). A stopped, failed
 * or cut-off request ends the loop with what it had.
 */
export async function runToolLoop(start: readonly ChatMessage[], host: ToolLoopHost, limits: ToolLoopLimits): Promise<ToolLoopEnd> {
  const messages = [...start];
  const repeats = new RepeatGuard();
  let tokens = 0;
  for (let round = 1; ; round++) {
    const { result, tokens: used } = await host.request(messages);
    tokens += used;
    const answered = result.ended === 'done' || result.ended === 'incomplete';
    if (!answered || result.toolCalls.length === 0 || host.stopped()) return { result, requests: round };
    const calls = roundCalls(result.toolCalls, round, (r, i) => host.callId(r, i));
    const guard = guardBefore(calls, round, tokens, limits, repeats);
    if (guard) return { result, requests: round, guard };
    host.round(result.text, calls);
    messages.push({ role: 'assistant', content: result.text || null, tool_calls: calls.map((c) => c.wire) });
    for (const call of calls) {
      const outcome: ToolOutcome = host.stopped() ? { status: 'stopped', content: STOPPED_RESULT } : await host.run(call);
      messages.push({ role: 'tool', tool_call_id: call.wire.id, content: outcome.content });
    }
    if (host.stopped()) return { result: { ...result, text: '', ended: 'cancelled' }, requests: round };
  }
}

/** What the model is told for a call that never ran or never finished because the turn was stopped. */
export const STOPPED_RESULT = 'The user stopped this turn before the call finished; it returned nothing.';
