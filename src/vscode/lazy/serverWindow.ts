// The loader of dist/serverWindow.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as ServerWindowModule from '../../core/serverWindow';

/** What window a local server runs a model at, and its words: loaded by the first context meter. */
export const serverWindow = (): typeof ServerWindowModule => require('./serverWindow.js');
