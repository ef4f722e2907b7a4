// The loader of dist/reasoningEffort.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's
// own bundle leaves it for first use.
import type * as ReasoningEffortModule from '../reasoningEffort';

/** The panel's reasoning effort: its offer, its choice and what requests teach; loaded by the panel's first header. */
export const reasoningEffort = (): typeof ReasoningEffortModule => require('./reasoningEffort.js');
