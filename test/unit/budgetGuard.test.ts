// The budget check around each request (src/vscode/budgetGuard.ts) in plain Node, over a real usage store in a
// temporary folder: a block, the reader's one pass per conversation (covering its request whole), the watch of a
// stream, and thresholds said once across windows' reloads, right after the request that crossed them.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { BudgetLimit } from '../../src/core/budgetSettings';
import { readProfiles } from '../../src/core/profiles';
import { BudgetGuard, type GuardedRequest } from '../../src/vscode/budgetGuard';
import { UsageStore } from '../../src/vscode/usageStore';
import { memoryState } from '../support/memoryState';

describe('budget guard (plain Node)', () => {
  let usage: UsageStore;
  beforeEach(async () => {
    usage = new UsageStore({ fsPath: await fs.mkdtemp(path.join(os.tmpdir(), 'parley-budget-')) } as vscode.Uri, memoryState());
  });
  afterEach(() => usage.dispose());

  const { profiles } = readProfiles({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }, []);
  const request = (budget: BudgetLimit[], passKey?: string): GuardedRequest => ({
    settings: { budget, pricing: { m: { input: 1, output: 1 } }, profiles, model: 'm', profile: profiles[0] },
    messages: [{ role: 'user', content: 'hello' }],
    maxOutputTokens: 100,
    passKey,
    host: '127.0.0.1:1',
  });
  const record = (total: number) => usage.record({ at: Date.now(), model: 'm', host: '127.0.0.1:1', prompt: total, completion: 0, total, estimated: false, durationMs: 1, source: 'chat' });

  it('sends with no budget, blocks past a blocking limit, and lets exactly one request of the conversation given a pass through', async () => {
    const guard = new BudgetGuard(usage, memoryState());
    assert.equal((await guard.check(request([]))).kind, 'send');
    const limits: BudgetLimit[] = [{ period: 'day', unit: 'tokens', amount: 1000, action: 'block', source: 'user' }];
    await record(950);
    assert.equal((await guard.check(request(limits, 'c1'))).kind, 'block');
    guard.allowOnce('c1');
    assert.equal((await guard.check(request(limits, 'c2'))).kind, 'block', 'another conversation has no pass');
    assert.notEqual((await guard.check(request(limits, 'c1'))).kind, 'block');
    assert.equal((await guard.check(request(limits, 'c1'))).kind, 'block', 'the pass is used up');
  });

  it('watches the stream of a request it lets go; a pass covers its request whole (no watch)', async () => {
    const guard = new BudgetGuard(usage, memoryState());
    const limits: BudgetLimit[] = [{ period: 'day', unit: 'tokens', amount: 1000, action: 'block', source: 'user' }];
    const stream = { stream: {} };
    const sent = await guard.check({ ...request(limits), ...stream });
    assert.ok(sent.kind !== 'block');
    assert.ok(sent.watch, 'a stream to watch');
    assert.equal(sent.headroom?.[0].left, 1000);
    const unwatched = await guard.check(request(limits));
    assert.equal(unwatched.kind !== 'block' ? unwatched.watch : 'block', undefined, 'no stream asked for (a completion): none watched');
    await record(950);
    guard.allowOnce('c1');
    const passed = await guard.check({ ...request(limits, 'c1'), ...stream });
    assert.notEqual(passed.kind, 'block');
    assert.equal(passed.kind !== 'block' ? passed.watch : 'block', undefined);
  });

  it('says the thresholds a counted request crossed right after it, and not again at the next check', async () => {
    const state = memoryState();
    const guard = new BudgetGuard(usage, state);
    const limits: BudgetLimit[] = [{ period: 'month', unit: 'tokens', amount: 1000, action: 'warn', source: 'user' }];
    assert.deepEqual(await guard.crossed(request(limits).settings), []);
    await record(850);
    assert.deepEqual((await guard.crossed(request(limits).settings)).map((w) => w.threshold), [80]);
    assert.deepEqual(await guard.crossed(request(limits).settings), []);
    assert.equal((await guard.check(request(limits))).kind, 'send', 'said already');
    assert.deepEqual(await guard.crossed(request([]).settings), [], 'no limits: nothing to say');
  });

  it('says each threshold once, remembered in global state', async () => {
    const state = memoryState();
    const limits: BudgetLimit[] = [{ period: 'month', unit: 'tokens', amount: 1000, action: 'warn', source: 'user' }];
    await record(600);
    const first = await new BudgetGuard(usage, state).check(request(limits));
    assert.equal(first.kind, 'warn');
    assert.deepEqual(first.kind === 'warn' ? first.warnings.map((w) => w.threshold) : [], [50]);
    // A new window (a new guard) over the same global state does not say it again.
    assert.equal((await new BudgetGuard(usage, state).check(request(limits))).kind, 'send');
  });
});
