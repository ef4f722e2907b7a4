// `@` mentions as a person uses them: typing @ in the composer opens the picker, the file picked becomes a chip, and
// the question sent carries the file's content to the endpoint. Takes the README's screenshot of the open picker
// (docs/screenshots/chat-mention-picker.png).
import { step, visible, waitFor } from './harness.mjs';
import { replyDone } from './toolScript.mjs';

export const title = 'Mentioning a workspace file with @ in the composer';

export const workbench = {
  workspace: 'basic',
  settings: { 'workbench.colorTheme': 'Default Dark Modern' },
  endpoint: { chunkDelayMs: 5 },
};

export const timeoutMs = 90_000;

export const tests = {
  async 'typing @ opens the picker; picking a file makes a chip; the request carries the file'(wb) {
    const chat = await wb.openParleyView();
    const box = chat.getByRole('combobox', { name: 'Message Parley' });
    await visible(box, 'the composer');
    await step('typing "Explain @"', () => box.pressSequentially('Explain @'));
    const list = chat.getByRole('listbox', { name: 'Mention a file or context' });
    await visible(list, 'the @ picker');
    await visible(list.getByRole('option', { name: /greet\.ts/ }), 'greet.ts in the picker');
    await visible(list.getByRole('option', { name: /@selection/ }), '@selection in the picker');
    await wb.screenshot('chat-mention-picker');

    await step('narrowing to "gre"', () => box.pressSequentially('gre'));
    await waitFor('greet.ts to be the first option', async () => (await list.getByRole('option').first().textContent())?.includes('greet.ts'));
    await step('picking it with Enter', () => box.press('Enter'));
    await visible(chat.locator('.composer-chips').getByText('src/greet.ts'), 'the chip for src/greet.ts');
    const draft = await box.inputValue();
    if (draft !== 'Explain ') throw new Error(`the typed @query stayed in the draft: ${JSON.stringify(draft)}`);

    const replies = chat.locator('article[aria-label="Parley"]');
    const before = await replies.count();
    await step('asking with the chip', async () => {
      await box.pressSequentially('what this file does.');
      await box.press('Enter');
    });
    await waitFor('the reply to start', async () => (await replies.count()) > before);
    await replyDone(wb, replies.nth(before));
    const request = wb.endpoint.requests.filter((r) => r.method === 'POST').at(-1);
    const user = request?.json?.messages?.at(-1)?.content;
    if (typeof user !== 'string' || !user.startsWith('`src/greet.ts`, lines 1-8:\n```typescript\n/** Greets someone, politely. */\nexport function greet(name: string): string {')) {
      throw new Error(`the request did not carry src/greet.ts: ${JSON.stringify(user)?.slice(0, 300)}`);
    }
    if (!user.endsWith('Explain what this file does.')) throw new Error(`the question was not sent after the file: ${JSON.stringify(user.slice(-80))}`);
  },
};
