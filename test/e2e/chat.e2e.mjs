// A person's view of Parley: key through the palette, a streamed answer, Stop, usage in the status bar, Explain, Generate.
import { hidden, step, visible, waitFor } from './harness.mjs';

export const title = 'Chat, editor commands and usage, as a person uses them';

const KEY = 'sk-e2e-0123456789abcdef';

/** The demo endpoint answers only with this key, so the first question shows the key error card. */
export const workbench = { workspace: 'basic', endpoint: { requireKey: KEY, chunkDelayMs: 25 } };

export const timeoutMs = 90_000;

async function ask(chat, text) {
  const box = chat.getByRole('textbox', { name: 'Message Parley' });
  await visible(box, 'the composer');
  await step('typing the question', () => box.fill(text));
  await step('pressing Enter', () => box.press('Enter'));
}

function lastReply(chat) {
  return chat.locator('article[aria-label="Parley"]').last();
}

/** The text of the last reply's body (not its "Parley" heading). */
async function replyText(chat) {
  return (await lastReply(chat).locator('.turn-body').innerText()).trim();
}

export const tests = {
  async 'a question without a key shows the key error card'(wb) {
    const chat = await wb.openParleyView();
    await ask(chat, 'Hello there');
    await visible(lastReply(chat).getByRole('button', { name: 'Set API Key' }), 'the Set API Key button on the error card');
    await wb.screenshot('chat-error-card');
  },

  async 'the API key is set through the command palette and a password input'(wb) {
    await wb.runCommand('Parley: Set API Key');
    const input = wb.page.locator('.quick-input-widget .quick-input-box input');
    await visible(input, 'the API key input');
    const type = await input.first().getAttribute('type');
    if (type !== 'password') throw new Error(`the key input is type="${type}", expected a password input`);
    await visible(wb.page.locator('.quick-input-widget').getByText('127.0.0.1', { exact: false }), 'the origin named in the key prompt');
    await wb.answerInput(KEY);
    await visible(wb.notification('API key stored'), 'the "API key stored" notification');
  },

  async 'Retry streams the answer, rendered as Markdown with a highlighted code block'(wb) {
    const chat = wb.chatFrame();
    await step('clicking Retry on the error card', () => lastReply(chat).getByRole('button', { name: 'Retry' }).first().click());
    const reply = lastReply(chat);
    await visible(reply.locator('pre code'), 'a code block in the streamed answer', 30_000);
    await visible(reply.getByRole('button', { name: /Insert at Cursor/i }), 'the Insert at Cursor button of the code block');
    await hidden(chat.getByRole('button', { name: 'Stop' }), 'the Stop button (the reply finished)', 30_000);
    const auth = wb.endpoint.requests.at(-1)?.headers.authorization;
    if (auth !== `Bearer ${KEY}`) throw new Error('the retried request did not carry the key that was set');
    await wb.screenshot('chat-answer-code-block');
  },

  async 'the status bar shows the usage the server reported'(wb) {
    const item = wb.statusBarItem('Parley usage');
    await visible(item, 'the Parley usage status bar item');
    const label = await item.first().locator('[aria-label]').first().getAttribute('aria-label').catch(() => null) ?? (await item.first().getAttribute('aria-label'));
    if (!/^Parley usage: last request [\d,]+ tokens$/.test(label ?? '')) throw new Error(`status bar label is "${label}"`);
    await step('hovering the usage item', () => item.first().hover());
    await visible(wb.page.locator('.monaco-hover, .workbench-hover').getByText('Last request', { exact: false }), 'the usage tooltip');
    await wb.screenshot('status-bar-tooltip');
    await wb.page.keyboard.press('Escape');
    await wb.page.mouse.move(800, 300);
  },

  async 'Stop mid-stream keeps the partial answer, marked Stopped, with an estimate in the status bar'(wb) {
    wb.endpoint.options.chunkDelayMs = 300;
    try {
      const chat = wb.chatFrame();
      await ask(chat, 'Tell me something long');
      const stop = chat.getByRole('button', { name: 'Stop' });
      await visible(stop, 'the Stop button while the answer streams');
      await waitFor('some streamed text', async () => (await replyText(chat)).length > 40);
      await wb.screenshot('chat-mid-stream');
      await step('clicking Stop', () => stop.click());
      await visible(lastReply(chat).getByText('Stopped', { exact: true }), 'the Stopped badge');
      await visible(wb.statusBarItem('≈'), 'the estimated (≈) usage in the status bar');
      const text = await replyText(chat);
      if (!text.startsWith('A long answer')) throw new Error(`the partial answer was not kept: "${text.slice(0, 80)}"`);
      await wb.screenshot('chat-stopped');
    } finally {
      wb.endpoint.options.chunkDelayMs = 25;
    }
  },

  async 'Explain Selection on a selection in the editor answers in the chat'(wb) {
    const before = wb.endpoint.requests.length;
    await wb.openFile('src/greet.ts');
    await wb.selectAllInEditor();
    await wb.runCommand('Parley: Explain Selection');
    await waitFor('the explain request at the endpoint', () => wb.endpoint.requests.length > before && wb.endpoint.requests.at(-1).json?.messages);
    const sent = JSON.stringify(wb.endpoint.requests.at(-1).json.messages);
    if (!sent.includes('greet.ts') || !sent.includes('```typescript')) throw new Error('the request lacks the fenced selection with its path and language');
    const chat = wb.chatFrame();
    await visible(chat.locator('article[aria-label="You"]').last().getByText('greet.ts', { exact: false }), 'the explained file named in the chat');
    await hidden(chat.getByRole('button', { name: 'Stop' }), 'the end of the explanation', 30_000);
    await wb.screenshot('explain-selection');
  },

  async 'Generate Code opens a new untitled editor with the generated code'(wb) {
    await wb.runCommand('Parley: Generate Code');
    await wb.answerInput('a fizzbuzz function', { prompt: 'Describe the code' });
    await visible(wb.page.locator('.tabs-container .tab.active', { hasText: 'fizzbuzz' }), 'the untitled fizzbuzz editor tab', 30_000);
    await waitFor('the generated code in the editor', async () => (await wb.activeEditorText()).includes('export function fizzbuzz'));
    await wb.screenshot('generate-code');
  },
};
