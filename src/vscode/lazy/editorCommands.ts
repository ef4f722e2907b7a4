// The loader of dist/editorCommands.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as EditorCommandsModule from '../editorCommands';

/** Explain Selection, Add Selection to Chat and Generate Code: loaded by the first of these commands. */
export const editorCommands = (): typeof EditorCommandsModule => require('./editorCommands.js');
