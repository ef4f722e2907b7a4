// Requests in flight under a spend limit: what a reservation says of one request sent and not yet recorded, whether it
// still counts, and the ledger rows every window's budget check adds for them. The files, and the lock that makes a
// check and its reservation one step across windows, are src/vscode/budgetReservations.ts.
import { addToLedger, type Ledger } from './usageLedger';

/**
 * A reservation's longest life. A request still streaming after this stops being counted before its usage is (as
 * before reservations); a reservation that was never released (a path that threw) stops blocking after it.
 */
export const RESERVATION_MAX_MS = 30 * 60_000;

/** One request in flight: the most it may cost (its prompt estimate and its maximum output), and who sent it. */
export interface Reservation {
  /** When the check let it go (ms since the epoch). */
  at: number;
  /** The extension host process that sent it, and its machine: a reservation ends with its process. */
  pid: number;
  machine: string;
  /** The ledger's host column for the request's profile (as usageHostOf makes it), and its model. */
  host: string;
  model: string;
  prompt: number;
  completion: number;
}

/** A reservation file's text, or undefined when it is not one (half written, or not ours). */
export function parseReservation(text: string): Reservation | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  const count = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (!count(r.at) || !count(r.prompt) || !count(r.completion) || !(Number.isSafeInteger(r.pid) && (r.pid as number) > 0)) return undefined;
  if (typeof r.machine !== 'string' || typeof r.host !== 'string' || typeof r.model !== 'string') return undefined;
  return { at: r.at as number, pid: r.pid as number, machine: r.machine, host: r.host, model: r.model, prompt: r.prompt as number, completion: r.completion as number };
}

/**
 * Whether a reservation still counts at `now`: younger than RESERVATION_MAX_MS, and, when it was made on this machine,
 * its process still runs (`alive`). A window that crashed leaves reservations that count no more.
 */
export function reservationLive(r: Reservation, now: number, machine: string, alive: (pid: number) => boolean): boolean {
  return now - r.at <= RESERVATION_MAX_MS && (r.machine !== machine || alive(r.pid));
}

/** The ledger rows of the requests in flight: each at its most, counted today (its usage will be, when it ends). */
export function inFlightLedger(held: readonly Reservation[], now: number): Ledger {
  // Summed row by row (a few requests at most): the logs' merge, with its rules for ids and resets, has nothing to do here.
  return held.reduce<Ledger>((ledger, r) => addToLedger(ledger, { at: now, host: r.host, model: r.model, prompt: r.prompt, completion: r.completion, total: r.prompt + r.completion, estimated: true, durationMs: 0, source: 'chat' }), {});
}
