// Account balances (issue 37): which server kind a profile's balance is asked of and where, the one GET with the
// profile's own key to its own origin, the answer read defensively, a five-minute cache, and the Markdown lines.
import type { Endpoint } from './endpoint';
import { isRecord, ParleyError } from './errors';
import { markdownProse, codeSpan } from './markdownText';
import type { Profile } from './profiles';
import { readText, send } from './transport';

/** The servers whose balance Parley can read. */
export type BalanceKind = 'openrouter' | 'deepseek' | 'litellm';

/** A balance in Parley's own words (made from the answer's numbers), or why there is none (short, never server text). */
export type BalanceReading = { ok: true; text: string } | { ok: false; reason: string };

/** The least time between two requests for one balance. */
export const BALANCE_INTERVAL_MS = 5 * 60_000;
/** How long one balance request may take, answer included. */
const BALANCE_TIMEOUT_MS = 10_000;
/** The most of an answer read: a balance is a few hundred bytes. */
const MAX_ANSWER = 64 * 1024;

const KIND_NAMES: Record<BalanceKind, string> = { openrouter: 'OpenRouter', deepseek: 'DeepSeek', litellm: 'LiteLLM' };
/** The kind a host is known to be, for `"balance": true`. */
const KNOWN_HOSTS: Record<string, BalanceKind> = { 'openrouter.ai': 'openrouter', 'api.deepseek.com': 'deepseek' };

/**
 * What a profile's `balance` setting asks for, against its endpoint: a kind, or why no balance is asked (undefined:
 * balances are off). `true` picks the kind by host (openrouter.ai, api.deepseek.com); a kind's name says it for any
 * host (a LiteLLM proxy, a loopback imitation). A workspace's profile may not turn balances on: the request would
 * carry the user's key, and a workspace's settings only tighten the user's.
 */
export function balanceKind(p: Pick<Profile, 'balance' | 'source'>, endpoint: Endpoint): { kind: BalanceKind } | { reason: string } | undefined {
  const b = p.balance;
  if (b === undefined || b === false) return undefined;
  if (p.source === 'workspace' || p.source === 'folder') return { reason: 'a workspace’s profile cannot turn balances on; set "balance" in a profile of your User settings' };
  if (b === true) {
    const host = new URL(endpoint.origin).hostname;
    if (Object.prototype.hasOwnProperty.call(KNOWN_HOSTS, host)) return { kind: KNOWN_HOSTS[host] };
    return { reason: 'Parley cannot tell which server this is: set "balance" to "openrouter", "deepseek" or "litellm"' };
  }
  if (typeof b === 'string' && Object.prototype.hasOwnProperty.call(KIND_NAMES, b)) return { kind: b as BalanceKind };
  return { reason: '"balance" must be true, "openrouter", "deepseek" or "litellm"' };
}

/**
 * Where each kind tells the balance, in the order asked (all on the endpoint's own origin). OpenRouter's API lives
 * under the base (`https://openrouter.ai/api/v1/credits`); DeepSeek's and LiteLLM's beside the version segment
 * (`https://api.deepseek.com/user/balance`, `https://proxy/key/info`).
 */
export function balanceUrls(kind: BalanceKind, endpoint: Endpoint): string[] {
  const root = endpoint.base.replace(/\/v\d+[a-z0-9]*$/i, '');
  if (kind === 'openrouter') return [`${endpoint.base}/credits`, `${endpoint.base}/key`];
  return [kind === 'deepseek' ? `${root}/user/balance` : `${root}/key/info`];
}

/** A number sent as a number or as a numeric string ("110.00"); undefined for anything else. */
function amount(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

function dollars(n: number): string {
  return `${n < 0 ? '-' : ''}$${Math.abs(n).toFixed(2)}`;
}

const unreadable = (what: string): BalanceReading => ({ ok: false, reason: `the answer has no ${what}` });

/**
 * OpenRouter's `GET /api/v1/credits`: `{"data": {"total_credits": 100.5, "total_usage": 25.75}}`, dollars
 * (https://openrouter.ai/docs/api/api-reference/credits/get-credits). The account's credit, for any of its keys.
 */
export function readOpenRouterCredits(body: unknown): BalanceReading {
  const d = isRecord(body) && isRecord(body.data) ? body.data : {};
  const total = amount(d.total_credits);
  const used = amount(d.total_usage);
  if (total === undefined || used === undefined) return unreadable('total_credits and total_usage');
  return { ok: true, text: `${dollars(total - used)} left (${dollars(total)} bought, ${dollars(used)} used)` };
}

/**
 * OpenRouter's `GET /api/v1/key`: `{"data": {"limit": 100, "limit_remaining": 74.5, "usage": 25.5, …}}`, `limit`
 * null for a key without a limit (https://openrouter.ai/docs/api/api-reference/api-keys/get-current-key). Asked when
 * `/credits` refuses the key (403: OpenRouter now wants a management key there): this key's limit, not the account's.
 */
export function readOpenRouterKey(body: unknown): BalanceReading {
  const d = isRecord(body) && isRecord(body.data) ? body.data : {};
  const limit = amount(d.limit);
  const left = amount(d.limit_remaining);
  const used = amount(d.usage);
  if (limit !== undefined && left !== undefined) return { ok: true, text: `${dollars(left)} left of this key’s ${dollars(limit)} limit` };
  if (d.limit === null && used !== undefined) return { ok: true, text: `${dollars(used)} used; this key has no limit (the account’s credit needs a management key)` };
  return unreadable('limit, limit_remaining or usage');
}

/**
 * DeepSeek's `GET /user/balance`: `{"is_available": true, "balance_infos": [{"currency": "CNY", "total_balance":
 * "110.00", "granted_balance": "10.00", "topped_up_balance": "100.00"}]}`, amounts as strings
 * (https://api-docs.deepseek.com/api/get-user-balance). `is_available`: whether the balance can pay for API calls.
 */
export function readDeepSeekBalance(body: unknown): BalanceReading {
  const infos = isRecord(body) && Array.isArray(body.balance_infos) ? body.balance_infos : [];
  const parts: string[] = [];
  for (const i of infos) {
    if (!isRecord(i)) continue;
    const total = amount(i.total_balance);
    if (total === undefined) continue;
    // The currency is the server's word: only an ISO code is shown.
    const currency = typeof i.currency === 'string' && /^[A-Z]{3}$/.test(i.currency) ? i.currency : '';
    const part = (n: number) => (currency === 'USD' ? dollars(n) : n.toFixed(2));
    const granted = amount(i.granted_balance);
    const topped = amount(i.topped_up_balance);
    const detail = granted !== undefined && topped !== undefined ? ` (${part(granted)} granted, ${part(topped)} topped up)` : '';
    parts.push(`${part(total)}${currency && currency !== 'USD' ? ` ${currency}` : ''}${detail}`);
  }
  if (parts.length === 0) return unreadable('balance_infos');
  const unavailable = isRecord(body) && body.is_available === false ? '; not available for API calls' : '';
  return { ok: true, text: `${parts.join(', ')} left${unavailable}` };
}

/**
 * LiteLLM's `GET /key/info` (the key in the Authorization header): `{"key": …, "info": {"spend": 1.2, "max_budget":
 * 10, …}}`, `max_budget` null for a key without a budget (BerriAI/litellm,
 * litellm/proxy/management_endpoints/key_management_endpoints.py, `info_key_fn`). Its `key` is never shown.
 */
export function readLiteLlmKeyInfo(body: unknown): BalanceReading {
  const info = isRecord(body) && isRecord(body.info) ? body.info : {};
  const spend = amount(info.spend);
  if (spend === undefined) return unreadable('spend');
  const budget = amount(info.max_budget);
  if (budget === undefined) return { ok: true, text: `${dollars(spend)} spent; this key has no budget` };
  return { ok: true, text: `${dollars(budget - spend)} left of this key’s ${dollars(budget)} budget (${dollars(spend)} spent)` };
}

const READERS: Record<BalanceKind, Array<(body: unknown) => BalanceReading>> = {
  openrouter: [readOpenRouterCredits, readOpenRouterKey],
  deepseek: [readDeepSeekBalance],
  litellm: [readLiteLlmKeyInfo],
};

/** One answer as a reading: its status, then its body (a web page or other text is never shown, only named). */
export function readBalanceAnswer(read: (body: unknown) => BalanceReading, status: number, contentType: string, text: string): BalanceReading {
  if (status === 401) return { ok: false, reason: 'the server refused the key (401)' };
  if (status === 403) return { ok: false, reason: 'this key may not read the balance (403)' };
  if (status === 404) return { ok: false, reason: 'the server has no balance at this address (404)' };
  if (status < 200 || status >= 300) return { ok: false, reason: `the server answered ${status}` };
  if (/html/i.test(contentType) || text.trimStart().startsWith('<')) return { ok: false, reason: 'the server answered with a web page, not JSON' };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'the answer is not JSON' };
  }
  return read(body);
}

/**
 * Asks the balance of `kind` at the endpoint: a GET with `apiKey` as `Authorization: Bearer`, to the endpoint's own
 * origin only (core/transport.ts's send(): a redirect to another origin is refused, so the key never goes there).
 * OpenRouter's `/key` is asked only when `/credits` answers 403. Never throws.
 */
export async function fetchBalance(kind: BalanceKind, endpoint: Endpoint, apiKey: string | undefined, timeoutMs = BALANCE_TIMEOUT_MS): Promise<BalanceReading> {
  const signal = AbortSignal.timeout(timeoutMs);
  const urls = balanceUrls(kind, endpoint);
  let reading: BalanceReading = { ok: false, reason: 'nothing was asked' };
  for (const [i, url] of urls.entries()) {
    let status: number;
    try {
      const { response } = await send({ endpoint, apiKey }, 'GET', url, undefined, signal);
      status = response.status;
      reading = readBalanceAnswer(READERS[kind][i], status, response.headers.get('content-type') ?? '', await readText(response, MAX_ANSWER));
    } catch (e) {
      if (signal.aborted) return { ok: false, reason: `no answer within ${Math.round(timeoutMs / 1000)} s` };
      if (e instanceof ParleyError && /redirect/i.test(e.message)) return { ok: false, reason: 'the server sent the request elsewhere (a redirect Parley does not follow)' };
      return { ok: false, reason: `cannot reach ${endpoint.origin}` };
    }
    if (status !== 403) break;
  }
  return reading;
}

interface CacheEntry {
  asked: number;
  reading?: BalanceReading;
  at?: number;
  pending?: Promise<void>;
  waiting: Set<() => unknown>;
}

/** What to show of one balance now: the latest reading with the time it was read, and whether a read is under way. */
export interface BalanceView {
  reading?: BalanceReading;
  at?: number;
  pending: boolean;
}

/**
 * The latest reading of each balance (by an id the caller makes: origin, kind and address), each asked at most once
 * every BALANCE_INTERVAL_MS however often it is shown. Nothing wakes on its own: a read starts only when a balance is
 * looked up and its last one is older, and its end calls back whoever looked meanwhile.
 */
export class BalanceCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(private readonly clock: () => number = Date.now) {}

  /**
   * What to show for `id` now; starts `read` when the last one was asked BALANCE_INTERVAL_MS ago or more (or never).
   * `arrived` runs when the read under way ends (a promise it returns is awaited, its failure ignored).
   */
  lookup(id: string, read: () => Promise<BalanceReading>, arrived: () => unknown): BalanceView {
    const now = this.clock();
    let e = this.entries.get(id);
    if (!e || (!e.pending && now - e.asked >= BALANCE_INTERVAL_MS)) {
      const entry: CacheEntry = { asked: now, reading: e?.reading, at: e?.at, waiting: new Set() };
      entry.pending = read()
        .catch((): BalanceReading => ({ ok: false, reason: 'the read failed' }))
        .then((r) => {
          entry.reading = r;
          entry.at = this.clock();
          entry.pending = undefined;
          const waiting = [...entry.waiting];
          entry.waiting.clear();
          for (const f of waiting) void Promise.resolve().then(f).catch(() => undefined);
        });
      this.entries.set(id, entry);
      e = entry;
    }
    if (e.pending) e.waiting.add(arrived);
    return { reading: e.reading, at: e.at, pending: e.pending !== undefined };
  }

  /** Forgets the balances of one origin (its key changed): the next look asks again. */
  forget(origin: string): void {
    for (const id of this.entries.keys()) if (id.startsWith(`${origin} `)) this.entries.delete(id);
  }
}

/** One profile's line: its name, the kind asked, and what is known (or why nothing is asked). */
export interface BalanceLine extends Partial<BalanceView> {
  profile: string;
  kind?: BalanceKind;
}

function timeWords(at: number, now: number): string {
  const d = new Date(at);
  const time = d.toLocaleTimeString('en-US', { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === new Date(now).toDateString() ? time : `${d.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })}, ${time}`;
}

/** One line's words: the reading (or "balance unavailable: why"), when it was read, and whether a newer one is coming. */
function balanceWords(l: BalanceLine, now: number): string {
  const r = l.reading;
  const said = r ? (r.ok ? r.text : `balance unavailable: ${r.reason}`) : 'reading…';
  const when = l.at !== undefined ? `, read at ${timeWords(l.at, now)}` : '';
  const again = r && l.pending ? ' (reading again…)' : '';
  return `${said}${when}${again}`;
}

/**
 * The balances as Markdown: a bold title for the status bar's tooltip, a `## Balances` section for the usage report.
 * Names and words are shown as text (a profile's name may come from a workspace; `$` must not start math).
 */
export function balancesMarkdown(lines: readonly BalanceLine[], now: number, report = false): string {
  if (lines.length === 0) return '';
  const out = ['', '', report ? '## Balances' : '**Balances**', ''];
  for (const l of lines) {
    const kind = l.kind ? ` (${KIND_NAMES[l.kind]})` : '';
    out.push(`- ${codeSpan(l.profile)}${markdownProse(kind)}: ${markdownProse(balanceWords(l, now))}`);
  }
  if (report) out.push('', 'Asked at most every 5 minutes, only for the profiles whose `balance` setting is on, with each profile’s own key to its own server.');
  return out.join('\n');
}
