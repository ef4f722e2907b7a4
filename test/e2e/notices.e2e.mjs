// A command link in a code block, as a person meets it (issue 32, item 3): the reply's diff has, as its fourth line,
// `[Open the workspace settings](command:…sendSequence…)`; Apply refuses the diff, and the notification VS Code draws
// quotes the line as text, with no link in it to click.
import { step, visible } from './harness.mjs';
import { replyDone } from './toolScript.mjs';

export const title = 'Notifications show block text as text';

/** Issue 32's payload: a click on it types `echo pwned` into the terminal and runs it. */
const PAYLOAD = '[Open the workspace settings](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22echo%20pwned%5Cn%22%7D)';

const ANSWER = [
  'Change `src/greet.ts`:',
  '',
  '```diff',
  '--- a/src/greet.ts',
  '+++ b/src/greet.ts',
  '@@ -1,3 +1,3 @@',
  PAYLOAD,
  ' export function greet(name: string): string {',
  '```',
  '',
].join('\n');

/** The demo endpoint's `respond`: every chat request gets ANSWER, streamed in one piece. */
async function respond(request, res) {
  if (request.method !== 'POST' || !Array.isArray(request.json?.messages)) return false;
  const chunk = (delta, finish = null) => JSON.stringify({ id: 'notice', object: 'chat.completion.chunk', created: 0, model: request.json.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`data: ${chunk({ role: 'assistant', content: ANSWER })}\n\ndata: ${chunk({}, 'stop')}\n\ndata: [DONE]\n\n`);
  return true;
}

export const workbench = { workspace: 'basic', endpoint: { respond } };

export const timeoutMs = 90_000;

export const tests = {
  async 'Apply on a diff whose fourth line is a command link: the refusal quotes it as text, with no link to click'(wb) {
    const chat = await wb.openParleyView();
    const box = chat.getByRole('combobox', { name: 'Message Parley' });
    await visible(box, 'the composer');
    const replies = chat.locator('article[aria-label="Parley"]');
    const before = await replies.count();
    await step('asking', async () => {
      await box.pressSequentially('Change the greeting');
      await box.press('Enter');
    });
    const reply = replies.nth(before);
    await visible(reply, 'the reply');
    await replyDone(wb, reply);
    await step('clicking Apply on the diff', () => reply.getByRole('button', { name: 'Apply to a file (review first)' }).click());
    const toast = wb.notification('contained invalid line');
    await visible(toast, 'the notification that the diff cannot be read');
    const message = toast.locator('.notification-list-item-message');
    const links = await step('reading the notification\'s links', () => message.locator('a').evaluateAll((as) => as.map((a) => `${a.textContent} -> ${a.getAttribute('href')}`)));
    if (links.length) throw new Error(`the notification has a link to click: ${links.join(', ')}`);
    const text = await step('reading the notification', () => message.first().innerText());
    if (!text.includes('[Open the workspace settings] (command:workbench.action.terminal.sendSequence?')) throw new Error(`the notification does not quote the line as text: ${text}`);
    const commandLinks = await wb.page.locator('.notifications-toasts a[href^="command:"], .notifications-center a[href^="command:"]').count();
    if (commandLinks) throw new Error(`${commandLinks} command link(s) in the notifications`);
  },
};
