// What is wrong with a spend limit that cannot be read (core/budgetSettings.ts sets it aside, not enforced), in plain
// words for the warning, the log and the status bar's tooltip. Loaded with dist/budget.js, only when one is found.
import { isRecord } from './errors';
import { PERIODS, validAmount, type BudgetMistake, type BudgetPeriod, type BudgetUnit } from './budgetSettings';

const UNITS: readonly BudgetUnit[] = ['dollars', 'tokens'];
const FIELDS = ['period', 'dollars', 'tokens', 'action'];
const EXAMPLE = '{ "period": "day", "dollars": 5 }';
/** Words people write for a period, and the one Parley reads. */
const MEANT: Record<string, BudgetPeriod> = { daily: 'day', days: 'day', weekly: 'week', weeks: 'week', monthly: 'month', months: 'month' };

/** A value as JSON, cut short: what the user wrote. */
function shown(v: unknown, max = 80): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The setting the mistake is in, as its id: what the warning's button opens. */
export function mistakeSetting(m: BudgetMistake): 'parley.budget' | 'parley.endpoints' {
  return m.profile === undefined ? 'parley.budget' : 'parley.endpoints';
}

/** Where the entry is: `parley.budget, limit 2`, `the budget of the profile "Work" in parley.endpoints (this workspace's settings)`. */
export function mistakePlace(m: BudgetMistake): string {
  const list = m.profile === undefined ? 'parley.budget' : `the budget of the profile "${m.profile.slice(0, 60)}" in parley.endpoints`;
  const level = m.source === 'user' ? '' : m.source === 'workspace' ? " (this workspace's settings)" : " (this folder's settings)";
  return `${list}${level}${m.index === undefined ? '' : `, limit ${m.index + 1}`}`;
}

/** What is wrong with a period that is not one of the three, with the one meant when it is plain ("daily": "day"). */
function periodProblem(v: unknown): string {
  if (v === undefined) return 'it has no "period": add "period": "day", "week" or "month"';
  const word = typeof v === 'string' ? v.trim().toLowerCase() : '';
  const meant = PERIODS.find((p) => p === word || MEANT[word] === p);
  return `"period" must be "day", "week" or "month", not ${shown(v, 40)}${meant ? ` (write "${meant}")` : ''}`;
}

/** What is wrong with one amount, or undefined when it is a limit. */
function amountProblem(unit: BudgetUnit, v: unknown): string | undefined {
  if (v === undefined || validAmount(v)) return undefined;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return `"${unit}" must be a number, not text: write ${Number(v)}, not ${shown(v, 40)}`;
  if (typeof v === 'number' && v < 0) return `"${unit}" cannot be negative (${v})`;
  return `"${unit}" must be a number, 0 or more, not ${shown(v, 40)}`;
}

/**
 * What is wrong with the entry, each in plain words, and the amount of it that is still enforced (an entry with a
 * right amount beside a wrong one keeps the right one).
 */
export function mistakeProblems(m: BudgetMistake): { problems: string[]; kept?: BudgetUnit } {
  const e = m.entry;
  if (m.index === undefined) return { problems: [isRecord(e) ? 'it must be a list of limits: put the limit inside [ ]' : `it must be a list of limits, such as [${EXAMPLE}]`] };
  if (!isRecord(e)) return { problems: [`each limit must be an object, such as ${EXAMPLE}`] };
  const problems: string[] = [];
  if (!PERIODS.includes(e.period as never)) problems.push(periodProblem(e.period));
  if (e.action !== undefined && e.action !== 'block' && e.action !== 'warn') problems.push(`"action" must be "block" or "warn", not ${shown(e.action, 40)}`);
  for (const unit of UNITS) {
    const p = amountProblem(unit, e[unit]);
    if (p) problems.push(p);
  }
  if (e.dollars === undefined && e.tokens === undefined) {
    const unknown = Object.keys(e).filter((k) => !FIELDS.includes(k)).map((k) => `"${k.slice(0, 30)}"`);
    problems.push(`it sets no amount: add "dollars" or "tokens"${unknown.length ? ` (Parley does not read ${unknown.join(', ')})` : ''}`);
  }
  // Only the amounts are wrong, and one of them is right: that one applies (parseLimits kept it).
  const kept = problems.length === UNITS.filter((u) => e[u] !== undefined && !validAmount(e[u])).length ? UNITS.find((u) => validAmount(e[u])) : undefined;
  return kept ? { problems, kept } : { problems };
}

const noun = (u: BudgetUnit) => (u === 'dollars' ? 'dollar' : 'token');

/** What is not enforced, as a sentence: the whole limit, or the amount of it that cannot be read. */
function notEnforced(kept: BudgetUnit | undefined): string {
  return kept ? `Its ${noun(kept)} limit applies; its ${noun(kept === 'dollars' ? 'tokens' : 'dollars')} limit does not.` : 'Not enforced.';
}

/** One line for the log and the status bar's tooltip: where, what was written, what is wrong, what is not enforced. */
export function mistakeWords(m: BudgetMistake): string {
  const { problems, kept } = mistakeProblems(m);
  return `${mistakePlace(m)}, ${shown(m.entry)}: ${problems.join('; ')}. ${notEnforced(kept)}`;
}

/** The warning's words: that a limit is not enforced, which one (where, as written), and what is wrong with it. */
export function mistakeNotice(m: BudgetMistake): string {
  const { problems, kept } = mistakeProblems(m);
  const head = kept ? 'part of a spend limit is not enforced' : 'a spend limit is not enforced';
  return `Parley: ${head}, because it cannot be read: ${mistakePlace(m)}, ${shown(m.entry)}. ${capital(problems.join('; '))}.${kept ? ` ${notEnforced(kept)}` : ''}`;
}

/** The same mistake found again (another settings change) is one warning per window: by where it is and what it says. */
export function mistakeKey(m: BudgetMistake): string {
  return `${mistakePlace(m)}\n${shown(m.entry, 2000)}`;
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
