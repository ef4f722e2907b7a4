// The loader of dist/testConnection.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as TestConnectionModule from '../testConnection';

/** Test Connection with its checks and report. */
export const testConnection = (): typeof TestConnectionModule => require('./testConnection.js');
