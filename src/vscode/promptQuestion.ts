// The questions before a workspace's system prompt, or what its endpoint profile adds to requests, is used, and before
// a model with no known price is sent while a dollar limit applies; loaded when first asked (dist/promptQuestion.js,
// see LAZY in esbuild.mjs): most windows never ask them.
import { workspaceAdditionsQuestion, type WorkspaceBodyChanges } from '../core/headerSecrets';
import { promptForQuestion } from '../core/promptConsent';
import type { UnpricedAnswer } from '../core/priceSources';
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

/**
 * Asks whether a workspace's endpoint profile may add its headers and its model's body fields to requests to `origin`
 * (and leave out the fields it names), in one question naming them all. Undefined: dismissed.
 */
export async function askWorkspaceAdditions(origin: string, names: string[], secrets: string[], body: WorkspaceBodyChanges = { fields: [], omitted: [] }): Promise<boolean | undefined> {
  const allow = 'Allow';
  const without = 'Send Without';
  const q = workspaceAdditionsQuestion(origin, names, secrets, body);
  const answer = await showWarning(q.message, { modal: true, detail: q.detail }, allow, without);
  return answer === allow ? true : answer === without ? false : undefined;
}

/**
 * Asks what to do with the requests of `model` at `host`, which has no known price while the dollar limit named
 * `limit` applies: block them until it has one, or send them uncounted in dollars. Undefined: dismissed.
 */
export async function askUnknownPrice(model: string, host: string, limit: string): Promise<UnpricedAnswer | undefined> {
  const block = 'Block';
  const uncounted = 'Send Uncounted';
  const answer = await showWarning(
    `No price is known for the model "${model}" at ${host}, so ${limit} cannot count what its requests cost. Send them anyway?`,
    {
      modal: true,
      detail: 'Neither your settings (parley.pricing, the profile\'s models.<id>.price) nor the server\'s model list give its price. '
        + 'Block: its requests are not sent while a dollar limit applies. Send Uncounted: they are sent and counted in tokens, '
        + 'not in dollars, and the usage report lists the model. Parley remembers your answer for this model at this endpoint; '
        + 'a price set in parley.pricing counts it from then on (a price of 0 sends it uncounted).',
    },
    block,
    uncounted,
  );
  return answer === block ? 'block' : answer === uncounted ? 'uncounted' : undefined;
}
