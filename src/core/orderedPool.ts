// Bounded parallel work consumed in order: at most `limit` calls run at once, their results come out in the items'
// order (search_text reads its files this way: in parallel, matched and reported in path order).

/** One item's outcome: its value, or what its call threw. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Yields `fn(item, index)` for each item, settled (a rejection is yielded, never thrown), in the items' order. At most
 * `limit` calls run at once; they start ahead of the consumer, and a new one starts only when the consumer takes the
 * next result. When `signal` aborts, the iteration throws the signal's reason at once, without waiting for the calls in
 * flight (their results are dropped), and starts no more. Leaving the loop early starts no more either.
 */
export async function* mapOrdered<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  signal: AbortSignal,
): AsyncGenerator<Settled<R>, void, undefined> {
  signal.throwIfAborted();
  const ahead: Promise<Settled<R>>[] = [];
  let started = 0;
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
  });
  // Nobody may be waiting on it when the signal aborts.
  aborted.catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (let taken = 0; taken < items.length; taken++) {
      while (started < items.length && started - taken < Math.max(1, limit)) {
        const i = started++;
        ahead.push(settle(() => fn(items[i], i)));
      }
      const next = await Promise.race([ahead.shift() as Promise<Settled<R>>, aborted]);
      signal.throwIfAborted();
      yield next;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

async function settle<R>(call: () => Promise<R>): Promise<Settled<R>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    return { ok: false, error };
  }
}
