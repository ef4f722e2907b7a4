// The loader of dist/rules.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as RulesModule from '../rules';

/** Project rules for a chat turn: loaded by the first chat request. */
export const rules = (): typeof RulesModule => require('./rules.js');
