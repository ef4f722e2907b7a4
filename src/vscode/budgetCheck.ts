// The spend budget's work for one request or one status bar render (core/budget.ts decides), with the requests in
// flight in every window (budgetReservations.ts), the watch of a request's stream, and the thresholds a request crossed:
// its own bundle (dist/budget.js), loaded once a limit is set. The state around it (passes, thresholds said) is
// budgetGuard.ts.
import { join } from 'node:path';
import {
  budgetStatus, decide, DEFAULT_MAX_OUTPUT, headroomNow, limitStatus, outputThatFits, priceOf, warningsNow, watchStream,
  type BudgetDecision, type BudgetWarning, type Extension, type RequestEstimate,
} from '../core/budget';
import type { BudgetPrices } from '../core/budgetSettings';
import { isWorkspaceProfile, usageHostOf } from '../core/profiles';
import { inFlightLedger } from '../core/reservations';
import { estimatePromptTokens, estimateTokens } from '../core/tokenEstimate';
import type { ChatMessage, StreamEvent, ToolDefinition } from '../core/types';
import type { Ledger, Price } from '../core/usageLedger';
import { LOCK_WAIT_MS, readReservations, reserve, underLock, type Held } from './budgetReservations';
import type { Settings } from './config';
import type { Log } from './log';
import type { UsageStore } from './usageStore';

/** What the budget needs of one request. */
export interface GuardedRequest {
  settings: Pick<Settings, 'budget' | 'pricing' | 'profiles' | 'model' | 'profile'>;
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  maxOutputTokens?: number;
  /** The conversation a "Send once anyway" pass was given for; undefined: no pass applies. */
  passKey?: string;
  /** Set for a request whose stream is to be watched (Requester.run's options): its signal and its caller's onEvent. */
  stream?: { signal?: AbortSignal; onEvent?: (e: StreamEvent) => void };
}

/** What the budget weighs of one request: its profile, the prices, and its prompt estimate and maximum output. */
function estimateOf(r: GuardedRequest): { profile: string | undefined; prices: BudgetPrices; request: RequestEstimate } {
  const s = r.settings;
  const profile = profileOf(s);
  const prices = pricesOf(s);
  return {
    profile,
    prices,
    request: {
      promptTokens: estimatePromptTokens(r.messages) + (r.tools?.length ? estimateTokens(JSON.stringify(r.tools)) : 0),
      maxOutputTokens: r.maxOutputTokens,
      price: priceOf(prices, profile?.replace(/\|/g, '/'), s.model),
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
 */
export function guardRequest(r: GuardedRequest, a: {
  usage: Pick<UsageStore, 'ledger' | 'dir'>;
  warned: ReadonlySet<string>;
  passes: Set<string>;
  log?: Pick<Log, 'warn'>;
}): Promise<GuardedDecision> {
  const dir = join(a.usage.dir, 'inflight');
  return underLock(dir, async (locked) => {
    if (!locked) a.log?.warn(`Spend budget: another window's check held the lock for over ${LOCK_WAIT_MS / 1000} s, or ${dir} cannot be written; checked without it (a request sent at this moment in another window may not be counted).`);
    const now = Date.now();
    const e = estimateOf(r);
    const [ledger, held] = await Promise.all([a.usage.ledger(), readReservations(dir, now).catch(() => [])]);
    const decision = decide({ ...e, limits: r.settings.budget, ledger, now, warned: a.warned, inFlight: inFlightLedger(held, now) });
    // A pass is for the next request of its conversation, blocked or not: never kept for a later one.
    const passed = r.passKey !== undefined && a.passes.delete(r.passKey);
    if (decision.kind === 'block' && !passed) return decision;
    const { promptTokens, maxOutputTokens = DEFAULT_MAX_OUTPUT } = e.request;
    const reservation = { at: now, host: usageHostOf(r.settings.profile, 'in flight'), model: r.settings.model, prompt: promptTokens, completion: maxOutputTokens };
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
    const [ledger, others] = await Promise.all([a.usage.ledger(), readReservations(a.dir, now, a.mine.name)]);
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
export function budgetWarnings(s: GuardedRequest['settings'], ledger: Ledger, warned: ReadonlySet<string>, now: number): BudgetWarning[] {
  return warningsNow({ limits: s.budget, ledger, prices: pricesOf(s), now, profile: profileOf(s), warned });
}

/** The profile whose limits apply: a named profile's name, or undefined for the implicit profile. */
function profileOf(s: Pick<Settings, 'profile'>): string | undefined {
  return s.profile && s.profile.source !== 'implicit' ? s.profile.name : undefined;
}

/** The status bar's budget lines and whether a warn limit is reached. */
export function budgetTooltip(s: Pick<Settings, 'budget' | 'pricing' | 'profiles'>, ledger: Ledger, now: number): { markdown: string; reached: boolean } {
  return budgetStatus(limitStatus(s.budget, ledger, pricesOf(s), now), now);
}

/** The prices the budget counts with: `parley.pricing` and each profile's models' own. */
export function pricesOf(s: Pick<Settings, 'pricing' | 'profiles'>): BudgetPrices {
  const profiles: BudgetPrices['profiles'] = {};
  for (const p of s.profiles) {
    if (p.source === 'implicit') continue;
    const models: Record<string, Price> = {};
    for (const [id, o] of Object.entries(p.models)) if (o.price) models[id] = o.price;
    profiles[p.name.replace(/\|/g, '/')] = { workspace: isWorkspaceProfile(p), models };
  }
  return { pricing: s.pricing, profiles };
}
