// Smoke: the packaged Parley shows up in the workbench, and its activity-bar entry opens the chat webview.
import { waitFor } from './harness.mjs';

export const title = 'Smoke: Parley in the workbench';

/** Workbench options for this file (see startWorkbench in harness.mjs). */
export const workbench = { workspace: 'basic' };

export const tests = {
  async 'the Parley entry is in the activity bar'(wb) {
    const label = await wb.parleyActivityBarEntry().first().getAttribute('aria-label');
    if (!label?.startsWith('Parley')) throw new Error(`the activity bar entry is labelled "${label}", expected "Parley…"`);
  },

  async 'clicking it opens the Chat view, and its webview renders'(wb) {
    const chat = await wb.openParleyView();
    await waitFor('text rendered inside the chat webview', async () => (await chat.locator('body').innerText({ timeout: 1000 })).trim().length > 0);
    await wb.screenshot('smoke-chat-view');
  },
};
