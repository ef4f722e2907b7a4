// The loader of dist/completion.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as CompletionModule from '../completion/engine';

/** Inline completions (Parley Complete): loaded by the first completion request or the status bar's menu. */
export const completion = (): typeof CompletionModule => require('./completion.js');
