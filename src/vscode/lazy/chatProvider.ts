// The loader of dist/chatProvider.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as ChatProviderModule from '../chatProvider';

/** Parley as a language model provider: loaded when VS Code's chat first asks. */
export const chatProvider = (): typeof ChatProviderModule => require('./chatProvider.js');
