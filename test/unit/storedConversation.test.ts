// A conversation read from disk is checked field by field: a value of the wrong type anywhere (a turn, a step, a call,
// a chip, an image, usage…) makes the file damaged, named by its path; the conversations Parley writes, and wrote in
// earlier versions, pass.
import * as assert from 'node:assert/strict';
import { summaryTurn } from '../../src/core/compaction';
import type { LastUsage } from '../../src/core/contextWindow';
import { newConversation, type Conversation, type ContextItem, type Turn } from '../../src/core/conversation';
import { checkConversationFile, parseConversation } from '../../src/core/historyIndex';
import type { InflightRequest, TurnOwner } from '../../src/core/recovery';
import { conversationProblem } from '../../src/core/storedConversation';
import type { ContextChip, ErrorView, ImageView, ToolCallView, ToolStepView, UsageView } from '../../src/shared/protocol';

const ID = 'c0ffee12';
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

// Every field of every stored type is set (Required<…>), so a field added to a type does not compile here until this
// sample has it, and the walk below then checks that the validator rejects a mistyped value in it.
const image: Required<ImageView & { ref: string }> = { name: 'shot.png', dataUrl: '', ref: `${'a'.repeat(64)}.png` };
const chip: Required<ContextChip> = { id: 'k1', path: 'src/a.ts', startLine: 3, endLine: 9, language: 'typescript', truncated: false, mention: 'file' };
const item: Required<ContextItem> = { ...chip, code: 'const a = 1;' };
const call: Required<ToolCallView> = { id: 'call_1', name: 'read_file', summary: 'src/a.ts', arguments: '{"path":"src/a.ts"}', status: 'done', ms: 12, result: 'const a = 1;', wireId: '0', question: [{ name: 'path', value: 'src/a.ts' }] };
const step: Required<ToolStepView> = { text: 'Reading it.', calls: [call] };
const usage: Required<UsageView> = { prompt: 10, completion: 5, total: 15, estimated: false };
const error: Required<ErrorView> = { kind: 'bad_request', title: 'The server refused the request', detail: 'no', hint: 'check', actions: ['retry', 'openSettings'] };
const owner: Required<TurnOwner> = { session: 's1', pid: 4242, hostname: 'box', beat: 1_700_000_000_000 };
const inflight: Required<InflightRequest> = { id: 'r1', model: 'm', host: '127.0.0.1:1', source: 'chat', prompt: 100 };
const lastPrompt: Required<LastUsage> = { estimated: 100, actual: 120 };
const turn: Required<Turn> = {
  id: 't1', role: 'assistant', text: 'It is 1.', reasoning: 'hm', reasoningMs: 300, reasoningStartedAt: 1_700_000_000_000, reasoningField: 'reasoning_content',
  images: [image], context: [chip], note: 'Continue', status: 'done', usage, error, model: 'm', steps: [step], requests: 2, summaryOf: 2, profile: 'Local',
  contextItems: [item], owner, inflight, tools: ['read_file'],
};
const full: Required<Conversation> = {
  id: ID, title: 'Everything', createdAt: 1, updatedAt: 2, turns: [turn], toolsOff: true, rulesOff: ['AGENTS.md'], profile: 'Local', model: 'm', effort: 'high', lastPrompt,
};

/** Fields whose value is one of a fixed set: any other string is wrong too. */
const ONE_OF = /(?:\.role|\.status|\.kind|\.mention|\.source|\.actions\[\d+\])$/;
/** Fields that may be left out (by path, indices as []); every other field must be there. */
const T = 'turns[]';
const OPTIONAL = new Set([
  'toolsOff', 'rulesOff', 'profile', 'model', 'effort', 'lastPrompt',
  ...['reasoning', 'reasoningMs', 'reasoningStartedAt', 'reasoningField', 'images', 'context', 'note', 'usage', 'error', 'model', 'steps',
    'requests', 'summaryOf', 'profile', 'contextItems', 'owner', 'inflight', 'tools'].map((k) => `${T}.${k}`),
  `${T}.images[].ref`, `${T}.context[].mention`, `${T}.contextItems[].mention`, `${T}.steps[].calls[].ms`, `${T}.steps[].calls[].result`,
  `${T}.steps[].calls[].wireId`, `${T}.steps[].calls[].question`,
  `${T}.error.detail`, `${T}.error.hint`,
]);
const general = (path: string) => path.replace(/\[\d+\]/g, '[]');

/** Every field's path under `v` ("turns[0].steps[0].calls[0].status"), parents before children. */
function paths(v: unknown, at = ''): string[] {
  const out: string[] = [];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(`${at}[${i}]`, ...paths(x, `${at}[${i}]`)));
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) out.push(at ? `${at}.${k}` : k, ...paths(x, at ? `${at}.${k}` : k));
  return out;
}

const steps = (path: string) => path.split(/\.|(?=\[)/).map((s) => (s.startsWith('[') ? Number(s.slice(1, -1)) : s));

/** A copy of `full` with the field at `path` set to `value` (or deleted). */
function withField(path: string, value: unknown, remove = false): unknown {
  const copy = structuredClone(full) as unknown as Record<string | number, unknown>;
  const keys = steps(path);
  let o = copy;
  for (const k of keys.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = keys[keys.length - 1];
  if (remove) delete o[last];
  else o[last] = value;
  return copy;
}

function get(path: string): unknown {
  return steps(path).reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], full);
}

/** A value of another type than the one there. */
function mistyped(v: unknown): unknown {
  if (typeof v === 'string') return 5;
  if (typeof v === 'number') return 'x';
  if (typeof v === 'boolean') return 'x';
  if (Array.isArray(v)) return 'x';
  return 5;
}

describe('stored conversations: every field is checked when read', () => {
  it('the sample with every field set passes', () => {
    assert.equal(conversationProblem(structuredClone(full), ID), undefined);
    assert.equal(parseConversation(JSON.stringify(full), ID)?.turns[0].steps?.[0].calls[0].id, 'call_1');
  });

  const all = paths(full);
  it(`the walk covers the stored types (${all.length} fields)`, () => {
    for (const p of ['turns[0].steps[0].calls[0].status', 'turns[0].context[0].startLine', 'turns[0].images[0].ref', 'turns[0].usage.total', 'turns[0].error.actions[1]', 'turns[0].inflight.source', 'lastPrompt.actual']) {
      assert.ok(all.includes(p), p);
    }
  });

  for (const p of all) {
    it(`${p}: a value of another type, or null, makes the file damaged, named by that path`, () => {
      const v = get(p);
      const expected = p === 'id' ? 'id' : p;
      // What the history store reads a file with: not a conversation.
      assert.equal(parseConversation(JSON.stringify(withField(p, mistyped(v))), ID), undefined, `${JSON.stringify(mistyped(v))} at ${p} is read as a conversation`);
      assert.equal(conversationProblem(withField(p, mistyped(v)), ID), expected, `${JSON.stringify(mistyped(v))} at ${p}`);
      assert.equal(conversationProblem(withField(p, null), ID), expected, `null at ${p}`);
      if (typeof v === 'string' && ONE_OF.test(p)) assert.equal(conversationProblem(withField(p, 'nonsense'), ID), p, 'a value outside the set');
      else if (typeof v === 'string' && p !== 'id') assert.equal(conversationProblem(withField(p, 'any text'), ID), undefined, 'free text is free');
      if (typeof steps(p).at(-1) === 'string') {
        assert.equal(conversationProblem(withField(p, undefined, true), ID), OPTIONAL.has(general(p)) ? undefined : expected, `${p} left out`);
      }
    });
  }

  it('the issue\'s two files: steps "x" and context 5 are damaged, and say where', () => {
    const saved = JSON.stringify({ ...newConversation(ID, 1), turns: [{ id: 'u', role: 'user', text: 'hi', status: 'done', context: 5 }] });
    assert.deepEqual(checkConversationFile(saved, ID), { problem: 'turns[0].context is not what Parley writes there' });
    const steps = JSON.stringify({ ...newConversation(ID, 1), turns: [{ id: 'a', role: 'assistant', text: '', status: 'done', steps: 'x' }] });
    assert.equal(parseConversation(steps, ID), undefined);
    assert.deepEqual(checkConversationFile('{"id":', ID), { problem: "not JSON: cut short, or not Parley's" });
    assert.deepEqual(checkConversationFile('[]', ID), { problem: 'the file is not what Parley writes there' });
  });

  it('fields Parley does not know (a newer version\'s) are left alone', () => {
    const newer = { ...structuredClone(full), pinned: true, turns: [{ ...structuredClone(turn), rating: 5, steps: [{ ...step, calls: [{ ...call, wireId: '0' }] }] }] };
    assert.equal(conversationProblem(newer, ID), undefined);
  });
});

describe('stored conversations: what Parley writes, and wrote, passes', () => {
  /** As on disk: through JSON, so undefined fields are gone as they are in a file. */
  const onDisk = (c: Conversation) => JSON.parse(JSON.stringify(c)) as unknown;
  const user = (id: string, extra: Partial<Turn> = {}): Turn => ({ id, role: 'user', text: `question ${id}`, status: 'done', ...extra });

  const shapes: Array<[string, Conversation]> = [
    // The first version (726d7c1): no reasoningField, no steps, context without mention, images inline, undefined fields.
    ['the first version\'s', {
      id: ID, title: 'Old', createdAt: 1, updatedAt: 2,
      turns: [
        user('u1', { images: [{ name: 'a.png', dataUrl: PNG }], contextItems: [{ id: 'k', path: 'a.ts', startLine: 1, endLine: 2, language: 'ts', truncated: true, code: 'x' }], context: [{ id: 'k', path: 'a.ts', startLine: 1, endLine: 2, language: 'ts', truncated: true }] }),
        { id: 'a1', role: 'assistant', text: 'ok', status: 'done', model: 'm', reasoning: 'r', reasoningMs: 5, usage: { prompt: 1, completion: 2, total: 3, estimated: true } },
        user('u2', { note: 'Continue' }),
        { id: 'a2', role: 'assistant', text: '', status: 'error', model: 'm', error: { kind: 'auth', title: 'The server rejected the API key', actions: ['setApiKey', 'testConnection'] } },
      ],
    }],
    ['an empty new chat', newConversation(ID, 5)],
    ['tool steps, a summary, a profile and the meter\'s correction', {
      ...newConversation(ID, 1), toolsOff: false, profile: 'Work', model: 'gpt-x', lastPrompt: { estimated: 10, actual: 12 },
      turns: [
        user('u1'),
        { id: 'a1', role: 'assistant', text: 'Done.', status: 'done', model: 'gpt-x', profile: 'Work', requests: 2, reasoningField: 'think_tag',
          steps: [{ text: '', calls: [{ id: 'call_0_0', name: 'read_file', summary: 'a.ts', arguments: '{}', status: 'done', ms: 3, result: 'x' }, { id: 'c2', name: 'mcp_x', summary: '', arguments: '{}', status: 'denied' }] }] },
        summaryTurn('s1', 'They read a.ts.', 2, 'gpt-x'),
        user('u2'),
        { id: 'a2', role: 'assistant', text: 'So far', status: 'interrupted', model: 'gpt-x' },
      ],
    }],
    ['a reply saved while it streams, with a call waiting and images in files', {
      ...newConversation(ID, 1),
      turns: [
        user('u1', { images: [{ name: 'shot.png', dataUrl: '', ref: `${'b'.repeat(64)}.png` } as ImageView] }),
        { id: 'a1', role: 'assistant', text: '', status: 'streaming', reasoningStartedAt: 7, owner, inflight,
          steps: [{ text: 'Let me look.', calls: [{ id: 'c1', name: 'search_text', summary: 'foo', arguments: '{"query":"foo"}', status: 'waiting' }, { id: 'c2', name: 'read_file', summary: 'b', arguments: '{}', status: 'queued' }] }] },
      ],
    }],
  ];
  for (const [label, c] of shapes) {
    it(`${label} conversation passes`, () => {
      assert.equal(conversationProblem(onDisk(c), ID), undefined);
      assert.ok(parseConversation(JSON.stringify(c), ID));
    });
  }
});
