// The usage log on disk (src/vscode/usageStore.ts) in plain Node: two stores over one folder are two windows; each
// appends to its own log and reads both. What the status bar draws comes from its onDidChange.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { UsageRecord } from '../../src/core/usageLedger';
import { UsageStore, type UsageView } from '../../src/vscode/usageStore';
import { pricingOnly } from '../support/pricing';

/** Global state as VS Code keeps it, in memory. */
function memento(entries: Array<[string, unknown]> = []): vscode.Memento & { kept: Map<string, unknown> } {
  const kept = new Map(entries);
  return {
    kept,
    keys: () => [...kept.keys()],
    get: <T>(key: string, fallback?: T) => (kept.has(key) ? kept.get(key) : fallback) as T,
    update: async (key: string, value: unknown) => void (value === undefined ? kept.delete(key) : kept.set(key, value)),
  };
}

const record = (at: number, total: number, source: UsageRecord['source'] = 'chat'): UsageRecord =>
  ({ at, model: 'm', host: '127.0.0.1:1', prompt: total - 1, completion: 1, total, estimated: false, durationMs: 1, source });

const sum = (ledger: Record<string, { total: number; requests: number }>) =>
  Object.values(ledger).reduce(([total, requests], t) => [total + t.total, requests + t.requests], [0, 0]);

describe('usage store (plain Node)', () => {
  let storage: vscode.Uri;
  const stores: UsageStore[] = [];
  const open = (state: vscode.Memento = memento()) => {
    const s = new UsageStore(storage, state);
    stores.push(s);
    return s;
  };

  beforeEach(async () => {
    storage = { fsPath: await fs.mkdtemp(path.join(os.tmpdir(), 'parley-usage-')) } as vscode.Uri;
  });

  afterEach(async () => {
    for (const s of stores.splice(0)) s.dispose();
    await fs.rm(storage.fsPath, { recursive: true, force: true });
  });

  it("appends to this window's log, merges every window's, and tells the status bar before onDidRecord", async () => {
    const a = open();
    const b = open();
    const order: string[] = [];
    let view: UsageView | undefined;
    a.onDidChange((v) => {
      order.push('change');
      view = v;
    });
    a.onDidRecord(() => order.push('record'));
    const now = Date.now();
    await a.record(record(now, 10));
    await b.record(record(now + 1, 20));
    await a.record(record(now + 2, 30, 'complete'));
    assert.deepEqual(order.slice(0, 2), ['change', 'record']);
    assert.equal(view?.last?.total, 10, "a completion counts, but the item keeps showing the chat's last request");
    assert.equal(a.lastRecord?.total, 10);
    assert.deepEqual(sum(await a.ledger()), [60, 3]);
    assert.deepEqual(sum(await b.ledger()), [60, 3]);
    const names = (await fs.readdir(path.join(storage.fsPath, 'usage'))).sort();
    assert.deepEqual(names, [`${a.windowId}.jsonl`, `${b.windowId}.jsonl`].sort(), 'one log per window');
    assert.match(await a.reportText(pricingOnly()), /This window: 40 tokens in 2 requests/);
  });

  it("reads another window's record when its log changes, once this window has shown usage", async () => {
    const a = open();
    const b = open();
    const now = Date.now();
    await a.record(record(now, 5));
    const seen = new Promise<UsageView>((resolve) => a.onDidChange((v) => sum(v.ledger)[0] === 12 && resolve(v)));
    await b.record(record(now + 1, 7));
    const v = await seen;
    assert.equal(v.last?.total, 5, "the item still shows this window's last request");
    assert.deepEqual(sum(v.ledger), [12, 2]);
  });

  it('moves the old global-state ledger into the log folder once, however many windows start at once; Reset clears all', async () => {
    const old: [string, unknown] = ['parley.usageLedger', { '2025-01-01|api.example.com|old': { requests: 3, prompt: 900, completion: 100, total: 1000, estimatedTokens: 0 } }];
    const state = memento([old]);
    const a = open(state);
    const b = open(state);
    await Promise.all([a.ledger(), b.ledger(), a.record(record(Date.now(), 4))]);
    assert.deepEqual(sum(await a.ledger()), [1004, 4]);
    assert.deepEqual(sum(await b.ledger()), [1004, 4]);
    assert.equal(state.kept.has('parley.usageLedger'), false, 'the global-state ledger was moved');
    let view: UsageView | undefined;
    a.onDidChange((v) => (view = v));
    assert.equal(await a.reset(async () => false), false);
    assert.deepEqual(sum(await b.ledger()), [1004, 4], 'declined: totals kept');
    assert.equal(await a.reset(async () => true), true);
    assert.equal(view?.last, undefined, 'the item hides');
    assert.deepEqual(await b.ledger(), {}, "a reset in one window clears the other window's totals too");
  });
});
