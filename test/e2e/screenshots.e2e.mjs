// The panel in a light theme with a rendered answer, and the usage report: screenshots for the README, checked as they are taken.
import { hidden, step, visible, waitFor } from './harness.mjs';

export const title = 'Light theme and the usage report';

export const workbench = { workspace: 'basic', settings: { 'workbench.colorTheme': 'Default Light Modern' } };

export const timeoutMs = 90_000;

export const tests = {
  async 'a streamed answer with a code block renders in the light theme'(wb) {
    const chat = await wb.openParleyView();
    await visible(chat.getByText('Demo endpoint', { exact: true }), 'the "Demo endpoint" badge in the panel header');
    const box = chat.getByRole('textbox', { name: 'Message Parley' });
    await step('asking a question', async () => {
      await box.fill('How do I greet someone in TypeScript?');
      await box.press('Enter');
    });
    const reply = chat.locator('article[aria-label="Parley"]').last();
    await visible(reply.locator('pre code'), 'the code block of the answer', 30_000);
    await hidden(chat.getByRole('button', { name: 'Stop' }), 'the end of the answer', 30_000);
    const bg = await reply.evaluate((el) => getComputedStyle(el.ownerDocument.body).backgroundColor);
    const [r, g, b] = (bg.match(/\d+/g) ?? []).map(Number);
    if (!(r > 200 && g > 200 && b > 200)) throw new Error(`the panel background is ${bg}, not a light theme`);
    await wb.screenshot('panel-light-code-block');
  },

  async 'Show Usage opens the report with totals by model and endpoint'(wb) {
    await wb.runCommand('Parley: Show Usage');
    await waitFor('the usage report', async () => {
      for (const f of wb.page.frames()) {
        const t = await f.locator('body').innerText({ timeout: 500 }).catch(() => '');
        if (t.includes('Parley usage') && t.includes('By model')) return true;
      }
      return false;
    }, 30_000);
    await wb.screenshot('usage-report');
  },
};
