// Requests in flight, counted by every window's spend check: one file per request sent under a limit, in
// `<globalStorage>/usage/inflight/`, made by the check that let it go and removed once its usage is recorded; and a
// lock file there, so that one window's check and its reservation are one step for the others. Plain Node; what a
// reservation counts, and for how long, is core/reservations.ts.
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseReservation, reservationLive, type Reservation } from '../core/reservations';
import { listFolder, readTextIfExists } from './files';

/** How long a check waits for another window's check to end before it goes on without the lock. */
export const LOCK_WAIT_MS = 2000;
/** A lock older than this was left by a window that crashed or hung in its check (a check takes milliseconds). */
export const LOCK_STALE_MS = 10_000;
const LOCK = 'lock';
const RESERVATION = /^[\w-]+\.json$/;
const machine = hostname();

/** Whether a process of this machine still runs (one of another user's: yes; a pid that is not one: yes). */
function alive(pid: number): boolean {
  // 0 and negative numbers name process groups: never asked.
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `fn` holding the lock of the folder `dir` across windows (`locked` true), or, when it cannot be had within
 * LOCK_WAIT_MS (another window's check hangs, the folder cannot be written), without it (false). A lock whose
 * process is gone, or older than LOCK_STALE_MS, is taken over: a window that crashed never blocks the others.
 */
export async function underLock<T>(dir: string, fn: (locked: boolean) => Promise<T>): Promise<T> {
  const path = join(dir, LOCK);
  const owner = await lock(dir, path);
  try {
    return await fn(owner !== undefined);
  } finally {
    // Only a lock still ours: one that outlived LOCK_STALE_MS may have been taken over by another window meanwhile.
    if (owner !== undefined && (await readTextIfExists(path).catch(() => undefined)) === owner) await fs.rm(path, { force: true }).catch(() => {});
  }
}

/** Creates the lock file exclusively: the one create that succeeds, across processes, holds it. Returns what it wrote. */
async function lock(dir: string, path: string): Promise<string | undefined> {
  const until = Date.now() + LOCK_WAIT_MS;
  const owner = JSON.stringify({ pid: process.pid, machine, id: randomUUID() });
  let made = false;
  for (;;) {
    try {
      await fs.writeFile(path, owner, { flag: 'wx' });
      return owner;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && !made) {
        made = true;
        if (await fs.mkdir(dir, { recursive: true }).then(() => true, () => false)) continue;
      }
      // EPERM, EBUSY: on Windows a lock just removed while another window read it can be created again only once
      // that read ends. Any other error (a folder that cannot be written) goes on without the lock at once.
      if (code !== 'EEXIST' && code !== 'EPERM' && code !== 'EBUSY') return undefined;
    }
    if (await abandoned(path)) {
      // Two windows that both find it abandoned may both remove it, the second one the first's new lock: only after
      // a crash, and then at worst as before reservations.
      await fs.rm(path, { force: true }).catch(() => {});
      continue;
    }
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
  }
}

/** Whether the lock's window is gone (its process ended) or it is older than any check takes. */
async function abandoned(path: string): Promise<boolean> {
  try {
    const { mtimeMs } = await fs.stat(path);
    if (Date.now() - mtimeMs > LOCK_STALE_MS) return true;
    const owner = JSON.parse(await fs.readFile(path, 'utf8')) as { pid?: unknown; machine?: unknown };
    return owner.machine === machine && typeof owner.pid === 'number' && !alive(owner.pid);
  } catch {
    // Gone already, or being written: not abandoned.
    return false;
  }
}

/**
 * The reservations in `dir` that still count, but the one named `except` (a request's own); those that no longer do
 * (their window is gone, or too old) are removed.
 */
export async function readReservations(dir: string, now: number, except?: string): Promise<Reservation[]> {
  const held: Reservation[] = [];
  for (const name of (await listFolder(dir)).filter((n) => RESERVATION.test(n) && n !== except)) {
    const path = join(dir, name);
    const r = parseReservation((await readTextIfExists(path)) ?? '');
    if (!r) continue;
    if (reservationLive(r, now, machine, alive)) held.push(r);
    else await fs.rm(path, { force: true }).catch(() => {});
  }
  return held;
}

/** One request's reservation file: its name, rewritten as the request grows, removed once its usage is recorded. */
export interface Held {
  readonly name: string;
  /** Writes the reservation again with `completion` output tokens (under the lock). */
  grow(completion: number): Promise<void>;
  release(): Promise<void>;
}

/** Writes the reservation of a request let go. */
export async function reserve(dir: string, r: Omit<Reservation, 'pid' | 'machine'>): Promise<Held> {
  const name = `${randomUUID()}.json`;
  const path = join(dir, name);
  const text = (completion: number) => JSON.stringify({ ...r, completion, pid: process.pid, machine } satisfies Reservation);
  // Written under the lock, so no check reads it half written; one check without the lock skips a half-written file.
  await fs.writeFile(path, text(r.completion), { flag: 'wx' });
  let released = false;
  // A release waits for a rewrite under way, which would otherwise make the file again after it was removed.
  let writing: Promise<void> = Promise.resolve();
  return {
    name,
    grow: (completion) => (writing = writing.catch(() => {}).then(() => (released ? undefined : fs.writeFile(path, text(completion))))),
    release: async () => {
      released = true;
      await writing.catch(() => {});
      await fs.rm(path, { force: true }).catch(() => {});
    },
  };
}
