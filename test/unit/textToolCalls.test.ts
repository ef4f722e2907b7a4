// Tool calls a model writes as text (Hermes/Qwen <tool_call>, Llama 3.x's bare JSON, Mistral's [TOOL_CALLS]), read
// from real SSE bytes of a local server as real calls when tools were offered: the tags never reach the text, not even
// while they stream, and nothing is read as a call when tools were not offered or the name is not one of them.
import * as assert from 'node:assert/strict';
import { streamChat } from '../../src/core/client';
import { parseTextToolCalls, TextCallFilter } from '../../src/core/textToolCalls';
import type { ChatResult, StreamEvent, ToolDefinition } from '../../src/core/types';
import { CHAT_BODY, clientOptions, deltaChunk } from '../support/client';
import { allWays, sse, wayLabel, withServer, writeWay } from '../support/server';

const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
  { type: 'function', function: { name: 'list_directory', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];
const NAMES = new Set(TOOLS.map((t) => t.function.name));

/** The reply as a model streams it: a few characters per chunk, then stop and usage. */
function streamedText(text: string, extra: Array<Record<string, unknown>> = []): string {
  const chunks: object[] = [];
  for (let i = 0; i < text.length; i += 3) chunks.push(deltaChunk({ content: text.slice(i, i + 3) }));
  return sse([...extra.map((d) => deltaChunk(d)), ...chunks, deltaChunk({}, 'stop'), { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 } }]);
}

/** Streams `body` every way (whole, byte by byte, random splits) with or without tools; the same result each way. */
async function everyWay(body: string, tools: ToolDefinition[] | false = TOOLS): Promise<{ events: StreamEvent[]; result: ChatResult }> {
  let first: { events: StreamEvent[]; result: ChatResult } | undefined;
  for (const way of allWays(34)) {
    const got = await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await writeWay(res, body, way);
    }, async (s) => {
      const stream = streamChat(clientOptions(s), { ...CHAT_BODY, ...(tools ? { tools } : {}) });
      const events: StreamEvent[] = [];
      for await (const e of stream) events.push(e);
      return { events, result: await stream.result };
    });
    if (!first) first = got;
    else assert.deepEqual(got.result, first.result, `${wayLabel(way)} differs from whole`);
    // What the reader saw as it streamed is exactly the final text: nothing shown is ever taken back.
    const shown = got.events.filter((e) => e.type === 'text').map((e) => e.text).join('');
    assert.equal(shown, got.result.text, `${wayLabel(way)}: streamed text`);
  }
  return first!;
}

const calls = (r: ChatResult) => r.toolCalls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) as unknown }));

describe('tool calls written as text', function () {
  this.timeout(20_000);

  it('Hermes / Qwen: <tool_call> after some text is a call, and the text before it is the reply', async () => {
    const { result, events } = await everyWay(streamedText('I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>'));
    assert.equal(result.text, 'I will read it.\n');
    assert.deepEqual(calls(result), [{ id: '', name: 'read_file', args: { path: 'a.txt' } }]);
    assert.equal(events.filter((e) => e.type === 'tool_call').length, 1);
    assert.equal(result.finishReason, 'stop', 'the server\'s own finish reason is kept');
  });

  it('Hermes / Qwen: several calls, the last one unclosed; text after the calls is dropped (as vLLM does)', async () => {
    const { result } = await everyWay(streamedText('<tool_call>{"name":"list_directory","arguments":{}}</tool_call>\n<tool_call>{"name":"read_file","arguments":{"path":"b.txt"}}</tool_call>\n<tool_call>\n{"name": "read_file", "arguments": "{\\"path\\": \\"c.txt\\"}"}'));
    assert.equal(result.text, '');
    assert.deepEqual(calls(result).map((c) => [c.name, c.args]), [['list_directory', {}], ['read_file', { path: 'b.txt' }], ['read_file', { path: 'c.txt' }]]);
    const after = await everyWay(streamedText('<tool_call>{"name":"read_file","arguments":{"path":"a.txt"}}</tool_call>\n<tool_response>made up</tool_response>'));
    assert.equal(after.result.text, '');
    assert.deepEqual(calls(after.result).map((c) => c.name), ['read_file']);
  });

  it('Llama 3.x: a reply that is only {"name", "parameters"} (or with "type": "function", <|python_tag|>, several joined by ;)', async () => {
    const plain = await everyWay(streamedText('{"name": "read_file", "parameters": {"path": "a.txt"}}'));
    assert.equal(plain.result.text, '');
    assert.deepEqual(calls(plain.result), [{ id: '', name: 'read_file', args: { path: 'a.txt' } }]);
    const typed = await everyWay(streamedText('\n\n<|python_tag|>{"type": "function", "name": "list_directory", "parameters": {"path": "."}}; {"name": "read_file", "arguments": {"path": "b.txt"}}'));
    assert.equal(typed.result.text, '');
    assert.deepEqual(calls(typed.result).map((c) => [c.name, c.args]), [['list_directory', { path: '.' }], ['read_file', { path: 'b.txt' }]]);
  });

  it('Mistral: [TOOL_CALLS] with a JSON list (before tokenizer v11) and as name[ARGS]{…} or name{…} (from v11)', async () => {
    const list = await everyWay(streamedText('Sure.[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.txt"}}, {"name": "list_directory", "arguments": {}}]'));
    assert.equal(list.result.text, 'Sure.');
    assert.deepEqual(calls(list.result).map((c) => [c.name, c.args]), [['read_file', { path: 'a.txt' }], ['list_directory', {}]]);
    const v11 = await everyWay(streamedText('[TOOL_CALLS]read_file[ARGS]{"path": "a.txt"}[TOOL_CALLS]list_directory{"path": "src"}'));
    assert.equal(v11.result.text, '');
    assert.deepEqual(calls(v11.result).map((c) => [c.name, c.args]), [['read_file', { path: 'a.txt' }], ['list_directory', { path: 'src' }]]);
  });

  it('after a <think> block, the call is still read, and the reasoning kept', async () => {
    const { result } = await everyWay(streamedText('<think>The user wants a.txt.</think>\n\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>'));
    assert.equal(result.reasoning, 'The user wants a.txt.');
    assert.equal(result.text, '');
    assert.deepEqual(calls(result).map((c) => c.name), ['read_file']);
  });

  it('without tools offered nothing is read as a call, and the text streams as it is', async () => {
    const text = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>';
    const { result } = await everyWay(streamedText(text), false);
    assert.equal(result.text, text);
    assert.deepEqual(result.toolCalls, []);
    const json = '{"name": "read_file", "parameters": {"path": "a.txt"}}';
    assert.equal((await everyWay(streamedText(json), false)).result.text, json);
  });

  it('a tool that was not offered, a JSON answer with more than a call, or broken JSON stays text, shown whole', async () => {
    for (const text of [
      '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>',
      '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}, {"name": "rm", "arguments": {}}]',
      '{"name": "read_file", "description": "Reads a file", "parameters": {"path": "a.txt"}}',
      '{"name": "read_file", "parameters": "not an object"}',
      '<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>',
      '{"answer": 42, "name": "read_file"}',
      'Use <tool_' + 'call> tags, or write [TOOL_CALLS] yourself.',
      'Write it like this:\n\n```xml\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>\n```\n',
      'Mistral writes `[TOOL_CALLS][{"name": "read_file", "arguments": {}}]` before its calls.',
      'The tag is <tool_',
    ]) {
      const { result } = await everyWay(streamedText(text));
      assert.equal(result.text, text, text);
      assert.deepEqual(result.toolCalls, [], text);
    }
  });

  it('real tool_calls win: a tag in the text beside them stays text', async () => {
    const text = '<tool_call>{"name": "read_file", "arguments": {"path": "x"}}</tool_call>';
    const { result } = await everyWay(streamedText(text, [{ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'list_directory', arguments: '{}' } }] }]));
    assert.equal(result.text, text);
    assert.deepEqual(calls(result), [{ id: 'call_1', name: 'list_directory', args: {} }]);
  });

  it('a client without the reader (ClientOptions.textToolCalls unset) leaves such text as text', async () => {
    const text = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>';
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(streamedText(text));
    }, async (s) => {
      const stream = streamChat(clientOptions(s, { textToolCalls: undefined }), { ...CHAT_BODY, tools: TOOLS });
      for await (const e of stream) void e;
      const result = await stream.result;
      assert.equal(result.text, text);
      assert.deepEqual(result.toolCalls, []);
    });
  });

  it('one JSON completion (stream: false) is read the same way', async () => {
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Reading.<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>' }, finish_reason: 'stop' }] }));
    }, async (s) => {
      const stream = streamChat(clientOptions(s), { ...CHAT_BODY, stream: false, tools: TOOLS });
      for await (const e of stream) void e;
      const result = await stream.result;
      assert.equal(result.text, 'Reading.');
      assert.deepEqual(calls(result).map((c) => c.name), ['read_file']);
    });
  });
});

describe('the text call filter, chunk by chunk', () => {
  /** What each chunk lets out, fed in order, then what the end gives. */
  function run(chunks: string[]): { shown: string[]; end: { text: string; calls: string[] } } {
    const f = new TextCallFilter(NAMES);
    const shown = chunks.map((c) => f.feed(c));
    const end = f.end(true);
    return { shown, end: { text: end.text, calls: end.calls.map((c) => c.function.name) } };
  }

  it('holds back only what could start a call, and lets ordinary text through at once', () => {
    assert.deepEqual(run(['Hello', ' world. ', '<', 'tool', '_call>', '{"name":"read_file"}', '</tool_call>']), {
      shown: ['Hello', ' world. ', '', '', '', '', ''], end: { text: '', calls: ['read_file'] },
    });
    // A `<` or `[` that leads to no tag is let out as soon as that is clear.
    assert.deepEqual(run(['a <', 'b> and [T', 'ODO]']).shown, ['a ', '<b> and ', '[TODO]']);
    // A JSON reply is held only while it could still be a call to an offered tool.
    assert.deepEqual(run(['{"na', 'me": "weather", "x": 1}']).shown, ['', '{"name": "weather", "x": 1}']);
    assert.deepEqual(run(['{"answer"', ': 42}']).shown, ['{"answer"', ': 42}']);
    assert.deepEqual(run(['  {', '"name": "read_', 'file", "parameters": {}}']), { shown: ['', '', ''], end: { text: '', calls: ['read_file'] } });
    // Not a call in the end: everything held comes out whole.
    assert.deepEqual(run(['[TOOL_CALLS]', 'nothing']), { shown: ['', ''], end: { text: '[TOOL_CALLS]nothing', calls: [] } });
  });

  it('parses only calls to offered tools', () => {
    assert.equal(parseTextToolCalls('<tool_call>{"name": "other", "arguments": {}}</tool_call>', NAMES), undefined);
    assert.equal(parseTextToolCalls('{"name": "read_file", "type": "builtin", "parameters": {}}', NAMES), undefined);
    assert.deepEqual(parseTextToolCalls('<tool_call>{"name": "read_file"}</tool_call>', NAMES), [{ id: '', type: 'function', function: { name: 'read_file', arguments: '{}' } }]);
  });
});
