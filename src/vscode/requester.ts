// Sends one chat request on behalf of any feature: decides where it may go, with which key, and counts its usage.
import * as vscode from 'vscode';
import { resolveEndpoint, type Endpoint } from '../core/endpoint';
import { ParleyError } from '../core/errors';
import { chatAndLearn, memoryAdaptationStore, stateAdaptationStore, type AdaptationStore } from '../core/adaptations';
import { COMPLETION_ROUTES_STATE } from '../core/completion/settings';
import { listModelInfo, type ClientOptions } from '../core/client';
import type { Adaptations, RequestSettings } from '../core/request';
import type { ChatMessage, ChatResult, StreamEvent } from '../core/types';
import { findProfile, usageHostOf, isWorkspaceProfile, overrideFor, secretNames, tightenedOverride, withoutBodyOverrides, type ModelOverride, type Profile } from '../core/profiles';
import { expandHeaders, headerConsentId, legacyOrigins, type HeaderSecret, type WorkspaceBodyChanges } from '../core/headerSecrets';
import { billed, recordFrom, type UsageRecord } from '../core/usageLedger';
import type { BudgetWarning, StreamWatch } from '../core/budget';
import { promptDigest } from '../core/promptConsent';
import type { Settings, SettingsSnapshot } from './config';
import type { RuleView } from '../shared/protocol';
import { showWarning } from './notices';
import { ApiKeyStore } from './secrets';
import { promptQuestion } from './lazy/promptQuestion';
import { textToolCalls } from './lazy/textToolCalls';
import { responses } from './lazy/responses';
import type { Log } from './log';
import type { UsageStore } from './usageStore';
import { BudgetGuard } from './budgetGuard';
import { budget } from './lazy/budget';
import { rules } from './lazy/rules';
import { reasoningEffort } from './lazy/reasoningEffort';
import type { UnknownPriceQuestion } from './priceBook';

/** Questions Parley may ask the user. Tests replace these; everything else uses the real UI. */
export interface Prompts {
  /**
   * Asked once per origin when a workspace points Parley somewhere other than the user's own endpoint.
   * Undefined means the question was dismissed: not an answer, so it is asked again next time.
   */
  allowWorkspaceOrigin(origin: string, userOrigin: string): Promise<boolean | undefined>;
  /**
   * Asked when a workspace's profile adds to its requests: headers (`names`), and for the model in use body fields
   * (`body.fields`, its `extraBody`) or fields left out (`body.omitted`, its `neverSend`); once per origin and exact
   * names and values (a changed value asks again). `secrets` names the user's header secrets the header values would
   * carry. One answer covers all of them. Undefined: dismissed.
   */
  allowWorkspaceHeaders?(origin: string, names: string[], secrets: string[], body?: WorkspaceBodyChanges): Promise<boolean | undefined>;
  /** Asked once per exact text when a workspace's settings replace the user's system prompt. Undefined: dismissed. */
  allowWorkspaceSystemPrompt?(prompt: string): Promise<boolean | undefined>;
  /** Asked once per exact text of a workspace's rule files before they go with requests. Undefined: dismissed; unset: rules.ts asks. */
  allowWorkspaceRules?(files: Array<{ path: string; text: string }>): Promise<boolean | undefined>;
  /** The Rules button's choice (tests answer it): the conversation's new list of files off; unset: rules.ts's quick picks. */
  chooseRules?(views: RuleView[], off?: string[]): Promise<string[] | undefined>;
  /**
   * Asked once per ledger host and model when a request started in Parley goes to a model with no known price while a
   * dollar limit applies: block its requests, or send them uncounted in dollars. Undefined: dismissed. Left out of
   * vscodePrompts: the budget's bundle then asks with its own modal (promptQuestion.ts), so none of it loads before.
   */
  unknownPrice?: UnknownPriceQuestion;
}

export const vscodePrompts: Prompts = {
  async allowWorkspaceOrigin(origin, userOrigin) {
    const allow = 'Allow';
    const mine = 'Use My Endpoint';
    const answer = await showWarning(
      `This workspace's settings point Parley at ${origin} instead of your own endpoint (${userOrigin}). Send chat requests there?`,
      {
        modal: true,
        detail: 'Your API key for that origin, if you set one, would go with them. Parley remembers your answer for this origin; '
          + '"Parley: Forget Workspace Endpoint Answers" asks again.',
      },
      allow,
      mine,
    );
    return answer === allow ? true : answer === mine ? false : undefined;
  },
  // dist/promptQuestion.js (LAZY in esbuild.mjs): loaded when a workspace's prompt or profile is first asked about.
  allowWorkspaceHeaders: (origin, names, secrets, body) => promptQuestion().askWorkspaceAdditions(origin, names, secrets, body),
  allowWorkspaceSystemPrompt: (prompt) => promptQuestion().askWorkspaceSystemPrompt(prompt),
};

const APPROVALS_STATE = 'parley.workspaceOrigins';
/** Answers about a workspace profile's headers, by headerConsentId (origin, names and values). */
const HEADER_ANSWERS_STATE = 'parley.workspaceHeaderAnswers';
/** The answers before they covered values (by origin and names only): never read, cleared with the others. */
const OLD_HEADER_ANSWERS_STATE = 'parley.workspaceHeaders';
/** Answers about workspace system prompts, by the SHA-256 of the prompt's text. */
const PROMPT_APPROVALS_STATE = 'parley.workspaceSystemPrompts';

/** Which profile and model a request is for: a conversation's own, else the active profile and its model. */
export interface Selection {
  profile?: string;
  model?: string;
  /** A panel conversation's reasoning effort: its own choice, or null for the one last chosen for the model. */
  effort?: string | null;
}

/**
 * The settings as one profile and model make them: its base URL and model, and the model's overrides (limits,
 * price, reasoning). A workspace-defined profile's base URL counts as a workspace value (consent rules apply).
 */
function applyProfile(s: Settings, p: Profile, model?: string, effort?: string | null): Settings & { profile: Profile } {
  const m = model?.trim() || p.model;
  // A workspace's profile may only tighten the user's own limits (see tightenedOverride).
  const o: ModelOverride = isWorkspaceProfile(p) ? tightenedOverride(overrideFor(p, m), s, m) : overrideFor(p, m);
  return {
    ...s,
    profile: p,
    baseUrl: p.source === 'implicit' ? s.baseUrl : p.baseUrl,
    baseUrlSource: p.source === 'implicit' ? s.baseUrlSource : p.source,
    model: m,
    maxTokens: o.maxOutputTokens ?? s.maxTokens,
    contextWindow: o.contextWindow ?? s.contextWindow,
    sendReasoningBack: o.sendReasoningBack ?? s.sendReasoningBack,
    effort,
  };
}

/**
 * Where a request would go, told apart by `kind`: `ready` (endpoint and key known), or why not: `config` (the base
 * URL is unusable) or `no-key` (the origin has no key and is not marked as needing none). Every kind carries the
 * settings it was resolved from.
 */
export type Target =
  | ReadyTarget
  | { kind: 'config'; settings: Settings; error: ParleyError }
  | { kind: 'no-key'; settings: Settings; origin: string; endpoint: Endpoint; headers?: Record<string, string> };

/** A target requests can go to. `apiKey` is undefined when the origin needs none. */
export interface ReadyTarget {
  kind: 'ready';
  settings: Settings;
  endpoint: Endpoint;
  apiKey?: string;
  /** "host[:port]" for display and usage. */
  host: string;
  /** The profile's custom headers, secrets filled in (undefined: none, or a workspace's that the user declined). */
  headers?: Record<string, string>;
}


/** How usage names a target: the host, and for a named profile its name first, so each profile's ledger is its own. */
export function usageHost(t: ReadyTarget): string {
  return usageHostOf(t.settings.profile, t.host);
}

/** A target that cannot take requests, and why. */
export type TargetProblem = Exclude<Target, ReadyTarget>;

/** The ready target for `endpoint`, with or without a key. */
export function readyTarget(settings: Settings, endpoint: Endpoint, apiKey?: string): ReadyTarget {
  return { kind: 'ready', settings, endpoint, apiKey, host: new URL(endpoint.origin).host };
}

export interface RunOptions {
  messages: ChatMessage[];
  source: UsageRecord['source'];
  signal?: AbortSignal;
  stream?: boolean;
  responseFormat?: RequestSettings['responseFormat'];
  /** Tools offered to the model (the chat's tool loop); a server that refuses them is learnt like any parameter. */
  tools?: RequestSettings['tools'];
  /** Request fields that win over the settings' (VS Code's chat: its model options and tool_choice). */
  overrides?: Partial<RequestSettings>;
  onEvent?: (e: StreamEvent) => void;
  /** Called once per parameter the server turned out not to accept. */
  onAdapted?: (param: string) => void;
  /** The usage record's id: the one a reply's interrupted request is counted under after a crash (core/recovery.ts). */
  usageId?: string;
  /** The conversation a "Send once anyway" pass counts for (the panel's turns); undefined: none applies. */
  budgetKey?: string;
  /** Told each spend threshold crossed for the first time this period, in words (the panel shows a notice). */
  onBudgetWarning?: (words: string) => void;
}

export interface RunOutcome {
  result: ChatResult;
  target: ReadyTarget;
  dropped: string[];
  durationMs: number;
  /** The usage counted for this request; undefined when it failed before producing anything. */
  usage?: UsageRecord;
}

/** What the chat asks of the requester (a smaller one stands in for it in test/unit/chatController.test.ts). */
export type ChatRequester = Pick<Requester, 'target' | 'selected' | 'run' | 'record' | 'clientOptions'> & Partial<Pick<Requester, 'withRules'>>;

export class Requester {
  /** Settings adjustments already logged: each is said once per window, not once per request. */
  private readonly adjustmentsLogged = new Set<string>();
  /** What servers turned out to refuse Parley's own requests (panel, editor commands, Test Connection), per origin and model, in global state. */
  private readonly learnt: AdaptationStore;
  /**
   * What servers turned out to refuse requests of other extensions (`vscode.lm`, source `vscode-chat`): in memory for
   * this window only, and kept apart from `learnt`. Such a request carries the caller's tools and options, so one
   * caller's badly declared tool must not change what the panel sends, and the panel's findings do not change theirs.
   */
  private readonly lmLearnt = memoryAdaptationStore();
  /** The spend budget every request passes; "Send once anyway" gives a conversation its pass here. */
  readonly budget: BudgetGuard;
  constructor(
    readonly state: vscode.Memento,
    private readonly keys: ApiKeyStore,
    readonly log: Log,
    private readonly usage: Pick<UsageStore, 'record' | 'ledger' | 'dir'>,
    private readonly settings: SettingsSnapshot,
    public prompts: Prompts = vscodePrompts,
  ) {
    this.learnt = stateAdaptationStore(state);
    this.budget = new BudgetGuard(usage, state, log);
  }

  /**
   * Resolves the endpoint and key. A base URL that a trusted workspace sets to another origin than
   * the user's own is used only after the user allows it; otherwise the user's endpoint is used.
   */
  async target(base0: Settings = this.settings.current, interactive = false, selection: Selection = {}): Promise<Target> {
    const settings = await this.withAllowedPrompt(this.selected(selection, base0), interactive);
    const profile = settings.profile;
    let base = settings.baseUrl;
    let declined = false;
    if (settings.baseUrlSource === 'workspace' || settings.baseUrlSource === 'folder') {
      const ws = originOf(settings.baseUrl);
      const user = originOf(settings.userBaseUrl);
      if (ws && ws !== user && !(await this.workspaceOriginAllowed(ws, user ?? String(settings.userBaseUrl), interactive))) {
        if (interactive) this.log.warn(`Not using the workspace's base URL origin ${ws}: the user declined it. Using the user endpoint.`);
        base = settings.userBaseUrl;
        declined = true;
      }
    }
    let endpoint: Endpoint;
    try {
      endpoint = resolveEndpoint(base);
    } catch (e) {
      return { kind: 'config', settings, error: e instanceof ParleyError ? e : new ParleyError('config', String(e)) };
    }
    let added: Additions;
    try {
      added = declined ? { body: false } : await this.additionsFor(profile, settings.model, endpoint.origin, interactive, settings.profiles);
    } catch (e) {
      return { kind: 'config', settings, error: e instanceof ParleyError ? e : new ParleyError('config', String(e)) };
    }
    const headers = added.headers;
    // Not allowed (or declined, or the workspace's origin declined): none of the workspace profile's body fields go.
    // Allowed: only the fields of the model the answer covered, so that a request for another model of the profile
    // (VS Code's chat picks any) carries none that nobody was asked about.
    const used = !isWorkspaceProfile(profile) ? settings : { ...settings, profile: withoutBodyOverrides(profile, added.body ? settings.model : undefined) };
    const key = await this.keys.get(endpoint.origin);
    if (key.kind === 'missing') return { kind: 'no-key', settings: used, origin: endpoint.origin, endpoint, headers };
    if (key.kind === 'key') this.log.addSecret(key.key);
    return { ...readyTarget(used, endpoint, key.kind === 'key' ? key.key : undefined), headers };
  }

  /**
   * What a profile adds to a request for `model` to `origin`: its headers with their secrets filled in, and whether its
   * model's body fields (`extraBody`, `neverSend`) may be used. A secret goes only to an origin it was stored for,
   * whichever profile names it (otherwise a `config` error, and nothing is sent). A workspace's profile adds headers
   * and body fields only after the user allowed exactly these names and values for that origin, in one question (asked
   * only for a request the user started); until then, and when declined or dismissed, none of them are used.
   */
  private async additionsFor(p: Profile, model: string, origin: string, interactive: boolean, profiles: readonly Profile[]): Promise<Additions> {
    const headers = p.headers && Object.keys(p.headers).length > 0 ? p.headers : undefined;
    const workspace = isWorkspaceProfile(p);
    const o = overrideFor(p, model);
    const body: WorkspaceBodyChanges = { fields: Object.keys(o.extraBody ?? {}).sort(), omitted: [...new Set(o.neverSend ?? [])].sort() };
    const asks = workspace && (headers !== undefined || body.fields.length > 0 || body.omitted.length > 0);
    if (!headers && !asks) return { body: true };
    const names = Object.keys(headers ?? {}).sort();
    let id = '';
    let allowed: boolean | undefined;
    if (asks) {
      id = await headerConsentId(origin, headers ?? {}, o);
      const answers = this.state.get<Record<string, boolean>>(HEADER_ANSWERS_STATE, {});
      allowed = Object.prototype.hasOwnProperty.call(answers, id) ? answers[id] : undefined;
      if (allowed === false || (allowed === undefined && !interactive)) return this.withoutAdditions(names, body, origin, interactive);
    }
    const refs = secretNames(headers);
    const secrets = await this.keys.headerSecrets(refs);
    for (const s of secrets.values()) this.log.addSecret(s.value);
    await this.bindLegacySecrets(secrets, profiles);
    // Throws before any question: a workspace is never asked about a secret it could not be sent anyway.
    const expanded = expandHeaders(headers, secrets, origin, p);
    if (asks && allowed === undefined && this.prompts.allowWorkspaceHeaders) {
      allowed = await this.prompts.allowWorkspaceHeaders(origin, names, refs.sort(), body);
      if (allowed !== undefined) await this.state.update(HEADER_ANSWERS_STATE, { ...this.state.get<Record<string, boolean>>(HEADER_ANSWERS_STATE, {}), [id]: allowed });
    }
    if (asks && allowed !== true) return this.withoutAdditions(names, body, origin, interactive);
    return { headers: expanded, body: true };
  }

  private withoutAdditions(names: string[], body: WorkspaceBodyChanges, origin: string, interactive: boolean): Additions {
    if (interactive) {
      const what = [
        ...(names.length ? [`headers (${names.join(', ')})`] : []),
        ...(body.fields.length ? [`body fields (${body.fields.join(', ')})`] : []),
        ...(body.omitted.length ? [`fields it leaves out (${body.omitted.join(', ')})`] : []),
      ];
      this.log.warn(`Not using the workspace profile's ${what.join(', ')} for ${origin}: not allowed.`);
    }
    return { body: false };
  }

  /**
   * Binds each secret stored before secrets had origins, once, to the origins of the user's own profiles that name it
   * (see legacyOrigins): the user wrote those profiles to send it there. One that no profile of the user names is left
   * as it is, sent nowhere, until one of the user's profiles names it or the user stores it again.
   */
  private async bindLegacySecrets(secrets: Map<string, HeaderSecret>, profiles: readonly Profile[]): Promise<void> {
    for (const [name, s] of secrets) {
      if (s.origins !== undefined) continue;
      const origins = legacyOrigins(name, profiles);
      if (origins.length === 0) continue;
      await this.keys.bindHeaderSecret(name, origins);
      secrets.set(name, { ...s, origins });
      this.log.info(`Header secret ${name} was stored before header secrets had origins: it is now sent only to ${origins.join(', ')} (where your own profiles use it). "Parley: Set Header Secret" changes this.`);
    }
  }

  /**
   * The settings with the system prompt the user allowed: a workspace's (or folder's) prompt that differs from the
   * user's is used only once the user allowed that exact text (asked only for a request the user started, as for a
   * workspace origin); until then, and when declined, the user's own prompt is sent.
   */
  private async withAllowedPrompt<S extends Settings>(s: S, interactive: boolean): Promise<S> {
    if ((s.systemPromptSource !== 'workspace' && s.systemPromptSource !== 'folder') || s.systemPrompt === s.userSystemPrompt) return s;
    const id = await promptDigest(s.systemPrompt);
    const answers = this.state.get<Record<string, boolean>>(PROMPT_APPROVALS_STATE, {});
    let allowed = Object.prototype.hasOwnProperty.call(answers, id) ? answers[id] : undefined;
    if (allowed === undefined && interactive && this.prompts.allowWorkspaceSystemPrompt) {
      allowed = await this.prompts.allowWorkspaceSystemPrompt(s.systemPrompt);
      if (allowed !== undefined) await this.state.update(PROMPT_APPROVALS_STATE, { ...this.state.get<Record<string, boolean>>(PROMPT_APPROVALS_STATE, {}), [id]: allowed });
    }
    if (allowed === true) return s;
    if (interactive) this.log.warn(`Not using the workspace's system prompt: ${allowed === false ? 'you declined it' : 'not allowed'}. Using yours.`);
    return { ...s, systemPrompt: s.userSystemPrompt };
  }

  /**
   * The settings a selection makes (its profile and model applied): what a request would use, without resolving the
   * endpoint or reading the key. For names and limits; requests go through target().
   */
  selected(selection: Selection = {}, base: Settings = this.settings.current): Settings & { profile: Profile } {
    return applyProfile(base, findProfile(base.profiles, selection.profile ?? base.activeProfile), selection.model, selection.effort);
  }

  /**
   * Whether the user allowed a workspace-set origin. Only a request the user started asks
   * (`interactive`); until then the header, the model list and the setup card use the user's endpoint.
   */
  private async workspaceOriginAllowed(origin: string, userOrigin: string, interactive: boolean): Promise<boolean> {
    const answers = this.state.get<Record<string, boolean>>(APPROVALS_STATE, {});
    if (Object.prototype.hasOwnProperty.call(answers, origin)) return answers[origin] === true;
    if (!interactive) return false;
    const allowed = await this.prompts.allowWorkspaceOrigin(origin, userOrigin);
    if (allowed === undefined) return false;
    await this.state.update(APPROVALS_STATE, { ...this.state.get<Record<string, boolean>>(APPROVALS_STATE, {}), [origin]: allowed });
    return allowed;
  }

  /** The system message with the project's rules that apply to a question about `files` (rules.ts; asks about new workspace rules). */
  withRules(s: Settings, files: string[], off?: string[], interactive = true): ReturnType<ReturnType<typeof rules>['rulesForTurn']> {
    return rules().rulesForTurn(this, s, files, interactive, off);
  }

  /** The panel's Rules button: the rule files to turn off for the conversation (rules.ts's quick pick). */
  chooseRules(views: RuleView[], off?: string[]): Promise<string[] | undefined> {
    return (this.prompts.chooseRules ?? rules().chooseRules)(views, off);
  }

  /** Forgets every answer about workspace-set origins, headers and system prompts; each is asked again before its next request. */
  async resetWorkspaceOrigins(): Promise<number> {
    const counted = [APPROVALS_STATE, HEADER_ANSWERS_STATE, PROMPT_APPROVALS_STATE, 'parley.workspaceRules'];
    const n = counted.reduce((sum, key) => sum + Object.keys(this.state.get<Record<string, boolean>>(key, {})).length, 0);
    for (const key of [...counted, OLD_HEADER_ANSWERS_STATE]) await this.state.update(key, undefined);
    return n;
  }

  clientOptions(t: ReadyTarget, signal?: AbortSignal): ClientOptions {
    return {
      endpoint: t.endpoint,
      apiKey: t.apiKey,
      headers: t.headers,
      requestTimeoutMs: t.settings.requestTimeoutSeconds * 1000,
      idleTimeoutMs: t.settings.streamIdleTimeoutSeconds * 1000,
      maxRetries: t.settings.maxRetries,
      signal,
      log: (line, level) => (level === 'info' ? this.log.info(line) : this.log.debug(line)),
      onRetry: (info) => this.log.info(`Retry ${info.attempt} in ${info.delayMs} ms: ${info.reason}`),
      // dist/textToolCalls.js (LAZY in esbuild.mjs): loaded by the first request that offers tools.
      textToolCalls: (names) => new (textToolCalls().TextCallFilter)(names),
      // dist/responses.js: loaded by the first model served on the Responses API, or a refusal that may say so.
      responses: () => responses().responsesApi,
      // dist/budget.js: the prices a model list gives are kept for the budget and the usage report.
      onModelList: (list) => void budget().learnPrices(this.state, usageHost(t), list),
    };
  }

  requestSettings(t: ReadyTarget, opts: Pick<RunOptions, 'stream' | 'responseFormat' | 'tools' | 'overrides'>): RequestSettings {
    const s = t.settings;
    return {
      model: s.model,
      // A profile may turn streaming off (a gateway that fails streamed requests); a caller's own choice wins.
      stream: opts.stream ?? s.profile?.stream ?? true,
      temperature: s.temperature,
      topP: s.topP,
      maxTokens: s.maxTokens,
      stop: s.stop,
      presencePenalty: s.presencePenalty,
      frequencyPenalty: s.frequencyPenalty,
      responseFormat: opts.responseFormat,
      tools: opts.tools?.length ? opts.tools : undefined,
      ...bodyOverrides(t.settings),
      ...opts.overrides,
    };
  }

  /** What requests from `source` learnt for this target's origin and model (`vscode-chat` has a store of its own). */
  adaptations(t: ReadyTarget, source: UsageRecord['source'] = 'chat'): Adaptations | undefined {
    return this.storeFor(source).get(t.endpoint.origin, t.settings.model);
  }

  private storeFor(source: UsageRecord['source']): AdaptationStore {
    return source === 'vscode-chat' ? this.lmLearnt : this.learnt;
  }

  /** Remembers what a server turned out to refuse, for this origin and model. */
  async rememberAdaptations(t: ReadyTarget, adaptations: Adaptations): Promise<void> {
    await this.learnt.set(t.endpoint.origin, t.settings.model, adaptations);
  }

  /** Forgets what was learnt, the panel's and this window's `vscode.lm` requests' alike, and the completion routes. */
  async resetAdaptations(): Promise<void> {
    await this.learnt.clear();
    await this.lmLearnt.clear();
    await this.state.update(COMPLETION_ROUTES_STATE, undefined);
  }

  /** Counts usage found after the fact (a reply interrupted by its window going away, see core/recovery.ts). */
  record(r: UsageRecord): Promise<void> {
    return this.usage.record(r);
  }

  /**
   * Sends the request (validating settings first), streams events, learns adaptations (kept by chatAndLearn), counts
   * usage. Every route's request passes the spend budget here first: one that would cross a blocking limit is not sent
   * and ends as a `budget` error; one whose stream crosses it is stopped there: it ends `cancelled` with a `budget`
   * error, its text kept, counted as a Stop is. The thresholds a request's spend crossed are said once it is counted.
   */
  async run(t: ReadyTarget, opts: RunOptions): Promise<RunOutcome> {
    const started = Date.now();
    const settings = this.requestSettings(t, opts);
    const model = settings.model;
    const budget = await this.budget.check({
      settings: t.settings, messages: opts.messages, tools: settings.tools, maxOutputTokens: settings.maxTokens, passKey: opts.budgetKey, stream: opts,
      host: usageHost(t), source: opts.source, models: (signal) => listModelInfo(this.clientOptions(t, signal)), prompts: this.prompts,
    });
    let sent: Awaited<ReturnType<Requester['exchange']>>;
    try {
      if (budget.kind !== 'send') this.say(budget.warnings, opts);
      if (budget.kind === 'block') {
        this.log.warn(`${opts.source} request to ${t.endpoint.url} model=${model}: ${budget.words}`);
        return { result: blockedResult(budget.words), target: t, dropped: [], durationMs: 0 };
      }
      for (const a of t.settings.adjusted) {
        if (this.adjustmentsLogged.has(a)) continue;
        this.adjustmentsLogged.add(a);
        this.log.warn(a);
      }
      // A model served on the Responses API (its profile says so, or Parley learnt it) is asked there: the log says where.
      const api = settings.api ?? this.adaptations(t, opts.source)?.api;
      this.log.info(`POST ${api === 'responses' ? responses().responsesUrl(t.endpoint) : t.endpoint.url} model=${model} stream=${settings.stream} messages=${opts.messages.length}`);
      if (this.log.traceEnabled) this.log.trace(`messages: ${JSON.stringify(opts.messages).slice(0, 20_000)}`);
      sent = await this.exchange(t, opts, settings, budget.watch, started);
    } finally {
      // Only now (also when the caller's onEvent or a warning's words threw): until its usage is on disk, other windows
      // count this request by its reservation.
      await budget.release?.();
    }
    const { r, usage, counted, durationMs, dropped } = sent;
    if (counted) this.say(await this.budget.crossed(t.settings), opts);
    this.log.info(
      `${r.ended}${r.finishReason ? ` (${r.finishReason})` : ''} in ${durationMs} ms, ` +
        `${usage.estimated ? '≈' : ''}${usage.total} tokens (${usage.prompt} prompt, ${usage.completion} completion)` +
        (r.error ? `; error ${r.error.kind}${r.error.status ? ` ${r.error.status}` : ''}: ${r.error.message}` : ''),
    );
    return { result: r, target: t, dropped, durationMs, usage: counted ? usage : undefined };
  }

  /** Sends the request (under the budget's watch, when it has one), says what was adapted, counts its usage. */
  private async exchange(t: ReadyTarget, opts: RunOptions, settings: RequestSettings, watch: StreamWatch | undefined, started: number) {
    const { signal, onEvent } = watch ?? opts;
    // A panel conversation's request carries its reasoning effort, and learns from it (dist/reasoningEffort.js).
    const send = t.settings.effort === undefined ? chatAndLearn : reasoningEffort().withPanelEffort(this.state, t);
    const outcome = await send(this.storeFor(opts.source), this.clientOptions(t, signal), settings, opts.messages, onEvent);
    const durationMs = Date.now() - started;
    const model = settings.model;
    for (const p of outcome.dropped) {
      const kept = opts.source === 'vscode-chat' ? "remembered for this window's vscode.lm requests" : 'remembered for next time';
      this.log.info(`Adapted to ${t.endpoint.origin} (${model}): it does not accept ${p}; ${kept}.`);
      opts.onAdapted?.(p);
    }
    const r = watch?.result(outcome.result) ?? outcome.result;
    const usage = recordFrom(r.usage, { model, host: usageHost(t), durationMs, source: opts.source, at: Date.now(), id: opts.usageId });
    const counted = billed(r);
    if (counted) await this.usage.record(usage);
    return { r, usage, counted, durationMs, dropped: outcome.dropped };
  }

  /** Says spend thresholds crossed: in the log, and to the caller (the panel shows a notice). */
  private say(warnings: readonly BudgetWarning[], opts: RunOptions): void {
    for (const w of warnings) {
      this.log.warn(w.words);
      opts.onBudgetWarning?.(w.words);
    }
  }
}

/** A request the budget did not let go: nothing sent, nothing counted, the limit in the error's words. */
function blockedResult(words: string): ChatResult {
  return {
    text: '', reasoning: '', refusal: '', toolCalls: [], finishReason: null, choices: [], sawDone: false, ended: 'error',
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated: true },
    error: new ParleyError('budget', words),
  };
}

/** What a profile adds to one request: its headers (secrets filled in), and whether its model's body fields may be used. */
interface Additions {
  headers?: Record<string, string>;
  body: boolean;
}

/** A profile's per-model body fields for the request, and the API it names, when it has any. */
function bodyOverrides(s: Settings): Pick<RequestSettings, 'extraBody' | 'neverSend' | 'api'> {
  const o = s.profile ? overrideFor(s.profile, s.model) : {};
  return { ...(o.extraBody ? { extraBody: o.extraBody } : {}), ...(o.neverSend ? { neverSend: o.neverSend } : {}), api: o.api };
}

function originOf(url: unknown): string | undefined {
  try {
    return resolveEndpoint(url).origin;
  } catch {
    return undefined;
  }
}
