// Spend budgets (`parley.budget`, and a profile's own `budget`, read by core/budgetSettings.ts): what each period has
// spent, what one request may cost, the decision before it is sent (send, warn, or block), and the watch that stops
// its stream once it crosses a blocking limit. Periods are calendar periods in the user's local time; a week starts on
// Monday. Its own bundle (dist/budget.js), loaded once a limit is set.
import { amountWords, type BudgetLimit, type BudgetPeriod, type BudgetPrices } from './budgetSettings';
import { ParleyError } from './errors';
import { markdownProse } from './markdownText';
import type { FoundPrice } from './priceSources';
import { tokensFor, wordsIn } from './tokenEstimate';
import type { ChatResult, StreamEvent, Usage } from './types';
import { costOf, dayOf, type Ledger, type Price } from './usageLedger';

export type { BudgetLimit, BudgetPeriod, BudgetPrices } from './budgetSettings';

/** Thresholds warned about, in percent of a limit. */
export const THRESHOLDS = [50, 80, 100] as const;
export type Threshold = (typeof THRESHOLDS)[number];

/** Assumed reply size when a request sets no maximum output (the estimate needs one). */
export const DEFAULT_MAX_OUTPUT = 4096;

/** The start of the period `at` falls in, local time: midnight today, Monday's midnight, or the 1st's. */
export function periodStart(period: BudgetPeriod, at: number): Date {
  const d = new Date(at);
  if (period === 'day') return new Date(d.getFullYear(), d.getMonth(), d.getDate());
  if (period === 'month') return new Date(d.getFullYear(), d.getMonth(), 1);
  const sinceMonday = (d.getDay() + 6) % 7;
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() - sinceMonday);
}

/** When the period `at` falls in ends (the next one starts), local time. */
export function periodEnd(period: BudgetPeriod, at: number): Date {
  const s = periodStart(period, at);
  if (period === 'day') return new Date(s.getFullYear(), s.getMonth(), s.getDate() + 1);
  if (period === 'week') return new Date(s.getFullYear(), s.getMonth(), s.getDate() + 7);
  return new Date(s.getFullYear(), s.getMonth() + 1, 1);
}

/** The profile a ledger row's host names (`name (host)`), or undefined for the implicit profile (a bare host). */
export function profileOfHost(host: string): string | undefined {
  const m = /^(.*) \([^()]*\)$/.exec(host);
  return m ? m[1] : undefined;
}

/**
 * A model's price for the requests of a ledger host (`host`, or `profile (host)`), and where it came from: a user
 * profile's own price, else the user's `parley.pricing`, else what that host's model list said, else a workspace
 * profile's or a workspace's `parley.pricing` (so a workspace can neither undercut the user's prices nor the server's).
 */
export function findPrice(prices: BudgetPrices, host: string, model: string): FoundPrice {
  const own = (r: Record<string, Price> | undefined) => (r && Object.prototype.hasOwnProperty.call(r, model) ? r[model] : undefined);
  const profile = profileOfHost(host);
  const p = profile !== undefined && Object.prototype.hasOwnProperty.call(prices.profiles, profile) ? prices.profiles[profile] : undefined;
  const listed = prices.listed && Object.prototype.hasOwnProperty.call(prices.listed, host) ? prices.listed[host] : undefined;
  const found: Array<[Price | undefined, FoundPrice['source']]> = [
    [p && (p.workspace ? own(p.user) : own(p.models)), 'profile'], [own(prices.pricing), 'pricing'], [own(listed?.models), 'list'],
    [own(p?.models), 'workspace'], [own(prices.workspacePricing), 'workspace'],
  ];
  const [price, source] = found.find(([x]) => x !== undefined) ?? [undefined, 'none'];
  return price ? { price, source, ...(source === 'list' ? { at: listed?.at } : {}) } : { source: 'none' };
}

/** A model's price for a ledger host's requests (findPrice), or undefined when none is known. */
export function priceOf(prices: BudgetPrices, host: string, model: string): Price | undefined {
  return findPrice(prices, host, model).price;
}

/**
 * What the ledger counts against a limit in the period `now` falls in: tokens (every token counted), or dollars at
 * each model's price (a model with no known price adds nothing: see the README). Only the limit's profile's rows
 * count for a profile's limit. The ledger is by local day, as the periods are.
 */
export function spentIn(limit: Pick<BudgetLimit, 'period' | 'unit' | 'profile'>, ledger: Ledger, prices: BudgetPrices, now: number): number {
  const from = dayOf(periodStart(limit.period, now).getTime());
  const to = dayOf(periodEnd(limit.period, now).getTime());
  let sum = 0;
  for (const [key, t] of Object.entries(ledger)) {
    // The day first: a ledger holds every day ever counted, and a limit counts a month of them at most.
    const day = key.slice(0, key.indexOf('|'));
    if (day < from || day >= to) continue;
    const [, host, ...rest] = key.split('|');
    const profile = profileOfHost(host);
    if (limit.profile !== undefined && profile !== limit.profile.replace(/\|/g, '/')) continue;
    sum += limit.unit === 'tokens' ? t.total : costOf(t, priceOf(prices, host, rest.join('|'))) ?? 0;
  }
  return sum;
}

/** One request before it is sent: its prompt estimate, the most it may write, and its model's price. */
export interface RequestEstimate {
  promptTokens: number;
  /** The request's `max_tokens`; undefined: DEFAULT_MAX_OUTPUT is assumed. */
  maxOutputTokens?: number;
  price: Price | undefined;
}

/** What the request may cost at most: tokens, and dollars (undefined when the model has no known price). */
export function requestCost(e: RequestEstimate): { tokens: number; dollars: number | undefined } {
  const output = e.maxOutputTokens ?? DEFAULT_MAX_OUTPUT;
  return { tokens: e.promptTokens + output, dollars: costOf({ prompt: e.promptTokens, completion: output }, e.price) };
}

/** A threshold of a limit crossed for the first time in its period. */
export interface BudgetWarning {
  limit: BudgetLimit;
  threshold: Threshold;
  spent: number;
  /** Every threshold key this warning covers (the crossed ones below it too): remembered so none is said again. */
  keys: string[];
  words: string;
}

/** What a request let go may still spend under one blocking limit: the amount left, and the model's price for dollars. */
export interface Headroom {
  limit: BudgetLimit;
  /** In the limit's unit. */
  left: number;
  price: Price | undefined;
}

/**
 * The decision before a request: send it, send it and warn, or do not send it. A request let go has the headroom of
 * each blocking limit it counts against (none after a pass), and, when its caller asked for one, the watch of its stream.
 */
export type BudgetDecision =
  | { kind: 'send'; headroom?: Headroom[]; watch?: StreamWatch }
  | { kind: 'warn'; warnings: BudgetWarning[]; headroom?: Headroom[]; watch?: StreamWatch }
  | { kind: 'block'; limit: BudgetLimit; spent: number; left: number; cost: number; resetsAt: number; words: string; warnings: BudgetWarning[] };

/** The state of one limit now, for the status bar. */
export interface LimitStatus {
  limit: BudgetLimit;
  spent: number;
  /** Spent over the amount (1 = 100 %). */
  share: number;
}

/** Every limit that applies to a profile's request: the global ones and that profile's own. */
export function limitsFor(limits: readonly BudgetLimit[], profile: string | undefined): BudgetLimit[] {
  return limits.filter((l) => l.profile === undefined || l.profile === profile);
}

/** Each limit with what its period has spent. */
export function limitStatus(limits: readonly BudgetLimit[], ledger: Ledger, prices: BudgetPrices, now: number): LimitStatus[] {
  return limits.map((limit) => {
    const spent = spentIn(limit, ledger, prices, now);
    return { limit, spent, share: limit.amount > 0 ? spent / limit.amount : 1 };
  });
}

/**
 * The decision for one request to `profile`'s endpoint (undefined: the implicit profile). It is blocked when a
 * blocking limit is spent, or when the request's most it may cost would cross it, counting what the requests still in
 * flight (`inFlight`: sent, not yet recorded, at their most) may cost too; warned about when a limit's period spent
 * 50, 80 or 100 % of it and that threshold was not said yet this period (`warned`: keys already said). Warnings count
 * only what is spent.
 */
export function decide(a: {
  limits: readonly BudgetLimit[];
  ledger: Ledger;
  prices: BudgetPrices;
  now: number;
  profile: string | undefined;
  request: RequestEstimate;
  warned: ReadonlySet<string>;
  inFlight?: Ledger;
}): BudgetDecision {
  const cost = requestCost(a.request);
  const states = limitStatus(limitsFor(a.limits, a.profile), a.ledger, a.prices, a.now);
  const warnings = states.flatMap((s) => warningFor(s, a.now, a.warned));
  const headroom: Headroom[] = [];
  for (const s of states) {
    if (s.limit.action !== 'block') continue;
    const c = s.limit.unit === 'tokens' ? cost.tokens : cost.dollars ?? 0;
    const held = a.inFlight ? spentIn(s.limit, a.inFlight, a.prices, a.now) : 0;
    if (s.spent >= s.limit.amount || s.spent + held + c > s.limit.amount) {
      const left = Math.max(0, s.limit.amount - s.spent - held);
      const resetsAt = periodEnd(s.limit.period, a.now).getTime();
      return { kind: 'block', limit: s.limit, spent: s.spent, left, cost: c, resetsAt, words: blockWords(s, held, left, c, resetsAt, a.now), warnings };
    }
    // What the other requests in flight may cost is theirs. A model with no known price adds nothing to a dollar
    // limit: its stream cannot cross one.
    if (s.limit.unit === 'tokens' || cost.dollars !== undefined) headroom.push({ limit: s.limit, left: s.limit.amount - s.spent - held, price: a.request.price });
  }
  return warnings.length > 0 ? { kind: 'warn', warnings, headroom } : { kind: 'send', headroom };
}

/**
 * What is left of each blocking limit for a request already let go, after the spend and the other requests in flight
 * (`inFlight`, its own reservation left out): read afresh when its reservation grows (watchStream's `extend`).
 */
export function headroomNow(a: { limits: readonly BudgetLimit[]; ledger: Ledger; prices: BudgetPrices; now: number; profile: string | undefined; price: Price | undefined; inFlight: Ledger }): Headroom[] {
  return limitStatus(limitsFor(a.limits, a.profile), a.ledger, a.prices, a.now)
    .filter((s) => s.limit.action === 'block' && (s.limit.unit === 'tokens' || a.price !== undefined))
    .map((s) => ({ limit: s.limit, left: s.limit.amount - s.spent - spentIn(s.limit, a.inFlight, a.prices, a.now), price: a.price }));
}

/** The thresholds of the limits that apply to `profile`'s requests that the spend crossed and that were not said yet. */
export function warningsNow(a: { limits: readonly BudgetLimit[]; ledger: Ledger; prices: BudgetPrices; now: number; profile: string | undefined; warned: ReadonlySet<string> }): BudgetWarning[] {
  return limitStatus(limitsFor(a.limits, a.profile), a.ledger, a.prices, a.now).flatMap((s) => warningFor(s, a.now, a.warned));
}

/** The first blocking limit that a request which has cost `prompt` and `output` tokens so far is past, if any. */
export function overrun(headroom: readonly Headroom[], prompt: number, output: number): Headroom | undefined {
  return headroom.find((h) => (h.limit.unit === 'tokens' ? prompt + output : costOf({ prompt, completion: output }, h.price) ?? 0) > h.left);
}

/** A request's stream under the budget's watch (watchStream). */
export interface StreamWatch {
  /** The signal the request runs under: the caller's, and the budget's stop. */
  readonly signal: AbortSignal;
  /** Takes each event of the stream: passes it on to the caller, then adds what it cost and stops the stream once it crosses a limit. */
  onEvent(e: StreamEvent): void;
  /** The result as the caller sees it: a stream the budget stopped ends `cancelled` (a Stop) with a `budget` error, its text kept. */
  result(r: ChatResult): ChatResult;
}

/** A reservation grown (watchStream's `extend`): the headroom read afresh, and the output tokens now reserved. */
export interface Extension {
  headroom: readonly Headroom[];
  reserved: number;
}

/** The most output tokens a request with `prompt` tokens may still write under every limit's headroom (Infinity: no bound). */
export function outputThatFits(headroom: readonly Headroom[], prompt: number): number {
  let most = Infinity;
  for (const h of headroom) {
    if (h.limit.unit === 'tokens') most = Math.min(most, h.left - prompt);
    else if (h.price && h.price.output > 0) most = Math.min(most, ((h.left - ((costOf({ prompt, completion: 0 }, h.price) ?? 0))) * 1_000_000) / h.price.output);
  }
  return Math.max(0, Math.floor(most));
}

/**
 * What an output event adds to a reply's size. Text held back (a call written as text) counts when held (`held.chars`
 * keeps how much); when it is let go as text, only what is new counts again.
 */
function countedText(e: Exclude<StreamEvent, { type: 'finish' | 'usage' | 'end' }>, held: { chars: number }): string {
  const text = e.type === 'tool_call' ? (e.name ?? '') + (e.arguments ?? '') : e.text;
  if (e.type === 'held') held.chars += text.length;
  if (e.type !== 'text' || held.chars === 0) return text;
  const again = Math.min(held.chars, text.length);
  held.chars -= again;
  return text.slice(again);
}

/**
 * Watches one request's stream against the headroom of the blocking limits: its cost so far is the prompt estimate
 * plus what arrived (text, reasoning, refusals, tool calls, and a call written as text while it is held back; estimated
 * as core/tokenEstimate.ts counts a stopped reply; or the server's own usage, when it sends one mid-stream and it is
 * higher), weighed on each delta (the cost grows only when one arrives). Once it is past a limit the request is
 * aborted, so the server sees the connection close. Other windows count this request at its reservation (`reserved`
 * output tokens): once less than half a step of it is left, `grow` reserves another step (or what the limits leave)
 * and reads the headroom afresh, with the other requests' reservations, so two streams together stay under a limit.
 * The decision waits for the end of the events handed over together (one network read): a reply whose finish came
 * with the crossing piece is whole, and nothing is stopped after a finish.
 */
export function watchStream(a: {
  headroom: readonly Headroom[];
  prompt: number;
  now: number;
  /** Output tokens reserved for the request (Infinity: none, nothing to outgrow). */
  reserved?: number;
  /** Grows the reservation by `step` output tokens once less than half a step is left. */
  grow?: { step: number; extend: (output: number) => Promise<Extension | undefined> };
  signal?: AbortSignal;
  onEvent?: (e: StreamEvent) => void;
}): StreamWatch {
  const stop = new AbortController();
  let chars = 0;
  let words = 0;
  const held = { chars: 0 };
  let reported: Usage | undefined;
  let whole = false;
  let stopped: string | undefined;
  let [deciding, extending] = [false, false];
  let headroom = a.headroom;
  let reserved = a.reserved ?? Infinity;
  let grow = a.grow;
  const output = () => Math.max(tokensFor(chars, words), reported?.completion_tokens ?? 0);
  const decideNow = (): void => {
    deciding = false;
    if (whole || stopped !== undefined || stop.signal.aborted) return;
    const out = output();
    const over = overrun(headroom, reported?.prompt_tokens ?? a.prompt, out);
    if (over) {
      stopped = stoppedWords(over.limit, a.now);
      stop.abort();
    } else if (grow && !extending && reserved - out < grow.step / 2) {
      extending = true;
      const step = grow.step;
      // Not grown (the lock or the folder failed): the limits are still watched, the reservation no more.
      void grow.extend(out).catch(() => undefined).then((x) => {
        ({ headroom, reserved } = x ?? { headroom, reserved: Infinity });
        // Grown by less than a step: it holds what the limits leave, and asking again would find no more.
        if (reserved < out + step) grow = undefined;
        extending = false;
        decideNow();
      });
    }
  };
  return {
    signal: a.signal ? AbortSignal.any([a.signal, stop.signal]) : stop.signal,
    onEvent(e) {
      a.onEvent?.(e);
      if (whole || stopped !== undefined) return;
      if (e.type === 'finish') whole = true;
      else if (e.type === 'usage') reported = e.usage;
      else if (e.type !== 'end') {
        const text = countedText(e, held);
        chars += text.length;
        words += wordsIn(text);
      }
      // After the rest of this read's events: a finish among them makes the reply whole.
      if (!deciding && !whole) {
        deciding = true;
        queueMicrotask(decideNow);
      }
    },
    result: (r) => (stopped !== undefined && r.ended === 'cancelled' ? { ...r, error: new ParleyError('budget', stopped) } : r),
  };
}

/**
 * Why a request to a model with no known price goes unsent while a dollar limit applies: the user chose to block it,
 * the request may not ask (VS Code's chat, completions), or the question was dismissed.
 */
export type UnpricedWhy = 'blocked' | 'not asked' | 'dismissed';

const UNPRICED_WHY: Record<UnpricedWhy, string> = {
  blocked: 'You chose to block its requests until it has a price.',
  'not asked': "Parley asks whether to send such a model's requests uncounted only for a request started in Parley itself (not VS Code's chat, not a completion).",
  dismissed: 'The question was dismissed; the next request asks again.',
};

/**
 * The decision for a request to `model` at a ledger host with no known price while the dollar limit `limit` applies
 * and the user did not allow it uncounted: not sent, with the warnings its decision `d` carried.
 */
export function unpricedBlock(d: BudgetDecision, limit: BudgetLimit, a: { model: string; host: string; why: UnpricedWhy; ledger: Ledger; prices: BudgetPrices; now: number }): BudgetDecision {
  const spent = spentIn(limit, a.ledger, a.prices, a.now);
  const left = Math.max(0, limit.amount - spent);
  const resetsAt = periodEnd(limit.period, a.now).getTime();
  const words = `Not sent: no price is known for the model "${a.model}" at ${a.host}, so ${limitName(limit)} cannot count what it costs. `
    + `${UNPRICED_WHY[a.why]} Set its price per million tokens in parley.pricing (or in the profile's models.<id>.price); a price of 0 sends it uncounted.`;
  return { kind: 'block', limit, spent, left, cost: 0, resetsAt, words, warnings: d.kind === 'send' ? [] : d.warnings };
}

/** The key a threshold of a limit is remembered under for one period. */
export function warningKey(limit: BudgetLimit, threshold: Threshold, now: number): string {
  return [limit.source, limit.profile ?? '', limit.period, limit.unit, limit.amount, dayOf(periodStart(limit.period, now).getTime()), threshold].join('|');
}

/** The highest threshold a limit's spend crossed that was not said yet this period, or none. */
function warningFor(s: LimitStatus, now: number, warned: ReadonlySet<string>): BudgetWarning[] {
  const crossed = THRESHOLDS.filter((t) => s.share * 100 >= t);
  if (crossed.length === 0) return [];
  const keys = crossed.map((t) => warningKey(s.limit, t, now));
  if (keys.every((k) => warned.has(k))) return [];
  const threshold = crossed[crossed.length - 1];
  return [{ limit: s.limit, threshold, spent: s.spent, keys, words: warningWords(s.limit, threshold, s.spent, now) }];
}

/** Whose limit it is, its period and unit, in words: "your daily spend limit ($5.00, block)". */
export function limitName(l: BudgetLimit): string {
  const period = { day: 'daily', week: 'weekly', month: 'monthly' }[l.period];
  const whose = l.source === 'user' ? 'your' : l.source === 'folder' ? "this folder's" : "this workspace's";
  return `${whose} ${period} ${l.unit === 'dollars' ? 'spend' : 'token'} limit${l.profile !== undefined ? ` for the profile "${l.profile.slice(0, 60)}"` : ''} (${amountWords(l.unit, l.amount)}, ${l.action})`;
}

/** When a period resets, in words, local time: "at midnight tonight", "on Monday, December 1 at 00:00". */
export function resetWords(resetsAt: number, now: number): string {
  const end = new Date(resetsAt);
  if (periodEnd('day', now).getTime() === resetsAt) return 'at midnight tonight (local time)';
  return `on ${end.toLocaleDateString('en-US', { weekday: 'long', month: 'long', day: 'numeric' })} at 00:00 (local time)`;
}

function blockWords({ limit: l, spent }: LimitStatus, held: number, left: number, cost: number, resetsAt: number, now: number): string {
  const over = spent >= l.amount
    ? `${amountWords(l.unit, spent)} is spent already`
    : `it may cost up to ${amountWords(l.unit, cost)}${held > 0 ? `, and requests still in flight (in this or another window) up to ${amountWords(l.unit, held)}` : ''}`;
  return `Not sent: this request would cross ${limitName(l)}; ${over}. ${amountWords(l.unit, left)} left; the limit resets ${resetWords(resetsAt, now)}.`;
}

function stoppedWords(l: BudgetLimit, now: number): string {
  return `Stopped: this reply crossed ${limitName(l)} while it streamed. The text so far is kept and counted; the limit resets ${resetWords(periodEnd(l.period, now).getTime(), now)}.`;
}

function warningWords(l: BudgetLimit, threshold: Threshold, spent: number, now: number): string {
  return `${threshold} % of ${limitName(l)} is spent (${amountWords(l.unit, spent)}). It resets ${resetWords(periodEnd(l.period, now).getTime(), now)}.`;
}

/** What the status bar shows of the budgets: a tooltip section, and whether a warn limit is reached (the warning colour). */
export function budgetStatus(states: readonly LimitStatus[], now: number): { markdown: string; reached: boolean } {
  if (states.length === 0) return { markdown: '', reached: false };
  const lines = ['**Budgets** (calendar periods in your local time; weeks start on Monday)', ''];
  for (const s of states) {
    const pct = Math.floor(s.share * 100);
    // A profile's name may come from a workspace: shown as text, never as Markdown (a link, an image).
    lines.push(`- ${markdownProse(`${limitName(s.limit)}: ${amountWords(s.limit.unit, s.spent)} spent (${pct} %), resets ${resetWords(periodEnd(s.limit.period, now).getTime(), now)}`)}`);
  }
  return { markdown: lines.join('\n'), reached: states.some((s) => s.limit.action === 'warn' && s.share >= 1) };
}
