// What Parley learnt about a server (parameters it refuses), kept per origin and model, and the request that learns it.
import type { ClientOptions } from './client';
import { chatWithFallback, type FallbackOutcome } from './fallback';
import type { Adaptations, RequestSettings } from './request';
import type { ChatMessage, StreamEvent } from './types';

/** Where adaptations are kept: by the endpoint's origin and the model. */
export interface AdaptationStore {
  get(origin: string, model: string): Adaptations | undefined;
  set(origin: string, model: string, adaptations: Adaptations): PromiseLike<void>;
  /** Forgets everything ("Parley: Reset Endpoint Adaptations"). */
  clear(): PromiseLike<void>;
}

/** Key-value state with VS Code's Memento shape (globalState), so the store needs no `vscode` import. */
export interface KeyValueState {
  get<T>(key: string, defaultValue: T): T;
  update(key: string, value: unknown): PromiseLike<void>;
}

/** The state key; its value is `{ "<origin> <model>": Adaptations }`. */
export const ADAPTATIONS_STATE = 'parley.adaptations';

/** An AdaptationStore kept in key-value state (globalState, so it lasts across windows and reloads). */
export function stateAdaptationStore(state: KeyValueState): AdaptationStore {
  const all = () => state.get<Record<string, Adaptations>>(ADAPTATIONS_STATE, {});
  const key = (origin: string, model: string) => `${origin} ${model}`;
  return {
    get(origin, model) {
      const a = all();
      const k = key(origin, model);
      return Object.prototype.hasOwnProperty.call(a, k) ? a[k] : undefined;
    },
    set(origin, model, adaptations) {
      return state.update(ADAPTATIONS_STATE, { ...all(), [key(origin, model)]: adaptations });
    },
    clear() {
      return state.update(ADAPTATIONS_STATE, undefined);
    },
  };
}

/**
 * An AdaptationStore in memory only, gone with the window: what requests of other extensions (`vscode.lm`) teach is
 * kept here, apart from the panel's, so that no caller's request changes what the panel sends, nor the reverse.
 */
export function memoryAdaptationStore(): AdaptationStore {
  const all = new Map<string, Adaptations>();
  const key = (origin: string, model: string) => `${origin} ${model}`;
  return {
    get: (origin, model) => all.get(key(origin, model)),
    set(origin, model, adaptations) {
      all.set(key(origin, model), adaptations);
      return Promise.resolve();
    },
    clear() {
      all.clear();
      return Promise.resolve();
    },
  };
}

/**
 * Sends a chat request with what is already known about this origin and model, and keeps what it learns: after a
 * server refuses a parameter once (or the model on chat completions), the next request goes without it (or to the
 * Responses API) on the first try. Never throws (as
 * chatWithFallback); the outcome says which parameters were dropped this time.
 */
export async function chatAndLearn(
  store: AdaptationStore,
  opts: ClientOptions,
  settings: RequestSettings,
  messages: ChatMessage[],
  onEvent?: (e: StreamEvent) => void,
): Promise<FallbackOutcome> {
  const origin = opts.endpoint.origin;
  const outcome = await chatWithFallback(opts, settings, messages, store.get(origin, settings.model), onEvent);
  if (outcome.dropped.length > 0 || outcome.switched) await store.set(origin, settings.model, outcome.adaptations);
  return outcome;
}
