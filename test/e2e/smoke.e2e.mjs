// Smoke: the packaged Parley shows up in the workbench, and its activity-bar entry opens the chat webview.
import { visible } from './harness.mjs';

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
    await visible(chat.locator('body *'), 'content rendered inside the chat webview');
    await wb.screenshot('smoke-chat-view');
  },
};
