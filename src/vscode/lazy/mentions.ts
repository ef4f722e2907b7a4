// The loader of dist/mentions.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as MentionsModule from '../mentions';

/** `@` mentions: loaded by the picker, Add File to Chat or a question with a mention. */
export const mentions = (): typeof MentionsModule => require('./mentions.js');
