// Damaged files in the storage folder, as a person meets them: a conversation file cut short and one of random bytes
// are listed as damaged in the panel's history, with Open raw and Delete, and the good conversation beside them is
// intact, and its image, kept in a file of its own, comes back. (A reload mid-stream is in windows.e2e.mjs; the pure rules in test/unit/durability.test.ts.)
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { step, visible, hidden, waitFor } from './harness.mjs';

export const title = 'Damaged conversation files';

export const workbench = { workspace: 'basic' };
export const timeoutMs = 120_000;

const GOOD = 'a1b2c3d4e5f60718';
const CUT = 'cut0000000000001';
const NOISE = 'noise00000000002';

function conversation(id, title) {
  return {
    id, title, createdAt: 1, updatedAt: Date.now(),
    turns: [{ id: `${id}u`, role: 'user', text: title, status: 'done' }, { id: `${id}a`, role: 'assistant', text: `Answer to ${title}`, status: 'done' }],
  };
}

export const tests = {
  async 'a truncated file and random bytes are listed as damaged, with Open raw and Delete; the good conversation is intact'(wb) {
    // Written before Parley first starts in this profile (it starts when its view opens).
    const dir = join(wb.parleyStorage(), 'conversations');
    mkdirSync(dir, { recursive: true });
    // The good conversation has an image, stored as Parley stores it: in images/, named by its SHA-256.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const ref = `${createHash('sha256').update(png.toString('base64')).digest('hex')}.png`;
    mkdirSync(join(dir, 'images'), { recursive: true });
    writeFileSync(join(dir, 'images', ref), png);
    const good = conversation(GOOD, 'The good conversation');
    good.turns[0].images = [{ name: 'dot.png', dataUrl: '', ref }];
    writeFileSync(join(dir, `${GOOD}.json`), JSON.stringify(good));
    writeFileSync(join(dir, `${CUT}.json`), JSON.stringify(conversation(CUT, 'Cut short')).slice(0, 70));
    writeFileSync(join(dir, `${NOISE}.json`), Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919 + 13) % 256)));

    const chat = await wb.openParleyView();
    await step('clicking History', () => chat.getByRole('button', { name: 'History' }).first().click());
    const list = chat.locator('.history-list');
    await visible(list.getByText('The good conversation'), 'the good conversation in the history list');
    for (const id of [CUT, NOISE]) {
      await visible(list.locator('.history-item.damaged', { hasText: `${id}.corrupt.json` }), `${id}.corrupt.json listed as damaged`);
    }
    const names = readdirSync(dir);
    for (const id of [CUT, NOISE]) {
      if (names.includes(`${id}.json`) || !names.includes(`${id}.corrupt.json`)) throw new Error(`${id}.json was not moved aside: ${names.join(', ')}`);
    }
    await wb.screenshot('history-damaged');

    await step('clicking Open raw', () => chat.getByRole('button', { name: `Open raw ${CUT}.corrupt.json` }).click());
    await visible(wb.page.locator('.tabs-container .tab', { hasText: `${CUT}.corrupt.json` }), 'an editor tab with the damaged file');
    await visible(wb.activeEditor().getByText('"Cut short"', { exact: false }), 'the damaged file\'s text in the editor');

    await step('clicking Delete on the random bytes', () => chat.getByRole('button', { name: `Delete ${NOISE}.corrupt.json` }).click());
    await hidden(list.locator('.history-item.damaged', { hasText: `${NOISE}.corrupt.json` }), 'the deleted damaged file in the list');
    await waitFor('the damaged file deleted from disk', () => !readdirSync(dir).includes(`${NOISE}.corrupt.json`));
    await visible(list.getByText('The good conversation'), 'the good conversation, still listed');
    await visible(list.locator('.history-item.damaged', { hasText: `${CUT}.corrupt.json` }), 'the other damaged file, still listed');

    await step('opening the good conversation', () => list.getByText('The good conversation').click());
    await visible(chat.locator('article[aria-label="Parley"]').getByText('Answer to The good conversation'), 'the good conversation\'s reply');
    const thumb = chat.locator('.thumbs img').first();
    await visible(thumb, 'the good conversation\'s image');
    const src = await thumb.getAttribute('src');
    if (src !== `data:image/png;base64,${png.toString('base64')}`) throw new Error(`the image came back as ${src?.slice(0, 60)}…`);

    // Going on in it saves it again: the image stays a file of its own, named in the conversation file.
    const box = chat.getByRole('combobox', { name: 'Message Parley' });
    await step('typing a question', () => box.fill('One more question'));
    await step('pressing Enter', () => box.press('Enter'));
    await hidden(chat.getByRole('button', { name: 'Stop' }), 'the Stop button (the reply finished)', 30_000);
    await waitFor('the conversation saved with its image named, not inlined', () => {
      const text = readFileSync(join(dir, `${GOOD}.json`), 'utf8');
      return text.includes('One more question') && text.includes(`"ref":"${ref}"`) && !text.includes(png.toString('base64'));
    });
  },
};
