// The question before a workspace's system prompt is used, loaded when first asked (dist/promptQuestion.js, see LAZY in
// esbuild.mjs): most windows never ask it.
import { promptForQuestion } from '../core/promptConsent';
import { showWarning } from './notices';

/** Asks whether a workspace's system prompt may replace the user's, showing its text. Undefined: dismissed. */
export async function askWorkspaceSystemPrompt(prompt: string): Promise<boolean | undefined> {
  const allow = "Use the Workspace's Prompt";
  const mine = 'Use Mine';
  const answer = await showWarning(
    "This workspace's settings replace your system prompt (parley.systemPrompt) with their own. Use it?",
    {
      modal: true,
      detail: `The system prompt goes first in every conversation and steers the model: it can tell it to read files and send them. The workspace's prompt:\n\n${promptForQuestion(prompt)}\n\n`
        + 'Parley remembers your answer for this exact text and asks again when it changes; "Parley: Forget Workspace Endpoint Answers" asks again.',
    },
    allow,
    mine,
  );
  return answer === allow ? true : answer === mine ? false : undefined;
}
