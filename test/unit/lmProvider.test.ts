// The pure half of the LanguageModelChatProvider: model lists (context windows in each server's shape), VS Code's
// messages/tools/options -> chat-completions, tool calls from every recorded provider quirk parsed whole, errors in
// the error card's words, and the usage report's sources. The VS Code half is test/integration/lmProvider.test.ts.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listModelInfo, listModels } from '../../src/core/client';
import { ParleyError, errorFromResponse } from '../../src/core/errors';
import { chatWithFallback } from '../../src/core/fallback';
import { countTokens, errorWords, parseToolCalls, settingsFromModelOptions, toChatMessages, toolChoiceFor, toToolDefinitions, type LmMessage } from '../../src/core/lmMapping';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_OUTPUT_TOKENS } from '../../src/core/contextWindow';
import { modelListFrom, tokenLimits } from '../../src/core/modelInfo';
import { buildRequestBody } from '../../src/core/request';
import { emptyTotals, recordFrom, addTo } from '../../src/core/usageLedger';
import { reportMarkdown } from '../../src/core/usageReport';
import { sourceTotalsOf } from '../../src/core/usageLog';
import { clientOptions } from '../support/client';
import { withServer } from '../support/server';
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
        const { result } = await chatWithFallback(clientOptions(s), { model: 'm', stream: true }, [{ role: 'user', content: 'go' }], undefined);
        const calls = parseToolCalls(result.toolCalls, 'p_');
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
