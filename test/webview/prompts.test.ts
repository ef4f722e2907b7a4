// The composer's `/` picker (prompt files) in headless Chromium: the real bundle, the host's CSP, a stand-in host.
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { PromptCandidate } from '../../src/shared/protocol';
import { panelPage, WAIT } from './panelPage';

const PROMPTS: PromptCandidate[] = [
  { name: 'explain', description: 'Explain the selection', hint: '', source: '.github/prompts/explain.prompt.md' },
  { name: 'write-test', description: 'Write a unit test', hint: 'fn: the function name', source: '.github/prompts/write-test.prompt.md' },
  { name: 'review', description: 'Review a file', hint: '', source: 'user' },
];

describe('the / picker for prompt files (Chromium)', function () {
  this.timeout(60000);
  const panel = panelPage();
  const { host, posted } = panel;
  let page: Page;
  beforeEach(() => {
    page = panel.page;
  });

  /** Waits for the picker to ask for the prompt files, then answers with `items`. */
  async function answer(items = PROMPTS): Promise<void> {
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'promptQuery'), undefined, WAIT);
    await host({ type: 'promptCandidates', items });
  }

  const box = () => page.getByRole('combobox', { name: 'Message Parley' });
  const list = () => page.getByRole('listbox', { name: 'Prompt files' });
  const activeLabel = () => page.evaluate(() => {
    const id = document.querySelector('textarea')!.getAttribute('aria-activedescendant');
    return id ? document.getElementById(id)?.querySelector('.mention-label')?.textContent ?? null : null;
  });

  it('opens on / at the start only, lists each prompt file with its description and arguments', async () => {
    await box().pressSequentially('a/b');
    assert.ok(!(await posted()).some((m) => m.type === 'promptQuery'), 'a / inside a question is text');
    await box().fill('');
    await box().pressSequentially('/');
    await answer();
    await page.getByRole('option').nth(2).waitFor(WAIT);
    assert.equal(await box().getAttribute('aria-expanded'), 'true');
    assert.equal(await box().getAttribute('aria-controls'), 'prompt-list');
    assert.equal(await page.getByRole('option').count(), 3);
    await page.getByRole('option', { name: /\/write-test.*Write a unit test.*fn: the function name/ }).waitFor(WAIT);
    assert.equal(await activeLabel(), '/explain');
  });

  it('filters as the name is typed; arrows move, Enter puts /name in the draft, then Enter runs it with its arguments', async () => {
    await box().pressSequentially('/e');
    await answer();
    await page.getByRole('option').nth(2).waitFor(WAIT);
    assert.equal(await page.getByRole('option').count(), 3, 'explain, write-test and review all hold an e');
    await box().pressSequentially('x');
    assert.equal(await page.getByRole('option').count(), 1);
    await box().fill('');
    await box().pressSequentially('/t');
    await page.getByRole('option').first().waitFor(WAIT);
    await box().press('ArrowDown');
    await box().press('ArrowUp');
    assert.equal(await activeLabel(), '/write-test');
    await box().press('Enter');
    assert.equal(await box().inputValue(), '/write-test ');
    assert.equal(await list().isVisible(), false);
    assert.ok(!(await posted()).some((m) => m.type === 'send' || m.type === 'runPrompt'), 'Enter picked; it ran nothing');
    await box().pressSequentially('parseDate');
    await box().press('Enter');
    assert.deepEqual((await posted()).filter((m) => m.type === 'send' || m.type === 'runPrompt'), [{ type: 'runPrompt', name: 'write-test', args: 'parseDate' }]);
    assert.equal(await box().inputValue(), '');
  });

  it('Escape closes; a /word that names no prompt file is sent as a question; the host\'s refusal puts the draft back', async () => {
    await box().pressSequentially('/');
    await answer();
    await box().press('Escape');
    assert.equal(await list().isVisible(), false);
    await box().fill('/nothing here');
    await box().press('Enter');
    assert.deepEqual((await posted()).find((m) => m.type === 'send'), { type: 'send', text: '/nothing here', images: [] });
    await box().fill('/write-test');
    await box().press('Escape');
    await box().press('Enter');
    assert.deepEqual((await posted()).find((m) => m.type === 'runPrompt'), { type: 'runPrompt', name: 'write-test', args: '' });
    await host({ type: 'composerError', text: '/write-test needs fn (the function name): type /write-test <fn> and send again.' });
    // The host's message arrives as an event: once its words show, the draft is back.
    await page.getByText('/write-test needs fn').waitFor(WAIT);
    assert.equal(await box().inputValue(), '/write-test');
  });

  it('a name beyond ASCII letters (überprüfen, fix:bug) is listed, filtered and run like any other', async () => {
    await box().pressSequentially('/über');
    await answer([...PROMPTS, { name: 'überprüfen', description: 'Prüfen', source: 'user', hint: '' }, { name: 'fix:bug', description: 'Fix', source: 'user', hint: '' }]);
    await page.getByRole('option', { name: /\/überprüfen/ }).waitFor(WAIT);
    assert.equal(await page.getByRole('option').count(), 1);
    await box().press('Enter');
    await box().pressSequentially('alles');
    await box().press('Enter');
    await box().fill('/fix:bug');
    await box().press('Escape');
    await box().press('Enter');
    assert.deepEqual((await posted()).filter((m) => m.type === 'send' || m.type === 'runPrompt'), [
      { type: 'runPrompt', name: 'überprüfen', args: 'alles' }, { type: 'runPrompt', name: 'fix:bug', args: '' },
    ]);
  });

  it('a path typed at the start (/usr/bin/env …) closes the picker at its second /, and Enter sends it as a question', async () => {
    await box().pressSequentially('/usr');
    await answer();
    await page.getByText('No prompt file has that name').waitFor(WAIT);
    await box().pressSequentially('/bin/env');
    assert.equal(await page.getByText('No prompt file has that name').isVisible(), false, 'a name has no /: this is a path');
    assert.equal(await box().getAttribute('aria-expanded'), 'false');
    await box().pressSequentially(' python3');
    await box().press('Enter');
    assert.deepEqual((await posted()).find((m) => m.type === 'send'), { type: 'send', text: '/usr/bin/env python3', images: [] });
  });

  it('says where prompt files go when there are none, and a click picks', async () => {
    await box().pressSequentially('/');
    await answer([]);
    await page.getByText('No prompt files: add .github/prompts/<name>.prompt.md').waitFor(WAIT);
    await box().press('Enter');
    assert.deepEqual((await posted()).find((m) => m.type === 'send'), { type: 'send', text: '/', images: [] }, 'with nothing to pick, Enter sends');
    await box().pressSequentially('/');
    await host({ type: 'promptCandidates', items: PROMPTS });
    await page.getByRole('option', { name: /\/review/ }).click();
    assert.equal(await box().inputValue(), '/review ');
  });
});
