// The real llama.cpp llama-server (scripts/llama-server.mjs) with the tiny scripted models (test/support/scriptedModel.mjs),
// over plain HTTP: what the tests built on them rely on, and the recorded bodies in test/fixtures/llama-server/.
//
// PARLEY_LLAMA_RECORD=1 rewrites those recordings from the live server (after a version bump), instead of comparing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLlamaServer } from '../../scripts/llama-server.mjs';
import { pollUntil } from '../support/pollUntil.mjs';
import { writeScriptedModel } from '../support/scriptedModel.mjs';
import { matchesRecording as matchesFixture } from './recordings.mjs';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'llama-server');
const KEY = 'sk-parley-test-key';
const AUTH = { Authorization: `Bearer ${KEY}` };

/** Parley's read_file tool as it offers it (src/vscode/tools/fileTools.ts), descriptions shortened. */
const READ_FILE = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Reads a text file in the workspace, whole or a range of lines.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file.' },
        startLine: { type: 'integer', minimum: 1, description: 'First line to read (1-based).' },
        endLine: { type: 'integer', minimum: 1, description: 'Last line to read (1-based, inclusive).' },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
};

/** A 1x1 PNG as a data URL. */
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/**
 * fetch, sent again when the server closed the kept-alive connection it went on before any answer: llama.cpp's router
 * mode does now and then, without `Connection: close` first (Parley's own GETs do the same: src/core/transport.ts).
 */
async function fetchLive(url, init) {
  for (let tries = 1; ; tries++) {
    try {
      return await fetch(url, init);
    } catch (e) {
      if (tries >= 3 || !/other side closed/.test(e.cause?.message ?? '')) throw e;
    }
  }
}

function post(server, path, body, { signal, headers = AUTH } = {}) {
  return fetchLive(`${server.url}${path}`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal });
}

async function getJson(server, path) {
  const r = await fetchLive(`${server.url}${path}`, { headers: AUTH });
  assert.equal(r.status, 200, `GET ${path}: ${r.status}`);
  return r.json();
}

/** The data payloads of an SSE body, parsed, until [DONE]; `done` says whether [DONE] came. */
function parseSse(text) {
  const events = [];
  let done = false;
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
    if (!data) continue;
    if (data === '[DONE]') done = true;
    else events.push(JSON.parse(data));
  }
  return { events, done };
}

/** What a stream's deltas add up to. */
function joinDeltas(events) {
  const out = { content: '', reasoning: '', toolCalls: [], finish: undefined, usage: undefined };
  for (const e of events) {
    if (e.usage) out.usage = e.usage;
    for (const c of e.choices ?? []) {
      const d = c.delta ?? {};
      if (d.content) out.content += d.content;
      if (d.reasoning_content) out.reasoning += d.reasoning_content;
      for (const t of d.tool_calls ?? []) {
        const call = (out.toolCalls[t.index] ??= { id: undefined, name: '', arguments: '' });
        if (t.id) call.id = t.id;
        if (t.function?.name) call.name += t.function.name;
        if (t.function?.arguments) call.arguments += t.function.arguments;
      }
      if (c.finish_reason) out.finish = c.finish_reason;
    }
  }
  return out;
}

/** Compares a live body with its recording in test/fixtures/llama-server/ (PARLEY_LLAMA_RECORD=1 writes it). */
function matchesRecording(file, text, scrub, parse) {
  matchesFixture(join(FIXTURES, file), text, scrub, parse);
}

/** Replaces the machine's paths and ports in a body with placeholders, so recordings are the same everywhere. */
function scrubber(server, modelsDir) {
  return (s) =>
    s
      .split(server.binary).join('/path/to/llama-server')
      .split(modelsDir).join('/path/to/models')
      .replace(/("--port",\s*")\d+(")/g, '$1PORT$2');
}

describe('llama-server (real, from llama.cpp source) with a scripted model, -c 2048, an API key and --jinja', function () {
  this.timeout(120_000);
  let dir;
  let model;
  let server;
  let scrub;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'parley-llama-'));
    model = writeScriptedModel(join(dir, 'tiny.gguf'));
    server = await startLlamaServer({ model: model.file, ctx: 2048, apiKey: KEY });
    scrub = scrubber(server, dir);
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers the plain script, whole and streamed', async () => {
    const whole = await (await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Hello?' }] })).json();
    assert.equal(whole.choices[0].message.content, model.expected.plain.text);
    assert.equal(whole.choices[0].finish_reason, 'stop');
    assert.equal(whole.model, 'tiny');
    const r = await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Hello?' }], stream: true, stream_options: { include_usage: true } });
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    const { events, done } = parseSse(await r.text());
    const joined = joinDeltas(events);
    assert.ok(done, 'the stream ends with [DONE]');
    assert.equal(joined.content, model.expected.plain.text);
    assert.ok(events.filter((e) => e.choices?.[0]?.delta?.content).length > 3, 'the text comes in several deltas');
    assert.equal(joined.finish, 'stop');
    // The pieces and the end-of-turn token.
    assert.equal(joined.usage.completion_tokens, model.expected.plain.pieces.length + 1);
  });

  it('puts a <think> block in reasoning_content and the rest in content, whole and streamed', async () => {
    const body = { messages: [{ role: 'user', content: 'What is 2 + 2? #think' }] };
    const whole = await (await post(server, '/v1/chat/completions', body)).json();
    assert.equal(whole.choices[0].message.reasoning_content, 'The user asks for 2 + 2. That is 4.\n');
    assert.equal(whole.choices[0].message.content, 'The answer is 4.');
    const text = await (await post(server, '/v1/chat/completions', { ...body, stream: true })).text();
    const joined = joinDeltas(parseSse(text).events);
    assert.equal(joined.reasoning, 'The user asks for 2 + 2. That is 4.\n');
    assert.equal(joined.content, 'The answer is 4.');
    matchesRecording('stream-reasoning-content.sse', text, scrub, (t) => parseSse(t).events);
  });

  it('turns the tool script into tool_calls when tools are offered, whole and streamed, and leaves it as text when not', async () => {
    const body = { messages: [{ role: 'user', content: 'Read the README. #tool' }], tools: [READ_FILE] };
    const whole = await (await post(server, '/v1/chat/completions', body)).json();
    const message = whole.choices[0].message;
    assert.equal(whole.choices[0].finish_reason, 'tool_calls');
    assert.equal(message.tool_calls.length, 1);
    assert.equal(message.tool_calls[0].function.name, 'read_file');
    assert.deepEqual(JSON.parse(message.tool_calls[0].function.arguments), { path: 'README.md' });
    assert.ok(!message.content, `no content beside the call: ${JSON.stringify(message.content)}`);

    const text = await (await post(server, '/v1/chat/completions', { ...body, stream: true })).text();
    const joined = joinDeltas(parseSse(text).events);
    assert.equal(joined.finish, 'tool_calls');
    assert.equal(joined.toolCalls.length, 1);
    assert.equal(joined.toolCalls[0].name, 'read_file');
    assert.deepEqual(JSON.parse(joined.toolCalls[0].arguments), { path: 'README.md' });
    assert.ok(joined.toolCalls[0].id, 'the call has an id');
    matchesRecording('stream-tool-call.sse', text, scrub, (t) => parseSse(t).events);

    const untooled = await (await post(server, '/v1/chat/completions', { messages: body.messages })).json();
    assert.equal(untooled.choices[0].message.content, model.expected.tool.text);
    assert.equal(untooled.choices[0].message.tool_calls, undefined);
  });

  it('answers 500 when the scripted call does not fit the tools offered (the grammar llama.cpp holds a call to)', async () => {
    const other = { type: 'function', function: { name: 'search_text', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } } };
    const r = await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Read the README. #tool' }], tools: [other] });
    assert.equal(r.status, 500);
    const text = await r.text();
    assert.match(JSON.parse(text).error.message, /Unexpected empty grammar stack/);
    matchesRecording('error-500-grammar-empty-stack.json', text, scrub);
  });

  it('answers a tool result with the after-tool script', async () => {
    const calls = [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }];
    const messages = [
      { role: 'user', content: 'Read the README. #tool' },
      { role: 'assistant', content: null, tool_calls: calls },
      { role: 'tool', tool_call_id: 'call_1', content: '# Parley\n\nA chat panel.' },
    ];
    const whole = await (await post(server, '/v1/chat/completions', { messages, tools: [READ_FILE] })).json();
    assert.equal(whole.choices[0].message.content, model.expected.answer.text);
    assert.equal(whole.choices[0].finish_reason, 'stop');
  });

  it('answers the JSON script', async () => {
    const whole = await (await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'As JSON please #json' }] })).json();
    assert.deepEqual(JSON.parse(whole.choices[0].message.content), { answer: 4, unit: 'apples', sure: true });
  });

  it('reports the window it runs (2048) beside the training one (32768) in /v1/models and /props', async () => {
    const models = await getJson(server, '/v1/models');
    assert.equal(models.data.length, 1);
    assert.equal(models.data[0].id, 'tiny');
    assert.equal(models.data[0].meta.n_ctx, 2048);
    assert.equal(models.data[0].meta.n_ctx_train, 32768);
    const props = await getJson(server, '/props');
    assert.equal(props.default_generation_settings.n_ctx, 2048);
    assert.deepEqual(props.modalities, { vision: false, video: false, audio: false });
    matchesRecording('v1-models.json', JSON.stringify(models), scrub);
    matchesRecording('props.json', JSON.stringify(props), scrub);
  });

  it('refuses a request without the right key with 401', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong' }]) {
      const r = await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi' }] }, { headers });
      assert.equal(r.status, 401);
      matchesRecording('error-401-invalid-api-key.json', await r.text(), scrub);
    }
    assert.equal((await fetchLive(`${server.url}/v1/models`)).status, 401);
  });

  it('refuses a prompt longer than the window with 400 exceed_context_size_error, whole and streamed', async () => {
    // One token a word: 2240 words and the template's 8 tokens.
    const messages = [{ role: 'user', content: Array(2240).fill('word').join(' ') }];
    for (const stream of [false, true]) {
      const r = await post(server, '/v1/chat/completions', { messages, stream });
      assert.equal(r.status, 400);
      const text = await r.text();
      const body = JSON.parse(text);
      assert.equal(body.error.type, 'exceed_context_size_error');
      assert.equal(body.error.n_ctx, 2048);
      assert.equal(body.error.n_prompt_tokens, 2248);
      matchesRecording('error-400-exceed-context-size.json', text, scrub);
    }
  });

  it('refuses an image for a model without vision with HTTP 500', async () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: PNG } }] }];
    for (const stream of [false, true]) {
      const r = await post(server, '/v1/chat/completions', { messages, stream });
      assert.equal(r.status, 500);
      const text = await r.text();
      assert.match(JSON.parse(text).error.message, /^image input is not supported/);
      matchesRecording('error-500-image-not-supported.json', text, scrub);
    }
  });

  it('runs the never-ending script until the window is full, then stops with finish_reason length', async () => {
    const text = await (await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Count #forever' }], stream: true, stream_options: { include_usage: true } })).text();
    const joined = joinDeltas(parseSse(text).events);
    assert.equal(joined.finish, 'length');
    assert.ok(joined.content.startsWith(model.expected.forever.text + model.expected.forever.loop));
    assert.equal(joined.usage.prompt_tokens + joined.usage.completion_tokens, 2048);
  });
});

describe('llama-server: Stop (the client closes a never-ending stream) leaves the server idle', function () {
  this.timeout(120_000);
  let dir;
  let server;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'parley-llama-'));
    const model = writeScriptedModel(join(dir, 'tiny.gguf'));
    // A window of 262,144 tokens: the never-ending reply would stream for minutes before filling it.
    server = await startLlamaServer({ model: model.file, ctx: 262_144, apiKey: KEY });
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stops generating once the client hangs up', async () => {
    const processing = async () => (await getJson(server, '/slots')).filter((s) => s.is_processing);
    assert.equal((await processing()).length, 0, 'idle before');
    const abort = new AbortController();
    const r = await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Count #forever' }], stream: true }, { signal: abort.signal });
    const reader = r.body.getReader();
    let received = '';
    const decoder = new TextDecoder();
    while (received.split(' tock').length < 20) {
      const { value, done } = await reader.read();
      assert.ok(!done, `the never-ending stream ended: ${received.slice(-300)}`);
      received += decoder.decode(value, { stream: true });
    }
    assert.equal((await processing()).length, 1, 'a slot is generating while the stream is read');
    abort.abort();
    await pollUntil('no slot generating after the client hung up', async () => (await processing()).length === 0, 30_000, 100);
    const slots = await getJson(server, '/slots');
    assert.ok(slots.every((s) => !s.is_processing));
  });
});

describe('llama-server in router mode (--models-dir) with two models', function () {
  this.timeout(120_000);
  let dir;
  let server;
  let scrub;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'parley-llama-router-'));
    writeScriptedModel(join(dir, 'tiny-a.gguf'), { contextLength: 4096 });
    writeScriptedModel(join(dir, 'tiny-b.gguf'), { contextLength: 8192, scripts: [{ name: 'plain', reply: 'I am model B.' }, { name: 'answer', reply: 'B read it.' }] });
    // No -c: each model runs at its own training window, so the two differ.
    server = await startLlamaServer({ routerModelsDir: dir, apiKey: KEY });
    scrub = scrubber(server, dir);
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers /props without ?model= for the router itself, with n_ctx 0', async () => {
    const r = await fetchLive(`${server.url}/props`, { headers: AUTH });
    const text = await r.text();
    const props = JSON.parse(text);
    assert.equal(props.role, 'router');
    assert.equal(props.default_generation_settings.n_ctx, 0);
    matchesRecording('router-props.json', text, scrub);
  });

  it('lists both models; one not loaded yet has no meta, one loaded has its window', async () => {
    const before = await getJson(server, '/v1/models');
    assert.deepEqual(before.data.map((m) => m.id).sort(), ['tiny-a', 'tiny-b']);
    assert.ok(before.data.every((m) => m.status.value === 'unloaded' && m.meta === undefined));
    assert.ok(before.data.every((m) => JSON.stringify(m.architecture.input_modalities) === '["text"]'));
    matchesRecording('router-v1-models-unloaded.json', JSON.stringify(before), scrub);

    const reply = await (await post(server, '/v1/chat/completions', { model: 'tiny-b', messages: [{ role: 'user', content: 'Who are you?' }] })).json();
    assert.equal(reply.choices[0].message.content, 'I am model B.');
    const after = await getJson(server, '/v1/models');
    const b = after.data.find((m) => m.id === 'tiny-b');
    assert.equal(b.status.value, 'loaded');
    assert.equal(b.meta.n_ctx, 8192);
    assert.equal(after.data.find((m) => m.id === 'tiny-a').meta, undefined);
    matchesRecording('router-v1-models-one-loaded.json', JSON.stringify(after), scrub);
  });

  it("answers /props?model= with each model's own window, loading it", async () => {
    const a = await getJson(server, '/props?model=tiny-a');
    assert.equal(a.default_generation_settings.n_ctx, 4096);
    const b = await getJson(server, '/props?model=tiny-b');
    assert.equal(b.default_generation_settings.n_ctx, 8192);
    const reply = await (await post(server, '/v1/chat/completions', { model: 'tiny-a', messages: [{ role: 'user', content: 'Who are you?' }] })).json();
    assert.equal(reply.choices[0].message.content, 'Hello from the tiny model. It answers every question the same way.');
  });

  it('refuses a request that names no model, or an unknown one, with 400', async () => {
    const none = await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(none.status, 400);
    matchesRecording('router-error-400-no-model.json', await none.text(), scrub);
    const unknown = await post(server, '/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(unknown.status, 400);
    matchesRecording('router-error-400-unknown-model.json', await unknown.text(), scrub);
  });
});
