// The budget's watch of a streaming request, at its edges (src/core/budget.ts watchStream, src/vscode/budgetCheck.ts):
// two requests let go together stay under a limit while they stream (a request's reservation grows with it), a call a
// model writes as text is counted while it is held back, a reply whose finish came in the same read as the crossing
// piece is whole, and a "Send once anyway" pass is used by the next request of its conversation, never kept.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { watchStream } from '../../src/core/budget';
import type { BudgetLimit } from '../../src/core/budgetSettings';
import { resolveEndpoint } from '../../src/core/endpoint';
import { chatWithFallback } from '../../src/core/fallback';
import { readProfiles } from '../../src/core/profiles';
import { TextCallFilter } from '../../src/core/textToolCalls';
import { estimateTokens } from '../../src/core/tokenEstimate';
import type { StreamEvent } from '../../src/core/types';
import { BudgetGuard, type GuardedRequest } from '../../src/vscode/budgetGuard';
import { UsageStore } from '../../src/vscode/usageStore';
import { deltaChunk } from '../support/client';
import { pollUntil } from '../support/pollUntil.mjs';
import { sse, startTestServer, writeSlowly, type SlowCount } from '../support/server';
import { memoryState } from '../support/memoryState';

const NOW = new Date(2026, 10, 27, 15, 0).getTime();
const tokens = (amount: number): BudgetLimit => ({ period: 'day', unit: 'tokens', amount, action: 'block', source: 'user' });

describe('the budget watch at its edges', () => {
  let storage: string;
  let usage: UsageStore;
  let guard: BudgetGuard;
  const { profiles } = readProfiles({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }, []);
  const request = (limit: number, extra: Partial<GuardedRequest> = {}): GuardedRequest => ({
    settings: { budget: [tokens(limit)], pricing: {}, userPricing: {}, profiles, model: 'm', profile: profiles[0] },
    host: '127.0.0.1:1',
    messages: [{ role: 'user', content: 'hello' }],
    ...extra,
  });

  beforeEach(async () => {
    storage = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-watch-'));
    usage = new UsageStore({ fsPath: storage } as vscode.Uri, memoryState());
    guard = new BudgetGuard(usage, memoryState());
  });
  afterEach(async () => {
    usage.dispose();
    await fs.rm(storage, { recursive: true, force: true });
  });

  it('two requests let go together, with no maximum output, stay under the limit while both stream', async () => {
    const a = await guard.check(request(10_000, { stream: {} }));
    const b = await guard.check(request(10_000, { stream: {} }));
    assert.ok(a.kind !== 'block' && a.watch && b.kind !== 'block' && b.watch, 'both fit (4,096 each reserved) and are watched');
    const streams = [{ w: a.watch, text: '' }, { w: b.watch, text: '' }];
    const piece = 'word '.repeat(50);
    // Both stream at once, a piece each in turn, until the budget stops both.
    for (let i = 0; i < 400 && streams.some((s) => !s.w.signal.aborted); i++) {
      for (const s of streams) {
        if (s.w.signal.aborted) continue;
        s.w.onEvent({ type: 'text', choice: 0, text: piece });
        s.text += piece;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    assert.ok(streams.every((s) => s.w.signal.aborted), 'both were stopped');
    const prompt = estimateTokens('hello') + 10;
    const spent = streams.reduce((n, s) => n + estimateTokens(s.text), 0);
    // Each may go past by the piece that crossed (about 50 tokens) and the prompt estimate's own allowance.
    assert.ok(spent <= 10_000 + 2 * (estimateTokens(piece) + prompt), `together ${spent} tokens of a 10,000 limit`);
    assert.ok(spent > 8_000, `the limit was used, not cut short at the first reservations (${spent})`);
    await a.release?.();
    await b.release?.();
  });

  it('a call written as text is counted while it is held back', async () => {
    const chunks = [deltaChunk({ content: '<tool_call>{"name": "look", "arguments": {"text": "' }), ...Array.from({ length: 400 }, () => deltaChunk({ content: 'word word word word ' }))];
    const count: SlowCount = { written: 0 };
    const s = await startTestServer((_req, res) => void writeSlowly(res, chunks, [deltaChunk({ content: '"}}</tool_call>' }), deltaChunk({}, 'stop')], count, 1));
    try {
      const seen: StreamEvent[] = [];
      const w = watchStream({ headroom: [{ limit: tokens(10_000), left: 100, price: undefined }], prompt: 10, now: NOW, onEvent: (e) => seen.push(e) });
      const tools = [{ type: 'function' as const, function: { name: 'look', parameters: { type: 'object' } } }];
      const out = await chatWithFallback({ endpoint: resolveEndpoint(s.url), signal: w.signal, maxRetries: 0, textToolCalls: (names) => new TextCallFilter(names) }, { model: 'm', stream: true, tools }, [{ role: 'user', content: 'hi' }], undefined, (e) => w.onEvent(e));
      assert.equal(w.result(out.result).error?.kind, 'budget', 'about 2,000 tokens written against 90 left');
      assert.ok(seen.some((e) => e.type === 'held'), 'the call was held back as it streamed');
      const closedAfter = await pollUntil('the server to see the close', () => count.closedAfter, 10_000, 10);
      assert.ok(closedAfter < 100, `the server saw the close early (after ${closedAfter} of 401 chunks)`);
    } finally {
      await s.close();
    }
  });

  it('text held back, then let go as text, is counted once', async () => {
    const text = 'word '.repeat(300);
    const once = estimateTokens(text);
    const watch = () => watchStream({ headroom: [{ limit: tokens(10_000), left: Math.round(once * 1.5) + 10, price: undefined }], prompt: 10, now: NOW });
    const w = watch();
    w.onEvent({ type: 'held', choice: 0, text });
    w.onEvent({ type: 'text', choice: 0, text });
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(w.signal.aborted, false, 'the same text, held then shown: counted once, under the limit');
    // New text on top of it counts: past the limit.
    w.onEvent({ type: 'text', choice: 0, text });
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(w.signal.aborted, true);
  });

  it('a reply whose finish came in the same read as the crossing piece is whole', async () => {
    const s = await startTestServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([deltaChunk({ content: 'one two three four five six seven eight nine ten' }), deltaChunk({}, 'stop')]));
    });
    try {
      const w = watchStream({ headroom: [{ limit: tokens(10_000), left: 15, price: undefined }], prompt: 10, now: NOW });
      const out = await chatWithFallback({ endpoint: resolveEndpoint(s.url), signal: w.signal, maxRetries: 0 }, { model: 'm', stream: true }, [{ role: 'user', content: 'hi' }], undefined, (e) => w.onEvent(e));
      const r = w.result(out.result);
      assert.equal(r.ended, 'done');
      assert.equal(r.error, undefined);
    } finally {
      await s.close();
    }
  });

  it('a pass is used by the next request of its conversation, blocked or not', async () => {
    const r = request(1000, { maxOutputTokens: 100, passKey: 'c1' });
    guard.allowOnce('c1');
    const first = await guard.check(r);
    assert.equal(first.kind, 'send', 'it fits: sent, the pass not needed');
    await first.release?.();
    await usage.record({ at: Date.now(), model: 'm', host: '127.0.0.1:1', prompt: 1000, completion: 0, total: 1000, estimated: false, durationMs: 1, source: 'chat' });
    const later = await guard.check(r);
    await later.release?.();
    assert.equal(later.kind, 'block', 'a later request of the conversation, 1,000 of 1,000 spent, with no click');
  });
});
