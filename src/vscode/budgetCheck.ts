// The spend budget's work for one request or one status bar render (core/budget.ts decides), with the requests in
// flight in every window (budgetReservations.ts), the watch of a request's stream, and the thresholds a request crossed:
// its own bundle (dist/budget.js), loaded once a limit is set. The state around it (passes, thresholds said) is
// budgetGuard.ts; the prices learnt from model lists and the answers about unpriced models are priceBook.ts.
import { join } from 'node:path';
import type * as vscode from 'vscode';
import {
  budgetStatus, decide, DEFAULT_MAX_OUTPUT, findPrice, headroomNow, limitName, limitStatus, limitsFor, outputThatFits, unpricedBlock,
  warningsNow, watchStream, type BudgetDecision, type BudgetLimit, type BudgetWarning, type Extension, type RequestEstimate, type UnpricedWhy,
} from '../core/budget';
import { mistakeKey, mistakeNotice, mistakeSetting, mistakeWords } from '../core/budgetMistakes';
import type { BudgetMistake, BudgetPrices } from '../core/budgetSettings';
import { markdownProse } from '../core/markdownText';
import type { ReportPrices } from '../core/priceSources';
import { isWorkspaceProfile, type Profile } from '../core/profiles';
import { inFlightLedger } from '../core/reservations';
import { estimatePromptTokens, estimateTokens } from '../core/tokenEstimate';
import type { ChatMessage, ModelInfo, StreamEvent, ToolDefinition } from '../core/types';
import type { Ledger, Price, UsageRecord } from '../core/usageLedger';
import { LOCK_WAIT_MS, readReservations, reserve, underLock, type Held } from './budgetReservations';
import type { Settings } from './config';
import type { Log } from './log';
import { askListOnce, askUnknownPrice, learnedPrices, LIST_FRESH_MS, unpricedAnswer, unpricedAnswers, type UnknownPriceQuestion } from './priceBook';
import type { UsageStore } from './usageStore';

export { learnPrices } from './priceBook';

/** What the budget needs of one request. */
export interface GuardedRequest {
  settings: Pick<Settings, 'budget' | 'pricing' | 'userPricing' | 'profiles' | 'userProfiles' | 'model' | 'profile'>;
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  maxOutputTokens?: number;
  /** The conversation a "Send once anyway" pass was given for; undefined: no pass applies. */
  passKey?: string;
  /** Set for a request whose stream is to be watched (Requester.run's options): its signal and its caller's onEvent. */
  stream?: { signal?: AbortSignal; onEvent?: (e: StreamEvent) => void };
  /** The ledger host the request counts under (usageHost: `host`, or `profile (host)`). */
  host: string;
  /** What asks. Only a request started in Parley itself may ask about a model with no known price (see asks). */
  source?: UsageRecord['source'];
  /** GET /models of the request's endpoint, for its prices; undefined: the prices learnt already are all there is. */
  models?: (signal: AbortSignal) => Promise<ModelInfo[]>;
  /** The question about a model with no known price (Prompts.unknownPrice: tests answer it there). */
  prompts?: { unknownPrice?: UnknownPriceQuestion };
}

/**
 * Whether a request may ask the user about a model with no known price: one a person started in Parley (the panel,
 * its editor commands, Test Connection, the panel's compaction). VS Code's chat and other extensions (`vscode.lm`) and
 * inline completions never ask: their request could wait on a dialog nobody looks for, so it is refused instead.
 */
function asks(source: UsageRecord['source'] | undefined): boolean {
  return source !== undefined && source !== 'vscode-chat' && source !== 'complete';
}

/** The price a request counts at, and when a dollar limit applies and none is known, why it is not sent (if it is not). */
interface KnownPrice {
  prices: BudgetPrices;
  price?: Price;
  unpriced?: { limit: BudgetLimit; why: UnpricedWhy };
}

/**
 * The price a request counts at: the settings', else the endpoint's model list's (read before a request under a dollar
 * limit when the settings price nothing, once a day at most), else none. With none while a dollar limit applies, the
 * user's answer (remembered per host and model, asked by a request that may ask): uncounted, or why it is not sent.
 * Made before the lock across windows is taken: a model list read or a question never keeps other windows waiting.
 */
async function knownPrice(r: GuardedRequest, state: vscode.Memento, now: number): Promise<KnownPrice> {
  const s = r.settings;
  const dollars = limitsFor(s.budget, profileOf(s)).find((l) => l.unit === 'dollars');
  let prices = pricesOf(s, state);
  let found = findPrice(prices, r.host, s.model);
  const stale = found.source === 'none' || found.source === 'workspace' || (found.source === 'list' && now - (found.at ?? 0) > LIST_FRESH_MS);
  if (dollars && stale && r.models) {
    await askListOnce(state, r.host, r.models, now);
    prices = pricesOf(s, state);
    found = findPrice(prices, r.host, s.model);
  }
  // A workspace's price alone (no price of the user's or a model list's) counts as none: it cannot let a request past
  // the question, nor VS Code's chat past its refusal (a repository could price a model at 0).
  if (!dollars || (found.price && found.source !== 'workspace')) return { prices, price: found.price };
  const answer = await unpricedAnswer(state, r.host, s.model, limitName(dollars), asks(r.source) ? r.prompts?.unknownPrice ?? askUnknownPrice : undefined);
  if (answer === 'uncounted') return { prices };
  return { prices, unpriced: { limit: dollars, why: answer === 'block' ? 'blocked' : answer ?? 'dismissed' } };
}

/** What the budget weighs of one request: its profile, the prices, and its prompt estimate and maximum output. */
function estimateOf(r: GuardedRequest, known: KnownPrice): { profile: string | undefined; prices: BudgetPrices; request: RequestEstimate } {
  return {
    profile: profileOf(r.settings),
    prices: known.prices,
    request: {
      promptTokens: estimatePromptTokens(r.messages) + (r.tools?.length ? estimateTokens(JSON.stringify(r.tools)) : 0),
      maxOutputTokens: r.maxOutputTokens,
      price: known.price,
    },
  };
}

/** A request's decision; one that is sent holds a reservation until `release` (call it once its usage is recorded). */
export type GuardedDecision = BudgetDecision & { release?: () => Promise<void> };

/**
 * The decision for one request with every window's requests in flight counted, made and reserved under the lock across
 * windows: of two windows checking at once, the second sees the first's reservation. A block is turned into a send
 * when the reader gave the request's conversation a pass (`passes`, used up here). A request sent reserves the most it
 * may cost; a blocked one reserves nothing. Without the lock (LOCK_WAIT_MS passed) the check still counts the
 * reservations it finds, and `log` says so. A request let go with a stream to watch gets the watch that stops it once
 * it crosses a blocking limit (core/budget.ts watchStream); one let go by a pass is not watched: the pass covers it whole.
 * The price is found first (knownPrice): a model with no known price under a dollar limit is not sent unless the user
 * allowed it uncounted (`state`: global state, with the prices model lists gave and the answers).
 */
export async function guardRequest(r: GuardedRequest, a: {
  usage: Pick<UsageStore, 'ledger' | 'dir'>;
  warned: ReadonlySet<string>;
  passes: Set<string>;
  log?: Pick<Log, 'warn'>;
  state: vscode.Memento;
}): Promise<GuardedDecision> {
  const dir = join(a.usage.dir, 'inflight');
  const known = await knownPrice(r, a.state, Date.now());
  return underLock(dir, async (locked) => {
    if (!locked) a.log?.warn(`Spend budget: another window's check held the lock for over ${LOCK_WAIT_MS / 1000} s, or ${dir} cannot be written; checked without it (a request sent at this moment in another window may not be counted).`);
    const now = Date.now();
    const e = estimateOf(r, known);
    // The requests in flight, then the spend: a request records its usage before it lets go of its reservation, so
    // read in this order it is counted at least once (by both, at worst), never by neither.
    const held = await readReservations(dir, now).catch(() => []);
    const ledger = await a.usage.ledger();
    let decision = decide({ ...e, limits: r.settings.budget, ledger, now, warned: a.warned, inFlight: inFlightLedger(held, now) });
    const u = known.unpriced;
    if (u && decision.kind !== 'block') decision = unpricedBlock(decision, u.limit, { model: r.settings.model, host: r.host, why: u.why, ledger, prices: e.prices, now });
    // A pass is for the next request of its conversation, blocked or not: never kept for a later one.
    const passed = r.passKey !== undefined && a.passes.delete(r.passKey);
    if (decision.kind === 'block' && !passed) return decision;
    const { promptTokens, maxOutputTokens = DEFAULT_MAX_OUTPUT } = e.request;
    // Under the request's own ledger host, so that it is priced as its usage will be (a model list's prices are by host).
    const reservation = { at: now, host: r.host, model: r.settings.model, prompt: promptTokens, completion: maxOutputTokens };
    const mine = await reserve(dir, reservation).catch((err: unknown) => {
      a.log?.warn(`Spend budget: this request's reservation could not be written (${err instanceof Error ? err.message : String(err)}); other windows count it once its usage is recorded.`);
      return undefined;
    });
    if (decision.kind === 'block' || passed) {
      const warnings = decision.kind === 'send' ? [] : decision.warnings;
      return { ...(warnings.length > 0 ? { kind: 'warn', warnings } : { kind: 'send' }), release: mine?.release };
    }
    const grow = mine && { step: maxOutputTokens, extend: (output: number) => growReservation(r, e, output, maxOutputTokens, { dir, usage: a.usage, mine }) };
    return { ...watched(decision, r, { prompt: promptTokens, reserved: mine ? maxOutputTokens : Infinity, now, grow }), release: mine?.release };
  });
}

/**
 * Reserves more for a request whose stream is half way through its reservation (under the lock, with the spend and
 * the other requests in flight read afresh): another `step` of output, or what still fits.
 */
function growReservation(r: GuardedRequest, e: ReturnType<typeof estimateOf>, output: number, step: number, a: { dir: string; usage: Pick<UsageStore, 'ledger'>; mine: Held }): Promise<Extension | undefined> {
  return underLock(a.dir, async (locked) => {
    if (!locked) return undefined;
    const now = Date.now();
    // In flight first, then the spend, as in the check.
    const others = await readReservations(a.dir, now, a.mine.name);
    const ledger = await a.usage.ledger();
    const headroom = headroomNow({ limits: r.settings.budget, ledger, prices: e.prices, now, profile: e.profile, price: e.request.price, inFlight: inFlightLedger(others, now) });
    const reserved = Math.min(output + step, outputThatFits(headroom, e.request.promptTokens));
    await a.mine.grow(Math.max(reserved, output));
    return { headroom, reserved };
  }).catch(() => undefined);
}

/** A decision to send, with the watch of the request's stream when it asked for one and a blocking limit applies. */
function watched(d: Exclude<BudgetDecision, { kind: 'block' }>, r: GuardedRequest, w: { prompt: number; reserved: number; now: number; grow?: { step: number; extend: (output: number) => Promise<Extension | undefined> } }): BudgetDecision {
  if (!r.stream || !d.headroom?.length) return d;
  return { ...d, watch: watchStream({ headroom: d.headroom, ...w, signal: r.stream.signal, onEvent: r.stream.onEvent }) };
}

/** The thresholds the spend of a profile's requests crossed that were not said yet (after a request was counted). */
export function budgetWarnings(s: GuardedRequest['settings'], ledger: Ledger, warned: ReadonlySet<string>, now: number, state?: Pick<vscode.Memento, 'get'>): BudgetWarning[] {
  return warningsNow({ limits: s.budget, ledger, prices: pricesOf(s, state), now, profile: profileOf(s), warned });
}

/** The profile whose limits apply: a named profile's name, or undefined for the implicit profile. */
function profileOf(s: Pick<Settings, 'profile'>): string | undefined {
  return s.profile && s.profile.source !== 'implicit' ? s.profile.name : undefined;
}

/** The status bar's budget lines, then the limits that cannot be read (so not enforced), and whether a warn limit is reached. */
export function budgetTooltip(s: Pick<Settings, 'budget' | 'budgetMistakes' | 'pricing' | 'userPricing' | 'profiles' | 'userProfiles'>, ledger: Ledger, now: number, state?: Pick<vscode.Memento, 'get'>): { markdown: string; reached: boolean } {
  const status = budgetStatus(limitStatus(s.budget, ledger, pricesOf(s, state), now), now);
  if (s.budgetMistakes.length === 0) return status;
  // What a workspace wrote is shown as text, never as Markdown.
  const unread = ['**Not enforced**: these limits cannot be read', '', ...s.budgetMistakes.map((m) => `- ${markdownProse(mistakeWords(m))}`)].join('\n');
  return { ...status, markdown: status.markdown ? `${status.markdown}\n\n${unread}` : unread };
}

/** The spend limits that cannot be read and were said in this window, by mistakeKey: each is said once. */
const said = new Set<string>();
const OPEN = 'Open Settings';

/**
 * Says each spend limit that cannot be read (Settings.budgetMistakes) once per window: a warning (`warn`: notices.ts
 * showWarning) that names it, says what is wrong and that it is not enforced, with a button that opens its setting
 * (`open`: config.ts openBudgetSettings); and a line in the log. Called when the window starts and when the settings
 * change, never per request.
 */
export function sayBudgetMistakes(
  mistakes: readonly BudgetMistake[],
  log: Pick<Log, 'warn'>,
  warn: (text: string, button: string) => PromiseLike<string | undefined>,
  open: (id: string) => unknown,
): void {
  for (const m of mistakes) {
    const key = mistakeKey(m);
    if (said.has(key)) continue;
    said.add(key);
    log.warn(`Spend limit not enforced: ${mistakeWords(m)}`);
    void warn(mistakeNotice(m), OPEN).then((picked) => picked === OPEN && open(mistakeSetting(m)));
  }
}

/** The prices the budget counts with: `parley.pricing`, each profile's models' own, and what model lists said. */
export function pricesOf(s: Pick<Settings, 'pricing' | 'userPricing' | 'profiles' | 'userProfiles'>, state?: Pick<vscode.Memento, 'get'>): BudgetPrices {
  const profiles: BudgetPrices['profiles'] = {};
  const priced = (p: Profile) => {
    const models: Record<string, Price> = {};
    for (const [id, o] of Object.entries(p.models)) if (o.price) models[id] = o.price;
    return models;
  };
  for (const p of s.profiles) {
    if (p.source === 'implicit') continue;
    // A workspace profile named as one of the user's replaced it: the user's prices still come first.
    const mine = isWorkspaceProfile(p) ? s.userProfiles?.find((u) => u.name === p.name && u.source === 'user') : undefined;
    profiles[p.name.replace(/\|/g, '/')] = { workspace: isWorkspaceProfile(p), models: priced(p), ...(mine ? { user: priced(mine) } : {}) };
  }
  // `pricing` is a trusted workspace's where it sets one: after the user's own and the model lists'.
  return { pricing: s.userPricing ?? s.pricing, profiles, listed: state ? learnedPrices(state) : {}, workspacePricing: s.pricing };
}

/** How the usage report prices each ledger row (the budget's prices, in the same order) and says where they came from. */
export function reportPricing(s: Pick<Settings, 'pricing' | 'userPricing' | 'profiles' | 'userProfiles'>, state: Pick<vscode.Memento, 'get'>): ReportPrices {
  const prices = pricesOf(s, state);
  return { find: (host, model) => findPrice(prices, host, model), answers: unpricedAnswers(state) };
}
