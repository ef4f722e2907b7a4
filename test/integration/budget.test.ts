// Spend budgets in the real VS Code (issue 37): a blocking limit stops the next request before anything reaches the
// server, the panel's card says which limit, what is left and when it resets, "Send once anyway" sends exactly one,
// the thresholds a reply crossed are said right after it, and a request through vscode.lm (`vendor: parley`) refused
// by the budget fails with the card's words. A reply that crosses a blocking limit while it streams is stopped there:
// the server sees the connection close, the text so far is kept (in the panel and in VS Code's chat) and counted.
// Prices: a dollar limit priced by the server's model list (OpenRouter's shape), and a model with no known price, asked about.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import { estimatePromptTokens } from '../../src/core/tokenEstimate';
import type { UnpricedAnswer } from '../../src/core/priceSources';
import { USAGE_REPORT } from '../../src/vscode/statusBar';
import { chats, chunk, keptUserSettings, lastPosted, openChatView, parley, serverPool, usageChunk, userSettings, viewReceive, waitFor, writeJson, writeSse } from './helpers';
import { repoRoot } from '../support/repoRoot';
import { writeSlowly, type SlowCount, type TestServer } from '../support/server';

/** Every setting the suite changes; each is put back as it was after the suite. */
const TOUCHED = ['baseUrl', 'model', 'endpoints', 'endpoint', 'budget', 'tools.enabled', 'systemPrompt'];
/** A profile of its own, so that only this suite's requests count against its limit (the ledger is shared by the run). */
const PROFILE = `Budget ${Date.now().toString(36)}`;

suite('Spend budgets', function () {
  this.timeout(60_000);
  let api: TestApi;
  let s: TestServer;
  const kept = keptUserSettings(TOUCHED);
  const pool = serverPool();

  suiteSetup(async () => {
    api = await parley();
    kept.save();
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
    await kept.restore();
    await api.chat.newChat();
    for (const p of pool.started) await p.close();
  });

  const lastTurn = () => api.chat.current.turns.at(-1);

  test('a blocking limit stops the next request unsent, with a card; Send once anyway sends exactly one', async () => {
    await api.chat.send('First question', []);
    assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
    assert.equal(chats(s).length, 1);

    // 950 of 1,000 tokens spent today: the thresholds crossed are said right after the reply that crossed them.
    const notices = () => api.recorded.posted.flatMap((m) => (m.type === 'notice' ? [m.text] : []));
    assert.deepEqual(notices().map((n) => n.slice(0, 40)), ['80 % of your daily token limit for the p', '50 % of your weekly token limit for the ']);

    // The next request (its prompt plus 50 tokens of reply) would cross the limit.
    api.recorded.posted.length = 0;
    await api.chat.send('Second question', []);
    assert.equal(chats(s).length, 1, 'nothing reached the server');
    const card = lastTurn()?.error;
    assert.equal(lastTurn()?.status, 'error');
    assert.equal(card?.kind, 'budget', JSON.stringify(card));
    assert.match(card?.title ?? '', new RegExp(`daily token limit for the profile "${PROFILE}" \\(1,000 tokens, block\\)`));
    assert.match(card?.title ?? '', /50 tokens left; the limit resets at midnight tonight \(local time\)/);
    assert.deepEqual(card?.actions, ['sendOnceAnyway', 'openBudgetSettings']);
    // The card reached the panel; the thresholds were said once, after the first reply, not again at this check.
    const ended = lastPosted(api, 'turnEnd');
    assert.equal(ended?.turn.error?.kind, 'budget');
    assert.deepEqual(notices(), []);
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
    // The passed request crossed 100 % of both: said right after it, and not again at the check of this one.
    assert.deepEqual(notices().map((n) => n.slice(0, 30)), ['100 % of your daily token limi', '100 % of your weekly token lim'], 'each threshold is said once a period');
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

  /** Five tokens as Parley estimates them (20 characters, 4 words): a stopped reply's cost grows 5 a chunk. */
  const WORDS = 'word word word word ';
  /** A chunk past the crossing that the server may still have written before it saw the close (one event loop serves both). */
  const SLACK = 40;

  /**
   * A profile of its own (a limit of 400 tokens a day, its model's reply capped at 50 tokens, so its requests pass the
   * check) on a server that ignores the cap: it streams 1,000 chunks of WORDS slowly, noting when the client closed.
   */
  async function streamingProfile(name: string): Promise<{ server: TestServer; counts: SlowCount[] }> {
    const counts: SlowCount[] = [];
    const server = await pool.start((req, res) => {
      if (req.method === 'GET') return writeJson(res, req.path.endsWith('/models') ? 200 : 404, { data: [{ id: 'long' }] });
      const count: SlowCount = { written: 0 };
      counts.push(count);
      return writeSlowly(res, Array.from({ length: 1000 }, () => chunk(WORDS)), [chunk('', 'stop')], count, 5);
    });
    const c = vscode.workspace.getConfiguration('parley');
    const others = (c.get<Array<{ name: string }>>('endpoints') ?? []).filter((p) => p.name !== name);
    await userSettings({
      endpoints: [...others, { name, baseUrl: server.url, model: 'long', models: { long: { maxOutputTokens: 50 } }, budget: [{ period: 'day', tokens: 400, action: 'block' }] }],
      endpoint: name,
    });
    await waitFor(`the profile ${name}`, () => api.settings.current.activeProfile === name || undefined);
    return { server, counts };
  }

  /** The chunk whose cost first crosses the 400 tokens: the prompt's estimate plus 5 tokens a chunk. */
  const crossingChunk = (messages: Parameters<typeof estimatePromptTokens>[0]) => Math.floor((400 - estimatePromptTokens(messages)) / 5) + 1;

  /** What today's ledger counts for a profile. */
  async function countedFor(name: string): Promise<{ total: number; estimated: number }> {
    let total = 0;
    let estimated = 0;
    for (const [key, t] of Object.entries(await api.usage.ledger())) {
      if (!key.split('|')[1].startsWith(`${name} (`)) continue;
      total += t.total;
      estimated += t.estimatedTokens;
    }
    return { total, estimated };
  }

  test('a reply that crosses a blocking limit as it streams is stopped there: the server sees the close, the text so far is kept and counted', async () => {
    const name = `${PROFILE} stream`;
    const { server, counts } = await streamingProfile(name);
    await api.chat.newChat();
    await api.chat.send('Tell me a long story', []);
    const sent = chats(server)[0];
    const crossing = crossingChunk(sent.json.messages);
    const turn = lastTurn();
    assert.deepEqual([turn?.status, turn?.error?.kind], ['stopped', 'budget'], JSON.stringify(turn?.error));
    assert.match(turn?.error?.title ?? '', new RegExp(`^Stopped: this reply crossed your daily token limit for the profile "${name}" \\(400 tokens, block\\) while it streamed`));
    assert.deepEqual(turn?.error?.actions, ['sendOnceAnyway', 'openBudgetSettings']);
    const kept = (turn?.text.length ?? 0) / WORDS.length;
    assert.equal(turn?.text, WORDS.repeat(kept), 'whole chunks kept');
    assert.ok(kept >= crossing, `the text up to the crossing chunk (${crossing}) is kept: ${kept} chunks`);
    // The server saw the connection close within a few chunks of the crossing, long before its 1,000.
    await waitFor('the server to see the close', () => sent.clientClosedEarly || undefined);
    const closedAfter = counts[0].closedAfter ?? Infinity;
    assert.ok(closedAfter >= kept && closedAfter <= crossing + SLACK, `closed after ${closedAfter} chunks written; the crossing was chunk ${crossing}`);
    // The panel shows it, and the ledger counted it as a Stop is: estimated, the prompt and the text kept.
    assert.deepEqual([lastPosted(api, 'turnEnd')?.turn.status, lastPosted(api, 'turnEnd')?.turn.text], ['stopped', turn?.text]);
    const counted = await countedFor(name);
    assert.equal(counted.total, estimatePromptTokens(sent.json.messages) + 5 * kept);
    assert.ok(counted.estimated > 0 && counted.total > 400);
  });

  test('a vscode.lm reply that crosses a blocking limit as it streams ends with the budget\'s error; the text reported stays', async () => {
    const name = `${PROFILE} lm`;
    const { server, counts } = await streamingProfile(name);
    const model = await waitFor('Parley\'s model in vscode.lm', async () => (await vscode.lm.selectChatModels({ vendor: 'parley', id: 'long' }))[0], 20_000);
    let text = '';
    await assert.rejects(
      async () => {
        const r = await model.sendRequest([vscode.LanguageModelChatMessage.User('Tell me a long story')], { justification: 'Parley integration test' });
        for await (const part of r.text) text += part;
      },
      (e: Error) => /Stopped: this reply crossed your daily token limit/.test(e.message) && /parley\.budget/.test(e.message),
    );
    const sent = chats(server)[0];
    const crossing = crossingChunk(sent.json.messages);
    const reported = text.length / WORDS.length;
    assert.equal(text, WORDS.repeat(reported));
    assert.ok(reported >= crossing, `the text reported up to the stop reached the caller: ${reported} chunks; the crossing was chunk ${crossing}`);
    await waitFor('the server to see the close', () => sent.clientClosedEarly || undefined);
    assert.ok((counts[0].closedAfter ?? Infinity) <= crossing + SLACK, `closed after ${counts[0].closedAfter}; the crossing was chunk ${crossing}`);
    assert.ok((await countedFor(name)).total > 400, 'counted');
  });

  /** A server imitating OpenRouter: its model list (test/fixtures/models) prices each model per token. */
  const openRouterLike = () => {
    const list = fs.readFileSync(path.join(repoRoot(), 'test/fixtures/models/openrouter-models.json'));
    return pool.start((req, res) => {
      if (req.method === 'GET' && req.path === '/api/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(list);
      }
      if (req.method === 'GET') return writeJson(res, 404, { error: { message: 'Not Found', code: 404 } });
      writeSse(res, [chunk('Priced.'), chunk('', 'stop'), usageChunk(20, 3)]);
    });
  };
  /** The usage report as the extension renders it (the document's text may still be what an earlier test showed). */
  const usageReport = async () => String(await api.reports.provideTextDocumentContent(vscode.Uri.from({ scheme: 'parley-report', path: `/${USAGE_REPORT}` })));
  /** Makes a profile of its own on `server` with a daily $1 limit the active one, for `model`, in a new conversation. */
  const pricedProfile = async (server: TestServer, name: string, model: string) => {
    const c = vscode.workspace.getConfiguration('parley');
    const others = (c.inspect<unknown[]>('endpoints')?.globalValue ?? []).filter((p) => (p as { name?: string }).name !== name);
    await userSettings({
      endpoints: [...others, { name, baseUrl: `${server.url}/api/v1`, model, models: { [model]: { maxOutputTokens: 100_000 } }, budget: [{ period: 'day', dollars: 1, action: 'block' }] }],
      endpoint: name,
    });
    await waitFor(`the profile ${name} active`, () => api.settings.current.activeProfile === name || undefined);
    await api.chat.newChat();
  };

  test("a dollar limit blocks by the price the server's model list gives: nothing reaches /chat/completions", async () => {
    const s2 = await openRouterLike();
    const name = `Priced ${Date.now().toString(36)}`;
    await pricedProfile(s2, name, 'openai/gpt-5.4');
    await api.chat.send('What does this cost?', []);
    // No price in the settings: the list's $15 per million for the reply makes 100,000 tokens of it $1.50.
    assert.equal(chats(s2).length, 0, 'nothing reached the server');
    assert.ok(s2.requests.some((r) => r.method === 'GET' && r.path === '/api/v1/models'), 'the model list was read');
    const card = lastTurn()?.error;
    assert.equal(card?.kind, 'budget', JSON.stringify(card));
    assert.match(card?.title ?? '', new RegExp(`Not sent: this request would cross your daily spend limit for the profile "${name}" \\(\\$1\\.00, block\\); it may cost up to \\$1\\.50`));
    // The usage report says where the price came from once the model has a row (Send once anyway sends one).
    await viewReceive(api, { type: 'action', action: 'sendOnceAnyway' });
    assert.equal(chats(s2).length, 1);
    const report = await usageReport();
    assert.match(report, new RegExp(`\\| \`${name} \\(127\\.0\\.0\\.1:${s2.port}\\)\` \\| \`openai/gpt-5\\.4\` \\| \\$2\\.5 prompt, \\$0\\.25 cached, \\$15 reply \\| the server's model list, read \\d{4}-\\d{2}-\\d{2} \\|`));
  });

  test('a model with no known price asks first: Block sends nothing, Send Uncounted sends and the report lists it', async () => {
    const s2 = await openRouterLike();
    const name = `Unpriced ${Date.now().toString(36)}`;
    const realPrompts = api.requester.prompts;
    const asked: string[] = [];
    let answer: UnpricedAnswer | undefined = 'block';
    api.requester.prompts = { ...realPrompts, unknownPrice: async (model, host, limit) => (asked.push(`${model} | ${host} | ${limit}`), answer) };
    try {
      // openrouter/auto lists "-1": its price depends on the model it picks, so none is known.
      await pricedProfile(s2, name, 'openrouter/auto');
      await api.chat.send('Route this', []);
      assert.equal(chats(s2).length, 0, 'Block: nothing reached the server');
      assert.deepEqual(asked, [`openrouter/auto | ${name} (127.0.0.1:${s2.port}) | your daily spend limit for the profile "${name}" ($1.00, block)`]);
      assert.equal(lastTurn()?.error?.kind, 'budget');
      assert.match(lastTurn()?.error?.title ?? '', /Not sent: no price is known for the model "openrouter\/auto" at .*You chose to block its requests until it has a price\./);
      assert.deepEqual(lastTurn()?.error?.actions, ['sendOnceAnyway', 'openBudgetSettings']);
      await api.chat.send('Route this again', []);
      assert.equal(asked.length, 1, 'the answer is remembered');
      assert.equal(chats(s2).length, 0);

      answer = 'uncounted';
      await pricedProfile(s2, name, 'not/listed');
      await api.chat.send('And this?', []);
      assert.equal(asked.length, 2);
      assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
      assert.equal(chats(s2).length, 1, 'Send Uncounted: sent');
      const report = await usageReport();
      assert.match(report, new RegExp(`uncounted in dollars[^\\n]*\\n\\n- \`not/listed\` at \`${name} \\(127\\.0\\.0\\.1:${s2.port}\\)\``));
      assert.match(report, new RegExp(`- \`openrouter/auto\` at \`${name} \\(127\\.0\\.0\\.1:${s2.port}\\)\``), 'the blocked one is listed too');
    } finally {
      api.requester.prompts = realPrompts;
    }
  });

  test("a vscode.lm request to a model with no known price is refused without a question (none could wait on a dialog)", async () => {
    const s2 = await openRouterLike();
    const name = `Lm unpriced ${Date.now().toString(36)}`;
    const realPrompts = api.requester.prompts;
    let asked = 0;
    api.requester.prompts = { ...realPrompts, unknownPrice: async () => (asked++, 'uncounted' as const) };
    try {
      await pricedProfile(s2, name, 'openrouter/auto');
      const model = await waitFor('openrouter/auto in vscode.lm', async () => (await vscode.lm.selectChatModels({ vendor: 'parley', id: 'openrouter/auto' }))[0], 20_000);
      await assert.rejects(
        async () => {
          const r = await model.sendRequest([vscode.LanguageModelChatMessage.User('hi')], { justification: 'Parley integration test' });
          for await (const _ of r.stream) { /* drained */ }
        },
        (e: Error) => /no price is known for the model "openrouter\/auto"/.test(e.message) && /not VS Code's chat/.test(e.message),
      );
      assert.equal(asked, 0);
      assert.equal(chats(s2).length, 0);
    } finally {
      api.requester.prompts = realPrompts;
    }
  });
});
