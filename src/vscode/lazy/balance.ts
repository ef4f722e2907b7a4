// The loader of dist/balance.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as BalancesModule from '../balances';

/** Account balances for the tooltip and the report: loaded by the first render once a profile turns them on. */
export const balance = (): typeof BalancesModule => require('./balance.js');

/**
 * The balances' Markdown for the tooltip or the usage report (balances.ts's markdown()), or '' (dist/balance.js left
 * unloaded) while no profile turns them on.
 */
export const balances = (...a: Parameters<typeof BalancesModule.markdown>): string => (a[0].profiles.some((p) => p.balance) ? balance().markdown(...a) : '');
