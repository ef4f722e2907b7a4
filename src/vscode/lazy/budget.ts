// The loader of dist/budget.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as BudgetCheckModule from '../budgetCheck';

/** The spend budget's arithmetic and words: loaded by the first request or status bar render with a limit set. */
export const budget = (): typeof BudgetCheckModule => require('./budget.js');
