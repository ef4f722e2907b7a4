// The usage log on disk: one append-only file of records per window, merged on read into the all-time ledger.
//
// Why this shape: usage is the billing basis, and several windows (each its own extension host) record at once. A
// ledger read, changed and written back whole (as global state was) loses every update made between another window's
// read and write. Here no file has two writers: a window only appends lines to its own file, so nothing it wrote can
// be overwritten, and the totals are a sum over all files made when they are read. Reset Usage writes a marker with
// its time instead of deleting other windows' files (a window may be appending to one right then): records at or
// before the marker no longer count. The ledger kept in global state by earlier versions is moved once into a file
// of its own (see `LegacyLedger`).
import { addTo, emptyTotals, ledgerKey, type Ledger, type Totals, type UsageRecord } from './usageLedger';

/** A window's log file name: its id, hex or uuid characters only, then `.jsonl`. */
export const LOG_FILE = /^[\w-]+\.jsonl$/;

/** What Reset Usage writes: records made at or before `at` are cleared. */
export interface ResetMarker {
  at: number;
}

/** The ledger an earlier version kept in global state, moved into a file at `at` (before any later reset counts). */
export interface LegacyLedger {
  at: number;
  ledger: Ledger;
}

/** One record as a line of its window's log. */
export function usageLine(r: UsageRecord): string {
  return JSON.stringify(r) + '\n';
}

/**
 * What one append writes. After an append that failed (a full disk can write part of it), the batch starts on a new
 * line, so its first record is not glued to the torn piece: the piece is then one damaged line that is skipped.
 */
export function usageLines(batch: readonly UsageRecord[], afterFailure: boolean): string {
  return (afterFailure ? '\n' : '') + batch.map(usageLine).join('');
}

/**
 * The records in a log's text. A line that is not a whole, valid record is skipped: a half-written last line is
 * read again once complete (callers pass only text up to the last newline), and a damaged line never hides the rest.
 */
export function parseUsageLog(text: string): UsageRecord[] {
  const out: UsageRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as unknown;
      if (isUsageRecord(r)) out.push(r);
    } catch {
      // A damaged line: skip it.
    }
  }
  return out;
}

const count = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;

/** A record as `recordFrom` makes it; anything else in a log (hand edits, damage) is ignored. */
function isUsageRecord(r: unknown): r is UsageRecord {
  if (!r || typeof r !== 'object') return false;
  const o = r as Record<string, unknown>;
  return typeof o.at === 'number' && Number.isFinite(o.at) && typeof o.model === 'string' && typeof o.host === 'string' &&
    count(o.prompt) && count(o.completion) && count(o.total) && typeof o.estimated === 'boolean';
}

/** A reset marker read from disk, or undefined when it is missing or damaged. */
export function parseResetMarker(text: string | undefined): ResetMarker | undefined {
  try {
    const m = JSON.parse(text ?? '') as Partial<ResetMarker>;
    return typeof m?.at === 'number' && Number.isFinite(m.at) ? { at: m.at } : undefined;
  } catch {
    return undefined;
  }
}

/** A moved global-state ledger read from disk, or undefined when it is missing or damaged. */
export function parseLegacyLedger(text: string | undefined): LegacyLedger | undefined {
  try {
    const l = JSON.parse(text ?? '') as Partial<LegacyLedger>;
    if (typeof l?.at !== 'number' || !l.ledger || typeof l.ledger !== 'object') return undefined;
    const ledger: Ledger = {};
    // Keys are `day|host|model`; anything else (say `__proto__` from a hand edit) is not a ledger row.
    for (const [k, t] of Object.entries(l.ledger)) if (k.split('|').length >= 3 && isTotals(t)) ledger[k] = t;
    return { at: l.at, ledger };
  } catch {
    return undefined;
  }
}

function isTotals(t: unknown): t is Totals {
  const o = t as Record<string, unknown> | null;
  return !!o && typeof o === 'object' && count(o.requests) && count(o.prompt) && count(o.completion) && count(o.total) && count(o.estimatedTokens);
}

/** Whether a record still counts after the reset marker (if any). */
export function counts(r: Pick<UsageRecord, 'at'>, reset: ResetMarker | undefined): boolean {
  return !reset || r.at > reset.at;
}

/**
 * The all-time ledger: every window's records after the last reset, plus the moved global-state ledger unless a
 * reset came after it was moved. Each record counts once however many windows' logs are read, as each is in one log.
 */
export function mergeLedger(logs: Iterable<readonly UsageRecord[]>, reset: ResetMarker | undefined, legacy?: LegacyLedger): Ledger {
  let ledger: Ledger = {};
  if (legacy && counts(legacy, reset)) ledger = { ...legacy.ledger };
  const all = [...logs];
  const once = oncePerId(all);
  for (const records of all) for (const r of records) if (counts(r, reset) && once(r)) ledger = addToLedgerInPlace(ledger, r);
  return ledger;
}

/**
 * Which records count when several share an id (a reply's request, and the estimate another window recorded for it
 * after a crash, see core/recovery.ts): one per id, the server's count before an estimate, and between two estimates the
 * larger (the owner's, made from the whole reply, over a recovery's from the text saved), whichever window reads them,
 * in whatever order. Records without an id all count.
 */
export function oncePerId(logs: Iterable<readonly UsageRecord[]>): (r: UsageRecord) => boolean {
  const chosen = new Map<string, UsageRecord>();
  for (const records of logs) {
    for (const r of records) {
      if (typeof r.id !== 'string') continue;
      const had = chosen.get(r.id);
      if (!had || (had.estimated && !r.estimated) || (had.estimated === r.estimated && r.total > had.total)) chosen.set(r.id, r);
    }
  }
  return (r) => typeof r.id !== 'string' || chosen.get(r.id) === r;
}

/** The totals of one window's records after the last reset: the tooltip's and the report's "This window". */
export function windowTotalsOf(records: readonly UsageRecord[], reset: ResetMarker | undefined): Totals {
  let t = emptyTotals();
  const once = oncePerId([records]);
  for (const r of records) if (counts(r, reset) && once(r)) t = addTo(t, r);
  return t;
}

/** Totals by source (panel, VS Code's chat…) over every window's records after the last reset; the moved ledger had no sources. */
export function sourceTotalsOf(logs: Iterable<readonly UsageRecord[]>, reset: ResetMarker | undefined): Record<string, Totals> {
  const out: Record<string, Totals> = {};
  const all = [...logs];
  const once = oncePerId(all);
  for (const records of all) {
    for (const r of records) {
      if (!counts(r, reset) || typeof r.source !== 'string' || !once(r)) continue;
      out[r.source] = addTo(Object.prototype.hasOwnProperty.call(out, r.source) ? out[r.source] : emptyTotals(), r);
    }
  }
  return out;
}

/**
 * Adds a record to a ledger in place (addToLedger copies the ledger for each record: merging thousands of records
 * would copy it thousands of times).
 */
export function addToLedgerInPlace(ledger: Ledger, r: UsageRecord): Ledger {
  const key = ledgerKey(r);
  ledger[key] = addTo(Object.prototype.hasOwnProperty.call(ledger, key) ? ledger[key] : emptyTotals(), r);
  return ledger;
}
