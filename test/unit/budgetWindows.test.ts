// The spend budget across windows (src/vscode/budgetCheck.ts, budgetReservations.ts, core/reservations.ts) in plain
// Node: two usage stores with their guards over one folder are two windows, first in this process, then as two real
// Node processes (this file, started again as a child with PARLEY_BUDGET_WINDOW set). Of two requests checked at the
// same moment where only one fits under a blocking limit, exactly one is sent; its reservation ends with its usage
// recorded; a window that crashed leaves no lock or reservation that blocks.
import * as assert from 'node:assert/strict';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as fsSync from 'node:fs';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { decide } from '../../src/core/budget';
import type { BudgetLimit } from '../../src/core/budgetSettings';
import { readProfiles } from '../../src/core/profiles';
import { inFlightLedger, parseReservation, RESERVATION_MAX_MS, reservationLive, type Reservation } from '../../src/core/reservations';
import { dayOf } from '../../src/core/usageLedger';
import { BudgetGuard, type GuardedRequest } from '../../src/vscode/budgetGuard';
import { underLock } from '../../src/vscode/budgetReservations';
import { UsageStore } from '../../src/vscode/usageStore';
import { memoryState } from '../support/memoryState';

/** 1,000 tokens a day. With 300 spent, one request (its prompt and 400 tokens of reply) fits; two do not. */
const LIMITS: BudgetLimit[] = [{ period: 'day', unit: 'tokens', amount: 1000, action: 'block', source: 'user' }];
const { profiles } = readProfiles({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }, []);
const request = (passKey?: string): GuardedRequest => ({
  settings: { budget: LIMITS, pricing: {}, profiles, model: 'm', profile: profiles[0] },
  messages: [{ role: 'user', content: 'hello' }],
  maxOutputTokens: 400,
  passKey,
  host: '127.0.0.1:1',
});
const record = (usage: UsageStore, total: number) =>
  usage.record({ at: Date.now(), model: 'm', host: '127.0.0.1:1', prompt: total, completion: 0, total, estimated: false, durationMs: 1, source: 'chat' });

/** One window: its usage store and its guard over the global storage folder `storage`, logging into `logged`. */
function window(storage: string, logged: string[] = []): { usage: UsageStore; guard: BudgetGuard } {
  const usage = new UsageStore({ fsPath: storage } as vscode.Uri, memoryState());
  return { usage, guard: new BudgetGuard(usage, memoryState(), { warn: (line) => void logged.push(line) }) };
}

const inflight = (storage: string) => path.join(storage, 'usage', 'inflight');
const reservations = async (storage: string) => (await fs.readdir(inflight(storage)).catch(() => [])).filter((n) => n.endsWith('.json'));

/** The pid of a process that ran and ended: a window that crashed. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  assert.ok(child.pid);
  return child.pid;
}

/**
 * A window in a process of its own (this file run again by the two-process test): it opens its store and guard and
 * says `ready`; on `go` it checks the request and says the decision's kind; a sent one, on `finish`, records 200
 * tokens, releases its reservation and says `done`.
 */
async function childWindow(storage: string): Promise<void> {
  const { usage, guard } = window(storage);
  const say = (m: unknown) => process.send?.(m);
  await once(process, 'message');
  const d = await guard.check(request());
  if (d.kind !== 'block') {
    process.once('message', () => {
      void (async () => {
        await record(usage, 200);
        await d.release?.();
        say('done');
        usage.dispose();
        process.disconnect();
      })();
    });
  }
  say(d.kind);
  if (d.kind === 'block') {
    usage.dispose();
    process.disconnect();
  }
}

if (process.env.PARLEY_BUDGET_WINDOW) {
  const storage = process.env.PARLEY_BUDGET_WINDOW;
  void childWindow(storage);
  process.send?.('ready');
} else {
  describe('spend budget across windows (plain Node)', function () {
    this.timeout(20_000);
    let storage: string;
    const opened: UsageStore[] = [];
    const open = (logged?: string[]) => {
      const w = window(storage, logged);
      opened.push(w.usage);
      return w;
    };

    beforeEach(async () => {
      storage = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-windows-'));
    });
    afterEach(async () => {
      for (const u of opened.splice(0)) u.dispose();
      await fs.rm(storage, { recursive: true, force: true });
    });

    it('sends exactly one of two requests checked at once in two windows when only one fits; its reservation ends with its usage recorded', async () => {
      const logged: string[] = [];
      const a = open(logged);
      const b = open(logged);
      await record(a.usage, 300);
      const [da, db] = await Promise.all([a.guard.check(request()), b.guard.check(request())]);
      assert.deepEqual([da.kind, db.kind].sort(), ['block', 'send']);
      const [sent, blocked] = da.kind === 'send' ? [{ w: a, d: da }, { w: b, d: db }] : [{ w: b, d: db }, { w: a, d: da }];
      assert.equal((await reservations(storage)).length, 1, 'the sent request holds one reservation; the blocked one none');
      assert.equal(blocked.d.release, undefined);
      assert.match(blocked.d.kind === 'block' ? blocked.d.words : '', /requests still in flight \(in this or another window\) up to 4\d\d tokens/);

      // Its usage recorded (200 tokens, less than it might have cost), then released: counted once, by its usage.
      await record(sent.w.usage, 200);
      await sent.d.release?.();
      assert.deepEqual(await reservations(storage), []);
      const again = await blocked.w.guard.check(request());
      assert.notEqual(again.kind, 'block', '500 spent and nothing in flight: the request fits');
      await again.release?.();
      assert.deepEqual(await reservations(storage), []);
      assert.deepEqual(logged, [], 'every check had the lock');
    });

    it("another window's request that records its usage and lets go of its reservation during the check is counted, not missed", async () => {
      const a = open();
      const b = open();
      await record(a.usage, 300);
      const db = await b.guard.check(request());
      assert.equal(db.kind, 'send');
      assert.equal((await reservations(storage)).length, 1);
      // b's reply ends (400 tokens recorded, its reservation let go) in the moment a's check reads the spend, after
      // a's read of the logs took their sizes: the spend a sees is from before.
      const stale = await a.usage.ledger();
      const line = JSON.stringify({ at: Date.now(), model: 'm', host: '127.0.0.1:1', prompt: 400, completion: 0, total: 400, estimated: false, durationMs: 1, source: 'chat' });
      a.usage.ledger = () => {
        fsSync.appendFileSync(path.join(storage, 'usage', `${b.usage.windowId}.jsonl`), `${line}\n`);
        for (const n of fsSync.readdirSync(inflight(storage))) fsSync.rmSync(path.join(inflight(storage), n));
        return Promise.resolve(stale);
      };
      // 700 spent with b's reply: a's request (its prompt and 400 tokens) no longer fits. Counted by b's reservation
      // (read before the spend) or by b's usage, never by neither.
      const da = await a.guard.check(request());
      assert.equal(da.kind, 'block');
    });

    it("a pass sends a blocked request, which then reserves; with no limit set nothing is written", async () => {
      const a = open();
      const b = open();
      await record(a.usage, 300);
      const first = await a.guard.check(request());
      b.guard.allowOnce('c1');
      const passed = await b.guard.check(request('c1'));
      assert.equal(passed.kind, 'send', "the reader's pass lets it go");
      assert.equal((await reservations(storage)).length, 2);
      assert.equal((await b.guard.check(request('c1'))).kind, 'block', 'the pass is used up');
      await first.release?.();
      await passed.release?.();
      await fs.rm(inflight(storage), { recursive: true });
      const free = await a.guard.check({ ...request(), settings: { ...request().settings, budget: [] } });
      assert.deepEqual([free.kind, free.release], ['send', undefined]);
      await assert.rejects(fs.stat(inflight(storage)), 'no lock, no reservation: nothing on disk with no limit set');
    });

    it('a reservation is let go when the warnings cannot be remembered (the caller never gets it to release)', async () => {
      const { usage } = open();
      await record(usage, 500);
      const broken = { ...memoryState(), update: () => Promise.reject(new Error('state is gone')) };
      const guard = new BudgetGuard(usage, broken);
      // 500 spent (50 % of the limit: a warning to remember) and a request of about 400 that fits: sent, reserved.
      await assert.rejects(guard.check(request()), /state is gone/);
      assert.deepEqual(await reservations(storage), [], 'no reservation left behind');
    });

    it('a holder that outlived its lock leaves the lock of the window that took it over', async () => {
      const dir = inflight(storage);
      const theirs = JSON.stringify({ pid: 1, machine: 'another', id: 'x' });
      await underLock(dir, async (locked) => {
        assert.equal(locked, true);
        // Past LOCK_STALE_MS another window took the lock over (removed ours, wrote its own).
        await fs.writeFile(path.join(dir, 'lock'), theirs);
      });
      assert.equal(await fs.readFile(path.join(dir, 'lock'), 'utf8'), theirs, 'the other window keeps its lock');
      await fs.rm(path.join(dir, 'lock'));
      await underLock(dir, async () => {});
      await assert.rejects(fs.stat(path.join(dir, 'lock')), 'its own lock is removed');
    });

    it("a crashed window's lock and reservations do not block", async () => {
      const logged: string[] = [];
      const a = open(logged);
      await record(a.usage, 300);
      const pid = await deadPid();
      await fs.mkdir(inflight(storage), { recursive: true });
      // The crashed window held the lock, and had a large request in flight.
      await fs.writeFile(path.join(inflight(storage), 'lock'), JSON.stringify({ pid, machine: os.hostname() }));
      const gone: Reservation = { at: Date.now(), pid, machine: os.hostname(), host: '127.0.0.1:1', model: 'm', prompt: 500, completion: 400 };
      await fs.writeFile(path.join(inflight(storage), 'crashed.json'), JSON.stringify(gone));
      // A reservation of a window still running, but older than any request lasts (one that was never released).
      const old = { ...gone, pid: process.pid, at: Date.now() - RESERVATION_MAX_MS - 1000 };
      await fs.writeFile(path.join(inflight(storage), 'old.json'), JSON.stringify(old));
      const d = await a.guard.check(request());
      assert.equal(d.kind, 'send');
      assert.deepEqual(logged, [], 'the abandoned lock was taken over, not waited out');
      assert.equal((await reservations(storage)).length, 1, 'the dead reservations were removed; the new one is there');
      await d.release?.();

      // A lock left long ago (its owner unknown) is taken over as well.
      const lock = path.join(inflight(storage), 'lock');
      await fs.writeFile(lock, '');
      const longAgo = new Date(Date.now() - 60_000);
      await fs.utimes(lock, longAgo, longAgo);
      const e = await a.guard.check(request());
      assert.equal(e.kind, 'send');
      assert.deepEqual(logged, []);
      await e.release?.();
      await assert.rejects(fs.stat(lock), 'the lock is removed after the check');
    });

    it('a lock a live window keeps holding is waited for a short while, then the check goes on, counting what it sees, and says so', async () => {
      const logged: string[] = [];
      const a = open(logged);
      await record(a.usage, 300);
      await fs.mkdir(inflight(storage), { recursive: true });
      await fs.writeFile(path.join(inflight(storage), 'lock'), JSON.stringify({ pid: process.pid, machine: os.hostname() }));
      const live: Reservation = { at: Date.now(), pid: process.pid, machine: os.hostname(), host: '127.0.0.1:1', model: 'm', prompt: 100, completion: 400 };
      await fs.writeFile(path.join(inflight(storage), 'live.json'), JSON.stringify(live));
      const d = await a.guard.check(request());
      assert.equal(d.kind, 'block', "another request in flight (500 tokens) is counted even without the lock");
      assert.equal(logged.length, 1);
      assert.match(logged[0], /checked without it/);
    });

    it('exactly one of two requests checked at the same moment by two Node processes is sent', async () => {
      const setup = open();
      await record(setup.usage, 300);
      const children: ChildProcess[] = [0, 1].map(() => fork(__filename, [], { env: { ...process.env, PARLEY_BUDGET_WINDOW: storage }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
      const next = (c: ChildProcess) => once(c, 'message').then(([m]) => m as string);
      const exited = children.map((c) => once(c, 'exit'));
      assert.deepEqual(await Promise.all(children.map(next)), ['ready', 'ready']);
      const kinds = children.map(next);
      for (const c of children) c.send('go');
      const said = await Promise.all(kinds);
      assert.deepEqual([...said].sort(), ['block', 'send'], 'one process sent, the other was blocked');
      assert.equal((await reservations(storage)).length, 1);
      const sender = children[said.indexOf('send')];
      const done = next(sender);
      sender.send('finish');
      assert.equal(await done, 'done');
      assert.deepEqual(await reservations(storage), [], 'released once its usage was recorded');
      const after = await setup.guard.check(request());
      assert.notEqual(after.kind, 'block', '500 spent, nothing in flight');
      await after.release?.();
      await Promise.all(exited);
    });
  });

  describe('requests in flight as data (core/reservations.ts)', () => {
    const r: Reservation = { at: 1_000, pid: 42, machine: 'here', host: 'Work (in flight)', model: 'm', prompt: 10, completion: 90 };

    it('reads a reservation and refuses what is not one', () => {
      assert.deepEqual(parseReservation(JSON.stringify(r)), r);
      for (const bad of ['', '{"at":1', 'null', JSON.stringify({ ...r, pid: 0 }), JSON.stringify({ ...r, prompt: -1 }), JSON.stringify({ ...r, host: 3 })]) {
        assert.equal(parseReservation(bad), undefined, bad);
      }
    });

    it('counts a reservation while its process runs (on this machine) and not past its longest life', () => {
      const running = () => true;
      assert.equal(reservationLive(r, r.at + 1, 'here', running), true);
      assert.equal(reservationLive(r, r.at + 1, 'here', () => false), false, 'its window crashed');
      assert.equal(reservationLive(r, r.at + 1, 'elsewhere', () => false), true, "another machine's process is not asked after");
      assert.equal(reservationLive(r, r.at + RESERVATION_MAX_MS + 1, 'elsewhere', running), false);
    });

    it("adds requests in flight to a blocking limit's spend (its profile's only), not to the warnings", () => {
      const now = Date.now();
      const inFlight = inFlightLedger([r, { ...r, host: 'in flight' }], now);
      assert.deepEqual(Object.keys(inFlight).sort(), [`${dayOf(now)}|Work (in flight)|m`, `${dayOf(now)}|in flight|m`]);
      const limits: BudgetLimit[] = [{ period: 'day', unit: 'tokens', amount: 1000, action: 'block', source: 'user', profile: 'Work' }];
      const ledger = { [`${dayOf(now)}|Work (h)|m`]: { requests: 1, prompt: 500, completion: 0, total: 500, estimatedTokens: 0 } };
      const args = { limits, ledger, prices: { pricing: {}, profiles: {} }, now, profile: 'Work', request: { promptTokens: 100, maxOutputTokens: 301, price: undefined }, warned: new Set<string>() };
      assert.equal(decide(args).kind, 'warn', '500 + 401 fits; 50 % said');
      const d = decide({ ...args, inFlight });
      assert.equal(d.kind, 'block', '500 + 100 in flight (Work only) + 401 does not');
      assert.equal(d.kind === 'block' ? d.left : -1, 400);
      assert.deepEqual(d.kind === 'block' ? d.warnings.map((w) => w.threshold) : [], [50], 'warnings count only what is spent');
    });
  });
}
