// The loader of dist/promptFiles.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as PromptFilesModule from '../promptFiles';

/** Prompt files: loaded by the first `/` typed at the start of the composer, or a prompt file run. */
export const promptFiles = (): typeof PromptFilesModule => require('./promptFiles.js');
