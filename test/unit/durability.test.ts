// The pure parts of what Parley never loses: damaged conversation files told apart, the rule for interrupted replies,
// usage counted once per request id, and torn lines in a usage log. test/integration/durability.test.ts runs them in
// a real VS Code, test/e2e/durability.e2e.mjs through a reload.
import * as assert from 'node:assert/strict';
import type { Conversation, Turn } from '../../src/core/conversation';
import { damagedFileName, damagedItem, historyList, parseConversation, scanHistoryFolder, storageErrorReason } from '../../src/core/historyIndex';
import { ownerGone, recoverInterrupted, STALE_MS, type Here, type TurnOwner } from '../../src/core/recovery';
import { group, type UsageRecord } from '../../src/core/usageLedger';
import { mergeLedger, parseUsageLog, sourceTotalsOf, usageLine, usageLines } from '../../src/core/usageLog';

const NOW = Date.UTC(2026, 0, 10, 12);

function conversation(turns: Turn[] = []): Conversation {
  return { id: 'abc123', title: 'T', createdAt: 1, updatedAt: 2, turns };
}

function here(over: Partial<Here> = {}): Here {
  return { session: 'me', pid: 100, hostname: 'box', now: NOW, alive: (pid) => pid === 100 || pid === 200, streaming: () => false, ...over };
}

function owner(over: Partial<TurnOwner> = {}): TurnOwner {
  return { session: 'other', pid: 200, hostname: 'box', beat: NOW - 1000, ...over };
}

function rec(over: Partial<UsageRecord> = {}): UsageRecord {
  return { at: NOW, model: 'm', host: 'h', prompt: 10, completion: 5, total: 15, estimated: false, durationMs: 1, source: 'chat', ...over };
}

const allTime = (records: UsageRecord[][]) => group(mergeLedger(records, undefined), () => 'all')[0]?.[1];

describe('damaged conversation files', () => {
  const good = JSON.stringify(conversation([{ id: 't1', role: 'user', text: 'hi', status: 'done' }]));

  it('a whole conversation parses; cut short, random bytes, another id or turns that are not turns do not', () => {
    assert.equal(parseConversation(good, 'abc123')?.turns[0].text, 'hi');
    assert.equal(parseConversation(good.slice(0, good.length - 3), 'abc123'), undefined, 'cut short');
    assert.equal(parseConversation(String.fromCharCode(...Array.from({ length: 300 }, (_, i) => (i * 37) % 256)), 'abc123'), undefined, 'random bytes');
    assert.equal(parseConversation(good, 'other'), undefined, 'another id');
    assert.equal(parseConversation('null', 'abc123'), undefined);
    assert.equal(parseConversation(JSON.stringify({ ...conversation(), turns: [{ role: 'user' }] }), 'abc123'), undefined, 'a turn without text');
    assert.equal(parseConversation(JSON.stringify({ ...conversation(), turns: {} }), 'abc123'), undefined);
  });

  it('the folder scan tells conversations, entries and damaged files apart; the list shows the damaged ones too', () => {
    const scan = scanHistoryFolder(['a1.json', 'a1.entry.json', 'b2.corrupt.json', 'b2-ff00aa.corrupt.json', 'c3.json.x1.tmp', 'notes.txt']);
    assert.deepEqual(scan, { conversations: ['a1'], entries: ['a1'], damaged: ['b2', 'b2-ff00aa'] });
    const list = historyList(scan.conversations, new Map([['a1', { id: 'a1', title: 'A', updatedAt: 5, turnCount: 2 }]]), scan.damaged.map((id, i) => damagedItem(id, 10 + i)));
    assert.deepEqual(list.map((i) => [i.id, i.damaged ?? false]), [['b2-ff00aa', true], ['b2', true], ['a1', false]]);
    assert.equal(damagedFileName('b2'), 'b2.corrupt.json');
    assert.equal(damagedFileName('../x'), 'x.corrupt.json', 'never a path outside the folder');
  });

  it('a failed save says why in words', () => {
    assert.equal(storageErrorReason(Object.assign(new Error('x'), { code: 'ENOSPC' })), 'the disk is full');
    assert.equal(storageErrorReason(Object.assign(new Error('x'), { code: 'EROFS' })), 'the disk is read-only');
    assert.equal(storageErrorReason(Object.assign(new Error('x'), { code: 'EACCES' })), "Parley's storage folder is read-only");
    assert.equal(storageErrorReason(Object.assign(new Error('x'), { code: 'ENOTDIR' })), "Parley's storage folder is not a folder any more");
    assert.match(storageErrorReason(Object.assign(new Error('odd'), { code: 'EIO' })), /EIO/);
  });
});

describe('interrupted replies: which streaming turns no live window streams', () => {
  it('the rule: this window streaming it, a live process on this machine, a recent beat from another machine keep it', () => {
    assert.equal(ownerGone(owner(), 't', here({ streaming: (id) => id === 't' })), false, 'this window streams it');
    assert.equal(ownerGone(owner(), 't', here()), false, 'another live window on this machine');
    assert.equal(ownerGone(owner({ hostname: 'elsewhere', pid: 999 }), 't', here()), false, 'another machine, saved recently');
  });

  it('the rule: no owner, an earlier session, a process that is gone, or no save for STALE_MS make it interrupted', () => {
    assert.equal(ownerGone(undefined, 't', here()), true, 'no owner (an earlier version wrote it)');
    assert.equal(ownerGone(owner({ session: 'me', pid: 100 }), 't', here()), true, 'this session, not streaming it any more');
    assert.equal(ownerGone(owner({ pid: 100 }), 't', here()), true, 'this process in an earlier session');
    assert.equal(ownerGone(owner({ pid: 300 }), 't', here()), true, 'a process that is gone (a reload, a crash)');
    assert.equal(ownerGone(owner({ hostname: 'elsewhere', beat: NOW - STALE_MS - 1 }), 't', here()), true, 'stale, from another machine');
    assert.equal(ownerGone(owner({ beat: NOW - STALE_MS - 1 }), 't', here()), true, 'stale: a process id used again');
  });

  it('recovery keeps the text, marks the turn Interrupted and returns one estimated record under the request id', () => {
    const c = conversation([
      { id: 'u', role: 'user', text: 'q', status: 'done' },
      { id: 'a', role: 'assistant', text: 'x'.repeat(400), status: 'streaming', owner: owner({ pid: 300 }), inflight: { id: 'req-1', model: 'm', host: 'h', source: 'chat', prompt: 50 } },
    ]);
    const records = recoverInterrupted(c, here());
    const t = c.turns[1];
    assert.equal(t.status, 'interrupted');
    assert.equal(t.text.length, 400);
    assert.equal(t.owner, undefined);
    assert.equal(t.inflight, undefined);
    assert.deepEqual(records.map((r) => [r.id, r.prompt, r.completion, r.estimated]), [['req-1', 50, 100, true]]);
    assert.deepEqual(t.usage, { prompt: 50, completion: 100, total: 150, estimated: true });
    assert.deepEqual(recoverInterrupted(c, here()), [], 'a second recovery finds nothing');
  });

  it('a tool loop interrupted in its third request: the earlier requests stay, one more is added', () => {
    const c = conversation([{
      id: 'a', role: 'assistant', text: '', status: 'streaming', owner: owner({ pid: 300 }), requests: 2,
      usage: { prompt: 100, completion: 20, total: 120, estimated: false }, inflight: { id: 'r3', model: 'm', host: 'h', source: 'chat', prompt: 30 },
    }]);
    recoverInterrupted(c, here());
    assert.equal(c.turns[0].requests, 3);
    assert.deepEqual(c.turns[0].usage, { prompt: 130, completion: 20, total: 150, estimated: true });
  });

  it('a live window\'s turn and finished turns are left alone; a turn with no request in flight is counted as nothing', () => {
    const c = conversation([
      { id: 'a', role: 'assistant', text: 'done', status: 'done' },
      { id: 'b', role: 'assistant', text: 'live', status: 'streaming', owner: owner() },
      { id: 'c', role: 'assistant', text: 'old', status: 'streaming' },
    ]);
    assert.deepEqual(recoverInterrupted(c, here()), []);
    assert.deepEqual(c.turns.map((t) => t.status), ['done', 'streaming', 'interrupted']);
  });
});

describe('usage counted once per request id', () => {
  it('the estimate recovered by two windows, and the real count that made it to the log: counted once, the real one', () => {
    const real = rec({ id: 'req-1', total: 15 });
    const estA = rec({ id: 'req-1', total: 40, estimated: true });
    const estB = rec({ id: 'req-1', total: 41, estimated: true });
    assert.deepEqual([allTime([[estA], [estB, real]])?.requests, allTime([[estA], [estB, real]])?.total], [1, 15]);
    assert.deepEqual([allTime([[estA], [estB]])?.requests, allTime([[estA], [estB]])?.total], [1, 41], 'two estimates: the larger');
    assert.deepEqual([allTime([[estB], [estA]])?.requests, allTime([[estB], [estA]])?.total], [1, 41], 'in either order');
    assert.equal(sourceTotalsOf([[estA], [estB]], undefined).chat.requests, 1);
  });

  it('records without an id all count, as before', () => {
    assert.equal(allTime([[rec(), rec()], [rec()]])?.requests, 3);
  });
});

describe('torn lines in a usage log', () => {
  it('an append cut short, then the next append: the torn piece is skipped, every later record counts', () => {
    const torn = usageLine(rec({ at: NOW + 1 })).slice(0, 25);
    const text = usageLine(rec({ at: NOW })) + torn + usageLines([rec({ at: NOW + 2 }), rec({ at: NOW + 3 })], true);
    assert.deepEqual(parseUsageLog(text).map((r) => r.at), [NOW, NOW + 2, NOW + 3]);
    // Without the new line the first record of the next append would be glued to the torn piece, and lost.
    assert.deepEqual(parseUsageLog(usageLine(rec({ at: NOW })) + torn + usageLines([rec({ at: NOW + 2 })], false)).map((r) => r.at), [NOW]);
  });

  it('garbage lines among records are skipped, never the rest', () => {
    const text = usageLine(rec({ at: NOW })) + '\u0000\u00ff{{{\n' + '{"at":1}\n' + usageLine(rec({ at: NOW + 1 }));
    assert.deepEqual(parseUsageLog(text).map((r) => r.at), [NOW, NOW + 1]);
  });
});
