// mapOrdered (src/core/orderedPool.ts), which search_text reads its files with: results in the items' order whatever
// order the calls end in, never more than `limit` calls at once, and Stop ends the iteration without waiting for them.
import * as assert from 'node:assert/strict';
import { mapOrdered, type Settled } from '../../src/core/orderedPool';

/** A promise and the function that resolves it. */
function deferred<T>(): { promise: Promise<T>; resolve(v: T): void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function collect<R>(it: AsyncIterable<Settled<R>>): Promise<Settled<R>[]> {
  const out: Settled<R>[] = [];
  for await (const r of it) out.push(r);
  return out;
}

describe('mapOrdered', () => {
  it('yields results in the items\' order when later calls end first, and settles a rejection instead of throwing', async () => {
    const items = Array.from({ length: 40 }, (_, i) => i);
    // Later items end sooner: the completion order is the reverse of the items' order within each window.
    const out = await collect(mapOrdered(items, 8, async (n) => {
      await new Promise((r) => setTimeout(r, 40 - n));
      if (n === 7) throw new Error('seven');
      return n * 2;
    }, new AbortController().signal));
    assert.equal(out.length, 40);
    out.forEach((r, i) => {
      if (i === 7) assert.ok(!r.ok && (r.error as Error).message === 'seven');
      else assert.deepEqual(r, { ok: true, value: i * 2 });
    });
  });

  it('runs at most `limit` calls at once, and does run them in parallel', async () => {
    let running = 0;
    let most = 0;
    await collect(mapOrdered(Array.from({ length: 100 }, (_, i) => i), 16, async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setImmediate(r));
      running--;
    }, new AbortController().signal));
    assert.equal(most, 16);
  });

  it('leaving the loop early starts no more calls', async () => {
    const started: number[] = [];
    for await (const r of mapOrdered(Array.from({ length: 100 }, (_, i) => i), 4, async (n) => {
      started.push(n);
      return n;
    }, new AbortController().signal)) {
      if (r.ok && r.value === 2) break;
    }
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
  });

  it('Stop ends the iteration with the abort reason while a call is still running, and starts no more', async () => {
    const stop = new AbortController();
    const never = deferred<number>();
    const started: number[] = [];
    const it = mapOrdered(Array.from({ length: 100 }, (_, i) => i), 4, async (n) => {
      started.push(n);
      // Item 1 never ends: only Stop can end the wait for it.
      return n === 1 ? never.promise : n;
    }, stop.signal);
    const seen: number[] = [];
    const done = (async () => {
      for await (const r of it) if (r.ok) seen.push(r.value);
    })();
    setTimeout(() => stop.abort(), 5);
    await assert.rejects(done, (e: Error) => e.name === 'AbortError');
    assert.deepEqual(seen, [0]);
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
  });

  it('an aborted signal yields nothing and calls nothing', async () => {
    const stop = new AbortController();
    stop.abort();
    let calls = 0;
    await assert.rejects(collect(mapOrdered([1, 2, 3], 2, async (n) => {
      calls++;
      return n;
    }, stop.signal)), (e: Error) => e.name === 'AbortError');
    assert.equal(calls, 0);
  });
});
