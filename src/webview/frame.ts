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

/** Runs all pending work now (used when a stream ends, so the final state never waits for a frame). */
export function flushNow(): void {
  scheduled = false;
  const targets = [...dirty];
  dirty.clear();
  for (const t of targets) t.flush();
}

/**
 * Runs `fn` in an idle task (at the latest `timeoutMs` on), for work that must not lengthen a frame; `fn` gets the
 * idle time left in ms (0 when the timeout forced it, or without requestIdleCallback: then it is a plain task).
 */
export function whenIdle(fn: (timeLeft: () => number) => void, timeoutMs: number): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback((d) => fn(() => d.timeRemaining()), { timeout: timeoutMs });
  else setTimeout(() => fn(() => 0), 0);
}
