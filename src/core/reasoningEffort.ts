// Reasoning effort: which models the panel offers it for, the body field that carries it, the choice kept per model,
// and what a request that carried it teaches. Loaded with dist/reasoningEffort.js, by the panel's first header.
import type { AdaptationStore, KeyValueState } from './adaptations';
import type { FallbackOutcome } from './fallback';
import type { Adaptations, RequestSettings } from './request';
import type { ModelInfo } from './types';

/** The efforts offered when neither the profile nor the server names its own. */
export const DEFAULT_EFFORTS: readonly string[] = ['low', 'medium', 'high'];

/** The state key of the choice remembered per model: `{ "<origin> <model>": effort }` ("" for the server's default). */
export const EFFORT_CHOICES_STATE = 'parley.reasoningEffort';

/** OpenRouter (openrouter.ai) takes the effort as `reasoning: { effort }`, its documented form. */
export function isOpenRouter(origin: string): boolean {
  try {
    const host = new URL(origin).hostname;
    return host === 'openrouter.ai' || host.endsWith('.openrouter.ai');
  } catch {
    return false;
  }
}

/**
 * The request field that carries the effort at this origin: `reasoning` for OpenRouter, else `reasoning_effort` (a
 * Responses API request makes `reasoning.effort` of that one field itself).
 */
export function effortFieldName(origin: string): 'reasoning' | 'reasoning_effort' {
  return isOpenRouter(origin) ? 'reasoning' : 'reasoning_effort';
}

/** The body fields that carry `effort` to this origin. */
export function effortField(origin: string, effort: string): Record<string, unknown> {
  return isOpenRouter(origin) ? { reasoning: { effort } } : { reasoning_effort: effort };
}

/**
 * A profile's `reasoningEffort` (profiles.ts checked its type): true (the usual three), a list of the server's own
 * words (each a short name, once), or false (never offered).
 */
export function profileEfforts(v: unknown): boolean | string[] | undefined {
  if (typeof v === 'boolean') return v;
  if (!Array.isArray(v)) return undefined;
  const words = [...new Set(v.filter((x): x is string => typeof x === 'string' && /^[\w-]{1,32}$/.test(x)))];
  return words.length ? words : undefined;
}

/**
 * The efforts the header offers for a model, or undefined for none. Never once the server refused the field (learnt
 * like any refused parameter; Reset Endpoint Adaptations tries again), nor when the profile says false. Else the
 * profile's own words; else the usual three when the profile says true, the server's model list says the model
 * reasons (OpenRouter's `supported_parameters`), or the server accepted an effort or replied with reasoning before.
 */
export function effortOffer(origin: string, profile: unknown, listed: ModelInfo | undefined, learnt: Adaptations | undefined): string[] | undefined {
  const p = profileEfforts(profile);
  if (p === false || learnt?.drop?.includes(effortFieldName(origin))) return undefined;
  if (Array.isArray(p)) return p;
  return p === true || listed?.reasoning === true || learnt?.reasoningEffort === true ? [...DEFAULT_EFFORTS] : undefined;
}

const choiceKey = (origin: string, model: string) => `${origin} ${model}`;

/**
 * The effort a request of the panel carries: the conversation's own choice (a string, "" for the server's default),
 * else (null) the one last chosen for this model at this origin, else none ("").
 */
export function chosenEffort(state: KeyValueState, origin: string, model: string, conversation: string | null): string {
  if (conversation !== null) return conversation;
  const all = state.get<Record<string, string>>(EFFORT_CHOICES_STATE, {});
  const key = choiceKey(origin, model);
  return Object.prototype.hasOwnProperty.call(all, key) && typeof all[key] === 'string' ? all[key] : '';
}

/** Remembers the effort chosen for a model at an origin: new conversations with it start there. */
export function rememberEffort(state: KeyValueState, origin: string, model: string, effort: string): PromiseLike<void> {
  return state.update(EFFORT_CHOICES_STATE, { ...state.get<Record<string, string>>(EFFORT_CHOICES_STATE, {}), [choiceKey(origin, model)]: effort });
}

/**
 * Request settings with the chosen effort in their body fields (`extraBody`: after a refusal, the fallback drops the
 * field like any other, and the profile's `neverSend` still wins). An empty effort adds nothing: the server's default.
 * The header's choice goes over an effort field of the profile's own `extraBody`.
 */
export function withEffort(settings: RequestSettings, origin: string, effort: string): RequestSettings {
  if (!effort) return settings;
  // OpenRouter's `reasoning` object keeps what the profile put in it (`exclude`, `max_tokens`…), with the effort set.
  const own = settings.extraBody?.reasoning;
  const field = effortField(origin, effort);
  if (field.reasoning && own && typeof own === 'object' && !Array.isArray(own)) field.reasoning = { ...own, effort };
  return { ...settings, extraBody: { ...settings.extraBody, ...field } };
}

/**
 * After a request of the panel: when it carried an effort and succeeded, or its reply came with reasoning, the model is
 * kept as one the header offers an effort for (with the adaptations of this origin and model, so that Reset Endpoint
 * Adaptations forgets it too). A refusal was already learnt by the fallback (the field in `drop`).
 */
export async function learnEffort(store: AdaptationStore, origin: string, settings: RequestSettings, outcome: FallbackOutcome): Promise<void> {
  const a = outcome.adaptations;
  const field = effortFieldName(origin);
  if (a.reasoningEffort || a.drop?.includes(field) || outcome.result.ended === 'error') return;
  const carried = settings.extraBody?.[field] !== undefined && !settings.neverSend?.includes(field);
  if (carried || outcome.result.reasoning.length > 0) await store.set(origin, settings.model, { ...a, reasoningEffort: true });
}
