// The loader of dist/builtinTools.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as BuiltinToolsModule from '../tools/builtinTools';

/** The built-in workspace tools: loaded by the first turn that offers tools. */
export const builtinTools = (): typeof BuiltinToolsModule => require('./builtinTools.js');
