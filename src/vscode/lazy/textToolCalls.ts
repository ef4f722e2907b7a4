// The loader of dist/textToolCalls.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as TextToolCallsModule from '../../core/textToolCalls';

/** Tool calls a model writes as text: loaded by the first request that offers tools. */
export const textToolCalls = (): typeof TextToolCallsModule => require('./textToolCalls.js');
