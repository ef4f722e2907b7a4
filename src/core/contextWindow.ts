// The context meter's arithmetic: the model's window, the room kept for the reply, and the next prompt's size.
import type { ModelInfo } from './modelInfo';
import { estimatePromptTokens } from './tokenEstimate';
import type { ChatMessage } from './types';
import type { ContextMeterView } from '../shared/protocol';

/** Used when neither the server nor the settings give a context window: a size most current models exceed. */
export const DEFAULT_CONTEXT_TOKENS = 32_768;
/** Used when neither the server nor parley.maxTokens give an output limit. */
export const DEFAULT_OUTPUT_TOKENS = 4_096;

/** A whole, positive token count, or undefined: servers and settings may send 0, -1, NaN or a string for "unknown". */
export const positive = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined;

/** A model's window, where it came from, and the tokens kept free for the reply. */
export interface WindowInfo {
  /** Undefined when neither the server nor the profile says: shown as unknown, never guessed. */
  window?: number;
  source?: 'server' | 'profile';
  reserve: number;
}

/** The last request's estimated prompt tokens next to the prompt_tokens the server reported for it. */
export interface LastUsage {
  estimated: number;
  actual: number;
}

/** Our estimate is a rule of thumb; a real count outside this range says something else went wrong. */
const MIN_CORRECTION = 0.25;
const MAX_CORRECTION = 4;

/**
 * The window: the server's figure first (it knows what is loaded), then the profile's per-model setting, else unknown.
 * The reserve: the server's output limit, the profile's, parley.maxTokens, else DEFAULT_OUTPUT_TOKENS; never more than
 * half a known window, so a small local model (2,048 tokens) still has room for the prompt.
 */
export function resolveWindow(
  server: Partial<ModelInfo> | undefined,
  override: { contextWindow?: number; maxOutputTokens?: number },
  fallbackMaxTokens?: number,
): WindowInfo {
  const fromServer = positive(server?.contextLength);
  const fromProfile = positive(override.contextWindow);
  const window = fromServer ?? fromProfile;
  const source = fromServer !== undefined ? 'server' : fromProfile !== undefined ? 'profile' : undefined;
  const wanted = positive(server?.maxOutputTokens) ?? positive(override.maxOutputTokens) ?? positive(fallbackMaxTokens) ?? DEFAULT_OUTPUT_TOKENS;
  const reserve = window === undefined ? wanted : Math.min(wanted, Math.floor(window / 2));
  return source ? { window, source, reserve } : { reserve };
}

function usable(last: LastUsage | undefined): last is LastUsage {
  return !!last && positive(last.estimated) !== undefined && positive(last.actual) !== undefined;
}

/** How far off our estimate was last time (actual / estimated), clamped; 1 when there is no sane measurement. */
export function correction(last?: LastUsage): number {
  if (!usable(last)) return 1;
  return Math.min(MAX_CORRECTION, Math.max(MIN_CORRECTION, last.actual / last.estimated));
}

/**
 * The meter for the next request. `extraTokens` counts what the messages do not show (tool definitions, pending
 * attachments); `last` scales the estimate by how wrong it was on the previous request of this conversation.
 */
export function contextMeter(args: WindowInfo & {
  messages: readonly ChatMessage[];
  extraTokens?: number;
  last?: LastUsage;
  threshold: number;
  compactable: number;
}): ContextMeterView {
  const estimate = estimatePromptTokens(args.messages) + Math.max(0, args.extraTokens ?? 0);
  const meter: ContextMeterView = {
    used: Math.round(estimate * correction(args.last)),
    reserve: args.reserve,
    corrected: usable(args.last),
    threshold: args.threshold,
    compactable: args.compactable,
  };
  if (args.window !== undefined) {
    meter.window = args.window;
    if (args.source) meter.windowSource = args.source;
  }
  return meter;
}

/** Whether the prompt and the reply's room fit the window; true when the window is unknown (the server will say). */
export function fits(meter: ContextMeterView): boolean {
  return meter.window === undefined || meter.used + meter.reserve <= meter.window;
}

/** Whether the prompt fills the window past the compaction threshold; never with a threshold of 0 or no window. */
export function overThreshold(meter: ContextMeterView): boolean {
  if (meter.threshold <= 0 || !meter.window) return false;
  return (meter.used / meter.window) * 100 >= meter.threshold;
}
