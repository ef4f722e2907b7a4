// The usage totals of every window's logs, kept as the logs grow: merged from scratch once, then only the records
// appended since are added (core/usageLog.ts has the merge's rules).
import { addTo, emptyTotals, type Ledger, type Totals, type UsageRecord } from './usageLedger';
import { addToLedgerInPlace, counts, mergeLedger, sourceTotalsOf, windowTotalsOf, type LegacyLedger, type ResetMarker } from './usageLog';

/** What every window's logs add up to (mergeLedger, sourceTotalsOf, windowTotalsOf), and the record ids read. */
export interface MergedUsage {
  ledger: Ledger;
  bySource: Record<string, Totals>;
  windowTotals: Totals;
  /** Every id of a record read, counted or not: a record that comes later with one of them may change which counts. */
  ids: Set<string>;
}

/** Merges every window's records (`own`: this window's, among them) after the reset marker, from scratch. */
export function mergeUsage(logs: ReadonlyArray<readonly UsageRecord[]>, own: readonly UsageRecord[], reset: ResetMarker | undefined, legacy?: LegacyLedger): MergedUsage {
  const ids = new Set<string>();
  for (const records of logs) for (const r of records) if (typeof r.id === 'string') ids.add(r.id);
  return { ledger: mergeLedger(logs, reset, legacy), bySource: sourceTotalsOf(logs, reset), windowTotals: windowTotalsOf(own, reset), ids };
}

/**
 * `m` with records appended to the logs since it was merged (`added`; `own` marks this window's), the same as
 * mergeUsage of all of them, without reading the old ones again: a check before each request must not cost more
 * with every month of usage. Undefined when a new record carries an id read before (or twice among them): which of
 * those counts may then change, so the caller merges everything again; `m` is then left as it was. Otherwise `m.ids`
 * is taken over by the result (copying every id ever read would cost as much as the merge): `m` is not to be used after.
 */
export function withAppended(m: MergedUsage, added: ReadonlyArray<{ record: UsageRecord; own: boolean }>, reset: ResetMarker | undefined): MergedUsage | undefined {
  const fresh = new Set<string>();
  for (const { record: r } of added) {
    if (typeof r.id !== 'string') continue;
    if (m.ids.has(r.id) || fresh.has(r.id)) return undefined;
    fresh.add(r.id);
  }
  for (const id of fresh) m.ids.add(id);
  const ledger = { ...m.ledger };
  const bySource = { ...m.bySource };
  let windowTotals = m.windowTotals;
  for (const { record: r, own } of added) {
    if (!counts(r, reset)) continue;
    addToLedgerInPlace(ledger, r);
    if (typeof r.source === 'string') bySource[r.source] = addTo(Object.prototype.hasOwnProperty.call(bySource, r.source) ? bySource[r.source] : emptyTotals(), r);
    if (own) windowTotals = addTo(windowTotals, r);
  }
  return { ledger, bySource, windowTotals, ids: m.ids };
}
