// The usage totals kept up to date as logs grow (core/usageTotals.ts withAppended, and src/vscode/usageStore.ts reading
// only what changed): always the same totals as merging every window's log from scratch, through appends, another
// window's half-written line, a record counted twice by id, a new, replaced or deleted log, a reset and a failed append.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { UsageRecord } from '../../src/core/usageLedger';
import { parseResetMarker, parseUsageLog, usageLine } from '../../src/core/usageLog';
import { mergeUsage, withAppended } from '../../src/core/usageTotals';
import { UsageStore, type UsageView } from '../../src/vscode/usageStore';
import { memoryState } from '../support/memoryState';
import { seededRandom } from '../support/random';

const DAY = Date.UTC(2026, 10, 2, 12);
const SOURCES: Array<UsageRecord['source']> = ['chat', 'complete', 'vscode-chat', 'compact'];

function records(rand: () => number, n: number, idFrom: number): UsageRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const total = 1 + Math.floor(rand() * 1000);
    const r: UsageRecord = {
      at: DAY + Math.floor(rand() * 5 * 86_400_000), model: rand() < 0.5 ? 'a' : 'b', host: rand() < 0.5 ? 'h1' : 'P (h2)', prompt: total - 1, completion: 1, total,
      estimated: rand() < 0.3, durationMs: 1, source: SOURCES[Math.floor(rand() * SOURCES.length)],
    };
    if (rand() < 0.5) r.id = `r${idFrom + i}`;
    if (rand() < 0.3) r.cached = Math.floor(r.prompt / 2);
    return r;
  });
}

describe('usage totals kept as logs grow', () => {
  it('adds appended records to what was merged exactly as merging all of them again, reset or not', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rand = seededRandom(seed);
      const reset = seed % 3 === 0 ? { at: DAY + 2 * 86_400_000 } : undefined;
      const logs = [records(rand, 40, 0), records(rand, 30, 100)];
      const own = logs[0];
      let m = mergeUsage(logs, own, reset);
      for (let step = 0; step < 4; step++) {
        const mine = records(rand, 5, 1000 + step * 100);
        const theirs = records(rand, 7, 1050 + step * 100);
        const grown = withAppended(m, [...mine.map((record) => ({ record, own: true })), ...theirs.map((record) => ({ record, own: false }))], reset);
        own.push(...mine);
        logs[1].push(...theirs);
        const whole = mergeUsage(logs, own, reset);
        assert.ok(grown, `seed ${seed}, step ${step}: new ids only`);
        assert.deepEqual(grown.ledger, whole.ledger, `seed ${seed}, step ${step}: ledger`);
        assert.deepEqual(grown.bySource, whole.bySource, `seed ${seed}, step ${step}: by source`);
        assert.deepEqual(grown.windowTotals, whole.windowTotals, `seed ${seed}, step ${step}: this window`);
        assert.deepEqual(grown.ids, whole.ids);
        m = grown;
      }
    }
  });

  it('leaves to a merge from scratch a new record whose id was read before, or that comes twice, and changes nothing', () => {
    const rand = seededRandom(7);
    const old = records(rand, 20, 0).map((r, i) => ({ ...r, id: `r${i}` }));
    const m = mergeUsage([old], old, undefined);
    const copy = structuredClone(m);
    const again = { ...old[3], estimated: false, total: 5 };
    assert.equal(withAppended(m, [{ record: again, own: false }], undefined), undefined, "a recovery's estimate and the server's count share an id");
    const twice = { ...old[0], id: 'new' };
    assert.equal(withAppended(m, [{ record: twice, own: false }, { record: { ...twice }, own: true }], undefined), undefined);
    assert.deepEqual(m, copy, "what was merged is left as it was");
    assert.notEqual(withAppended(m, [{ record: { ...old[0], id: undefined }, own: false }], undefined), undefined, 'records without an id all count');
  });

  describe('the usage store', () => {
    let storage: string;
    const stores: UsageStore[] = [];
    const open = () => {
      const s = new UsageStore({ fsPath: storage } as vscode.Uri, memoryState());
      stores.push(s);
      return s;
    };
    const dir = () => path.join(storage, 'usage');
    const rec = (total: number, id?: string): UsageRecord => ({ at: Date.now(), model: 'm', host: 'h', prompt: total, completion: 0, total, estimated: id === undefined, durationMs: 1, source: 'chat', ...(id ? { id } : {}) });

    beforeEach(async () => {
      storage = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-merge-'));
    });
    afterEach(async () => {
      for (const s of stores.splice(0)) s.dispose();
      await fs.rm(storage, { recursive: true, force: true });
    });

    /** What every log on disk adds up to, merged from scratch, with `own` the store's window. */
    async function fromScratch(own: UsageStore) {
      const logs: UsageRecord[][] = [];
      let mine: UsageRecord[] = [];
      for (const name of (await fs.readdir(dir())).filter((n) => n.endsWith('.jsonl')).sort()) {
        const text = await fs.readFile(path.join(dir(), name), 'utf8');
        const records = parseUsageLog(text.slice(0, text.lastIndexOf('\n') + 1));
        logs.push(records);
        if (name === `${own.windowId}.jsonl`) mine = records;
      }
      const reset = parseResetMarker(await fs.readFile(path.join(dir(), 'reset.json'), 'utf8').catch(() => undefined));
      return mergeUsage(logs, mine, reset);
    }

    /** Asserts that the store's ledger and window totals are those of a merge from scratch. */
    async function same(a: UsageStore, what: string): Promise<void> {
      let view: UsageView | undefined;
      const d = a.onDidChange((v) => (view = v));
      await a.reread();
      d.dispose();
      const want = await fromScratch(a);
      assert.deepEqual(await a.ledger(), want.ledger, `${what}: ledger`);
      assert.deepEqual(view?.windowTotals, want.windowTotals, `${what}: this window`);
    }

    it('keeps the totals of a merge from scratch through everything the logs go through, and reads nothing again when nothing changed', async () => {
      const a = open();
      const b = open();
      await a.record(rec(10, 'x1'));
      await b.record(rec(20, 'x2'));
      await a.record(rec(30));
      await same(a, 'records of two windows');
      assert.equal(await a.ledger(), await a.ledger(), 'nothing new: the very same totals, not merged again');

      const other = path.join(dir(), 'other-window.jsonl');
      await fs.writeFile(other, usageLine(rec(40, 'x3')) + usageLine(rec(50)).slice(0, 30));
      await same(a, 'a new log with a half-written line');
      await fs.appendFile(other, usageLine(rec(50)).slice(30));
      await same(a, 'the line written whole');

      await b.record({ ...rec(999, 'x1'), estimated: false });
      await same(a, 'an id counted before, again with the server count');
      await b.record({ ...rec(1, 'x1'), estimated: true });
      await same(a, 'and again as a smaller estimate');

      await fs.writeFile(other, usageLine(rec(60)));
      await same(a, 'a log replaced by a shorter one');
      await fs.rm(path.join(dir(), `${b.windowId}.jsonl`));
      await same(a, 'a log deleted');

      await a.reset(() => Promise.resolve(true));
      await same(a, 'a reset');
      await a.record(rec(70, 'x4'));
      await fs.appendFile(other, usageLine(rec(80)));
      await same(a, 'records after the reset');

      // An append that fails (the log's name is taken by a folder, which no read gets through either): the record is
      // kept in memory and written with the next one, and then counted once.
      const c = open();
      await same(c, 'a new window');
      await fs.mkdir(path.join(dir(), `${c.windowId}.jsonl`));
      await c.record(rec(90, 'x5'));
      await fs.rmdir(path.join(dir(), `${c.windowId}.jsonl`));
      await c.record(rec(100));
      await same(c, 'written with the next record');
      await same(a, 'as another window reads them');
      assert.equal(Object.values(await c.ledger()).reduce((n, t) => n + t.requests, 0), 4, "the four records since the reset, the one that failed once among them");
    });

    it('keeps no records in memory: a merge from scratch reads the logs again (a log rewritten in place is read as it is now)', async () => {
      const a = open();
      const b = open();
      const c = open();
      await b.record(rec(10));
      await b.record(rec(20));
      await c.record(rec(5));
      await same(a, 'three windows');
      // b's log rewritten in place, same length (a hand edit): an append-only read does not see it...
      const bLog = path.join(dir(), `${b.windowId}.jsonl`);
      const text = await fs.readFile(bLog, 'utf8');
      await fs.writeFile(bLog, text.replace('"total":10', '"total":90').replace('"prompt":10', '"prompt":90'));
      // ...and the merge from scratch that c's log going brings reads it as it is now, not as it was.
      await fs.rm(path.join(dir(), `${c.windowId}.jsonl`));
      await same(a, 'after a log went');
      assert.equal(Object.values(await a.ledger()).reduce((n, t) => n + t.total, 0), 110);
    });

    it('a read that fails halfway (after some logs were read) loses none of their records: the next read merges from scratch', async () => {
      const a = open();
      const b = open();
      await a.record(rec(10));
      await b.record(rec(20));
      await same(a, 'two windows');
      await b.record(rec(30));
      // reset.json unreadable (a folder in its place; on Windows, a rename by another window or a scanner holding
      // it): the read throws after it took b's new line.
      await fs.mkdir(path.join(dir(), 'reset.json'));
      await a.reread().catch(() => {});
      await fs.rmdir(path.join(dir(), 'reset.json'));
      await same(a, 'read again once the marker is readable');
      await b.record(rec(40));
      await same(a, 'and after the next record');
      assert.equal(Object.values(await a.ledger()).reduce((n, t) => n + t.total, 0), 100);
    });
  });
});
