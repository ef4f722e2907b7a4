// The whole chat in plain Node, no VS Code: ChatController, the turn and its tool rounds, the window's room and the
// conversation's files, against a real loopback server writing SSE bytes, with a view channel that records.
// Send, stream, Stop at each point, a tool round with its approval, compaction's trigger, saving while streaming, reopen.
import * as assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { Tool } from '../../src/core/tool';
import { STOPPED_RESULT } from '../../src/core/toolLoop';
import type { ToolDefinition } from '../../src/core/types';
import type { ToolCallView, TurnView } from '../../src/shared/protocol';
import type { Toolbox } from '../../src/vscode/toolbox';
import { deltaChunk } from '../support/client';
import { nodeChat, type NodeChat } from '../support/nodeChat';
import { pollUntil } from '../support/pollUntil.mjs';
import { sse, startTestServer, type RecordedRequest, type TestServer } from '../support/server';

const USAGE = { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } };
const textReply = (...parts: string[]) => sse([...parts.map((p) => deltaChunk({ content: p })), deltaChunk({}, 'stop'), USAGE]);
const callReply = (name: string, args: string) =>
  sse([deltaChunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name, arguments: args } }] }), deltaChunk({}, 'tool_calls'), USAGE]);

/** A reply the test writes itself (a stream that stalls, a slow one). */
type Reply = string | ((res: ServerResponse) => Promise<void>);

/** A server that answers each chat request with the next reply, lists one model, and knows nothing else. */
async function scripted(replies: Reply[]): Promise<TestServer & { chats: () => RecordedRequest[] }> {
  const s = await startTestServer(async (req, res) => {
    if (req.path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model' }] }));
    }
    if (req.path !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"not found"}}');
    }
    const next = replies.shift();
    if (next === undefined) throw new Error('no reply scripted for this request');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (typeof next === 'string') return void res.end(next);
    await next(res);
  });
  return Object.assign(s, { chats: () => s.requests.filter((r) => r.path === '/v1/chat/completions') });
}

/** Writes `first` and holds the stream open until the client closes it. */
const stalls = (first: string) => async (res: ServerResponse) => {
  res.write(`data: ${JSON.stringify(deltaChunk({ content: first }))}\n\n`);
  await new Promise<void>((r) => res.on('close', () => r()));
};

function tool(name: string, readOnly: boolean, run: Tool['run']): Tool {
  const definition: ToolDefinition = { type: 'function', function: { name, description: name, parameters: { type: 'object', properties: { text: { type: 'string' } } } } };
  return { definition, policy: readOnly ? 'read' : 'ask', source: 'builtin', summary: (a) => String(a.text ?? ''), run };
}

function toolbox(tools: Tool[], askBeforeReading = false): Toolbox {
  return () => ({ tools, settings: { enabled: true, askBeforeReading, maxRounds: 10, maxTurnTokens: 200_000 } });
}

/** The latest card of call `id`, as the panel was last told. */
function card(n: NodeChat, id?: string): ToolCallView | undefined {
  for (const m of [...n.posted].reverse()) {
    if (m.type !== 'turnSteps') continue;
    const calls = m.steps.flatMap((s) => s.calls);
    return id ? calls.find((c) => c.id === id) : calls.at(-1);
  }
  return undefined;
}

/** How long a wait may take before the test says what did not happen (generous: the machines are noisy). */
const BOUND_MS = 5_000;
const waiting = (n: NodeChat) => pollUntil('a call waiting for the reader', () => (card(n)?.status === 'waiting' ? card(n) : undefined), BOUND_MS, 10);

/** `p`, or a failure naming `what` when it has not settled within BOUND_MS (a Stop that does not stop hangs). */
function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${BOUND_MS} ms`)), BOUND_MS)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
const lastEnd = (n: NodeChat): TurnView | undefined => [...n.posted].reverse().find((m) => m.type === 'turnEnd')?.turn as TurnView | undefined;

describe('ChatController in plain Node (the turn, its tools, Stop, compaction, files)', function () {
  this.timeout(20_000);
  const open: Array<{ n: NodeChat; s: TestServer }> = [];
  async function setup(replies: Reply[], opts: Parameters<typeof nodeChat>[1] = {}) {
    const s = await scripted(replies);
    const n = nodeChat(s.url, opts);
    open.push({ n, s });
    return { s, n, chat: n.chat };
  }
  afterEach(async () => {
    for (const { n, s } of open.splice(0)) {
      n.dispose();
      await s.close();
    }
  });

  it('sends a question, streams the reply into the panel, counts it and saves it; a reloaded window reopens it', async () => {
    const { s, n, chat } = await setup([textReply('Hello', ' there')]);
    await chat.send('Hi', []);
    assert.deepEqual(chat.current.turns.map((t) => [t.role, t.text, t.status]), [['user', 'Hi', 'done'], ['assistant', 'Hello there', 'done']]);
    const body = s.chats()[0].json;
    assert.deepEqual(body.messages.map((m: { role: string }) => m.role), ['system', 'user']);
    assert.equal(body.stream, true);
    const streamed = n.posted.filter((m) => m.type === 'delta').map((m) => (m.type === 'delta' ? m.text : '')).join('');
    assert.equal(streamed, 'Hello there', 'the deltas carried the reply');
    assert.deepEqual(n.asked.filter((a) => a.startsWith('generating')), ['generating true', 'generating false']);
    assert.equal(n.requester.records.length, 1);
    assert.equal(n.requester.records[0].total, 34);
    const again = n.reopen();
    try {
      await again.chat.restore();
      assert.deepEqual(again.chat.current.turns.map((t) => [t.role, t.text, t.status]), [['user', 'Hi', 'done'], ['assistant', 'Hello there', 'done']]);
      assert.equal(again.chat.current.id, chat.current.id);
    } finally {
      again.chat.dispose();
    }
  });

  it('a tool that needs approval runs only after the reader allows exactly the call shown; its result goes back to the model', async () => {
    const ran: unknown[] = [];
    const echo = tool('echo', false, async (a) => {
      ran.push(a);
      return `echoed ${String(a.text)}`;
    });
    const { s, n, chat } = await setup([callReply('echo', '{"text":"hi"}'), textReply('Done')], { toolbox: toolbox([echo]) });
    const sent = chat.send('Use echo', []);
    const asked = await waiting(n);
    assert.deepEqual(ran, [], 'not run before the reader answered');
    assert.equal(s.chats().length, 1);
    assert.deepEqual(asked.question?.map((q) => [q.name, q.value]), [['text', 'hi']]);
    assert.equal(chat.tools.answer({ id: asked.id, name: 'echo', arguments: '{"text":"other"}' }, 'once'), false, 'an answer to other arguments approves nothing');
    assert.equal(chat.tools.answer({ id: asked.id, name: 'read_file', arguments: asked.arguments }, 'once'), false, 'nor to another tool');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(ran, [], 'still not run');
    assert.equal(chat.tools.answer({ id: asked.id, name: 'echo', arguments: asked.arguments }, 'once'), true);
    await sent;
    assert.deepEqual(ran, [{ text: 'hi' }]);
    const second = s.chats()[1].json;
    const result = second.messages.find((m: { role: string }) => m.role === 'tool');
    assert.equal(result.content, 'echoed hi');
    assert.equal(result.tool_call_id, 'call_1');
    const turn = chat.current.turns[1];
    assert.equal(turn.status, 'done');
    assert.equal(turn.text, 'Done');
    assert.equal(turn.requests, 2);
    assert.equal(card(n, asked.id)?.status, 'done');
  });

  it('a denied call never runs, and the model is told so', async () => {
    let ran = 0;
    const echo = tool('echo', false, async () => String(++ran));
    const { s, n, chat } = await setup([callReply('echo', '{"text":"rm"}'), textReply('OK')], { toolbox: toolbox([echo]) });
    const sent = chat.send('Use echo', []);
    const asked = await waiting(n);
    assert.equal(chat.tools.answer({ id: asked.id, name: asked.name, arguments: asked.arguments }, 'deny'), true);
    await sent;
    assert.equal(ran, 0);
    assert.match(s.chats()[1].json.messages.find((m: { role: string }) => m.role === 'tool').content, /denied/);
    assert.equal(card(n, asked.id)?.status, 'denied');
  });

  it('a read-only tool runs unasked, unless the reader asked to be asked before reading too', async () => {
    for (const askBeforeReading of [false, true]) {
      let ran = 0;
      const look = tool('look', true, async () => `looked ${++ran}`);
      const { n, chat } = await setup([callReply('look', '{}'), textReply('Seen')], { toolbox: toolbox([look], askBeforeReading) });
      const sent = chat.send('Look', []);
      if (askBeforeReading) {
        const asked = await waiting(n);
        assert.equal(ran, 0, 'asked first');
        chat.tools.answer({ id: asked.id, name: asked.name, arguments: asked.arguments }, 'once');
      }
      await sent;
      assert.equal(ran, 1, `askBeforeReading ${askBeforeReading}`);
      assert.equal(n.posted.some((m) => m.type === 'turnSteps' && m.steps.some((st) => st.calls.some((c) => c.status === 'waiting'))), askBeforeReading);
    }
  });

  describe('Stop', () => {
    it('while the reply streams: the request is aborted (the server sees the connection close), the text so far stays, marked stopped and saved', async () => {
      const { s, n, chat } = await setup([stalls('Partial')]);
      const sent = chat.send('Tell me', []);
      await pollUntil('the first delta', () => n.posted.some((m) => m.type === 'delta'), BOUND_MS, 10);
      const stopping = chat.stop();
      const closed = await s.waitForClose(BOUND_MS);
      await within(stopping, 'Stop');
      assert.equal(closed.path, '/v1/chat/completions');
      await sent;
      const turn = chat.current.turns[1];
      assert.equal(turn.status, 'stopped');
      assert.equal(turn.text, 'Partial');
      assert.equal(chat.generating, false);
      const saved = await n.history.load(chat.current.id);
      assert.equal(saved?.turns[1].status, 'stopped');
      assert.equal(saved?.turns[1].text, 'Partial');
      assert.equal(n.requester.records.length, 1, 'a stopped request is still counted');
    });

    it('before the request goes out: nothing reaches the server, the turn ends stopped', async () => {
      const { s, n, chat } = await setup([textReply('never')]);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const target = n.requester.target;
      n.requester.target = async (...a) => {
        await gate;
        return target(...a);
      };
      const sent = chat.send('Hi', []);
      await pollUntil('the turn to start', () => chat.generating, BOUND_MS, 5);
      const stopped = chat.stop();
      release();
      await within(stopped, 'Stop');
      await sent;
      assert.equal(chat.current.turns[1].status, 'stopped');
      assert.equal(s.chats().filter((r) => !r.clientClosedEarly).length, 0, 'no request was answered');
    });

    it('while a call waits for approval: the call is not run, no further request goes out, the turn ends stopped', async () => {
      let ran = 0;
      const echo = tool('echo', false, async () => String(++ran));
      const { s, n, chat } = await setup([callReply('echo', '{"text":"x"}'), textReply('never')], { toolbox: toolbox([echo]) });
      const sent = chat.send('Use echo', []);
      const asked = await waiting(n);
      await within(chat.stop(), 'Stop');
      await sent;
      assert.equal(ran, 0);
      assert.equal(s.chats().length, 1);
      assert.equal(chat.current.turns[1].status, 'stopped');
      assert.equal(card(n, asked.id)?.result, STOPPED_RESULT);
      assert.equal(chat.tools.answer({ id: asked.id, name: asked.name, arguments: asked.arguments }, 'once'), false, 'nothing waits any more');
    });

    it('while a tool runs: the tool gets the abort, no further request goes out, the turn ends stopped', async () => {
      let aborted = false;
      let started = false;
      const slow = tool('slow', true, (_a, signal) => new Promise((resolve) => {
        started = true;
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve('late');
        });
      }));
      const { s, chat } = await setup([callReply('slow', '{}'), textReply('never')], { toolbox: toolbox([slow]) });
      const sent = chat.send('Go slow', []);
      await pollUntil('the tool to start', () => started, BOUND_MS, 5);
      await within(chat.stop(), 'Stop');
      await sent;
      assert.equal(aborted, true);
      assert.equal(s.chats().length, 1);
      assert.equal(chat.current.turns[1].status, 'stopped');
    });
  });

  describe("compaction's trigger", () => {
    const long = (i: number) => `${'word '.repeat(300)}${i}`;
    function seed(n: NodeChat) {
      for (let i = 0; i < 3; i++) {
        n.chat.current.turns.push({ id: `u${i}`, role: 'user', text: long(i), status: 'done' }, { id: `a${i}`, role: 'assistant', text: long(i), status: 'done' });
      }
    }

    it('past the threshold, older turns are summarized first (the reader is told), then the question goes out with the summary', async () => {
      const { s, n, chat } = await setup([textReply('SUMMARY OF EARLIER'), textReply('Answer')], { settings: { contextWindow: 2_000, maxTokens: 200, compaction: { threshold: 50, keepTurns: 1 } } });
      seed(n);
      await chat.send('Next question', []);
      assert.equal(s.chats().length, 2);
      const [summary, question] = s.chats().map((r) => JSON.stringify(r.json.messages));
      assert.match(summary, /word word/, 'the summary request carries the older turns');
      assert.match(question, /SUMMARY OF EARLIER/);
      assert.doesNotMatch(question, /word word word/, 'the summarized turns are not sent again');
      assert.ok(n.posted.some((m) => m.type === 'notice' && /summarizing older turns first/.test(m.text)));
      assert.ok(chat.current.turns.some((t) => t.summaryOf !== undefined && /SUMMARY OF EARLIER/.test(t.text)));
      assert.equal(chat.current.turns.at(-1)?.text, 'Answer');
      assert.deepEqual(n.requester.records.map((r) => r.source), ['compact', 'chat']);
    });

    it('with automatic compaction off, a question that cannot fit is not sent: the card offers Compact and retry', async () => {
      const { s, n, chat } = await setup([textReply('never')], { settings: { contextWindow: 1_000, maxTokens: 200, compaction: { threshold: 0, keepTurns: 1 } } });
      seed(n);
      await chat.send('Next question', []);
      assert.equal(s.chats().length, 0);
      const end = lastEnd(n);
      assert.equal(end?.status, 'error');
      assert.deepEqual(end?.error?.actions, ['compactRetry']);
    });
  });

  it('saves a reply while it streams: a reader of the file mid-stream finds the text so far, marked streaming', async () => {
    let finish!: () => void;
    const { n, chat } = await setup([async (res) => {
      res.write(`data: ${JSON.stringify(deltaChunk({ content: 'First part' }))}\n\n`);
      await new Promise<void>((r) => (finish = r));
      res.end(textReply(' and the rest'));
    }]);
    const sent = chat.send('Stream slowly', []);
    const id = chat.current.id;
    const mid = await pollUntil('a save mid-stream', async () => {
      const c = await n.history.load(id);
      const t = c?.turns[1];
      return t?.status === 'streaming' && t.text === 'First part' ? t : undefined;
    }, 10_000, 100);
    assert.ok(mid.owner, 'saved with its owner, so a reload can tell an interrupted reply');
    finish();
    await sent;
    const done = await n.history.load(id);
    assert.equal(done?.turns[1].status, 'done');
    assert.equal(done?.turns[1].text, 'First part and the rest');
    assert.equal(done?.turns[1].owner, undefined);
  });
});
