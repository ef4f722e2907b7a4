// Spend budgets as settings (`parley.budget`, and a profile's own `budget`): the limits read across levels, a
// workspace only adding to the user's. The arithmetic and the decision are core/budget.ts (a bundle of its own, loaded
// when a limit is set).
import { isRecord } from './errors';
import type { LearnedPrices } from './priceSources';
import type { ScopedValue } from './scopedSettings';
import { formatCost, formatTokens, type Price } from './usageLedger';

export type BudgetPeriod = 'day' | 'week' | 'month';
export type BudgetUnit = 'dollars' | 'tokens';
export type BudgetAction = 'warn' | 'block';
/** Where a limit was set: the user's settings, or (only adding to them) a trusted workspace's or folder's. */
export type BudgetSource = 'user' | 'workspace' | 'folder';

/** One limit: an amount of dollars or tokens per period, for every endpoint or for one profile's requests. */
export interface BudgetLimit {
  period: BudgetPeriod;
  unit: BudgetUnit;
  amount: number;
  action: BudgetAction;
  /** The profile whose requests count; undefined: every request. */
  profile?: string;
  source: BudgetSource;
}

/**
 * Prices per million tokens: `parley.pricing`, each profile's `models.<id>.price` (a user profile's wins), and what
 * servers' model lists said (after the user's prices, before a workspace profile's).
 */
export interface BudgetPrices {
  pricing: Record<string, Price>;
  /**
   * By profile name, by model id; `workspace`: the profile came from a workspace (the user's pricing wins over it), and
   * `user` the prices of the user's profile of the same name that it replaced (they still come first).
   */
  profiles: Record<string, { workspace: boolean; models: Record<string, Price>; user?: Record<string, Price> }>;
  /** The model lists' prices, by ledger host. */
  listed?: LearnedPrices;
  /** `parley.pricing` as a trusted workspace set it: counted only where nothing of the user's or a model list prices. */
  workspacePricing?: Record<string, Price>;
}

/**
 * A `parley.budget` entry (or a profile's `budget`, or the whole list) that cannot be read: not enforced, and said to
 * the user in words (core/budgetMistakes.ts, with dist/budget.js). `index` is the entry's place in its list; without
 * it, the value is not a list at all.
 */
export interface BudgetMistake {
  source: BudgetSource;
  /** The profile whose `budget` it is; undefined: `parley.budget`. */
  profile?: string;
  index?: number;
  entry: unknown;
}

export const PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];

/** Whether an amount can be a limit: a number, 0 or more. */
export const validAmount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * Reads one list of limits as written: `[{ "period": "day", "dollars": 5, "tokens": 100000, "action": "block" }]`.
 * An entry with both dollars and tokens is two limits; `action` defaults to `block`. An entry with any mistake is put
 * in `mistakes` (the parts of it that can be read still apply: a wrong amount beside a right one).
 */
export function parseLimits(raw: unknown, source: BudgetSource, profile: string | undefined, mistakes: BudgetMistake[]): BudgetLimit[] {
  if (raw === undefined || raw === null) return [];
  const mistake = (entry: unknown, index?: number) => mistakes.push({ source, ...(profile === undefined ? {} : { profile }), index, entry });
  if (!Array.isArray(raw)) {
    mistake(raw);
    return [];
  }
  const out: BudgetLimit[] = [];
  raw.forEach((e, i) => {
    if (!isRecord(e)) return void mistake(e, i);
    const action = e.action === undefined ? 'block' : e.action;
    if (!PERIODS.includes(e.period as BudgetPeriod) || (action !== 'warn' && action !== 'block')) return void mistake(e, i);
    for (const unit of ['dollars', 'tokens'] as const) {
      if (validAmount(e[unit])) out.push({ period: e.period as BudgetPeriod, unit, amount: e[unit], action, source, ...(profile === undefined ? {} : { profile }) });
    }
    if ((e.dollars === undefined && e.tokens === undefined) || ![e.dollars, e.tokens].every((v) => v === undefined || validAmount(v))) mistake(e, i);
  });
  return out;
}

/**
 * Every limit in force: the user's `parley.budget` and the `budget` of each profile in the user's `parley.endpoints`,
 * plus, in a trusted workspace, the workspace's and folder's. A workspace only adds limits: it cannot remove or raise
 * the user's (each limit applies on its own, so a higher one of the workspace's changes nothing), and a workspace
 * profile that replaces a user profile of the same name keeps the user profile's budget. A workspace limit that is
 * looser than one of the user's for the same requests and period is said in `adjusted`; entries that cannot be read
 * are put in `mistakes`.
 */
export function readBudget(inspect: (key: string) => ScopedValue | undefined, trusted: boolean, adjusted: string[], mistakes: BudgetMistake[]): BudgetLimit[] {
  const levels: Array<[BudgetSource, keyof ScopedValue]> = [['user', 'globalValue'], ...(trusted ? [['workspace', 'workspaceValue'], ['folder', 'workspaceFolderValue']] as Array<[BudgetSource, keyof ScopedValue]> : [])];
  const limits: BudgetLimit[] = [];
  for (const [source, level] of levels) {
    limits.push(...parseLimits(inspect('budget')?.[level], source, undefined, mistakes));
    const list = inspect('endpoints')?.[level];
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (!isRecord(p) || typeof p.name !== 'string' || !p.name.trim() || p.budget === undefined) continue;
      limits.push(...parseLimits(p.budget, source, p.name.trim(), mistakes));
    }
  }
  for (const l of limits) {
    if (l.source === 'user') continue;
    const mine = limits.find((u) => u.source === 'user' && u.profile === l.profile && u.period === l.period && u.unit === l.unit && u.amount < l.amount);
    if (mine) adjusted.push(`parley.budget: the ${l.source}'s ${l.period} limit of ${amountWords(l.unit, l.amount)} is above yours (${amountWords(l.unit, mine.amount)}); yours applies.`);
  }
  return limits;
}

/** An amount in its unit: `$5.00`, `100,000 tokens`. */
export function amountWords(unit: BudgetUnit, n: number): string {
  return unit === 'dollars' ? formatCost(n) : `${formatTokens(n)} tokens`;
}

