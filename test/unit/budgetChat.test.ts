// Spend budgets in the chat, in plain Node (src/vscode/budgetGuard.ts with the real ChatController and turn): the
// turn's requests carry the conversation's id, and the pass resumes a reply stopped between tool rounds from its steps
// instead of repeating them (the requester blocks as Requester.run does for a budget error; the check itself is
// test/unit/budgetGuard.test.ts). Then with the real guard over a real usage store (issue 37): a stream stopped once
// it crosses a blocking limit, its text kept and counted, and the thresholds a reply crossed said right after it.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { BudgetLimit } from '../../src/core/budgetSettings';
import { ParleyError } from '../../src/core/errors';
import { estimatePromptTokens, estimateTokens } from '../../src/core/tokenEstimate';
import type { ChatResult, ToolDefinition } from '../../src/core/types';
import { BudgetGuard, sendOnceAnyway } from '../../src/vscode/budgetGuard';
import type { Toolbox } from '../../src/vscode/toolbox';
import { UsageStore } from '../../src/vscode/usageStore';
import { deltaChunk } from '../support/client';
import { nodeChat, type NodeChat } from '../support/nodeChat';
import { sse, startTestServer, writeSlowly, type Handler, type SlowCount, type TestServer } from '../support/server';

const USAGE = { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } };
const textReply = (text: string) => sse([deltaChunk({ content: text }), deltaChunk({}, 'stop'), USAGE]);
const callReply = (name: string, args: string) =>
  sse([deltaChunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name, arguments: args } }] }), deltaChunk({}, 'tool_calls'), USAGE]);

const blocked = (): ChatResult => ({
  text: '', reasoning: '', refusal: '', toolCalls: [], finishReason: null, choices: [], sawDone: false, ended: 'error',
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated: true },
  error: new ParleyError('budget', 'Not sent: this request would cross your daily spend limit ($1.00, block).'),
});

const definition: ToolDefinition = { type: 'function', function: { name: 'look', description: 'look', parameters: { type: 'object', properties: {} } } };
const box: Toolbox = () => ({ tools: [{ definition, policy: 'read', source: 'builtin', summary: () => '', run: async () => 'looked: 42' }], settings: { enabled: true, askBeforeReading: false, maxRounds: 10, maxTurnTokens: 200_000 } });

describe('Send once anyway in the chat (plain Node)', function () {
  this.timeout(20_000);
  let s: TestServer;
  let n: NodeChat;
  const replies: string[] = [];
  const passes = new Set<string>();
  const keys: Array<string | undefined> = [];

  /** Blocks the `nth` request (and every later one) unless the conversation has a pass, as Requester.run does. */
  function blockFrom(nth: number): void {
    const run = n.requester.run.bind(n.requester);
    let count = 0;
    n.requester.run = async (t, opts) => {
      keys.push(opts.budgetKey);
      if (++count >= nth && !(opts.budgetKey !== undefined && passes.delete(opts.budgetKey))) return { result: blocked(), target: t, dropped: [], durationMs: 0 };
      return run(t, opts);
    };
  }

  beforeEach(async () => {
    replies.length = 0;
    passes.clear();
    keys.length = 0;
    s = await startTestServer((req, res) => {
      if (req.path === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model' }] }));
      }
      if (req.path !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end('{"error":{"message":"not found"}}');
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(replies.shift() ?? textReply('unscripted'));
    });
    n = nodeChat(s.url, { toolbox: box });
  });
  afterEach(async () => {
    n.dispose();
    await s.close();
  });

  const chats = () => s.requests.filter((r) => r.path === '/v1/chat/completions');
  const budget = { allowOnce: (k: string) => void passes.add(k) };

  it('blocked between tool rounds: the pass continues from the steps, sending exactly one request with the tool result', async () => {
    replies.push(callReply('look', '{}'), textReply('The answer is 42.'));
    blockFrom(2);
    await n.chat.send('Look it up', []);
    const stopped = n.chat.current.turns.at(-1);
    assert.equal(stopped?.error?.kind, 'budget');
    assert.equal(stopped?.steps?.length, 1, 'the round already paid for is kept');
    assert.equal(chats().length, 1);
    assert.deepEqual(keys, [n.chat.current.id, n.chat.current.id], 'each request carries the conversation');

    await sendOnceAnyway(n.chat, budget);
    assert.equal(chats().length, 2, 'exactly one more request');
    const messages = chats()[1].json.messages as Array<{ role: string; content: unknown }>;
    assert.ok(messages.some((m) => m.role === 'tool' && m.content === 'looked: 42'), 'the tool result goes with it');
    assert.equal(n.chat.current.turns.at(-1)?.text, 'The answer is 42.');
    assert.equal(passes.size, 0, 'the pass is used up');
  });

  it('blocked before the first request: the pass asks the question again, once; a card of another kind gives no pass', async () => {
    replies.push(textReply('Hello.'));
    blockFrom(1);
    await n.chat.send('Hi', []);
    assert.equal(chats().length, 0, 'nothing was sent');
    await sendOnceAnyway(n.chat, budget);
    assert.equal(chats().length, 1);
    assert.equal((chats()[0].json.messages as Array<{ content: unknown }>).at(-1)?.content, 'Hi');
    assert.deepEqual(n.chat.current.turns.map((t) => [t.role, t.text]), [['user', 'Hi'], ['assistant', 'Hello.']]);

    // The last reply is fine now: the button (say, on an old card) gives no pass and sends nothing.
    await sendOnceAnyway(n.chat, budget);
    assert.equal(passes.size, 0);
    assert.equal(chats().length, 1);
  });
});

describe('a spend limit crossed while a reply streams, in the chat (plain Node, the real guard and stream)', function () {
  this.timeout(30_000);
  /** Five tokens as Parley estimates them (20 characters, 4 words): the running cost grows 5 a chunk. */
  const WORDS = 'word word word word ';
  let s: TestServer;
  let n: NodeChat;
  let usage: UsageStore;
  let guard: BudgetGuard;
  let dir: string;
  const handlers: Handler[] = [];
  const counts: SlowCount[] = [];

  /** A reply of `chunks` chunks of WORDS, streamed slowly (the server notes when the client closed it). */
  const slow = (chunks: number): Handler => (_req, res) => {
    const count: SlowCount = { written: 0 };
    counts.push(count);
    return writeSlowly(res, Array.from({ length: chunks }, () => deltaChunk({ content: WORDS })), [deltaChunk({}, 'stop')], count);
  };
  const whole = (body: string): Handler => (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(body);
  };
  const withUsage = (total: number) => whole(sse([deltaChunk({ content: 'Hi.' }), deltaChunk({}, 'stop'), { ...USAGE, usage: { prompt_tokens: total - 4, completion_tokens: 4, total_tokens: total } }]));

  async function start(budget: BudgetLimit[], toolbox?: Toolbox): Promise<void> {
    s = await startTestServer((req, res) => {
      if (req.path === '/v1/chat/completions') return (handlers.shift() ?? whole(textReply('unscripted')))(req, res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model' }] }));
    });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-budget-stream-'));
    const kept = new Map<string, unknown>();
    const memento = {
      keys: () => [...kept.keys()],
      get: <T>(key: string, fallback?: T) => (kept.has(key) ? kept.get(key) : fallback) as T,
      update: async (key: string, value: unknown) => void kept.set(key, value),
    };
    usage = new UsageStore({ fsPath: dir } as vscode.Uri, memento);
    guard = new BudgetGuard(usage, memento);
    n = nodeChat(s.url, { toolbox, settings: { budget, maxTokens: 50 }, budget: { guard, usage } });
  }

  beforeEach(() => {
    handlers.length = 0;
    counts.length = 0;
  });
  afterEach(async () => {
    n.dispose();
    usage.dispose();
    await s.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const chats = () => s.requests.filter((r) => r.path === '/v1/chat/completions');
  const tokens = (amount: number, action: 'warn' | 'block' = 'block'): BudgetLimit => ({ period: 'day', unit: 'tokens', amount, action, source: 'user' });
  /** The chunk whose cost first crosses what is left, as the guard weighs it: the prompt estimate plus 5 tokens a chunk. */
  const crossingChunk = (left: number, prompt: number) => Math.floor((left - prompt) / 5) + 1;

  it('stops the stream at the crossing: the server sees the close, the text so far is kept and counted, the card offers Send once anyway', async () => {
    await start([tokens(400)]);
    handlers.push(slow(1000));
    await n.chat.send('Tell me a long story', []);
    const sent = chats()[0];
    const prompt = estimatePromptTokens(sent.json.messages);
    const crossing = crossingChunk(400, prompt);
    const turn = n.chat.current.turns.at(-1);
    assert.equal(turn?.status, 'stopped');
    assert.equal(turn?.error?.kind, 'budget');
    assert.match(turn?.error?.title ?? '', /^Stopped: this reply crossed your daily token limit \(400 tokens, block\) while it streamed\. The text so far is kept and counted; the limit resets at midnight tonight \(local time\)\.$/);
    assert.deepEqual(turn?.error?.actions, ['sendOnceAnyway', 'openBudgetSettings']);
    const kept = (turn?.text.length ?? 0) / WORDS.length;
    assert.equal(turn?.text, WORDS.repeat(kept));
    assert.ok(kept >= crossing, `the text up to the crossing chunk (${crossing}) is kept: ${kept} chunks`);
    // The server saw the connection close a few chunks after the crossing, not after its 1,000.
    assert.equal(sent.clientClosedEarly, true);
    const closedAfter = counts[0].closedAfter ?? Infinity;
    assert.ok(closedAfter >= kept && closedAfter <= crossing + 25, `closed after ${closedAfter} chunks written; the crossing was chunk ${crossing}`);
    // Counted as a Stop is: the prompt's estimate and the text kept.
    const counted = n.requester.records.at(-1);
    assert.deepEqual([counted?.estimated, counted?.total], [true, prompt + 5 * kept]);
    const ended = n.posted.filter((m) => m.type === 'turnEnd').at(-1);
    assert.deepEqual(ended?.type === 'turnEnd' ? [ended.turn.status, ended.turn.error?.kind] : [], ['stopped', 'budget']);

    // The reader's pass continues the reply from its text, and covers that request whole (750 tokens past the limit).
    handlers.push(slow(150));
    await sendOnceAnyway(n.chat, guard);
    assert.equal(chats().length, 2);
    const messages = chats()[1].json.messages as Array<{ role: string; content: unknown }>;
    assert.deepEqual(messages.slice(-2).map((m) => m.role), ['assistant', 'user']);
    assert.equal(messages.at(-2)?.content, turn?.text, 'the text kept goes with it');
    assert.match(String(messages.at(-1)?.content), /^Continue exactly where you stopped/);
    assert.equal(chats()[1].clientClosedEarly, false);
    assert.equal(n.chat.current.turns.at(-1)?.status, 'done');
    assert.equal(n.chat.current.turns.at(-1)?.text, WORDS.repeat(150));

    // The pass was for that request: the next is not sent.
    await n.chat.send('More', []);
    assert.equal(chats().length, 2);
    assert.deepEqual([n.chat.current.turns.at(-1)?.status, n.chat.current.turns.at(-1)?.error?.kind], ['error', 'budget']);
  });

  it('stops a tool loop\'s later request as it streams: the round already run stays, the partial text too', async () => {
    await start([tokens(600)], box);
    handlers.push(whole(callReply('look', '{}')), slow(1000));
    await n.chat.send('Look it up, then tell me a long story', []);
    const turn = n.chat.current.turns.at(-1);
    assert.deepEqual([turn?.status, turn?.error?.kind, turn?.steps?.length, turn?.requests], ['stopped', 'budget', 1, 2]);
    const second = chats()[1];
    assert.ok((second.json.messages as Array<{ role: string }>).some((m) => m.role === 'tool'));
    // The first request counted 34 tokens (the server's usage); the tools' definitions count in the prompt.
    const crossing = crossingChunk(600 - 34, estimatePromptTokens(second.json.messages) + estimateTokens(JSON.stringify(second.json.tools)));
    const kept = (turn?.text.length ?? 0) / WORDS.length;
    assert.ok(kept >= crossing, `${kept} chunks kept; the crossing was chunk ${crossing}`);
    assert.equal(second.clientClosedEarly, true);
    assert.ok((counts[0].closedAfter ?? Infinity) <= crossing + 25, `closed after ${counts[0].closedAfter}; the crossing was chunk ${crossing}`);
    assert.deepEqual(n.requester.records.map((r) => r.estimated), [false, true]);
  });

  it('says the thresholds a reply crossed right after it, once each', async () => {
    await start([tokens(100, 'warn')]);
    const notices = () => n.posted.flatMap((m) => (m.type === 'notice' ? [m.text] : []));
    handlers.push(withUsage(60), withUsage(30), withUsage(5));
    await n.chat.send('One', []);
    assert.deepEqual(notices(), ['50 % of your daily token limit (100 tokens, warn) is spent (60 tokens). It resets at midnight tonight (local time).']);
    await n.chat.send('Two', []);
    assert.equal(notices().length, 2);
    assert.match(notices()[1], /^80 % of your daily token limit \(100 tokens, warn\) is spent \(90 tokens\)/);
    await n.chat.send('Three', []);
    assert.equal(notices().length, 2, 'nothing new crossed; none said again at the check before it');
    assert.equal(chats().length, 3, 'a warn limit stops nothing');
  });
});
