// The loader of dist/responses.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as ResponsesModule from '../../core/responses';

/** The Responses API: loaded by the first request that goes there, or a chat refusal that may say it should. */
export const responses = (): typeof ResponsesModule => require('./responses.js');
