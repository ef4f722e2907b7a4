// Coalesces rendering work to one pass per animation frame.

interface Flushable {
  flush(): void;
}

const dirty = new Set<Flushable>();
let scheduled = false;

/** Asks for `target.flush()` on the next animation frame; many requests in one frame cost one flush. */
export function requestFlush(target: Flushable): void {
  dirty.add(target);
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    if (scheduled) flushNow();
  });
}

/** Targets that asked to be flushed within some time, and the timer that asks for a frame for them then. */
const deadlines = new Map<Flushable, number>();

/**
 * Asks for `target.flush()` with the next frame that flushes anything else, or at the latest `withinMs` from now:
 * work that can wait a little shares that frame's layout instead of costing one of its own.
 */
export function requestFlushWithin(target: Flushable, withinMs: number): void {
  if (dirty.has(target)) return;
  dirty.add(target);
  deadlines.set(target, window.setTimeout(() => {
    deadlines.delete(target);
    requestFlush(target);
  }, withinMs));
}

/** Runs all pending work now (used when a stream ends, so the final state never waits for a frame). */
export function flushNow(): void {
  scheduled = false;
  const targets = [...dirty];
  dirty.clear();
  for (const t of targets) {
    window.clearTimeout(deadlines.get(t));
    deadlines.delete(t);
    t.flush();
  }
}

/**
 * Runs `fn` in an idle task (at the latest `timeoutMs` on), for work that must not lengthen a frame; `fn` gets the
 * idle time left in ms (0 when the timeout forced it, or without requestIdleCallback: then it is a plain task).
 */
export function whenIdle(fn: (timeLeft: () => number) => void, timeoutMs: number): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback((d) => fn(() => d.timeRemaining()), { timeout: timeoutMs });
  else setTimeout(() => fn(() => 0), 0);
}
