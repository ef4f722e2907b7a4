// The budget check with prices it did not get from the settings (issue 37), in plain Node over a real usage store and a
// loopback server: a dollar limit priced by the endpoint's model list (asked once, kept with the time it was read), and
// a model with no known price, which is sent only once the user allowed it uncounted.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { BudgetLimit } from '../../src/core/budgetSettings';
import { listModelInfo } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import type { UnpricedAnswer } from '../../src/core/priceSources';
import { readProfiles } from '../../src/core/profiles';
import type { UsageRecord } from '../../src/core/usageLedger';
import { BudgetGuard, type GuardedRequest } from '../../src/vscode/budgetGuard';
import { unpricedAnswer } from '../../src/vscode/priceBook';
import { UsageStore } from '../../src/vscode/usageStore';
import { repoRoot } from '../support/repoRoot';
import { startTestServer, type TestServer } from '../support/server';

function memento(): vscode.Memento & { kept: Map<string, unknown> } {
  const kept = new Map<string, unknown>();
  return {
    kept,
    keys: () => [...kept.keys()],
    get: <T>(key: string, fallback?: T) => (kept.has(key) ? kept.get(key) : fallback) as T,
    update: async (key: string, value: unknown) => void (value === undefined ? kept.delete(key) : kept.set(key, value)),
  };
}

const DAILY_DOLLAR: BudgetLimit = { period: 'day', unit: 'dollars', amount: 1, action: 'block', source: 'user' };

describe('budget prices (plain Node)', () => {
  let usage: UsageStore;
  let server: TestServer;
  beforeEach(async () => {
    usage = new UsageStore({ fsPath: await fs.promises.mkdtemp(path.join(os.tmpdir(), 'parley-prices-')) } as vscode.Uri, memento());
    const list = fs.readFileSync(path.join(repoRoot(), 'test/fixtures/models/openrouter-models.json'));
    server = await startTestServer((req, res) => {
      if (req.method === 'GET' && req.path === '/api/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(list);
      }
      res.writeHead(404).end();
    });
  });
  afterEach(async () => {
    usage.dispose();
    await server.close();
  });

  const { profiles } = readProfiles({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }, []);
  const gets = () => server.requests.filter((r) => r.method === 'GET').length;
  const request = (model: string, over: Partial<GuardedRequest> = {}): GuardedRequest => ({
    settings: { budget: [DAILY_DOLLAR], pricing: {}, profiles, model, profile: profiles[0] },
    messages: [{ role: 'user', content: 'hello' }],
    maxOutputTokens: 1000,
    host: new URL(server.url).host,
    source: 'chat',
    models: (signal) => listModelInfo({ endpoint: resolveEndpoint(`${server.url}/api/v1`), signal }),
    ...over,
  });

  it("blocks by the price the endpoint's model list gives: asked once, kept with the day it was read", async () => {
    const state = memento();
    const guard = new BudgetGuard(usage, state);
    const asked: string[] = [];
    const prompts = { unknownPrice: async (m: string) => (asked.push(m), 'uncounted' as const) };
    // 100,000 tokens of reply at the list's $15 per million: $1.50, past the $1 limit.
    const d = await guard.check(request('openai/gpt-5.4', { maxOutputTokens: 100_000, prompts }));
    assert.equal(d.kind, 'block');
    assert.match(d.kind === 'block' ? d.words : '', /Not sent: this request would cross your daily spend limit \(\$1\.00, block\); it may cost up to \$1\.50/);
    assert.equal(gets(), 1);
    assert.deepEqual(asked, [], 'a listed price is a known price: nothing to ask');
    const kept = state.kept.get('parley.listedPrices') as Record<string, { at: number; models: Record<string, unknown> }>;
    assert.deepEqual(kept[new URL(server.url).host].models['openai/gpt-5.4'], { input: 2.5, output: 15, cached: 0.25 });
    assert.ok(Date.now() - kept[new URL(server.url).host].at < 60_000);
    // 1,000 tokens of reply: $0.015, under the limit; the price is known now, so the list is not asked again.
    assert.equal((await guard.check(request('openai/gpt-5.4', { prompts }))).kind, 'send');
    assert.equal(gets(), 1);
    // The user's own price wins over the list's.
    const mine = request('openai/gpt-5.4', { maxOutputTokens: 100_000, prompts });
    assert.equal((await guard.check({ ...mine, settings: { ...mine.settings, pricing: { 'openai/gpt-5.4': { input: 1, output: 1 } } } })).kind, 'send');
  });

  it('a model with no known price asks once per host and model: Block is kept and nothing goes, Send Uncounted goes', async () => {
    const state = memento();
    const guard = new BudgetGuard(usage, state);
    const answers: Array<UnpricedAnswer | undefined> = ['block', 'uncounted'];
    const asked: string[] = [];
    const prompts = { unknownPrice: async (model: string, host: string, limit: string) => (asked.push(`${model} at ${host}: ${limit}`), answers.shift()) };
    const host = new URL(server.url).host;
    // openrouter/auto lists "-1": no fixed price, and no setting prices it.
    const first = await guard.check(request('openrouter/auto', { prompts }));
    assert.equal(first.kind, 'block');
    assert.match(first.kind === 'block' ? first.words : '', /Not sent: no price is known for the model "openrouter\/auto" at .*, so your daily spend limit \(\$1\.00, block\) cannot count what it costs\. You chose to block its requests until it has a price\./);
    assert.deepEqual(asked, [`openrouter/auto at ${host}: your daily spend limit ($1.00, block)`]);
    assert.equal((await guard.check(request('openrouter/auto', { prompts }))).kind, 'block', 'the answer is kept');
    assert.equal(asked.length, 1);
    assert.equal(gets(), 1, 'the list was read once, then not again soon');

    // Another model at the same host: its own question. Uncounted: sent, and sent again without asking.
    assert.equal((await guard.check(request('not-listed', { prompts }))).kind, 'send');
    assert.equal((await guard.check(request('not-listed', { prompts }))).kind, 'send');
    assert.equal(asked.length, 2);
    assert.deepEqual(state.kept.get('parley.unpricedModels'), { [`${host}|openrouter/auto`]: 'block', [`${host}|not-listed`]: 'uncounted' });
    // A price set for it makes the answer moot: counted again (a $0 price sends it).
    const priced = request('openrouter/auto', { prompts });
    assert.equal((await guard.check({ ...priced, settings: { ...priced.settings, pricing: { 'openrouter/auto': { input: 0, output: 0 } } } })).kind, 'send');
  });

  it("VS Code's chat and completions never ask: refused with words that say how; a dismissed question is asked again", async () => {
    const guard = new BudgetGuard(usage, memento());
    let asked = 0;
    const prompts = { unknownPrice: async () => void asked++ };
    for (const source of ['vscode-chat', 'complete'] as UsageRecord['source'][]) {
      const d = await guard.check(request('mystery', { prompts, source }));
      assert.equal(d.kind, 'block', source);
      assert.match(d.kind === 'block' ? d.words : '', /only for a request started in Parley itself \(not VS Code's chat, not a completion\)\. Set its price per million tokens in parley\.pricing/);
    }
    assert.equal(asked, 0);
    // Dismissed: not sent, and the next request asks again.
    const d = await guard.check(request('mystery', { prompts }));
    assert.match(d.kind === 'block' ? d.words : '', /The question was dismissed; the next request asks again\./);
    assert.equal(asked, 1);
    await guard.check(request('mystery', { prompts }));
    assert.equal(asked, 2);
    // Requests at once share one question.
    const state = memento();
    let answer: (a: UnpricedAnswer) => void = () => {};
    const ask = () => (asked++, new Promise<UnpricedAnswer>((resolve) => (answer = resolve)));
    const both = Promise.all([unpricedAnswer(state, 'h', 'm', 'a limit', ask), unpricedAnswer(state, 'h', 'm', 'a limit', ask)]);
    answer('uncounted');
    assert.deepEqual(await both, ['uncounted', 'uncounted']);
    assert.equal(asked, 3);
  });

  it("a workspace's price alone is no price: the question is asked, a Block holds, VS Code's chat is refused", async () => {
    const state = memento();
    const guard = new BudgetGuard(usage, state);
    const asked: string[] = [];
    const prompts = { unknownPrice: async (model: string) => (asked.push(model), 'block' as const) };
    // A trusted workspace prices the model at 0 (settings.pricing is the workspace's; the user priced nothing).
    const free = (r: GuardedRequest): GuardedRequest => ({ ...r, settings: { ...r.settings, pricing: { mystery: { input: 0, output: 0 } }, userPricing: {} } });
    const huge = { maxOutputTokens: 10_000_000, prompts };
    assert.equal((await guard.check(free(request('mystery', huge)))).kind, 'block');
    assert.deepEqual(asked, ['mystery'], 'asked, as for a model with no price');
    assert.equal((await guard.check(free(request('mystery', huge)))).kind, 'block', 'the Block answer holds');
    assert.equal((await guard.check(free(request('mystery', { ...huge, source: 'vscode-chat' })))).kind, 'block');
    // A workspace profile named as the user's: the user's price of the model still counts (and no question).
    const user = readProfiles({ baseUrl: '', model: 'm' }, [{ value: [{ name: 'Work', baseUrl: server.url, models: { gpt: { price: { input: 10, output: 30 } } } }], source: 'user' }]).profiles;
    const merged = readProfiles({ baseUrl: '', model: 'm' }, [
      { value: [{ name: 'Work', baseUrl: server.url, models: { gpt: { price: { input: 10, output: 30 } } } }], source: 'user' },
      { value: [{ name: 'Work', baseUrl: server.url, models: { gpt: { price: { input: 0, output: 0 } } } }], source: 'workspace' },
    ]).profiles;
    const work = merged.find((p) => p.name === 'Work')!;
    assert.equal(work.source, 'workspace', 'the workspace profile replaced the user one');
    // 100,000 tokens of reply at the user's $30 per million: $3, past the $1 limit.
    const r = request('gpt', { maxOutputTokens: 100_000, prompts, host: `Work (${new URL(server.url).host})` });
    assert.equal((await guard.check({ ...r, settings: { ...r.settings, profiles: merged, userProfiles: user, profile: work } })).kind, 'block');
    assert.deepEqual(asked, ['mystery']);
  });

  it('asks nothing while only token limits apply, and reads no model list for them', async () => {
    const guard = new BudgetGuard(usage, memento());
    let asked = 0;
    const r = request('mystery', { prompts: { unknownPrice: async () => (asked++, 'block' as const) } });
    const tokens: BudgetLimit = { ...DAILY_DOLLAR, unit: 'tokens', amount: 100_000 };
    assert.equal((await guard.check({ ...r, settings: { ...r.settings, budget: [tokens] } })).kind, 'send');
    assert.equal(asked, 0);
    assert.equal(gets(), 0);
  });
});
