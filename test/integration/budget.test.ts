// Spend budgets in the real VS Code (issue 37): a blocking limit stops the next request before anything reaches the
// server, the panel's card says which limit, what is left and when it resets, "Send once anyway" sends exactly one,
// and a request through vscode.lm (`vendor: parley`) refused by the budget fails with the card's words.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import { chats, chunk, lastPosted, openChatView, parley, serverPool, usageChunk, userSettings, viewReceive, waitFor, writeJson, writeSse } from './helpers';
import type { TestServer } from '../support/server';

/** Every setting the suite changes; each is put back as it was after the suite. */
const TOUCHED = ['baseUrl', 'model', 'endpoints', 'endpoint', 'budget', 'tools.enabled', 'systemPrompt'];
/** A profile of its own, so that only this suite's requests count against its limit (the ledger is shared by the run). */
const PROFILE = `Budget ${Date.now().toString(36)}`;

suite('Spend budgets', function () {
  this.timeout(60_000);
  let api: TestApi;
  let s: TestServer;
  const saved = new Map<string, unknown>();
  const pool = serverPool();

  suiteSetup(async () => {
    api = await parley();
    const c = vscode.workspace.getConfiguration('parley');
    for (const k of TOUCHED) saved.set(k, c.inspect(k)?.globalValue);
    // Each answer is counted as 950 tokens by the server's own usage.
    s = await pool.start((req, res) => {
      if (req.method === 'GET') return writeJson(res, req.path.endsWith('/models') ? 200 : 404, { data: [{ id: 'tiny' }] });
      writeSse(res, [chunk('An answer.'), chunk('', 'stop'), usageChunk(550, 400)]);
    });
    await userSettings({
      'tools.enabled': false,
      systemPrompt: 'Be brief.',
      endpoints: [{
        name: PROFILE, baseUrl: s.url, model: 'tiny',
        models: { tiny: { maxOutputTokens: 50 } },
        budget: [{ period: 'day', tokens: 1000, action: 'block' }, { period: 'week', tokens: 1500, action: 'warn' }],
      }],
      endpoint: PROFILE,
    });
    await waitFor('the budget profile in the settings', () => api.settings.current.activeProfile === PROFILE || undefined);
    await openChatView(api);
    await api.chat.newChat();
  });

  suiteTeardown(async () => {
    await api.chat.stop();
    const c = vscode.workspace.getConfiguration('parley');
    for (const k of TOUCHED) await c.update(k, saved.get(k), vscode.ConfigurationTarget.Global);
    await api.chat.newChat();
    for (const p of pool.started) await p.close();
  });

  const lastTurn = () => api.chat.current.turns.at(-1);

  test('a blocking limit stops the next request unsent, with a card; Send once anyway sends exactly one', async () => {
    await api.chat.send('First question', []);
    assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
    assert.equal(chats(s).length, 1);

    // 950 of 1,000 tokens spent today: the next request (its prompt plus 50 tokens of reply) would cross the limit.
    api.recorded.posted.length = 0;
    await api.chat.send('Second question', []);
    assert.equal(chats(s).length, 1, 'nothing reached the server');
    const card = lastTurn()?.error;
    assert.equal(lastTurn()?.status, 'error');
    assert.equal(card?.kind, 'budget', JSON.stringify(card));
    assert.match(card?.title ?? '', new RegExp(`daily token limit for the profile "${PROFILE}" \\(1,000 tokens, block\\)`));
    assert.match(card?.title ?? '', /50 tokens left; the limit resets at midnight tonight \(local time\)/);
    assert.deepEqual(card?.actions, ['sendOnceAnyway', 'openBudgetSettings']);
    // The card reached the panel, and the thresholds crossed were said in notices, once each.
    const ended = lastPosted(api, 'turnEnd');
    assert.equal(ended?.turn.error?.kind, 'budget');
    const notices = () => api.recorded.posted.flatMap((m) => (m.type === 'notice' ? [m.text] : []));
    assert.deepEqual(notices().map((n) => n.slice(0, 40)), ['80 % of your daily token limit for the p', '50 % of your weekly token limit for the ']);
    assert.equal(api.usageBar.item.warning, false, 'no warn limit is reached yet');

    // The reader's click, through the panel's own route: exactly one request goes.
    await viewReceive(api, { type: 'action', action: 'sendOnceAnyway' });
    assert.equal(chats(s).length, 2, 'Send once anyway sent the request');
    assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
    assert.equal(chats(s).at(-1)?.json.messages.at(-1)?.content, 'Second question');
    // 1,900 tokens: the weekly warn limit is past 100 %: the status bar says so in its tooltip and colour.
    await waitFor('the status bar in the warning colour', () => api.usageBar.item.warning || undefined);
    assert.match(api.usageBar.item.tooltip ?? '', new RegExp(`your weekly token limit for the profile "${PROFILE}" \\(1,500 tokens, warn\\): 1,900 tokens spent \\(126 %\\)`));
    assert.match(api.usageBar.item.accessibilityInformation?.label ?? '', /a spend limit is reached/);

    await api.chat.send('Third question', []);
    assert.equal(chats(s).length, 2, 'the pass was for one request only');
    assert.equal(lastTurn()?.error?.kind, 'budget');
    assert.equal(notices().filter((n) => n.startsWith('80 % of your daily')).length, 1, 'each threshold is said once a period');
  });

  test('a vscode.lm request refused by the budget fails with the card\'s words, and nothing is sent', async () => {
    const model = await waitFor('Parley\'s model in vscode.lm', async () => (await vscode.lm.selectChatModels({ vendor: 'parley', id: 'tiny' }))[0], 20_000);
    const before = chats(s).length;
    await assert.rejects(
      async () => {
        const r = await model.sendRequest([vscode.LanguageModelChatMessage.User('hi')], { justification: 'Parley integration test' });
        for await (const _ of r.stream) { /* drained */ }
      },
      (e: Error) => /Not sent: this request would cross your daily token limit/.test(e.message) && /parley\.budget/.test(e.message),
    );
    assert.equal(chats(s).length, before, 'nothing reached the server');
  });
});
