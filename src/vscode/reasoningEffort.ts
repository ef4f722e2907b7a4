// The panel's reasoning effort (dist/reasoningEffort.js, LAZY in esbuild.mjs): the header's offer and choice, the effort
// its requests carry, and what they teach (core/reasoningEffort.ts). Types are structural here: requester.ts and the
// chat load this module, so it imports neither.
import { chatAndLearn, type KeyValueState } from '../core/adaptations';
import type { Conversation } from '../core/conversation';
import { listedModel } from '../core/modelInfo';
import { overrideFor, type Profile } from '../core/profiles';
import { chosenEffort, effortOffer, learnEffort, profileEfforts, rememberEffort, withEffort } from '../core/reasoningEffort';
import type { Adaptations, RequestSettings } from '../core/request';
import type { ModelInfo } from '../core/types';
import type { EffortView, HeaderView } from '../shared/protocol';

/** A panel target, as this module reads it (requester.ts's ReadyTarget). */
export interface PanelTarget {
  kind: 'ready';
  endpoint: { origin: string };
  settings: { model: string; profile?: Profile; effort?: string | null };
}

/** What choosing an effort in the header reaches: the chat and the requester (webviewRoutes.ts's RouteDeps), T their target. */
export interface EffortDeps<T extends { kind: string }> {
  chat: {
    readonly current: Conversation;
    selection(): object;
    views: { header(t: T): HeaderView };
    files: { save(c: Conversation): Promise<void> };
    endpointChanged(): Promise<void>;
  };
  requester: {
    readonly state: KeyValueState;
    target(base: undefined, interactive: boolean, selection: object): Promise<T>;
  };
}

const isReady = <T extends { kind: string }>(t: T): t is T & PanelTarget => t.kind === 'ready';

const profileSays = (s: PanelTarget['settings']) => (s.profile ? overrideFor(s.profile, s.model).reasoningEffort : undefined);

/**
 * The header's reasoning effort, for a panel target of a requester that keeps state (a test's small stand-in keeps
 * none): `{ effort }`, or nothing when none is offered.
 */
export function headerEffort(requester: object, t: PanelTarget, list: readonly ModelInfo[] | undefined): { effort?: EffortView } {
  if (!('state' in requester && 'adaptations' in requester)) return {};
  const r = requester as { state: KeyValueState; adaptations(t: PanelTarget): Adaptations | undefined };
  const effort = effortView(r.state, r.adaptations(t), t, list);
  return effort ? { effort } : {};
}

/** The header's reasoning effort for a panel target: what it offers and the conversation's choice; undefined for none. */
export function effortView(state: KeyValueState, learnt: Adaptations | undefined, t: PanelTarget, list: readonly ModelInfo[] | undefined): EffortView | undefined {
  const s = t.settings;
  if (s.effort === undefined) return undefined;
  const options = effortOffer(t.endpoint.origin, profileSays(s), listedModel(list, s.model), learnt);
  if (!options) return undefined;
  const chosen = chosenEffort(state, t.endpoint.origin, s.model, s.effort);
  return { options, value: options.includes(chosen) ? chosen : '' };
}

/**
 * A panel request's settings with the conversation's effort (else the one last chosen for the model). Not one the
 * profile rules out (false, or a list without it); a refused one the fallback drops as it learnt.
 */
export function panelSettings(state: KeyValueState, t: PanelTarget, r: RequestSettings): RequestSettings {
  const s = t.settings;
  const effort = chosenEffort(state, t.endpoint.origin, s.model, s.effort ?? null);
  const p = profileEfforts(profileSays(s));
  return p === false || (Array.isArray(p) && !p.includes(effort)) ? r : withEffort(r, t.endpoint.origin, effort);
}

/**
 * chatAndLearn for a panel request: it carries the conversation's effort (panelSettings), and what it teaches about
 * the model's reasoning effort is kept (learnEffort) besides what the fallback learnt.
 */
export function withPanelEffort(state: KeyValueState, t: PanelTarget): typeof chatAndLearn {
  return async (store, opts, settings, messages, onEvent) => {
    const sent = panelSettings(state, t, settings);
    const outcome = await chatAndLearn(store, opts, sent, messages, onEvent);
    await learnEffort(store, t.endpoint.origin, sent, outcome);
    return outcome;
  };
}

/**
 * The header's effort select: the open conversation goes on with it, and new conversations with this model start
 * with it. Only an effort the header offers now (or "", the server's default) is taken; the header is drawn again.
 */
export async function chooseEffort<T extends { kind: string }>(s: EffortDeps<T>, value: string): Promise<void> {
  const t = await s.requester.target(undefined, false, s.chat.selection());
  if (!isReady(t)) return;
  const offer = s.chat.views.header(t).effort;
  if (!offer || (value !== '' && !offer.options.includes(value))) return;
  const c = s.chat.current;
  c.effort = value;
  if (c.turns.length) await s.chat.files.save(c);
  await rememberEffort(s.requester.state, t.endpoint.origin, t.settings.model, value);
  await s.chat.endpointChanged();
}
