// Account balances in the status bar's tooltip and the usage report: its own bundle (dist/balance.js), loaded once a
// profile turns balances on. What is asked, where, and how the answer is read is core/balance.ts.
import { BalanceCache, balanceKind, balancesMarkdown, fetchBalance, type BalanceKind, type BalanceLine, type BalanceReading } from '../core/balance';
import { resolveEndpoint, type Endpoint } from '../core/endpoint';
import type { Profile } from '../core/profiles';
import type { Settings } from './config';
import type { ApiKeyStore } from './secrets';

/** This window's readings: each balance is asked at most every five minutes, whoever shows it. */
const cache = new BalanceCache();
/** The key stores whose changes already clear the cache. */
const watched = new WeakSet<object>();

/** What the balances need of the key store: the key of exactly one origin, and when one changes. */
export type BalanceKeys = Pick<ApiKeyStore, 'get' | 'onDidChange'>;

/**
 * The balances of the profiles that turned them on, as Markdown for the tooltip or (`report`) the usage report. Never
 * waits: it shows what was last read (or "reading…"), and `again` runs when a read it started or waited for ends, so
 * the caller shows the new reading.
 */
export function markdown(s: Pick<Settings, 'profiles'>, keys: BalanceKeys, again: () => unknown, report?: boolean): string {
  if (!watched.has(keys)) {
    watched.add(keys);
    // A key set or cleared: its origin's balances are asked afresh at the next look, not five minutes later.
    keys.onDidChange((origin) => cache.forget(origin));
  }
  const lines = s.profiles.filter((p) => p.balance).map((p) => lineOf(p, keys, again));
  return balancesMarkdown(lines, Date.now(), report);
}

function lineOf(p: Profile, keys: BalanceKeys, again: () => unknown): BalanceLine {
  let endpoint: Endpoint;
  try {
    endpoint = resolveEndpoint(p.baseUrl);
  } catch {
    return { profile: p.name, reading: { ok: false, reason: 'the profile’s baseUrl is not a valid URL' } };
  }
  const plan = balanceKind(p, endpoint);
  if (!plan) return { profile: p.name };
  if ('reason' in plan) return { profile: p.name, reading: { ok: false, reason: plan.reason } };
  const id = `${endpoint.origin} ${plan.kind} ${endpoint.base}`;
  return { profile: p.name, kind: plan.kind, ...cache.lookup(id, () => readBalance(plan.kind, endpoint, keys), again) };
}

/** The balance with the key stored for exactly this endpoint's origin (none for a loopback server that needs none). */
async function readBalance(kind: BalanceKind, endpoint: Endpoint, keys: BalanceKeys): Promise<BalanceReading> {
  const key = await keys.get(endpoint.origin);
  if (key.kind === 'missing') return { ok: false, reason: `no API key is set for ${endpoint.origin}` };
  return fetchBalance(kind, endpoint, key.kind === 'key' ? key.key : undefined);
}
