// Context in, changes out, as a person does it: src/greet.ts mentioned with @ from the picker, the question sent with
// the file's content, a reply with a search/replace block for it, the Apply button, the review in VS Code's diff editor
// with Accept and Reject in its title, and the file left changed but unsaved. Takes the README's screenshot of the
// review (docs/screenshots/apply-review.png).
import { hidden, step, visible, waitFor } from './harness.mjs';
import { replyDone } from './toolScript.mjs';

export const title = 'Apply a code block through a review';

const ANSWER = [
  'Change `src/greet.ts`:',
  '',
  '```ts',
  '<<<<<<< SEARCH',
  '  return `Hello, ${name}!`;',
  '=======',
  '  return `Hi, ${name}!`;',
  '>>>>>>> REPLACE',
  '```',
  '',
].join('\n');

/** The demo endpoint's `respond`: every chat request gets ANSWER, streamed in one piece. */
async function respond(request, res) {
  if (request.method !== 'POST' || !Array.isArray(request.json?.messages)) return false;
  const chunk = (delta, finish = null) => JSON.stringify({ id: 'apply', object: 'chat.completion.chunk', created: 0, model: request.json.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`data: ${chunk({ role: 'assistant', content: ANSWER })}\n\ndata: ${chunk({}, 'stop')}\n\ndata: [DONE]\n\n`);
  return true;
}

// Auto save off (code-server may turn it on), so that the document left unsaved shows as such.
export const workbench = { workspace: 'basic', settings: { 'files.autoSave': 'off' }, endpoint: { respond } };

export const timeoutMs = 90_000;

/** An action of the active editor's title bar, by its label. */
const titleAction = (wb, label) => wb.page.locator(`.editor-group-container.active .editor-actions [aria-label^="${label}"]`);

export const tests = {
  async 'greet.ts mentioned with @ goes with the question; Apply on the reply opens the review; Accept changes greet.ts, unsaved'(wb) {
    const chat = await wb.openParleyView();
    const box = chat.getByRole('combobox', { name: 'Message Parley' });
    await visible(box, 'the composer');
    await step('typing "@gre"', () => box.pressSequentially('@gre'));
    const list = chat.getByRole('listbox', { name: 'Mention a file or context' });
    await waitFor('greet.ts to be the first option', async () => (await list.getByRole('option').first().textContent())?.includes('greet.ts'));
    await step('picking it with Enter', () => box.press('Enter'));
    await visible(chat.locator('.composer-chips').getByText('src/greet.ts'), 'the chip for src/greet.ts');
    const replies = chat.locator('article[aria-label="Parley"]');
    const before = await replies.count();
    await step('asking with the chip', async () => {
      await box.pressSequentially('Make the greeting shorter');
      await box.press('Enter');
    });
    await waitFor('the reply to start', async () => (await replies.count()) > before);
    const reply = replies.nth(before);
    await replyDone(wb, reply);
    const user = wb.endpoint.requests.filter((r) => r.method === 'POST').at(-1)?.json?.messages?.at(-1)?.content;
    if (typeof user !== 'string' || !user.includes('return `Hello, ${name}!`;') || !user.endsWith('Make the greeting shorter')) {
      throw new Error(`the request did not carry src/greet.ts and the question: ${JSON.stringify(user)?.slice(0, 300)}`);
    }
    await step('clicking Apply on the code block', () => reply.getByRole('button', { name: 'Apply to a file (review first)' }).click());
    await visible(wb.page.locator('.tabs-container .tab.active', { hasText: "Parley's proposal" }), 'the review tab');
    await visible(titleAction(wb, 'Accept Proposed Change'), 'Accept in the editor title');
    await visible(titleAction(wb, 'Reject Proposed Change'), 'Reject in the editor title');
    await wb.screenshot('apply-review');
    await step('clicking Accept', () => titleAction(wb, 'Accept Proposed Change').click());
    await hidden(wb.page.locator('.tabs-container .tab', { hasText: "Parley's proposal" }), 'the review tab (closed)');
    const tabs = await waitFor('greet.ts to be open, active and unsaved', async () => {
      const all = await wb.editorTabs();
      return all.some((t) => t.label.includes('greet.ts') && t.active && t.dirty) && all;
    });
    if (tabs.some((t) => t.label.includes("Parley's proposal"))) throw new Error('the review is still open');
    const text = await wb.activeEditorText();
    if (!text.includes('return `Hi, ${name}!`;') || text.includes('Hello, ')) throw new Error(`greet.ts reads:\n${text}`);
  },
};
