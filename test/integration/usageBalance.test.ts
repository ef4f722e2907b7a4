// Account balances in the real VS Code (issue 37): a loopback server that answers as OpenRouter's `/api/v1/credits`
// does, a profile that turned balances on for it, and the status bar's tooltip and the usage report that show it,
// asked once however often they are drawn within 5 minutes, only with that origin's key; a profile that did not turn
// balances on asks nothing. (Named to run after chat.test.ts, as files run in name order: this suite leaves the usage
// report open, and chat.test.ts's Show Usage test reads the report's first text as soon as the document exists.)
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import type { RecordedRequest, TestServer } from '../support/server';
import { chunk, keptUserSettings, openChatView, parley, serverPool, usageChunk, userSettings, waitFor, writeJson, writeSse } from './helpers';

/** Every setting the suite changes; each is put back as it was after the suite. */
const TOUCHED = ['endpoints', 'endpoint', 'tools.enabled'];
const RUN = Date.now().toString(36);
const ROUTER = `Router ${RUN}`;
const PLAIN = `Plain ${RUN}`;
const DEEP = `Deep ${RUN}`;
const ROUTER_KEY = `sk-or-v1-router-${RUN}-0000`;
const PLAIN_KEY = `sk-plain-${RUN}-1111111111`;
const DEEP_KEY = `sk-deep-${RUN}-22222222222`;

/** A GET for a balance, of any of the three kinds. */
const balanceAsks = (s: TestServer): RecordedRequest[] => s.requests.filter((r) => r.method === 'GET' && /\/(credits|key|user\/balance|key\/info)$/.test(r.path));

suite('Balances', function () {
  this.timeout(60_000);
  let api: TestApi;
  let router: TestServer;
  let plain: TestServer;
  let deep: TestServer;
  const kept = keptUserSettings(TOUCHED);
  const pool = serverPool();

  /** Answers chat requests, model lists, and GET `balancePath` with `balance`. */
  const server = (balancePath: string, balance: unknown) => pool.start((req, res) => {
    if (req.method === 'GET') return req.path.endsWith(balancePath) ? writeJson(res, 200, balance) : writeJson(res, 200, { data: [{ id: 'tiny' }] });
    writeSse(res, [chunk('An answer.'), chunk('', 'stop'), usageChunk(10, 5)]);
  });
  const tooltip = () => api.usageBar.item.tooltip ?? '';
  const report = async () => {
    await vscode.commands.executeCommand('parley.showUsage');
    return waitFor('the usage report', () => vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'parley-report' && d.uri.path === '/Parley Usage.md'));
  };

  suiteSetup(async () => {
    api = await parley();
    kept.save();
    // OpenRouter's documented answer (https://openrouter.ai/docs/api/api-reference/credits/get-credits).
    router = await server('/api/v1/credits', { data: { total_credits: 100.5, total_usage: 25.75 } });
    plain = await server('/api/v1/credits', { data: { total_credits: 1, total_usage: 0 } });
    // DeepSeek's documented answer (https://api-docs.deepseek.com/api/get-user-balance), amounts as strings.
    deep = await server('/user/balance', { is_available: true, balance_infos: [{ currency: 'USD', total_balance: '110.00', granted_balance: '10.00', topped_up_balance: '100.00' }] });
    await api.keys.set(router.origin, ROUTER_KEY);
    await api.keys.set(plain.origin, PLAIN_KEY);
    await api.keys.set(deep.origin, DEEP_KEY);
    await userSettings({ 'tools.enabled': false, endpoints: [{ name: PLAIN, baseUrl: `${plain.url}/api/v1`, model: 'tiny' }], endpoint: PLAIN });
    await waitFor('the plain profile in the settings', () => api.settings.current.activeProfile === PLAIN || undefined);
    await openChatView(api);
    await api.chat.newChat();
  });

  suiteTeardown(async () => {
    await api.chat.stop();
    await kept.restore();
    for (const s of [router, plain, deep]) await api.keys.delete(s.origin);
    await api.chat.newChat();
    for (const p of pool.started) await p.close();
  });

  test('no profile turned balances on: the tooltip and the report have none, and nothing is asked', async () => {
    await api.chat.send('A question', []);
    assert.equal(api.chat.current.turns.at(-1)?.status, 'done', JSON.stringify(api.chat.current.turns.at(-1)?.error));
    await waitFor('the status bar', () => api.usageBar.item.text || undefined);
    assert.doesNotMatch(tooltip(), /Balances/);
    const doc = await report();
    await waitFor('the report made afresh', () => doc.getText().includes(`\`${PLAIN} (`) || undefined);
    assert.doesNotMatch(doc.getText(), /Balances/);
    assert.deepEqual(balanceAsks(plain), [], 'the profile without balances asked nothing');
  });

  test('a profile that turned balances on: the tooltip and the report show its credit, asked once, with its own key only', async () => {
    await userSettings({
      endpoints: [
        { name: PLAIN, baseUrl: `${plain.url}/api/v1`, model: 'tiny' },
        // A loopback server is not openrouter.ai: the profile says which kind of server it is.
        { name: ROUTER, baseUrl: `${router.url}/api/v1`, model: 'tiny', balance: 'openrouter' },
      ],
    });
    await waitFor('the balance profile in the settings', () => api.settings.current.profiles.some((p) => p.name === ROUTER) || undefined);
    assert.deepEqual(balanceAsks(router), [], 'nothing is asked before the status bar or the report is drawn');

    // A request draws the status bar: its tooltip says the balance is being read, then shows it when it arrives.
    await api.chat.send('Another question', []);
    const shown = await waitFor('the balance in the tooltip', () => /74\.75 left/.test(tooltip()) && tooltip());
    assert.match(shown, new RegExp(`\\*\\*Balances\\*\\*\\n\\n- \`${ROUTER}\` \\(OpenRouter\\): \\\\\\$74\\.75 left \\(\\\\\\$100\\.50 bought, \\\\\\$25\\.75 used\\), read at \\d\\d:\\d\\d [AP]M`));
    assert.doesNotMatch(shown.slice(shown.indexOf('**Balances**')), new RegExp(PLAIN), 'the profile without balances has no line');
    assert.deepEqual(balanceAsks(router).map((r) => [r.path, r.headers.authorization]), [['/api/v1/credits', `Bearer ${ROUTER_KEY}`]]);

    // Drawn again (a reread of the logs, as on window focus) within 5 minutes: the same reading, nothing asked.
    await api.usage.reread();
    await api.chat.send('A third question', []);
    assert.match(tooltip(), /74\.75 left/);
    const doc = await report();
    await waitFor('the balance in the report', () => /## Balances/.test(doc.getText()) || undefined);
    assert.match(doc.getText(), new RegExp(`## Balances\\n\\n- \`${ROUTER}\` \\(OpenRouter\\): \\\\\\$74\\.75 left`));
    assert.equal(balanceAsks(router).length, 1, 'asked once in all: the later drawings and the report used the reading');

    // The key went to its own origin only: the other profile's server saw neither a balance request nor this key.
    assert.deepEqual(balanceAsks(plain), []);
    assert.ok(plain.requests.every((r) => r.headers.authorization !== `Bearer ${ROUTER_KEY}`));
  });

  test('a report made before a balance was read asks it, and shows it when it arrives (the report is made again)', async () => {
    await userSettings({
      endpoints: [
        { name: PLAIN, baseUrl: `${plain.url}/api/v1`, model: 'tiny' },
        { name: ROUTER, baseUrl: `${router.url}/api/v1`, model: 'tiny', balance: 'openrouter' },
        { name: DEEP, baseUrl: deep.url, model: 'tiny', balance: 'deepseek' },
      ],
    });
    await waitFor('the DeepSeek profile in the settings', () => api.settings.current.profiles.some((p) => p.name === DEEP) || undefined);
    const doc = await report();
    await waitFor('the DeepSeek balance in the report', () => doc.getText().includes('110.00 (') || undefined);
    assert.match(doc.getText(), new RegExp(`- \`${DEEP}\` \\(DeepSeek\\): \\\\\\$110\\.00 \\(\\\\\\$10\\.00 granted, \\\\\\$100\\.00 topped up\\) left, read at `));
    assert.deepEqual(balanceAsks(deep).map((r) => [r.path, r.headers.authorization]), [['/user/balance', `Bearer ${DEEP_KEY}`]]);
    assert.equal(balanceAsks(router).length, 1, 'the OpenRouter profile’s reading is still fresh: not asked again');
  });
});
