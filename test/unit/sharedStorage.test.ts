// What several windows keep in one global storage: per-window usage logs merged on read, and the history list made from
// the conversation folder. Pure logic; the two-window UI test (test/e2e/windows.e2e.mjs) runs it in a real VS Code.
import * as assert from 'node:assert/strict';
import { entryFileName, conversationFileName, entryOf, historyList, parseEntry, scanHistoryFolder } from '../../src/core/historyIndex';
import type { Conversation } from '../../src/core/conversation';
import type { UsageRecord } from '../../src/core/usageLedger';
import { group } from '../../src/core/usageLedger';
import { mergeLedger, parseLegacyLedger, parseResetMarker, parseUsageLog, usageLine, windowTotalsOf } from '../../src/core/usageLog';
import type { HistoryItem } from '../../src/shared/protocol';

const DAY = Date.UTC(2025, 0, 15, 12);

function rec(at: number, total = 333, model = 'm'): UsageRecord {
  return { at, model, host: '127.0.0.1:1', prompt: 300, completion: total - 300, total, estimated: false, durationMs: 5, source: 'chat' };
}

const allTime = (l: ReturnType<typeof mergeLedger>) => group(l, () => 'all')[0]?.[1] ?? { requests: 0, total: 0 };

describe('usage log: one append-only log per window, merged on read', () => {
  it('two windows recording at once: the merge counts every record of both, exactly (7 × 333 = 2,331)', () => {
    // Interleaved in time, as two windows asking at about the same moment; each window writes only its own log.
    const a = [rec(DAY + 1), rec(DAY + 3), rec(DAY + 5), rec(DAY + 7)];
    const b = [rec(DAY + 2), rec(DAY + 4), rec(DAY + 6)];
    const logA = a.map(usageLine).join('');
    const logB = b.map(usageLine).join('');
    const t = allTime(mergeLedger([parseUsageLog(logA), parseUsageLog(logB)], undefined));
    assert.equal(t.requests, 7);
    assert.equal(t.total, 2331);
    assert.equal(windowTotalsOf(parseUsageLog(logB), undefined).total, 999, "a window's own totals are its own log");
  });

  it('a half-written last line and damaged lines are skipped, never the rest of the log', () => {
    const text = usageLine(rec(DAY)) + 'not json\n' + JSON.stringify({ at: 'x' }) + '\n' + usageLine(rec(DAY + 1)) + usageLine(rec(DAY + 2)).slice(0, 20);
    assert.deepEqual(parseUsageLog(text).map((r) => r.at), [DAY, DAY + 1]);
  });

  it('Reset Usage: records at or before the marker stop counting in every log; later ones count', () => {
    const reset = parseResetMarker(JSON.stringify({ at: DAY + 10 }));
    assert.deepEqual(reset, { at: DAY + 10 });
    const t = allTime(mergeLedger([[rec(DAY + 5), rec(DAY + 10), rec(DAY + 11)], [rec(DAY + 9), rec(DAY + 12, 100)]], reset));
    assert.deepEqual([t.requests, t.total], [2, 433]);
    assert.equal(parseResetMarker('{'), undefined);
  });

  it('the ledger moved from global state counts once, until a later reset; damaged rows are dropped', () => {
    const moved = parseLegacyLedger(JSON.stringify({
      at: DAY,
      ledger: {
        '2025-01-01|api.openai.com|gpt': { requests: 2, prompt: 10, completion: 5, total: 15, estimatedTokens: 0 },
        __proto__: { requests: 1, prompt: 1, completion: 1, total: 2, estimatedTokens: 0 },
        'bad|row': { requests: 'x' },
      },
    }));
    assert.ok(moved);
    assert.deepEqual(Object.keys(moved.ledger), ['2025-01-01|api.openai.com|gpt']);
    assert.deepEqual(allTime(mergeLedger([[rec(DAY + 1)]], undefined, moved)).total, 348);
    assert.deepEqual(allTime(mergeLedger([[rec(DAY + 1)]], { at: DAY }, moved)).total, 333, 'a reset after the move clears it');
  });
});

describe('history list: one entry file per conversation, the list made from the folder', () => {
  const conv = (id: string, title: string, updatedAt: number): Conversation => ({ id, title, createdAt: 1, updatedAt, turns: [{ id: 't', role: 'user', text: title, status: 'done' }] });

  it("conversations saved by two windows are both listed: neither window's save touches the other's files", () => {
    const a = conv('aaaa', 'From window A', 2);
    const b = conv('bbbb', 'From window B', 3);
    const names = [conversationFileName(a.id), entryFileName(a.id), conversationFileName(b.id), entryFileName(b.id), 'x.json.1a2b.tmp'];
    const { conversations, entries } = scanHistoryFolder(names);
    assert.deepEqual(conversations.sort(), ['aaaa', 'bbbb']);
    assert.deepEqual(entries.sort(), ['aaaa', 'bbbb']);
    const read = new Map<string, HistoryItem>(entries.map((id) => [id, parseEntry(JSON.stringify(entryOf(id === 'aaaa' ? a : b)), id)!]));
    assert.deepEqual(historyList(conversations, read).map((i) => i.title), ['From window B', 'From window A'], 'newest first');
  });

  it('an entry without its conversation (deleted) is not listed; a damaged or foreign entry is not trusted', () => {
    const { conversations, entries } = scanHistoryFolder([entryFileName('gone'), conversationFileName('kept')]);
    assert.deepEqual([conversations, entries], [['kept'], ['gone']]);
    assert.deepEqual(historyList(conversations, new Map([['gone', { id: 'gone', title: 'g', updatedAt: 1, turnCount: 2 }]])), []);
    assert.equal(parseEntry('{', 'kept'), undefined);
    assert.equal(parseEntry(JSON.stringify({ id: 'other', title: 't', updatedAt: 1, turnCount: 1 }), 'kept'), undefined);
    assert.equal(conversationFileName('../../x'), 'x.json', 'an id never names a path outside the folder');
  });

  it('an entry says when a reply was streaming at the save, so the list knows which conversations to recover', () => {
    const c = conv('ssss', 'Streaming', 1);
    assert.equal(parseEntry(JSON.stringify(entryOf(c)), 'ssss')?.streaming, undefined);
    c.turns.push({ id: 'a', role: 'assistant', text: 'half', status: 'streaming' });
    assert.equal(entryOf(c).streaming, true);
    assert.equal(parseEntry(JSON.stringify(entryOf(c)), 'ssss')?.streaming, true);
    assert.equal(parseEntry(JSON.stringify({ ...entryOf(c), streaming: 'yes' }), 'ssss')?.streaming, undefined, 'only true counts');
  });
});
