// The pure half of the LanguageModelChatProvider: model lists (context windows in each server's shape), VS Code's
// messages/tools/options -> chat-completions, tool calls from every recorded provider quirk parsed whole, errors in
// the error card's words, and the usage report's sources. The VS Code half is test/integration/lmProvider.test.ts.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listModelInfo, listModels } from '../../src/core/client';
import { ParleyError, errorFromResponse } from '../../src/core/errors';
import { chatWithFallback } from '../../src/core/fallback';
import { countTokens, errorWords, parseToolCalls, settingsFromModelOptions, toChatMessages, toolChoiceFor, toToolDefinitions, ToolCallFeed, type LmMessage, type LmToolCall } from '../../src/core/lmMapping';
import type { StreamEvent } from '../../src/core/types';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_OUTPUT_TOKENS } from '../../src/core/contextWindow';
import { modelListFrom, tokenLimits } from '../../src/core/modelInfo';
import { buildRequestBody } from '../../src/core/request';
import { emptyTotals, recordFrom, addTo } from '../../src/core/usageLedger';
import { reportMarkdown } from '../../src/core/usageReport';
import { sourceTotalsOf } from '../../src/core/usageLog';
import { clientOptions } from '../support/client';
import { sse, withServer } from '../support/server';
import { pricingOnly } from '../support/pricing';

describe('LM provider: model lists', () => {
  it('reads the context window and capabilities from each server shape', () => {
    const list = modelListFrom({
      object: 'list',
      data: [
        // OpenRouter
        { id: 'openai/gpt-4o', context_length: 128000, architecture: { input_modalities: ['text', 'image'] }, top_provider: { context_length: 128000, max_completion_tokens: 16384 }, supported_parameters: ['tools', 'temperature'] },
        { id: 'x/text-only', context_length: 8192, architecture: { input_modalities: ['text'] }, supported_parameters: ['temperature'] },
        // LM Studio /api/v0/models
        { id: 'qwen2-vl-7b', object: 'model', type: 'vlm', state: 'loaded', max_context_length: 32768, loaded_context_length: 8192, capabilities: ['tool_use'] },
        // vLLM
        { id: 'meta-llama/Llama-3.1-8B', object: 'model', owned_by: 'vllm', max_model_len: 131072 },
        // Groq
        { id: 'llama-3.3-70b-versatile', context_window: 131072, max_completion_tokens: 32768 },
        // Mistral
        { id: 'mistral-small', max_context_length: 32000, capabilities: { function_calling: true, vision: false } },
        // OpenAI: nothing but the id
        { id: 'gpt-4o-mini', object: 'model', owned_by: 'system' },
        { nothing: true },
      ],
    });
    assert.deepEqual(list, [
      { id: 'openai/gpt-4o', contextLength: 128000, maxOutputTokens: 16384, toolCalling: true, imageInput: true },
      { id: 'x/text-only', contextLength: 8192, toolCalling: false, imageInput: false },
      { id: 'qwen2-vl-7b', contextLength: 8192, modelMax: 32768, server: 'lmstudio', loaded: true, toolCalling: true, imageInput: true },
      { id: 'meta-llama/Llama-3.1-8B', contextLength: 131072, server: 'vllm' },
      { id: 'llama-3.3-70b-versatile', contextLength: 131072, maxOutputTokens: 32768 },
      { id: 'mistral-small', contextLength: 32000, toolCalling: true, imageInput: false },
      { id: 'gpt-4o-mini' },
    ]);
    // Ollama's native list and llama.cpp's meta: n_ctx is the window loaded, n_ctx_train only the model's maximum.
    assert.deepEqual(modelListFrom({ models: [{ name: 'llama3.2:latest' }, { id: 'gguf', meta: { n_ctx_train: 4096 } }, { id: 'c2048', meta: { n_ctx: 2048, n_ctx_train: 32768 } }] }),
      [{ id: 'llama3.2:latest' }, { id: 'gguf', modelMax: 4096, server: 'llama.cpp' }, { id: 'c2048', contextLength: 2048, modelMax: 32768, server: 'llama.cpp' }]);
    assert.equal(modelListFrom({ error: 'nope' }), undefined);
  });

  it('token limits: the server, lowered by a smaller setting, else the settings, else the stated defaults; the reply room comes off the input', () => {
    assert.deepEqual(tokenLimits({ contextLength: 128000, maxOutputTokens: 16384 }, { contextWindow: 999999, maxTokens: 10 }), { maxInputTokens: 111616, maxOutputTokens: 16384 });
    assert.deepEqual(tokenLimits({ contextLength: 128000, maxOutputTokens: 16384 }, { contextWindow: 32768 }), { maxInputTokens: 16384, maxOutputTokens: 16384 });
    assert.deepEqual(tokenLimits({}, { contextWindow: 65536, maxTokens: 2000 }), { maxInputTokens: 63536, maxOutputTokens: 2000 });
    assert.deepEqual(tokenLimits({}, {}), { maxInputTokens: DEFAULT_CONTEXT_TOKENS - DEFAULT_OUTPUT_TOKENS, maxOutputTokens: DEFAULT_OUTPUT_TOKENS });
    // A reply limit larger than half the window is capped, so the prompt keeps room.
    assert.deepEqual(tokenLimits({ contextLength: 8192 }, { maxTokens: 100000 }), { maxInputTokens: 4096, maxOutputTokens: 4096 });
  });

  it('listModelInfo reads a real server; listModels still gives the ids', async () => {
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ id: 'a', max_model_len: 4096 }, { id: 'b', context_length: 8192 }] }));
    }, async (s) => {
      assert.deepEqual(await listModelInfo(clientOptions(s)), [{ id: 'a', contextLength: 4096 }, { id: 'b', contextLength: 8192 }]);
      assert.deepEqual(await listModels(clientOptions(s)), ['a', 'b']);
    });
  });
});

describe('LM provider: messages, tools and options', () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]);

  it('text, images as data URLs, tool calls and tool results, in wire order', () => {
    const messages: LmMessage[] = [
      { role: 'system', content: [{ kind: 'text', value: 'Be brief.' }] },
      { role: 'user', content: [{ kind: 'text', value: 'What is ' }, { kind: 'text', value: 'this?' }, { kind: 'data', mimeType: 'image/png', data: png }, { kind: 'data', mimeType: 'cache_control', data: new TextEncoder().encode('ephemeral') }] },
      { role: 'assistant', content: [{ kind: 'toolCall', callId: 'c1', name: 'look', input: { at: 'it' } }, { kind: 'toolCall', callId: 'c2', name: 'noargs', input: {} }] },
      { role: 'user', content: [{ kind: 'toolResult', callId: 'c1', content: [{ kind: 'text', value: 'a ' }, { kind: 'text', value: 'cat' }] }, { kind: 'toolResult', callId: 'c2', content: [{ kind: 'other' }] }, { kind: 'text', value: 'and?' }] },
      { role: 'assistant', content: [{ kind: 'text', value: 'A cat.' }] },
    ];
    assert.deepEqual(toChatMessages(messages), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from(png).toString('base64')}` } }] },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'look', arguments: '{"at":"it"}' } },
        { id: 'c2', type: 'function', function: { name: 'noargs', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'c1', content: 'a cat' },
      { role: 'tool', tool_call_id: 'c2', content: '' },
      { role: 'user', content: 'and?' },
      { role: 'assistant', content: 'A cat.' },
    ]);
    // A user message that holds only tool results adds no empty user message.
    assert.deepEqual(toChatMessages([{ role: 'user', content: [{ kind: 'toolResult', callId: 'x', content: [{ kind: 'text', value: 'r' }] }] }]), [{ role: 'tool', tool_call_id: 'x', content: 'r' }]);
  });

  it('tools, tool_choice for Required, and only valid modelOptions reach the body', () => {
    const tools = [{ name: 'one', description: 'd', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }, { name: 'two', description: '' }];
    const defs = toToolDefinitions(tools);
    assert.deepEqual(defs, [
      { type: 'function', function: { name: 'one', description: 'd', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
      { type: 'function', function: { name: 'two', description: '', parameters: { type: 'object', properties: {} } } },
    ]);
    assert.equal(toToolDefinitions([]), undefined);
    assert.equal(toolChoiceFor(false, tools), undefined);
    assert.equal(toolChoiceFor(true, tools), 'required');
    assert.deepEqual(toolChoiceFor(true, tools.slice(0, 1)), { type: 'function', function: { name: 'one' } });
    const opts = settingsFromModelOptions({ temperature: 0.2, top_p: 0.9, max_tokens: 100, stop: ['x'], seed: 7, model: 'evil', stream: false, messages: [], presence_penalty: 'high', foo: 1 });
    assert.deepEqual(opts, { temperature: 0.2, topP: 0.9, maxTokens: 100, stop: ['x'], seed: 7 });
    const body = buildRequestBody({ model: 'm', stream: true, ...opts, tools: defs, toolChoice: 'required' }, [{ role: 'user', content: 'hi' }]);
    assert.equal(body.model, 'm');
    assert.equal(body.stream, true);
    assert.deepEqual([body.tool_choice, body.seed, body.max_tokens, body.top_p], ['required', 7, 100, 0.9]);
    // tool_choice never goes without tools.
    assert.equal('tool_choice' in buildRequestBody({ model: 'm', stream: true, toolChoice: 'required' }, [{ role: 'user', content: 'hi' }]), false);
    assert.equal('tool_choice' in buildRequestBody({ model: 'm', stream: true, tools: defs, toolChoice: 'required' }, [{ role: 'user', content: 'hi' }], { drop: ['tools'] }), false);
  });

  it('token counts: Parley\'s estimate, images at a flat rate, fast', () => {
    assert.equal(countTokens('hello world'), 3);
    const m: LmMessage = { role: 'user', content: [{ kind: 'text', value: 'hello world' }, { kind: 'data', mimeType: 'image/png', data: new Uint8Array(1_000_000) }] };
    assert.equal(countTokens(m), 4 + 3 + 765);
    const started = performance.now();
    for (let i = 0; i < 1000; i++) countTokens(m);
    assert.ok(performance.now() - started < 1000, 'a megabyte image is not encoded to be counted');
  });
});

describe('LM provider: tool calls from recorded provider streams', () => {
  const fixtures = path.resolve(__dirname, '../../../test/fixtures/providers');
  const files = fs.readdirSync(fixtures).filter((f) => /\.(sse|chunks\.jsonl)$/.test(f) && fs.readFileSync(path.join(fixtures, f), 'utf8').includes('tool_calls'));

  it('has the quirk fixtures', () => {
    for (const f of ['mistral-tool-call-no-index.chunks.jsonl', 'alibaba-qwen-tool-call-empty-id.chunks.jsonl', 'openrouter-tool-call-arguments-null.sse', 'openrouter-novita-tool-call-repeated-id-name.sse', 'openai-parallel-tool-calls.sse', 'openai-tool-call-args-split.sse']) {
      assert.ok(files.includes(f), f);
    }
  });

  for (const file of files) {
    it(`${file}: every call whole, named, with an id and arguments that parse`, async () => {
      const raw = fs.readFileSync(path.join(fixtures, file), 'utf8');
      const body = file.endsWith('.jsonl') ? raw.split('\n').filter((l) => l.trim()).map((l) => `data: ${l}\n\n`).join('') + 'data: [DONE]\n\n' : raw;
      await withServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(body);
      }, async (s) => {
        // The calls as VS Code gets them, each as soon as it is complete: the same as the whole reply's.
        const feed = new ToolCallFeed('p_');
        const early: LmToolCall[] = [];
        const { result } = await chatWithFallback(clientOptions(s), { model: 'm', stream: true }, [{ role: 'user', content: 'go' }], undefined, (e) => early.push(...feed.event(e)));
        const calls = parseToolCalls(result.toolCalls, 'p_');
        assert.deepEqual([...early, ...feed.end()], calls, 'the same calls, in the same order');
        assert.equal(feed.error, undefined);
        assert.ok(calls.length >= 1, 'at least one call');
        const ids = new Set(calls.map((c) => c.callId));
        assert.equal(ids.size, calls.length, 'distinct ids');
        for (const c of calls) {
          assert.ok(c.name && raw.includes(c.name), `a name from the stream: ${c.name}`);
          assert.equal(typeof c.input, 'object');
        }
      });
    });
  }

  it('no arguments is {}; arguments that do not parse throw, naming the tool; a missing id gets one', () => {
    const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });
    assert.deepEqual(parseToolCalls([call('a', 'x', ''), call('', 'y', 'null'), call('c', 'z', ' {"k":1} ')], 'p_'), [
      { callId: 'a', name: 'x', input: {} }, { callId: 'p_1', name: 'y', input: {} }, { callId: 'c', name: 'z', input: { k: 1 } },
    ]);
    assert.throws(() => parseToolCalls([call('a', 'read_file', '{"path": "a.t')], 'p_'), (e: ParleyError) => e.kind === 'protocol' && /read_file/.test(e.message) && /not a JSON object/.test(e.message));
    assert.throws(() => parseToolCalls([call('a', 'arr', '[1]')], 'p_'), /not a JSON object/);
  });
});

describe('LM provider: each tool call handed on once complete', () => {
  const callDelta = (index: number, fn: Record<string, unknown>, id?: string) => ({
    id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] }, finish_reason: null }],
  });

  it('the first call reaches the caller while the server still holds the stream, before the second', async () => {
    // What happened, in order: a call handed on, and the server let go of the stream it held.
    const seen: string[] = [];
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([callDelta(0, { name: 'weather', arguments: '' }, 'call_1'), callDelta(0, { arguments: '{"location": ' }), callDelta(0, { arguments: '"Paris"}' }),
        callDelta(1, { name: 'llm_version', arguments: '' }, 'call_2'), callDelta(1, { arguments: '{' })], { done: false }));
      // Held until the client has read call 2's start, whatever it did with call 1.
      await released;
      res.end(sse([callDelta(1, { arguments: '}' }), { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }]));
    }, async (s) => {
      const feed = new ToolCallFeed('p_');
      const onEvent = (e: StreamEvent) => {
        for (const c of feed.event(e)) seen.push(`call ${c.callId} ${c.name} ${JSON.stringify(c.input)}`);
        if (e.type === 'tool_call' && e.index === 1 && !seen.includes('released')) {
          seen.push('released');
          release();
        }
      };
      const { result } = await chatWithFallback(clientOptions(s), { model: 'm', stream: true }, [{ role: 'user', content: 'go' }], undefined, onEvent);
      assert.equal(result.ended, 'done');
      for (const c of feed.end()) seen.push(`call ${c.callId} ${c.name} ${JSON.stringify(c.input)}`);
    });
    assert.deepEqual(seen, ['call call_1 weather {"location":"Paris"}', 'released', 'call call_2 llm_version {}']);
  });

  const ev = (index: number, args?: string, name?: string, id?: string): StreamEvent => ({ type: 'tool_call', choice: 0, index, id, name, arguments: args });
  const names = (calls: LmToolCall[]) => calls.map((c) => c.name);

  it('waits for a call whose fragments are interleaved with the next one\'s, and goes by first appearance, whatever the index', () => {
    const feed = new ToolCallFeed('p_');
    // By position, as Mistral sends several calls at once: neither is whole when the other starts.
    assert.deepEqual(names(feed.event(ev(4, '{"a":', 'one'))), []);
    assert.deepEqual(names(feed.event(ev(2, '{"b":', 'two'))), []);
    assert.deepEqual(names(feed.event(ev(4, '1}'))), ['one'], 'whole once a later call has begun');
    assert.deepEqual(names(feed.event(ev(2, '2}'))), [], 'the last one may still grow');
    assert.deepEqual(names(feed.event({ type: 'text', choice: 0, text: 'x' })), []);
    assert.deepEqual(feed.event({ type: 'finish', choice: 0, reason: 'tool_calls' }), [{ callId: 'p_1', name: 'two', input: { b: 2 } }], 'a finish completes it');
    assert.deepEqual(feed.end(), [], 'each call once');
    assert.equal(feed.error, undefined);
  });

  it('a long call that is not whole yet is not parsed again for every fragment of the next one', () => {
    const feed = new ToolCallFeed('p_');
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = (...a: Parameters<typeof JSON.parse>) => (parses++, parse(...a));
    try {
      feed.event(ev(0, `{"text": "${'x'.repeat(100_000)}`, 'long'));
      for (let i = 0; i < 1000; i++) feed.event(ev(1, i === 0 ? '{"n": ' : '1', i === 0 ? 'next' : undefined));
      assert.ok(parses <= 2, `${parses} parses of the long call`);
      // A small call is parsed as it grows: whole as soon as its last fragment came.
      const small = new ToolCallFeed('p_');
      small.event(ev(0, '{"a":', 'one'));
      small.event(ev(1, '{', 'two'));
      assert.deepEqual(names(small.event(ev(0, '1}'))), ['one']);
    } finally {
      JSON.parse = parse;
    }
    assert.deepEqual(names(feed.end()).length, 0, 'the long call is broken: nothing goes out, the feed says why');
    assert.ok(feed.error);
  });

  it('other choices are not its; a call with no arguments is {} at the end; a call that is not JSON stops the calls after it', () => {
    const other = new ToolCallFeed('p_');
    assert.deepEqual(other.event({ type: 'tool_call', choice: 1, index: 0, name: 'x', arguments: '{}' }), []);
    assert.deepEqual(other.event({ type: 'finish', choice: 1, reason: 'tool_calls' }), []);
    assert.deepEqual(other.end(), []);

    const plain = new ToolCallFeed('p_');
    plain.event(ev(0, undefined, 'now', 'id0'));
    assert.deepEqual(plain.end(), [{ callId: 'id0', name: 'now', input: {} }]);

    const bad = new ToolCallFeed('p_');
    bad.event(ev(0, '{"path": "a.t', 'read_file'));
    bad.event(ev(1, '{}', 'later'));
    assert.deepEqual(bad.event({ type: 'finish', choice: 0, reason: 'length' }), []);
    assert.deepEqual(bad.end(), []);
    assert.ok(bad.error instanceof ParleyError && bad.error.kind === 'protocol' && /read_file/.test(bad.error.message));
  });

  it('more arguments for a call already handed on are the server\'s error, not a changed call', () => {
    const feed = new ToolCallFeed('p_');
    feed.event(ev(0, '{"a":1}', 'one'));
    assert.deepEqual(names(feed.event(ev(1, '{', 'two'))), ['one']);
    assert.deepEqual(feed.event(ev(0, ' \n')), [], 'whitespace is nothing');
    assert.equal(feed.error, undefined);
    feed.event(ev(0, ',"b":2}'));
    assert.match((feed.error as ParleyError | undefined)?.message ?? '', /more arguments for the tool call "one"/);
    assert.deepEqual(feed.end(), []);
  });
});

describe('LM provider: errors and usage', () => {
  it('errors read like the error card, with the fix, and never the key', () => {
    const key = 'sk-live-SECRET123456';
    const e401 = errorFromResponse(401, 'application/json', JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } }), { url: 'http://h/v1/chat/completions', secrets: [key] });
    const words = errorWords(e401, { model: 'm', url: 'http://h/v1/chat/completions' });
    assert.match(words, /rejected the API key/);
    assert.match(words, /Parley: Set API Key/);
    assert.equal(words.includes(key), false);
    const e404 = errorFromResponse(404, 'application/json', JSON.stringify({ error: { message: 'The model `nope` does not exist' } }), { url: 'http://h/v1/chat/completions', secrets: [] });
    assert.match(errorWords(e404, { model: 'nope', url: 'http://h/v1/chat/completions' }), /model "nope" was not found/);
    const conn = new ParleyError('connection', 'Could not connect to 127.0.0.1:9.');
    assert.match(errorWords(conn, { model: 'm', url: '' }), /Is the server running\?/);
  });

  it('the usage report shows each source, VS Code\'s chat among them', () => {
    const at = Date.now();
    const rec = (source: 'chat' | 'vscode-chat', total: number) => recordFrom({ prompt_tokens: total - 1, completion_tokens: 1, total_tokens: total }, { model: 'm', host: 'h', durationMs: 1, source, at });
    const records = [rec('chat', 10), rec('vscode-chat', 20), rec('vscode-chat', 30)];
    const bySource = sourceTotalsOf([records], undefined);
    assert.deepEqual(bySource['vscode-chat'], addTo(addTo(emptyTotals(), records[1]), records[2]));
    const md = reportMarkdown({}, emptyTotals(), pricingOnly(), at, bySource);
    assert.match(md, /## By source/);
    assert.match(md, /\| VS Code's chat \(vscode\.lm\) \| 2 \| 50 \| 0% \|/);
    assert.match(md, /\| Parley's chat panel \| 1 \| 10 \| 0% \|/);
  });
});
