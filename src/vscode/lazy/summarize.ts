// The loader of dist/summarize.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as SummarizeModule from '../summarize';

/** Compaction's summary request: loaded by the first compaction. */
export const summarize = (): typeof SummarizeModule => require('./summarize.js');
