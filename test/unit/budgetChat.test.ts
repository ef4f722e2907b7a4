// "Send once anyway" in the chat, in plain Node (src/vscode/budgetGuard.ts with the real ChatController and turn): the
// turn's requests carry the conversation's id, and the pass resumes a reply stopped between tool rounds from its steps
// instead of repeating them. The requester blocks as Requester.run does for a budget error (the check itself is
// test/unit/budgetGuard.test.ts).
import * as assert from 'node:assert/strict';
import { ParleyError } from '../../src/core/errors';
import type { ChatResult, ToolDefinition } from '../../src/core/types';
import { sendOnceAnyway } from '../../src/vscode/budgetGuard';
import type { Toolbox } from '../../src/vscode/toolbox';
import { deltaChunk } from '../support/client';
import { nodeChat, type NodeChat } from '../support/nodeChat';
import { sse, startTestServer, type TestServer } from '../support/server';

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
