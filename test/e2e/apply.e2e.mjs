// Apply as a person uses it: a reply with a search/replace block for src/greet.ts, the Apply button, the review in
// VS Code's diff editor with Accept and Reject in its title, and the file left changed but unsaved.
import { hidden, step, visible, waitFor } from './harness.mjs';
import { ask, replyDone } from './toolScript.mjs';

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
  async 'Apply opens the review with Accept and Reject in its title; Accept changes greet.ts, unsaved'(wb) {
    await wb.openParleyView();
    const reply = await ask(wb, 'Make the greeting shorter');
    await replyDone(wb, reply);
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
