// The loader of dist/usageTotals.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as UsageTotalsModule from '../../core/usageTotals';

/** The usage logs' merge and its upkeep as they grow: loaded by the first read of the logs. */
export const usageTotals = (): typeof UsageTotalsModule => require('./usageTotals.js');
