// The loader of dist/durability.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as DurabilityModule from '../durability';

/** Damaged files, interrupted replies and failed saves: loaded the first time one is met. */
export const durability = (): typeof DurabilityModule => require('./durability.js');
