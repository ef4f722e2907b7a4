// The context meter's arithmetic: the model's window, the room kept for the reply, and the next prompt's size.
import { estimatePromptTokens } from './tokenEstimate';
import type { ChatMessage, ModelInfo } from './types';
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
  /** Undefined when neither the server nor the settings say: shown as unknown, never guessed. */
  window?: number;
  /** `profile`: a contextWindow setting (the profile's for the model, else parley.contextWindow). */
  source?: 'server' | 'profile';
  reserve: number;
  /** The window the server runs the model at, when it says: what a prompt must fit, whatever the settings say. */
  serverWindow?: number;
  /** A contextWindow setting larger than the server's window, which is therefore not applied. */
  unapplied?: number;
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
 * The window: the smaller of the server's figure (what it runs) and the contextWindow setting (the user's budget);
 * either alone; else unknown. A setting larger than the server's window is not applied (`unapplied`). The reserve: the server's output limit, the profile's, parley.maxTokens, else DEFAULT_OUTPUT_TOKENS; never more than
 * half a known window, so a small local model (2,048 tokens) still has room for the prompt.
 */
export function resolveWindow(
  server: Partial<ModelInfo> | undefined,
  override: { contextWindow?: number; maxOutputTokens?: number },
  fallbackMaxTokens?: number,
): WindowInfo {
  const fromServer = positive(server?.contextLength);
  const fromSetting = positive(override.contextWindow);
  const lower = fromSetting !== undefined && (fromServer === undefined || fromSetting < fromServer);
  const window = lower ? fromSetting : fromServer;
  const wanted = positive(server?.maxOutputTokens) ?? positive(override.maxOutputTokens) ?? positive(fallbackMaxTokens) ?? DEFAULT_OUTPUT_TOKENS;
  const reserve = window === undefined ? wanted : Math.min(wanted, Math.floor(window / 2));
  if (window === undefined) return { reserve };
  const out: WindowInfo = { window, source: lower ? 'profile' : 'server', reserve };
  if (fromServer !== undefined) out.serverWindow = fromServer;
  if (fromSetting !== undefined && fromServer !== undefined && fromSetting > fromServer) out.unapplied = fromSetting;
  return out;
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
  /** The window's words for the meter's tooltip (windowNotes in serverWindow.ts). */
  notes?: string[];
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
  if (args.serverWindow !== undefined) meter.serverWindow = args.serverWindow;
  if (args.notes?.length) meter.windowNotes = args.notes;
  return meter;
}

/** Whether the prompt and the reply's room fit the window; true when the window is unknown (the server will say). */
export function fits(meter: ContextMeterView): boolean {
  return meter.window === undefined || meter.used + meter.reserve <= meter.window;
}

/**
 * Whether the prompt alone is larger than the window the server runs: such a request fails, or worse, the server drops
 * the start of it and answers anyway (Ollama). False when the server does not say its window.
 */
export function exceedsServer(meter: ContextMeterView): boolean {
  return meter.serverWindow !== undefined && meter.used >= meter.serverWindow;
}

/** Whether the prompt fills the window past the compaction threshold; never with a threshold of 0 or no window. */
export function overThreshold(meter: ContextMeterView): boolean {
  if (meter.threshold <= 0 || !meter.window) return false;
  return (meter.used / meter.window) * 100 >= meter.threshold;
}
