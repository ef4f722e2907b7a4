// The tool loop (src/core/toolLoop.ts) against a real local server scripted to answer with tool calls: one call,
// parallel calls, arguments split across chunks, the recorded provider quirks, the exact messages of the next
// request, the guards, a stop mid-call, and a conversation from history continued with a valid message sequence;
// Parley's own call ids beside the server's (which go back on the wire), whatever ids the server gives.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServerResponse } from 'node:http';
import { exportMarkdown, toMessages, type Turn } from '../../src/core/conversation';
import { chatWithFallback } from '../../src/core/fallback';
import { REPEAT_LIMIT, roundCalls, runToolLoop, STOPPED_RESULT, type RoundCall, type ToolLoopHost, type ToolOutcome } from '../../src/core/toolLoop';
import type { ChatMessage, ChatResult, ToolCall, ToolDefinition } from '../../src/core/types';
import { clientOptions, deltaChunk } from '../support/client';
import { sse, withServer, writeWay, allWays, type RecordedRequest, type TestServer } from '../support/server';

const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
  { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } },
  { type: 'function', function: { name: 'llm_version', parameters: { type: 'object', properties: {} } } },
];
const START: ChatMessage[] = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'What is in a.txt?' }];

/** A tool call delta (index, id, name, arguments as given; undefined fields are left out). */
function callDelta(index: number | undefined, id: string | undefined, name: string | undefined, args: string | null | undefined) {
  const fn: Record<string, unknown> = {};
  if (name !== undefined) fn.name = name;
  if (args !== undefined) fn.arguments = args;
  const tc: Record<string, unknown> = { type: 'function', function: fn };
  if (index !== undefined) tc.index = index;
  if (id !== undefined) tc.id = id;
  return tc;
}

const toolsReply = (...deltas: Array<Record<string, unknown>>) => sse([
  ...deltas.map((tc) => deltaChunk({ tool_calls: [tc] })),
  deltaChunk({}, 'tool_calls'),
  { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
]);
const textReply = (text: string) => sse([deltaChunk({ content: text }, 'stop'), { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 } }]);

/** What the test's tools do: a file system of two files, and a call log. */
class Host implements ToolLoopHost {
  readonly rounds: Array<{ text: string; calls: RoundCall[] }> = [];
  /** The calls run, as they go back to the server. */
  readonly ran: ToolCall[] = [];
  /** Parley's ids of the calls run. */
  readonly ranIds: string[] = [];
  readonly controller = new AbortController();
  onRun?: (call: ToolCall) => void;

  constructor(private readonly s: TestServer) {}

  async request(messages: ChatMessage[]): Promise<{ result: ChatResult; tokens: number }> {
    const { result } = await chatWithFallback(clientOptions(this.s, { signal: this.controller.signal }), { model: 'm', stream: true, tools: TOOLS }, messages, undefined);
    return { result, tokens: result.usage.total_tokens };
  }

  callId(round: number, index: number): string {
    return `turn.${round}.${index}`;
  }

  round(text: string, calls: RoundCall[]): void {
    this.rounds.push({ text, calls });
  }

  async run(rc: RoundCall): Promise<ToolOutcome> {
    const call = rc.wire;
    this.ran.push(call);
    this.ranIds.push(rc.id);
    this.onRun?.(call);
    if (this.controller.signal.aborted) return { status: 'stopped', content: STOPPED_RESULT };
    const files: Record<string, string> = { 'a.txt': 'alpha', 'b.txt': 'beta' };
    const args = JSON.parse(call.function.arguments || '{}') as { path?: string; location?: string };
    if (call.function.name === 'read_file') return args.path && args.path in files ? { status: 'done', content: files[args.path] } : { status: 'failed', content: 'no such file' };
    return { status: 'done', content: `${call.function.name}(${args.location ?? ''})` };
  }

  stopped(): boolean {
    return this.controller.signal.aborted;
  }
}

/** Serves one scripted reply per request, in order; the last one again if asked more often. */
async function scripted<T>(replies: Array<string | ((res: ServerResponse) => Promise<void>)>, fn: (s: TestServer, host: Host) => Promise<T>): Promise<T> {
  let n = 0;
  return withServer(async (_req, res) => {
    const r = replies[Math.min(n++, replies.length - 1)];
    if (typeof r === 'function') return r(res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    await writeWay(res, r, allWays(5)[2]);
  }, (s) => fn(s, new Host(s)));
}

/** A reply that asks for a call the model has not asked for before (another city each time), so no repeat guard fires. */
function aNewCallEachTime(): (res: ServerResponse) => Promise<void> {
  let n = 0;
  return async (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(toolsReply(callDelta(0, `c${n}`, 'weather', JSON.stringify({ location: `city ${n++}` }))));
  };
}

const sent = (r: RecordedRequest) => (r.json as { messages: ChatMessage[] }).messages;
const LIMITS = { maxRounds: 10, maxTurnTokens: 100_000 };

describe('the tool loop', function () {
  this.timeout(20_000);

  it('one call: runs it, then sends the assistant message with the call and one tool message with its id', async () => {
    await scripted([toolsReply(callDelta(0, 'call_1', 'read_file', '{"path":"a.txt"}')), textReply('It says alpha.')], async (s, host) => {
      const end = await runToolLoop(START, host, LIMITS);
      assert.equal(end.result.text, 'It says alpha.');
      assert.equal(end.requests, 2);
      assert.equal(end.guard, undefined);
      assert.deepEqual(host.ran.map((c) => c.function.arguments), ['{"path":"a.txt"}']);
      assert.equal(s.requests.length, 2);
      assert.deepEqual(sent(s.requests[0]), START);
      assert.ok((s.requests[0].json as { tools?: unknown[] }).tools?.length === TOOLS.length, 'tools are offered');
      assert.deepEqual(sent(s.requests[1]), [
        ...START,
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'alpha' },
      ]);
    });
  });

  it('parallel calls with arguments split across chunks: all run, in order, all answered in order', async () => {
    const reply = toolsReply(
      callDelta(0, 'call_a', 'read_file', ''), callDelta(1, 'call_b', 'read_file', ''),
      callDelta(0, undefined, undefined, '{"pa'), callDelta(1, undefined, undefined, '{"path":'),
      callDelta(0, undefined, undefined, 'th":"a.txt"}'), callDelta(1, undefined, undefined, '"b.txt"}'),
    );
    await scripted([reply, textReply('alpha and beta')], async (s, host) => {
      const end = await runToolLoop(START, host, LIMITS);
      assert.equal(end.result.text, 'alpha and beta');
      assert.deepEqual(host.ran.map((c) => c.id), ['call_a', 'call_b']);
      const second = sent(s.requests[1]);
      assert.deepEqual(second.slice(2).map((m) => [m.role, m.tool_call_id ?? null, m.content]), [
        ['assistant', null, null], ['tool', 'call_a', 'alpha'], ['tool', 'call_b', 'beta'],
      ]);
      assert.deepEqual(second[2].tool_calls?.map((c) => c.function.arguments), ['{"path":"a.txt"}', '{"path":"b.txt"}']);
    });
  });

  it('a call the model wrote as text (Qwen\'s <tool_call>) runs, and goes back as a real call with its result', async () => {
    const written = sse([
      deltaChunk({ content: 'Let me look.\n<tool' }), deltaChunk({ content: '_call>\n{"name": "read_file", ' }),
      deltaChunk({ content: '"arguments": {"path": "a.txt"}}\n</tool_call>' }), deltaChunk({}, 'stop'),
    ]);
    await scripted([written, textReply('It says alpha.')], async (s, host) => {
      const end = await runToolLoop(START, host, LIMITS);
      assert.equal(end.result.text, 'It says alpha.');
      assert.equal(end.requests, 2);
      assert.deepEqual(host.rounds.map((r) => r.text), ['Let me look.\n'], 'the round\'s text has no tags');
      assert.deepEqual(host.ran, [{ id: 'call_1_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }]);
      assert.deepEqual(sent(s.requests[1]).slice(2), [
        { role: 'assistant', content: 'Let me look.\n', tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }] },
        { role: 'tool', tool_call_id: 'call_1_0', content: 'alpha' },
      ]);
    });
  });

  const fixtures = path.resolve(__dirname, '../../../test/fixtures/providers');
  const recorded: Array<[string, string, string]> = [
    ['mistral-tool-call-no-index.chunks.jsonl', 'no index', 'weather'],
    ['alibaba-qwen-tool-call-empty-id.chunks.jsonl', 'empty id continuations', 'weather'],
    ['openrouter-tool-call-arguments-null.sse', 'arguments: null', 'llm_version'],
    ['openrouter-novita-tool-call-repeated-id-name.sse', 'a repeated id and name, and no finish_reason', 'llm_version'],
  ];
  for (const [file, quirk, name] of recorded) {
    it(`recorded provider quirk (${quirk}): the call runs once and the next request answers its id`, async () => {
      const raw = fs.readFileSync(path.join(fixtures, file), 'utf8');
      const body = file.endsWith('.jsonl') ? raw.split('\n').filter((l) => l.trim()).map((l) => `data: ${l}\n\n`).join('') + 'data: [DONE]\n\n' : raw;
      await scripted([body, textReply('done')], async (s, host) => {
        const end = await runToolLoop(START, host, LIMITS);
        assert.equal(end.result.text, 'done');
        assert.deepEqual(host.ran.map((c) => c.function.name), [name]);
        const second = sent(s.requests[1]);
        const call = second[2].tool_calls?.[0];
        assert.ok(call?.id, 'the call has an id');
        assert.equal(second[2].tool_calls?.length, 1);
        assert.deepEqual([second[3].role, second[3].tool_call_id], ['tool', call.id]);
        assert.equal(second.length, 4);
      });
    });
  }

  it('a server that gives the same id in every round (recorded: OpenRouter/Novita\'s "0"): each call has its own Parley id, and the server\'s goes back on the wire', async () => {
    const raw = fs.readFileSync(path.join(fixtures, 'openrouter-novita-tool-call-repeated-id-name.sse'), 'utf8');
    await scripted([raw, raw, textReply('done')], async (s, host) => {
      const end = await runToolLoop(START, host, LIMITS);
      assert.equal(end.result.text, 'done');
      const ids = host.rounds.flatMap((r) => r.calls.map((c) => c.id));
      assert.equal(ids.length, 2);
      assert.notEqual(ids[0], ids[1], 'one id per call in the turn, whatever the server reuses');
      assert.ok(!ids.includes('0'), "Parley's ids are not the server's");
      assert.deepEqual(host.ranIds, ids, 'each call runs under its own id');
      assert.deepEqual(host.ran.map((c) => c.id), ['0', '0'], 'the server\'s id stays on the call it sends back');
      // The server matches results by its own ids: the third request carries "0" for both rounds.
      const third = sent(s.requests[2]);
      assert.deepEqual(third.slice(2).map((m) => [m.role, m.tool_call_id ?? m.tool_calls?.map((c) => c.id).join(',')]), [
        ['assistant', '0'], ['tool', '0'], ['assistant', '0'], ['tool', '0'],
      ]);
    });
  });

  it("a call without an id gets a wire id no other call of the round has, even one the server gave in Parley's own form", async () => {
    const reply = toolsReply(
      callDelta(0, 'call_1_1', 'read_file', '{"path":"a.txt"}'),
      callDelta(1, '', 'read_file', '{"path":"b.txt"}'),
      callDelta(2, 'call_1_1', 'weather', '{"location":"Oslo"}'),
    );
    await scripted([reply, textReply('done')], async (s, host) => {
      await runToolLoop(START, host, LIMITS);
      const second = sent(s.requests[1]);
      const wire = second[2].tool_calls?.map((c) => c.id) ?? [];
      assert.equal(wire.length, 3);
      assert.equal(new Set(wire).size, 3, `wire ids ${JSON.stringify(wire)} are unique in the round`);
      assert.equal(wire[0], 'call_1_1', "the server's own id when it is the first with it");
      assert.deepEqual(second.slice(3).map((m) => m.tool_call_id), wire, 'each result under its call\'s wire id');
      assert.deepEqual(second.slice(3).map((m) => m.content), ['alpha', 'beta', 'weather(Oslo)']);
    });
  });

  it('roundCalls: wire ids unique in the round, Parley ids from the host, arguments and names as sent', () => {
    const c = (id: string, name = 'read_file') => ({ id, type: 'function' as const, function: { name, arguments: '{}' } });
    const calls = roundCalls([c('call_2_1'), c(''), c('call_2_1'), c('x', 'weather'), c('call_2_1_1')], 2, (r, i) => `t.${r}.${i}`);
    assert.deepEqual(calls.map((k) => k.id), ['t.2.0', 't.2.1', 't.2.2', 't.2.3', 't.2.4']);
    const wire = calls.map((k) => k.wire.id);
    assert.equal(new Set(wire).size, wire.length, JSON.stringify(wire));
    assert.deepEqual([wire[0], wire[3], wire[4]], ['call_2_1', 'x', 'call_2_1_1']);
    assert.deepEqual(calls.map((k) => k.wire.function.name), ['read_file', 'read_file', 'read_file', 'weather', 'read_file']);
  });

  it(`the same call ${REPEAT_LIMIT} times in a row ends the turn before it runs again`, async () => {
    const again = toolsReply(callDelta(0, 'x', 'read_file', '{"path": "a.txt"}'));
    await scripted([again], async (s, host) => {
      const end = await runToolLoop(START, host, LIMITS);
      assert.equal(end.guard, 'repeat');
      assert.equal(host.ran.length, REPEAT_LIMIT - 1);
      assert.equal(s.requests.length, REPEAT_LIMIT);
    });
  });

  it('at most maxRounds rounds of calls', async () => {
    await scripted([aNewCallEachTime()], async (s, host) => {
      const end = await runToolLoop(START, host, { maxRounds: 3, maxTurnTokens: 100_000 });
      assert.equal(end.guard, 'rounds');
      assert.equal(host.ran.length, 3);
      assert.equal(s.requests.length, 4);
    });
  });

  it('a per-turn token budget: no round starts once the turn used it', async () => {
    await scripted([aNewCallEachTime()], async (s, host) => {
      // Each request reports 15 tokens: after the second the turn has used 30.
      const end = await runToolLoop(START, host, { maxRounds: 10, maxTurnTokens: 30 });
      assert.equal(end.guard, 'tokens');
      assert.equal(host.ran.length, 1);
      assert.equal(s.requests.length, 2);
    });
  });

  it('Stop while a call runs: no further request, and the loop ends cancelled', async () => {
    const two = toolsReply(callDelta(0, 'a', 'read_file', '{"path":"a.txt"}'), callDelta(1, 'b', 'read_file', '{"path":"b.txt"}'));
    await scripted([two, textReply('never')], async (s, host) => {
      host.onRun = () => host.controller.abort();
      const end = await runToolLoop(START, host, LIMITS);
      assert.equal(end.result.ended, 'cancelled');
      assert.equal(host.ran.length, 1, 'the second call does not start');
      assert.equal(s.requests.length, 1);
    });
  });

  it('a reply with no calls ends the loop after one request, as a chat without tools', async () => {
    await scripted([textReply('plain')], async (s, host) => {
      const end = await runToolLoop(START, host, LIMITS);
      assert.equal(end.result.text, 'plain');
      assert.equal(end.requests, 1);
      assert.equal(host.rounds.length, 0);
    });
  });
});

describe('a conversation with tool calls, from history', () => {
  it('sends every call with its result, a stopped call answered too: no orphan tool message, no call without a result', () => {
    const turns: Turn[] = [
      { id: 'u1', role: 'user', text: 'read a and b', status: 'done' },
      {
        id: 'a1', role: 'assistant', text: 'Both read.', status: 'done', requests: 2,
        steps: [{ text: 'Reading.', calls: [
          { id: 'c1', name: 'read_file', summary: 'a.txt', arguments: '{"path":"a.txt"}', status: 'done', result: 'alpha' },
          { id: 'c2', name: 'read_file', summary: 'b.txt', arguments: '{"path":"b.txt"}', status: 'denied', result: 'The user denied this call.' },
        ] }],
      },
      { id: 'u2', role: 'user', text: 'again', status: 'done' },
      { id: 'a2', role: 'assistant', text: '', status: 'stopped', steps: [{ text: '', calls: [
        { id: 'c3', name: 'read_file', summary: 'a.txt', arguments: '{"path":"a.txt"}', status: 'running' },
      ] }] },
      { id: 'u3', role: 'user', text: 'go on', status: 'done' },
    ];
    const m = toMessages('', turns, { sendReasoningBack: false });
    assert.deepEqual(m.map((x) => [x.role, x.tool_call_id ?? (x.tool_calls?.map((c) => c.id).join(',') || null)]), [
      ['user', null], ['assistant', 'c1,c2'], ['tool', 'c1'], ['tool', 'c2'], ['assistant', null],
      ['user', null], ['assistant', 'c3'], ['tool', 'c3'],
      ['user', null],
    ]);
    assert.equal(m[1].content, 'Reading.');
    assert.equal(m[4].content, 'Both read.');
    assert.equal(m[7].content, STOPPED_RESULT);
    // Every tool message answers a call of the assistant message before it; every call is answered.
    const calls = new Set<string>();
    for (const x of m) {
      if (x.role === 'assistant') for (const c of x.tool_calls ?? []) calls.add(c.id);
      if (x.role === 'tool') assert.ok(calls.delete(x.tool_call_id ?? ''), `orphan tool message ${x.tool_call_id}`);
      if (x.role === 'user') assert.equal(calls.size, 0, 'a call without a result');
    }
  });
});

describe('a conversation whose server reused a call id, from history', () => {
  it("sends each call back under the server's id (wireId), never under Parley's card id", () => {
    const turns: Turn[] = [
      { id: 'u1', role: 'user', text: 'read a, then echo', status: 'done' },
      {
        id: 'a1', role: 'assistant', text: 'Done.', status: 'done', requests: 3,
        steps: [
          { text: '', calls: [{ id: 'a1.1.0', wireId: '0', name: 'read_file', summary: 'a.txt', arguments: '{"path":"a.txt"}', status: 'done', result: 'alpha' }] },
          { text: '', calls: [{ id: 'a1.2.0', wireId: '0', name: 'echo', summary: '', arguments: '{"text":"x"}', status: 'done', result: 'x' }] },
        ],
      },
      // Stored before Parley made ids of its own: the card's id is the server's.
      { id: 'a0', role: 'assistant', text: 'Old.', status: 'done', steps: [{ text: '', calls: [{ id: 'call_9', name: 'read_file', summary: '', arguments: '{}', status: 'done', result: 'r' }] }] },
    ];
    const m = toMessages('', turns, { sendReasoningBack: false });
    assert.deepEqual(m.map((x) => [x.role, x.tool_call_id ?? (x.tool_calls?.map((c) => c.id).join(',') || null)]), [
      ['user', null], ['assistant', '0'], ['tool', '0'], ['assistant', '0'], ['tool', '0'], ['assistant', null],
      ['assistant', 'call_9'], ['tool', 'call_9'], ['assistant', null],
    ]);
  });
});

describe('a conversation with tool calls, exported', () => {
  it('shows each round: its text, then each call with its status, exact arguments and result, and the requests', () => {
    const md = exportMarkdown({
      id: 'c', title: 'Tools', createdAt: 0, updatedAt: 0,
      turns: [
        { id: 'u', role: 'user', text: 'read a', status: 'done' },
        {
          id: 'a', role: 'assistant', text: 'It says alpha.', status: 'done', requests: 2, usage: { prompt: 30, completion: 8, total: 38, estimated: false },
          steps: [{ text: 'Reading a.', calls: [{ id: 'c1', name: 'read_file', summary: 'a.txt', arguments: '{"path":"a.txt"}', status: 'done', ms: 3, result: 'alpha ``` fence' }] }],
        },
      ],
    }, []);
    const i = md.indexOf('Reading a.');
    const j = md.indexOf('**Tool `read_file`** a.txt: done in 3 ms');
    const k = md.indexOf('It says alpha.');
    assert.ok(i >= 0 && j > i && k > j, md);
    assert.ok(md.includes('```json\n{"path":"a.txt"}\n```'), md);
    assert.ok(md.includes('````text\nalpha ``` fence\n````'), 'a result with a fence gets a longer one');
    assert.ok(md.includes('38 tokens in 2 requests'), md);
  });
});
