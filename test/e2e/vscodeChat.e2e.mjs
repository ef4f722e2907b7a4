// VS Code's own chat view with a Parley model, as a person uses it in code-server: no Copilot, no GitHub sign-in, no
// internet. The chat view is there once `chat.disableAIFeatures` is off (the harness turns it on for every other UI
// test). On a fresh profile its model picker offers only "Sign in to use Copilot...": VS Code has not asked any
// provider for models yet, and a Parley that is already running does not change that. "Chat: Manage Language Models"
// asks every provider; from then on the picker lists Parley's models, and a question in the chat view is answered by
// Parley's endpoint through Parley's provider.
import { DEMO_MODEL } from '../../scripts/demo-endpoint.mjs';
import { hidden, step, visible, waitFor } from './harness.mjs';

export const title = "VS Code's chat view with a Parley model, without a Copilot sign-in";

/** A second model, so that picking one in the model picker is visible in the request. */
const SECOND_MODEL = 'parley-second';

/** A question the endpoint answers with reasoning first (as reasoning_content), then the answer. */
const THINK_PROMPT = 'Think it over first';
const THOUGHT = 'Weighing the two options, THOUGHT-MARKER';
const CONSIDERED = 'The considered answer.';

/** The demo endpoint, listing two models; its chat answers stay the canned ones but for THINK_PROMPT's. */
function respond(record, res) {
  if (record.method === 'POST' && /\/chat\/completions$/.test(record.path) && JSON.stringify(record.json?.messages?.at(-1) ?? '').includes(THINK_PROMPT)) {
    const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'think', object: 'chat.completion.chunk', created: 1, model: SECOND_MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(chunk({ role: 'assistant', reasoning_content: THOUGHT }) + chunk({ content: CONSIDERED }) + chunk({}, 'stop') + 'data: [DONE]\n\n');
    return true;
  }
  if (record.method !== 'GET' || !/\/models$/.test(record.path)) return false;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data: [DEMO_MODEL, SECOND_MODEL].map((id) => ({ id, object: 'model', owned_by: 'demo' })) }));
  return true;
}

export const workbench = { workspace: 'basic', settings: { 'chat.disableAIFeatures': false }, endpoint: { respond } };

export const timeoutMs = 150_000;

const PROMPT = 'Hello from VS Code chat';

const modelPicker = (wb) => wb.vsCodeChatModelPicker();

async function pickerLabel(wb) {
  return (await modelPicker(wb).first().getAttribute('aria-label', { timeout: 2_000 })) ?? '';
}

const chatRequests = (wb) => wb.endpoint.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions'));

/** Types a question into VS Code's chat view and sends it, as a person does. */
async function ask(wb, text) {
  await step("focusing the chat view's input", () => wb.vsCodeChatInput().first().focus());
  await step('typing the question', () => wb.page.keyboard.type(text));
  await step('pressing Enter', () => wb.page.keyboard.press('Enter'));
}

export const tests = {
  async 'a fresh profile: the chat view opens, and its model picker asks for a Copilot sign-in'(wb) {
    await wb.openVsCodeChat();
    // VS Code has asked no provider for models yet, so the picker has nothing but Copilot's sign-in. If this fails
    // because a newer VS Code lists the models at once, the README's "Pick the model" steps can lose their first step.
    await waitFor('the model picker to say "sign in to use Copilot"', async () => /sign in to use Copilot/i.test(await pickerLabel(wb)));
    await step('opening the model picker', () => modelPicker(wb).first().click());
    const signIn = wb.page.getByRole('menuitem', { name: /^Sign in to use Copilot/ });
    await visible(signIn, 'the "Sign in to use Copilot..." entry, the only one in the picker');
    const options = await wb.page.locator('.action-widget [role="option"], .action-widget [role="menuitem"]').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    if (options.some((o) => o?.includes(DEMO_MODEL))) throw new Error(`the picker already lists Parley's models: ${options.join(' | ')}`);
    await wb.screenshot('vscode-chat-sign-in-picker');
    // A person who tries it meets VS Code's own Copilot set-up, which wants a GitHub (or Google, Apple) account, and
    // closes it: nothing of Parley's needs it.
    await step('clicking "Sign in to use Copilot..."', () => signIn.first().click());
    await wb.screenshot('vscode-chat-copilot-sign-in-dialog');
    await wb.dismissCopilotSignIn();
    if (chatRequests(wb).length) throw new Error('a chat request reached the endpoint before any question was asked');
  },

  async "a question asked before the picker lists Parley's models meets VS Code's Copilot sign-in; Escape closes it, nothing is sent"(wb) {
    // What a person meets who asks straight away: VS Code hands the question to its Copilot set-up (README, "Pick
    // the model"). The same dialog can come up when a question is sent on a loaded machine (the next tests allow it).
    await ask(wb, 'Asked too early');
    await visible(wb.copilotSignInDialog(), 'VS Code\'s "Sign in to use GitHub Copilot" dialog, after asking', 30_000);
    await wb.dismissCopilotSignIn();
    if (chatRequests(wb).length) throw new Error('a chat request reached the endpoint although no Parley model was picked');
    await step('starting a new chat in the chat view (Ctrl+L)', async () => {
      await wb.vsCodeChatInput().first().focus();
      await wb.page.keyboard.press('Control+KeyL');
    });
    await hidden(wb.vsCodeChatTranscript().getByRole('listitem', { name: 'Asked too early' }), 'the early question, after New Chat');
  },

  async '"Chat: Manage Language Models" lists the endpoint\'s models under Parley'(wb) {
    await wb.runCommand('Chat: Manage Language Models');
    const list = wb.page.getByRole('list', { name: 'Language Models' });
    for (const id of [DEMO_MODEL, SECOND_MODEL]) {
      await visible(list.getByRole('listitem', { name: new RegExp(`^${id} from Parley\\b`) }), `${id} from Parley in the Language Models list`, 30_000);
    }
    if (!wb.endpoint.requests.some((r) => r.method === 'GET' && r.path.endsWith('/models'))) throw new Error('the endpoint was not asked for its models');
    await wb.screenshot('vscode-chat-language-models');
    await wb.page.keyboard.press('Escape');
    await hidden(list, 'the Language Models editor');
  },

  async 'a Parley model picked in the model picker answers a question in the chat view'(wb) {
    await waitFor('the model picker to show a Parley model', async () => /^Models, parley-/.test(await pickerLabel(wb)));
    await step('opening the model picker', () => modelPicker(wb).first().click());
    await visible(wb.page.getByRole('option', { name: new RegExp(`^${DEMO_MODEL}, `) }), `${DEMO_MODEL} in the model picker (the model VS Code chose)`);
    // The current model is listed; the others are under "Other Models", or found by the picker's search box.
    // Each Parley model is listed with the endpoint's host beside it.
    const option = wb.page.getByRole('option', { name: new RegExp(`^${SECOND_MODEL}, 127\\.0\\.0\\.1:${new URL(wb.endpoint.url).port}\\b`) });
    const search = wb.page.getByRole('combobox', { name: 'Search models' }).first();
    // On a loaded machine the picker can still be drawing its list when the search is typed, and the filter then
    // shows nothing (seen once in CI): as a person would, the picker is opened again and the search typed again
    // until the model is listed.
    await visible(search, "the model picker's search box");
    await step(`searching the model picker for ${SECOND_MODEL}`, () => search.fill(SECOND_MODEL));
    await waitFor(`${SECOND_MODEL} in the model picker, searched for`, async () => {
      await option.first().waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {});
      if (await option.first().isVisible()) return true;
      // A search that found nothing leaves the picker an empty box that a new search does not fill: closed and
      // opened again.
      if (await search.isVisible()) await wb.page.keyboard.press('Escape');
      await search.waitFor({ state: 'hidden', timeout: 5_000 });
      await modelPicker(wb).first().click({ timeout: 2_000 });
      await search.waitFor({ state: 'visible', timeout: 5_000 });
      await search.fill(SECOND_MODEL, { timeout: 2_000 });
      return false;
    }, 60_000);
    await wb.screenshot('vscode-chat-model-picker');
    await step(`clicking ${SECOND_MODEL}`, () => option.first().click());
    await hidden(option, 'the model picker');
    await waitFor(`the model picker to show ${SECOND_MODEL}`, async () => (await pickerLabel(wb)) === `Models, ${SECOND_MODEL}`);

    const transcript = wb.vsCodeChatTranscript();
    // The demo endpoint's canned greeting, rendered by VS Code's chat.
    const answer = transcript.getByRole('listitem').filter({ hasText: "This is Parley's demo endpoint" });
    await ask(wb, PROMPT);
    // VS Code's chat can hand a question to its Copilot set-up instead, which asks for a sign-in (seen once on a
    // loaded machine, in a CI run). A person closes the dialog and asks again, as the README says; so does this test.
    const first = await waitFor("the answer, or VS Code's Copilot sign-in dialog", async () =>
      (await answer.count()) ? 'answer' : (await wb.copilotSignInDialog().isVisible()) ? 'sign-in' : undefined, 60_000);
    if (first === 'sign-in') {
      console.log("[e2e] VS Code's Copilot sign-in dialog came up when the question was sent: closed, and asked again");
      await wb.screenshot('vscode-chat-copilot-sign-in-mid-chat');
      await wb.dismissCopilotSignIn();
      await ask(wb, PROMPT);
    }
    await visible(transcript.getByRole('listitem', { name: PROMPT }), 'the question in the chat view', 30_000);
    await visible(answer, "the demo endpoint's answer in the chat view", 60_000);
    await wb.screenshot('vscode-chat-answer');

    const asked = chatRequests(wb).filter((r) => JSON.stringify(r.json?.messages ?? []).includes(PROMPT));
    if (!asked.length) throw new Error(`no chat request carried the question (${chatRequests(wb).length} chat requests)`);
    const models = [...new Set(asked.map((r) => r.json?.model))];
    if (models.join() !== SECOND_MODEL) throw new Error(`the question went to ${models.join(', ')}, not the picked ${SECOND_MODEL}`);
    if (!asked.every((r) => r.json?.stream === true)) throw new Error('the question was not streamed');
    // Parley counts the request in its status bar, as for its own panel.
    const usage = wb.statusBarItem('Parley usage: last request');
    await visible(usage, 'the request counted in the Parley usage status bar item');
  },

  async "a reasoning model's thinking shows in the chat view as VS Code's thinking, apart from the answer"(wb) {
    const transcript = wb.vsCodeChatTranscript();
    const answer = transcript.getByRole('listitem').filter({ hasText: CONSIDERED });
    await ask(wb, THINK_PROMPT);
    await visible(answer, 'the considered answer in the chat view', 60_000);
    // VS Code draws thinking parts in a collapsed part of the response of its own ("Completed 2 steps" in 1.139), apart
    // from the answer's Markdown; opened, it shows the thought.
    const markdown = await answer.locator('.rendered-markdown').allInnerTexts();
    if (markdown.some((t) => t.includes('THOUGHT-MARKER'))) throw new Error(`the thought is in the answer's text: ${markdown.join(' | ')}`);
    const header = answer.getByText(/^(Completed \d+ steps?|Thinking|Thought)/).first();
    await visible(header, "VS Code's collapsed thinking part in the response", 30_000);
    await step('opening the thinking part', () => header.click());
    // Inside it, VS Code 1.139 lists the steps ("Finished with 1 step"), each opened in turn.
    await waitFor('the thought in the opened thinking part', async () => {
      if ((await answer.innerText()).includes('THOUGHT-MARKER')) return true;
      await answer.getByText(/^(Finished|Thinking|Thought)/).last().click({ timeout: 2_000 });
      return (await answer.innerText()).includes('THOUGHT-MARKER');
    });
    await wb.screenshot('vscode-chat-thinking');
  },
};
