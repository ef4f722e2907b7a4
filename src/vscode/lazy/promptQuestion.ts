// The loader of dist/promptQuestion.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as PromptQuestionModule from '../promptQuestion';

/** The questions before a workspace's system prompt or its profile's additions are used: loaded when first asked. */
export const promptQuestion = (): typeof PromptQuestionModule => require('./promptQuestion.js');
