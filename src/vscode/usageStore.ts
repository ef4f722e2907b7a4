// The usage log on disk: every request is appended to this window's log, and every window's log is merged for the
// all-time totals. Plain Node (VS Code's types only), so it runs in unit tests; the status bar item is statusBar.ts.
import { randomUUID } from 'node:crypto';
import { watch, promises as fs, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type * as vscode from 'vscode';
import type { ReportPrices } from '../core/priceSources';
import { emptyTotals, type Ledger, type Totals, type UsageRecord } from '../core/usageLedger';
import {
  LOG_FILE, parseLegacyLedger, parseResetMarker, parseUsageLog, usageLines, type LegacyLedger, type ResetMarker,
} from '../core/usageLog';
import { mergeUsage, withAppended, type MergedUsage } from '../core/usageTotals';
import type { ReportChart } from '../core/usageReport';
import { Disposable } from './disposable';
import { appendDurable, createFileOnce, listFolder, readTextIfExists, writeFileAtomic } from './files';
import { usageReport } from './lazy/usageReport';

/** Where versions before the per-window logs kept the ledger (read, changed and written whole: see core/usageLog.ts). */
const LEDGER_STATE = 'parley.usageLedger';
const RESET_FILE = 'reset.json';
const LEGACY_FILE = 'legacy.json';

/**
 * What has been read of one window's log: up to `offset` bytes, whole lines only. Its records are not kept (a year of
 * requests would stay in every window's memory): a merge from scratch reads the logs again.
 */
interface LogRead {
  offset: number;
}

/** The listeners of one event, called in order; one that throws stops neither the others nor the caller. */
class Listeners<T> {
  private readonly fns = new Set<(value: T) => void>();

  /** Adds a listener, until the returned object is disposed. */
  readonly event = (fn: (value: T) => void): vscode.Disposable => {
    this.fns.add(fn);
    return { dispose: () => this.fns.delete(fn) };
  };

  fire(value: T): void {
    for (const fn of [...this.fns]) {
      try {
        fn(value);
      } catch (e) {
        // As vscode.EventEmitter: a listener's error is its own, the other listeners still hear, and the error is
        // reported (thrown on its own, where the extension host logs it) rather than lost.
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }
}

/** What the status bar shows: the last chat request, this window's totals and the all-time ledger. */
export interface UsageView {
  last: UsageRecord | undefined;
  windowTotals: Totals;
  ledger: Ledger;
}

/**
 * Records usage. Each window (each extension host) appends its records to its own log,
 * `<globalStorage>/usage/<window id>.jsonl`, and reads every window's log to make the all-time totals, so two windows
 * recording at once cannot lose each other's requests (core/usageLog.ts says why). Logs are read incrementally (only
 * the bytes added since the last read, and only the records they hold added to the totals) when this window records,
 * when another window's log changes (a file watcher, once this window has shown usage), when asked (`reread`, on window
 * focus), before each request under a spend limit and for each report. Nothing is read at activation.
 */
export class UsageStore extends Disposable {
  /** This window's log; a new id per extension host, so no other window ever writes to it. */
  readonly windowId = randomUUID();
  /** `<globalStorage>/usage`: every window's log, and the spend budget's requests in flight (budgetReservations.ts). */
  readonly dir: string;
  private readonly logs = new Map<string, LogRead>();
  private reset_: ResetMarker | undefined;
  private legacy: LegacyLedger | undefined;
  /** What the logs add up to, as last read; undefined before the first read. */
  private totals: MergedUsage | undefined;
  /** How many records counted only in memory (`unsaved`) when `totals` was merged from scratch. */
  private mergedUnsaved = 0;
  /** Set while a read runs: a read that threw leaves it set, and the next read merges from scratch. */
  private mergeDue = false;
  /** Records that could not be appended yet (say, a full disk): counted here and appended with the next record. */
  private unsaved: UsageRecord[] = [];
  /** The last append failed, and may have written part of a line: the next one starts on a new line. */
  private appendFailed = false;
  private last: UsageRecord | undefined;
  private reading: Promise<void> = Promise.resolve();
  private migrated = false;
  private watcher: FSWatcher | undefined;
  private watchTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly recorded = new Listeners<UsageRecord>();
  private readonly changed = new Listeners<UsageView>();
  /** Fires after each recorded request (after `onDidChange`). */
  readonly onDidRecord = this.recorded.event;
  /** Fires when what the status bar shows was read afresh: a record, another window's, a reread, a reset. */
  readonly onDidChange = this.changed.event;

  /** `storage` is the extension's global storage folder; `state` its global state, where old versions kept the ledger. */
  constructor(storage: vscode.Uri, private readonly state: vscode.Memento) {
    super();
    this.dir = join(storage.fsPath, 'usage');
    this._register({ dispose: () => this.unwatch() });
  }

  /** The last request of the chat (inline completions are not shown), undefined before the window's first. */
  get lastRecord(): UsageRecord | undefined {
    return this.last;
  }

  /** The all-time ledger, read afresh from every window's log. */
  async ledger(): Promise<Ledger> {
    await this.refresh();
    return this.merged;
  }

  private get merged(): Ledger {
    return this.totals?.ledger ?? {};
  }

  private get windowTotals(): Totals {
    return this.totals?.windowTotals ?? emptyTotals();
  }

  async record(r: UsageRecord): Promise<void> {
    // Inline completions count in the ledger under their own source; the status bar keeps showing the chat's last request.
    if (r.source !== 'complete') this.last = r;
    // Taken out of `unsaved` first, so a record made while this one is appended cannot append these lines again.
    const batch = [...this.unsaved.splice(0), r];
    try {
      await fs.mkdir(this.dir, { recursive: true });
      // One append of whole lines to a file no other window writes: nothing here can overwrite another's record.
      await appendDurable(join(this.dir, `${this.windowId}.jsonl`), usageLines(batch, this.appendFailed));
      this.appendFailed = false;
    } catch {
      this.appendFailed = true;
      // Kept in `unsaved`: still counted in this window, and written with the next record.
      this.unsaved.unshift(...batch);
    }
    await this.reread();
    this.recorded.fire(r);
  }

  /** Reads what changed in the logs and tells `onDidChange`. */
  async reread(): Promise<void> {
    await this.refresh().catch(() => {});
    this.changed.fire({ last: this.last, windowTotals: this.windowTotals, ledger: this.merged });
  }

  /** Reads what changed in the logs, one read at a time (two at once would add the same new lines twice). */
  private refresh(): Promise<void> {
    const next = this.reading.then(() => this.read());
    this.reading = next.catch(() => {});
    return next;
  }

  private async read(): Promise<void> {
    await this.migrateOnce();
    this.watchOnce();
    const names = [...new Set((await listFolder(this.dir)).filter((n) => LOG_FILE.test(n)))];
    const reset = parseResetMarker(await readTextIfExists(join(this.dir, RESET_FILE)));
    // Created once and never changed: read until found.
    const legacy = this.legacy ?? parseLegacyLedger(await readTextIfExists(join(this.dir, LEGACY_FILE)));
    const ownLog = `${this.windowId}.jsonl`;
    // Whether what was merged can take the new records as they are: no log went or was replaced, nothing counted
    // only in memory (unsaved records reach the log later, and would count twice), the same reset and moved ledger,
    // and the last read ended (one that threw after it took some logs' lines left them out of the totals).
    const appendOnly = this.totals !== undefined && !this.mergeDue && this.unsaved.length === 0 && this.mergedUnsaved === 0
      && reset?.at === this.reset_?.at && legacy === this.legacy && [...this.logs.keys()].every((n) => names.includes(n));
    this.mergeDue = true;
    this.reset_ = reset;
    this.legacy = legacy;
    const added = appendOnly ? await this.readAdded(names, ownLog) : undefined;
    const grown = added && (added.length === 0 ? this.totals : withAppended(this.totals!, added, reset));
    if (grown) {
      this.totals = grown;
    } else {
      this.totals = await this.mergeAll(names, ownLog);
      this.mergedUnsaved = this.unsaved.length;
    }
    this.mergeDue = false;
  }

  /** The records added to the logs since the last read; undefined when one was replaced (read it all again). */
  private async readAdded(names: string[], ownLog: string): Promise<Array<{ record: UsageRecord; own: boolean }> | undefined> {
    // Every log's size at once: a year of windows reloaded daily leaves a thousand logs, one after the other a wait each.
    const sizes = await Promise.all(names.map((name) => fs.stat(join(this.dir, name)).then((st) => st.size, () => undefined)));
    const added: Array<{ record: UsageRecord; own: boolean }> = [];
    for (const [i, name] of names.entries()) {
      const read = await this.readLog(name, sizes[i]);
      if (read === 'replaced') return undefined;
      for (const record of read) added.push({ record, own: name === ownLog });
    }
    return added;
  }

  /** Every log read whole and merged from scratch, with the records counted only in memory. */
  private async mergeAll(names: string[], ownLog: string): Promise<MergedUsage> {
    this.logs.clear();
    const all: UsageRecord[][] = [];
    let own: UsageRecord[] = [];
    for (const name of names) {
      const read = await this.readLog(name, undefined);
      if (read === 'replaced') continue;
      all.push(read);
      if (name === ownLog) own = read;
    }
    return mergeUsage([...all, this.unsaved], [...own, ...this.unsaved], this.reset_, this.legacy);
  }

  /**
   * Reads the bytes added to a log since the last read (`statSize`: its size a moment ago), up to its last newline (a
   * line being appended waits), and returns the records they hold; 'replaced' when it is read again from its start,
   * or is gone.
   */
  private async readLog(name: string, statSize: number | undefined): Promise<UsageRecord[] | 'replaced'> {
    const path = join(this.dir, name);
    const seen = this.logs.get(name) ?? { offset: 0 };
    // A log whose size did not change (most of them, most of the time) is not opened: one stat each, all at once.
    if (statSize === seen.offset && this.logs.has(name)) return [];
    let file;
    try {
      file = await fs.open(path, 'r');
    } catch {
      this.logs.delete(name);
      return 'replaced';
    }
    try {
      const { size } = await file.stat();
      let replaced = false;
      // Logs only grow; a shorter one was replaced (a hand edit): read it again from the start.
      if (size < seen.offset) {
        seen.offset = 0;
        replaced = true;
      }
      const added: UsageRecord[] = [];
      if (size > seen.offset) {
        const buf = Buffer.alloc(size - seen.offset);
        const { bytesRead } = await file.read(buf, 0, buf.length, seen.offset);
        const end = buf.subarray(0, bytesRead).lastIndexOf(10);
        if (end >= 0) {
          added.push(...parseUsageLog(buf.subarray(0, end + 1).toString('utf8')));
          seen.offset += end + 1;
        }
      }
      this.logs.set(name, seen);
      return replaced ? 'replaced' : added;
    } finally {
      await file.close();
    }
  }

  /**
   * Moves the ledger that earlier versions kept in global state into `usage/legacy.json`, once: the file is created
   * exclusively, so when two windows start at once only one copy counts.
   */
  private async migrateOnce(): Promise<void> {
    if (this.migrated) return;
    const old = this.state.get<Ledger>(LEDGER_STATE);
    if (old && Object.keys(old).length > 0) {
      await fs.mkdir(this.dir, { recursive: true });
      await createFileOnce(join(this.dir, LEGACY_FILE), JSON.stringify({ at: Date.now(), ledger: old } satisfies LegacyLedger));
      await this.state.update(LEDGER_STATE, undefined);
    }
    this.migrated = true;
  }

  /** Watches the logs once this window has shown usage, so its tooltip follows other windows' requests. */
  private watchOnce(): void {
    if (this.watcher || !this.last) return;
    try {
      this.watcher = watch(this.dir, () => {
        // A burst of appends (or a rename) becomes one read.
        if (this.watchTimer) return;
        this.watchTimer = setTimeout(() => {
          this.watchTimer = undefined;
          void this.reread();
        }, 100);
      });
      this.watcher.on('error', () => this.unwatch());
    } catch {
      // No watcher (the folder is gone, or the system has none left): focus and this window's requests still refresh.
    }
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    this.watchTimer = undefined;
  }

  /**
   * The usage report, made afresh from every window's log each time VS Code reads it, priced by `prices`; with its
   * chart when `chart` says the theme and the limits to draw.
   */
  async reportText(prices: ReportPrices, chart?: ReportChart): Promise<string> {
    await this.refresh().catch(() => {});
    return usageReport().reportMarkdown(this.merged, this.windowTotals, prices, Date.now(), this.totals?.bySource ?? {}, chart);
  }

  /**
   * Clears the totals of every window: a reset marker, so records up to now stop counting everywhere. Other windows'
   * logs are not deleted, as one may be appending to its log at this moment.
   */
  async reset(confirm: () => Thenable<boolean>): Promise<boolean> {
    if (!(await confirm())) return false;
    await fs.mkdir(this.dir, { recursive: true });
    await writeFileAtomic(join(this.dir, RESET_FILE), JSON.stringify({ at: Date.now() } satisfies ResetMarker));
    await this.state.update(LEDGER_STATE, undefined);
    this.unsaved = [];
    this.last = undefined;
    await this.reread();
    return true;
  }
}
