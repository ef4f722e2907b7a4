// The panel's reasoning effort (dist/reasoningEffort.js, LAZY in esbuild.mjs): the header's offer and choice, the effort
// its requests carry, and what they teach (core/reasoningEffort.ts). Types are structural here: requester.ts and the
// chat load this module, so it imports neither.
import { chatAndLearn, type KeyValueState } from '../core/adaptations';
import type { Conversation } from '../core/conversation';
import { listedModel } from '../core/modelInfo';
import { overrideFor, type Profile } from '../core/profiles';
import { chosenEffort, effortOffer, learnEffort, rememberEffort, withEffort } from '../core/reasoningEffort';
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
  listedNow.set(listedKey(t), listedModel(list, t.settings.model));
  const effort = effortView(r.state, r.adaptations(t), t, list);
  return effort ? { effort } : {};
}

/**
 * What the model list the header was last drawn with says of each model, by origin and model: the model lists are the
 * chat view's (chatViewModels.ts), and a panel request offers an effort only as its header did (panelSettings).
 */
const listedNow = new Map<string, ModelInfo | undefined>();
const listedKey = (t: PanelTarget) => `${t.endpoint.origin} ${t.settings.model}`;

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
 * A panel request's settings with the effort its header shows (effortView: the conversation's own, else the one last
 * chosen for the model), and none when the header offers none for the model now (never offered, ruled out by the
 * profile, refused, or forgotten by Reset Endpoint Adaptations): what the reader sees is what is sent.
 */
export function panelSettings(state: KeyValueState, learnt: Adaptations | undefined, t: PanelTarget, list: readonly ModelInfo[] | undefined, r: RequestSettings): RequestSettings {
  const view = effortView(state, learnt, { ...t, settings: { ...t.settings, effort: t.settings.effort ?? null } }, list);
  return view ? withEffort(r, t.endpoint.origin, view.value) : r;
}

/**
 * chatAndLearn for a panel request: it carries the effort its header shows (panelSettings, with what the panel's
 * requests learnt and the model list the header was drawn with), and what it teaches about the model's reasoning
 * effort is kept (learnEffort) besides what the fallback learnt.
 */
export function withPanelEffort(state: KeyValueState, t: PanelTarget): typeof chatAndLearn {
  return async (store, opts, settings, messages, onEvent) => {
    const listed = listedNow.get(listedKey(t));
    const sent = panelSettings(state, store.get(t.endpoint.origin, t.settings.model), t, listed && [listed], settings);
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
