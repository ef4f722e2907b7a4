// Parley's own code against a real llama.cpp llama-server (issue 34): tool calls through the server's own --jinja
// template. With tools offered the scripted call comes as a real tool call, which Parley's tool loop runs and answers;
// without tools offered the same reply stays text, never a call.
import * as assert from 'node:assert/strict';
import { chatAndLearn, memoryAdaptationStore } from '../../src/core/adaptations';
import { runToolLoop, type RoundCall, type ToolLoopHost } from '../../src/core/toolLoop';
import type { ChatMessage, StreamEvent, ToolDefinition } from '../../src/core/types';
import { clientOptions, llamaServers } from './support';

/** Parley's read_file tool as offered (src/vscode/tools/fileTools.ts), its descriptions shortened. */
const READ_FILE: ToolDefinition = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Reads a text file in the workspace, whole or a range of lines.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file.' },
        startLine: { type: 'integer', minimum: 1 },
        endLine: { type: 'integer', minimum: 1 },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
};

const QUESTION: ChatMessage[] = [{ role: 'user', content: 'Read the README. #tool' }];
const README = '# Parley\n\nA chat panel.';

/** One turn as the panel runs it (the turn's tool rounds, turn.ts): the tool loop, each request through chatAndLearn, read_file answered. */
async function toolTurn(stream: boolean, tools: ToolDefinition[]) {
  const { single, key } = llamaServers();
  const opts = clientOptions(single, key);
  const store = memoryAdaptationStore();
  const events: StreamEvent[] = [];
  const rounds: { text: string; calls: RoundCall[] }[] = [];
  const host: ToolLoopHost = {
    request: async (messages) => {
      const { result } = await chatAndLearn(store, opts, { model: 'tiny', stream, tools: tools.length ? tools : undefined }, messages, (e) => events.push(e));
      return { result, tokens: result.usage.total_tokens };
    },
    callId: (round, index) => `parley-${round}-${index}`,
    round: (text, calls) => rounds.push({ text, calls }),
    run: async (call) => (call.wire.function.name === 'read_file' ? { status: 'done', content: README } : { status: 'failed', content: 'unknown tool' }),
    stopped: () => false,
  };
  const end = await runToolLoop(QUESTION, host, { maxRounds: 10, maxTurnTokens: 200_000 });
  const shown = events.filter((e) => e.type === 'text').map((e) => e.text).join('');
  return { end, rounds, shown };
}

describe('Parley against llama-server --jinja: tool calls through the real template', function () {
  this.timeout(60_000);

  for (const stream of [true, false]) {
    it(`offered read_file, gets a real call (name and arguments parsed), runs it and gets the answer (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const { expected } = llamaServers();
      const { end, rounds, shown } = await toolTurn(stream, [READ_FILE]);
      assert.equal(end.requests, 2);
      assert.equal(end.guard, undefined);
      assert.equal(rounds.length, 1);
      const [call] = rounds[0].calls;
      assert.equal(rounds[0].calls.length, 1);
      assert.equal(call.id, 'parley-1-0');
      assert.equal(call.wire.function.name, 'read_file');
      assert.deepEqual(JSON.parse(call.wire.function.arguments), { path: 'README.md' });
      assert.ok(call.wire.id, 'the server\'s id goes back with the result');
      assert.equal(rounds[0].text, '', 'no text beside the call');
      assert.equal(end.result.text, expected.answer.text);
      assert.equal(shown, expected.answer.text, 'the reader never sees the call as text');
    });
  }

  it('not offered tools, leaves the same reply as text: never a call', async () => {
    const { expected } = llamaServers();
    const { end, rounds, shown } = await toolTurn(true, []);
    assert.equal(end.requests, 1);
    assert.deepEqual(rounds, []);
    assert.deepEqual(end.result.toolCalls, []);
    assert.equal(end.result.finishReason, 'stop');
    assert.equal(end.result.text, expected.tool.text);
    assert.match(shown, /^<tool_call>\n\{"name": "read_file"/);
  });
});
