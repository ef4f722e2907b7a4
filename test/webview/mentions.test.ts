// The composer's `@` picker in headless Chromium: the real bundle, the host's CSP, a stand-in host that answers queries.
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { MentionCandidate } from '../../src/shared/protocol';
import { panelPage, WAIT } from './panelPage';

const ITEMS: MentionCandidate[] = [
  { kind: 'selection', label: '@selection', detail: 'The selected code' },
  { kind: 'problems', label: '@problems', detail: "The current file's problems" },
  { kind: 'open', label: '@open', detail: 'The files open in editors' },
  { kind: 'file', label: 'greet.ts', detail: 'src', path: 'src/greet.ts' },
  { kind: 'file', label: 'stats.py', detail: 'src', path: 'src/stats.py' },
];

describe('the @ picker (Chromium)', function () {
  this.timeout(60000);
  const panel = panelPage();
  const { host, posted } = panel;
  let page: Page;
  beforeEach(() => {
    page = panel.page;
  });

  /**
   * Waits for the query the picker asks the host for, then answers it with `items`, and waits until the answer is drawn
   * (a message reaches the page as an event: keys pressed before it is drawn would act on the list before it).
   */
  async function answer(query: string, items = ITEMS): Promise<void> {
    await page.waitForFunction((q) => window.__posted.some((m) => m.type === 'mentionQuery' && m.query === q), query, WAIT);
    await host({ type: 'mentionCandidates', query, items });
    if (items.length > 0) await page.getByRole('option').nth(items.length - 1).waitFor(WAIT);
  }

  const box = () => page.getByRole('combobox', { name: 'Message Parley' });
  const list = () => page.getByRole('listbox', { name: 'Mention a file or context' });

  /** The textarea's aria-activedescendant, and the text of the option it names. */
  async function active(): Promise<{ id: string | null; text: string | null; selected: string | null }> {
    return page.evaluate(() => {
      const id = document.querySelector('textarea')!.getAttribute('aria-activedescendant');
      const el = id ? document.getElementById(id) : null;
      return { id, text: el?.querySelector('.mention-label')?.textContent ?? null, selected: el?.getAttribute('aria-selected') ?? null };
    });
  }

  it('opens on @ at the start or after a space, not inside a word, with combobox and listbox roles', async () => {
    assert.equal(await box().getAttribute('aria-expanded'), 'false');
    assert.equal(await box().getAttribute('aria-controls'), 'mention-list');
    await box().pressSequentially('mail me@host');
    assert.equal(await list().isVisible(), false, 'an @ inside a word is an address, not a mention');
    assert.ok(!(await posted()).some((m) => m.type === 'mentionQuery'));
    await box().pressSequentially(' @');
    await answer('');
    await list().waitFor(WAIT);
    assert.equal(await box().getAttribute('aria-expanded'), 'true');
    assert.equal(await page.getByRole('option').count(), ITEMS.length);
    assert.deepEqual(await active(), { id: 'mention-option-0', text: '@selection', selected: 'true' });
  });

  it('sends the query as it is typed, shows the answer for the query typed, and ignores stale ones', async () => {
    await box().pressSequentially('@gre');
    await answer('gre', [ITEMS[3]]);
    await page.getByRole('option', { name: /greet\.ts/ }).waitFor(WAIT);
    await host({ type: 'mentionCandidates', query: 'g', items: ITEMS });
    assert.equal(await page.getByRole('option').count(), 1, 'an answer for an older query changes nothing');
    await host({ type: 'mentionCandidates', query: 'gre', items: [] });
    await page.getByText('Nothing matches').waitFor(WAIT);
    assert.equal(await box().getAttribute('aria-activedescendant'), null);
  });

  it('arrows move the active option (wrapping), Enter picks it: a chip request, and the typed @query is gone', async () => {
    await box().pressSequentially('Explain @st');
    await answer('st');
    await box().press('ArrowDown');
    assert.equal((await active()).text, '@problems');
    await box().press('ArrowUp');
    await box().press('ArrowUp');
    assert.deepEqual(await active(), { id: 'mention-option-4', text: 'stats.py', selected: 'true' });
    assert.equal(await page.locator('#mention-option-0').getAttribute('aria-selected'), 'false');
    await box().press('Enter');
    const picks = (await posted()).filter((m) => m.type === 'addMention');
    assert.deepEqual(picks, [{ type: 'addMention', kind: 'file', path: 'src/stats.py' }]);
    assert.ok(!(await posted()).some((m) => m.type === 'send'), 'Enter picked; it did not send');
    assert.equal(await box().inputValue(), 'Explain ');
    assert.equal(await list().isVisible(), false);
    assert.equal(await box().getAttribute('aria-expanded'), 'false');
    // The host makes the chip; it reads as the file's path until the question is sent.
    await host({ type: 'pendingContext', chips: [{ id: 'k', path: 'src/stats.py', startLine: 0, endLine: 0, language: '', truncated: false, mention: 'file' }] });
    await page.locator('.composer-chips').getByText('src/stats.py').waitFor(WAIT);
  });

  it('Tab picks too; Escape closes without picking, and does not stop a reply', async () => {
    await box().pressSequentially('@');
    await answer('');
    await box().press('ArrowDown');
    await box().press('Tab');
    assert.deepEqual((await posted()).filter((m) => m.type === 'addMention'), [{ type: 'addMention', kind: 'problems' }]);
    assert.equal(await box().inputValue(), '');
    await host({ type: 'generating', value: true });
    await box().pressSequentially('@');
    await answer('');
    await list().waitFor(WAIT);
    await box().press('Escape');
    assert.equal(await list().isVisible(), false);
    assert.ok(!(await posted()).some((m) => m.type === 'stop'), 'Escape closed the picker only');
    assert.equal((await posted()).filter((m) => m.type === 'addMention').length, 1);
    assert.equal(await box().inputValue(), '@', 'the typed text stays');
  });

  it('the @ button opens the picker for mouse users, and a click on an option picks it', async () => {
    await box().fill('Look at');
    await page.getByRole('button', { name: 'Add context (@)' }).click();
    assert.equal(await box().inputValue(), 'Look at @');
    await answer('');
    await page.getByRole('option', { name: /greet\.ts/ }).click();
    assert.deepEqual((await posted()).filter((m) => m.type === 'addMention'), [{ type: 'addMention', kind: 'file', path: 'src/greet.ts' }]);
    assert.equal(await box().inputValue(), 'Look at ');
    assert.equal(await list().isVisible(), false);
    await box().press('Enter');
    const send = (await posted()).find((m) => m.type === 'send');
    assert.deepEqual(send, { type: 'send', text: 'Look at ', images: [] });
  });

  it('with the picker closed (a space ends the mention), Enter sends', async () => {
    await box().pressSequentially('@x y');
    assert.equal(await list().isVisible(), false, 'a space ends the mention');
    await box().press('Enter');
    assert.deepEqual((await posted()).find((m) => m.type === 'send'), { type: 'send', text: '@x y', images: [] });
  });

  it('while the answer to the query now typed is pending, Enter picks nothing stale and sends nothing; then it picks from the new answer', async () => {
    await box().pressSequentially('@gre');
    await answer('gre', [ITEMS[3]]);
    await page.getByRole('option', { name: /greet\.ts/ }).waitFor(WAIT);
    await box().pressSequentially('x');
    await box().press('Enter');
    assert.deepEqual((await posted()).filter((m) => m.type === 'addMention' || m.type === 'send'), [], 'the stale greet.ts was not picked, and nothing was sent');
    assert.equal(await box().inputValue(), '@grex');
    assert.equal(await list().getAttribute('aria-busy'), 'true');
    await answer('grex', [ITEMS[4]]);
    await page.getByRole('option', { name: /stats\.py/ }).waitFor(WAIT);
    assert.equal(await list().getAttribute('aria-busy'), 'false');
    await box().press('Enter');
    assert.deepEqual((await posted()).filter((m) => m.type === 'addMention'), [{ type: 'addMention', kind: 'file', path: 'src/stats.py' }]);
  });
});
