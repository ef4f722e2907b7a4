// The Responses API (issue 39): a chat request translated to POST …/responses, its recorded event streams read back into
// chat events (whole, byte by byte and split at random points), the refusals that send a model there, and the switch
// learnt once and remembered per origin and model. test/fixtures/responses/SOURCES.md says where each fixture comes from.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chatAndLearn, memoryAdaptationStore } from '../../src/core/adaptations';
import type { ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import { errorFromResponse } from '../../src/core/errors';
import { chatWithFallback } from '../../src/core/fallback';
import type { RequestSettings } from '../../src/core/request';
import { refusesChat, responsesApi, responsesUrl, toResponsesBody } from '../../src/core/responses';
import type { ChatMessage, ChatResult, StreamEvent, ToolDefinition } from '../../src/core/types';
import { allWays, startTestServer, wayLabel, writeWay, type TestServer, type Way } from '../support/server';
import { repoRoot } from '../support/repoRoot';

const DIR = path.resolve(repoRoot(), 'test/fixtures/responses');
const fixture = (name: string) => fs.readFileSync(path.join(DIR, name), 'utf8');
const seedFor = (key: string) => createHash('sha256').update(key).digest().readUInt32LE(0) || 1;

const TOOLS: ToolDefinition[] = [{ type: 'function', function: { name: 'get_capital', description: 'Capital of a country', parameters: { type: 'object', properties: { country: { type: 'string' } }, required: ['country'] } } }];
const ASK: ChatMessage[] = [{ role: 'user', content: 'What is the capital of PotatoLand?' }];

function options(server: TestServer, extra: Partial<ClientOptions> = {}): ClientOptions {
  return { endpoint: resolveEndpoint(server.origin), maxRetries: 0, requestTimeoutMs: 5_000, responses: () => responsesApi, ...extra };
}

/** Runs one request through the fallback loop, collecting its events. */
async function run(opts: ClientOptions, settings: RequestSettings, messages = ASK): Promise<{ result: ChatResult; events: StreamEvent[] }> {
  const events: StreamEvent[] = [];
  const { result } = await chatWithFallback(opts, settings, messages, undefined, (e) => events.push(e));
  return { result, events };
}

const joined = (events: StreamEvent[], type: 'text' | 'reasoning') => events.map((e) => (e.type === type ? e.text : '')).join('');

/** What the recording's own `response.completed` says the reply was: its text and its summary paragraphs. */
function recordedOutput(sse: string): { text: string; reasoning: string } {
  const last = sse.trim().split('\n').filter((l) => l.startsWith('data: ')).pop() as string;
  const output = (JSON.parse(last.slice(6)) as { response: { output: Array<{ type: string; content?: Array<{ text: string }>; summary?: Array<{ text: string }> }> } }).response.output;
  return {
    text: output.filter((o) => o.type === 'message').flatMap((o) => o.content ?? []).map((c) => c.text).join(''),
    reasoning: output.flatMap((o) => o.summary ?? []).map((s) => s.text).join('\n\n'),
  };
}

describe('Responses API: a chat request translated', () => {
  it('messages to input items, tools flat, JSON mode to text.format, max_output_tokens, reasoning, store: false', () => {
    const chat = {
      model: 'gpt-5-codex', stream: true, stream_options: { include_usage: true }, temperature: 0.2, max_tokens: 1, stop: ['x'], seed: 7,
      response_format: { type: 'json_object' }, reasoning_effort: 'high', parallel_tool_calls: false,
      tools: TOOLS, tool_choice: { type: 'function', function: { name: 'get_capital' } },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', content: 'Looking.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_capital', arguments: '{"country":"PotatoLand"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'Potato City' },
        { role: 'system', content: 'Summary so far.' },
      ],
    };
    assert.deepEqual(toResponsesBody(chat), {
      model: 'gpt-5-codex', stream: true, temperature: 0.2, parallel_tool_calls: false,
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }] },
        { role: 'assistant', content: 'Looking.' },
        { type: 'function_call', call_id: 'call_1', name: 'get_capital', arguments: '{"country":"PotatoLand"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'Potato City' },
        { role: 'system', content: 'Summary so far.' },
      ],
      // OpenAI refuses fewer than 16 (Test Connection asks for 1).
      max_output_tokens: 16,
      text: { format: { type: 'json_object' } },
      reasoning: { summary: 'auto', effort: 'high' },
      // Not strict (as on chat completions), unless the tool says so: the Responses API would make every property required.
      tools: [{ type: 'function', strict: false, ...TOOLS[0].function }],
      tool_choice: { type: 'function', name: 'get_capital' },
      store: false,
    });
    const strict = toResponsesBody({ model: 'm', messages: [], tools: [{ type: 'function', function: { ...TOOLS[0].function, strict: true } }], verbosity: 'low', reasoning_effort: 'low' }, { drop: ['reasoning.summary'] });
    assert.deepEqual([strict.tools, strict.text, strict.reasoning], [[{ type: 'function', strict: true, ...TOOLS[0].function }], { verbosity: 'low' }, { effort: 'low' }],
      "a tool's own strict kept; verbosity is text.verbosity; a refused summary is not asked for");
  });

  it('a json_schema format flattened; no reasoning asked for without an effort; a profile\'s extra fields kept', () => {
    const body = toResponsesBody({
      model: 'm', stream: false, max_completion_tokens: 500, include: ['reasoning.encrypted_content'],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.deepEqual(body, {
      model: 'm', stream: false, include: ['reasoning.encrypted_content'], input: [{ role: 'user', content: 'hi' }], max_output_tokens: 500,
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } }, store: false,
    });
  });

  it('the URL is the chat URL\'s sibling, the query (Azure\'s api-version) kept', () => {
    assert.equal(responsesUrl(resolveEndpoint('https://api.openai.com')), 'https://api.openai.com/v1/responses');
    assert.equal(responsesUrl(resolveEndpoint('https://x.openai.azure.com/openai/v1?api-version=preview')), 'https://x.openai.azure.com/openai/v1/responses?api-version=preview');
    assert.equal(responsesUrl(resolveEndpoint('http://127.0.0.1:4000/api/v1/chat/completions')), 'http://127.0.0.1:4000/api/v1/responses');
  });
});

describe('Responses API: the refusals that say a model is served there only', () => {
  const ctx = { url: 'https://api.example.com/v1/chat/completions', model: 'gpt-5.3-codex' };
  const cases: Array<[string, number]> = [
    ['copilot-error-400-unsupported-api-for-model.json', 400],
    ['openai-error-404-only-responses.json', 404],
    ['openai-error-404-not-a-chat-model.json', 404],
    ['azure-error-400-operation-not-supported.json', 400],
    ['sub2api-error-400-legacy-protocol.json', 400],
    ['openai-error-400-tools-effort-use-responses.json', 400],
    ['openai-error-400-tools-effort-please-use.json', 400],
  ];
  for (const [file, status] of cases) {
    it(`${file} (HTTP ${status}) says so`, () => {
      assert.equal(refusesChat(errorFromResponse(status, 'application/json', fixture(file), ctx)), true);
    });
  }

  it('a refused parameter, a rejected key or the same words inside a reply do not', () => {
    const param = fs.readFileSync(path.resolve(repoRoot(), 'test/fixtures/providers/openai-error-400-unsupported-parameter.json'), 'utf8');
    assert.equal(refusesChat(errorFromResponse(400, 'application/json', param, ctx)), false);
    assert.equal(refusesChat(errorFromResponse(401, 'application/json', '{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}', ctx)), false);
    assert.equal(refusesChat(errorFromResponse(200, 'application/json', fixture('copilot-error-400-unsupported-api-for-model.json'), ctx)), false);
  });
});

describe('Responses API: recorded event streams, whole and split', function () {
  this.timeout(20_000);
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function replay(file: string, way: Way, settings: Partial<RequestSettings> = {}, messages = ASK) {
    server = await startTestServer((req, res) => {
      if (req.path !== '/v1/responses') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      return writeWay(res, fixture(file), way);
    });
    const got = await run(options(server), { model: 'gpt-5.5', stream: true, api: 'responses', ...settings }, messages);
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0].json.store, false);
    return got;
  }

  for (const way of allWays(seedFor('openai-tool-call'))) {
    it(`a tool call (gpt-5.5, recorded), ${wayLabel(way)}`, async () => {
      const { result, events } = await replay('openai-tool-call.sse', way, { tools: TOOLS });
      assert.equal(result.ended, 'done');
      assert.equal(result.text, 'I’ll check the capital lookup tool for “PotatoLand.”');
      assert.equal(joined(events, 'text'), result.text);
      assert.deepEqual(result.toolCalls, [{ id: 'call_LabG58Uhrq9kZvR52BYKjToD', type: 'function', function: { name: 'get_capital', arguments: '{"country":"PotatoLand"}' } }]);
      const calls = events.filter((e) => e.type === 'tool_call');
      assert.ok(calls.every((e) => e.type === 'tool_call' && e.index === 0));
      assert.deepEqual(calls[0], { type: 'tool_call', choice: 0, index: 0, id: 'call_LabG58Uhrq9kZvR52BYKjToD', name: 'get_capital', arguments: undefined });
      assert.equal(result.finishReason, 'tool_calls');
      assert.equal(result.model, 'gpt-5.5-2026-04-23');
      assert.deepEqual(result.usage, { prompt_tokens: 63, completion_tokens: 69, total_tokens: 132, completion_tokens_details: { reasoning_tokens: 26 }, prompt_tokens_details: { cached_tokens: 0 } });
      assert.ok(events.some((e) => e.type === 'usage'));
    });
  }

  for (const way of allWays(seedFor('openai-after-tool-result'))) {
    it(`the answer after the tool result (recorded), ${wayLabel(way)}; the request carried the call and its output`, async () => {
      const messages: ChatMessage[] = [
        ...ASK,
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_LabG58Uhrq9kZvR52BYKjToD', type: 'function', function: { name: 'get_capital', arguments: '{"country":"PotatoLand"}' } }] },
        { role: 'tool', tool_call_id: 'call_LabG58Uhrq9kZvR52BYKjToD', content: 'Potato City' },
      ];
      const { result } = await replay('openai-after-tool-result.sse', way, { tools: TOOLS }, messages);
      assert.equal(result.ended, 'done');
      assert.equal(result.text, 'The capital of PotatoLand is **Potato City**.');
      assert.deepEqual(result.toolCalls, []);
      assert.equal(result.finishReason, 'stop');
      assert.equal(result.usage.total_tokens, 163);
      const input = server?.requests[0].json.input as unknown[];
      assert.deepEqual(input.slice(1), [
        { type: 'function_call', call_id: 'call_LabG58Uhrq9kZvR52BYKjToD', name: 'get_capital', arguments: '{"country":"PotatoLand"}' },
        { type: 'function_call_output', call_id: 'call_LabG58Uhrq9kZvR52BYKjToD', output: 'Potato City' },
      ]);
    });
  }

  for (const way of allWays(seedFor('openai-reasoning-summary'))) {
    it(`reasoning summaries into the Thinking block (o3-mini, recorded), ${wayLabel(way)}`, async () => {
      const expected = recordedOutput(fixture('openai-reasoning-summary.sse'));
      const { result, events } = await replay('openai-reasoning-summary.sse', way, { extraBody: { reasoning_effort: 'high' } });
      assert.deepEqual(server?.requests[0].json.reasoning, { summary: 'auto', effort: 'high' });
      assert.equal(result.ended, 'done');
      assert.equal(result.reasoning, expected.reasoning);
      assert.equal(joined(events, 'reasoning'), expected.reasoning);
      assert.equal(result.text, expected.text);
      assert.ok(result.text.length > 500);
      assert.deepEqual(result.usage, { prompt_tokens: 13, completion_tokens: 1680, total_tokens: 1693, completion_tokens_details: { reasoning_tokens: 1408 }, prompt_tokens_details: { cached_tokens: 0 } });
      // Reasoning first, then the answer: never mixed.
      const firstText = events.findIndex((e) => e.type === 'text');
      assert.ok(events.slice(firstText).every((e) => e.type !== 'reasoning'));
    });
  }

  for (const way of allWays(seedFor('derived-response-failed'))) {
    it(`response.failed: the text so far kept, the error as on chat completions, usage counted, ${wayLabel(way)}`, async () => {
      const { result } = await replay('derived-response-failed.sse', way);
      assert.equal(result.ended, 'error');
      assert.equal(result.text, 'Partial');
      assert.equal(result.error?.kind, 'server');
      assert.equal(result.error?.code, 'server_error');
      assert.match(result.error?.message ?? '', /The model failed to generate a response/);
      assert.equal(result.usage.total_tokens, 23);
    });
  }

  for (const way of allWays(seedFor('derived-error-event'))) {
    it(`an error event: a rate limit, as on chat completions, ${wayLabel(way)}`, async () => {
      const { result } = await replay('derived-error-event.sse', way);
      assert.equal(result.ended, 'error');
      assert.equal(result.error?.kind, 'rate_limit');
      assert.equal(result.error?.inResponse, 200);
    });
  }

  for (const way of allWays(seedFor('derived-incomplete'))) {
    it(`response.incomplete at max_output_tokens: finish reason length, cached and reasoning tokens, ${wayLabel(way)}`, async () => {
      const { result } = await replay('derived-incomplete.sse', way, { maxTokens: 16 });
      assert.equal(result.ended, 'done');
      assert.equal(result.text, 'Hello');
      assert.equal(result.finishReason, 'length');
      assert.deepEqual(result.usage, { prompt_tokens: 20, completion_tokens: 16, total_tokens: 36, completion_tokens_details: { reasoning_tokens: 14 }, prompt_tokens_details: { cached_tokens: 16 } });
      assert.equal(server?.requests[0].json.max_output_tokens, 16);
    });
  }

  it('a whole Response (stream: false, recorded)', async () => {
    server = await startTestServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(fixture('openai-nonstream.json')));
    const { result, events } = await run(options(server), { model: 'gpt-4o', stream: false, api: 'responses' });
    assert.equal(result.ended, 'done');
    assert.equal(result.text, 'The capital of France is Paris.');
    assert.equal(joined(events, 'text'), result.text);
    assert.equal(result.usage.prompt_tokens, 14);
    assert.equal(result.usage.completion_tokens, 8);
    assert.equal(result.usage.estimated, undefined);
    assert.equal(server.requests[0].json.stream, false);
  });

  it('a parameter the Responses API refuses (recorded: temperature) is dropped and learnt there too', async () => {
    server = await startTestServer((req, res) => {
      if (req.json.temperature !== undefined) return void res.writeHead(400, { 'content-type': 'application/json' }).end(fixture('openai-error-400-temperature.json'));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(fixture('openai-after-tool-result.sse'));
    });
    const outcome = await chatWithFallback(options(server), { model: 'gpt-5.5', stream: true, api: 'responses', temperature: 0.5 }, ASK, undefined);
    assert.equal(outcome.result.ended, 'done');
    assert.deepEqual(outcome.dropped, ['temperature']);
    assert.deepEqual(server.requests.map((r) => r.path), ['/v1/responses', '/v1/responses']);
  });

  it('JSON mode refused as text.format: learnt as response_format, as on chat completions', async () => {
    // OpenAI's wording for the chat-completions field (openai-php/client#259), with the Responses API's param name: derived.
    const refusal = { error: { message: "Invalid parameter: 'text.format' of type 'json_object' is not supported with this model.", type: 'invalid_request_error', param: 'text.format', code: null } };
    server = await startTestServer((req, res) => {
      if (req.json.text !== undefined) return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(refusal));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(fixture('openai-after-tool-result.sse'));
    });
    const outcome = await chatWithFallback(options(server), { model: 'gpt-5.5', stream: true, api: 'responses', responseFormat: { type: 'json_object' } }, ASK, undefined);
    assert.equal(outcome.result.ended, 'done');
    assert.deepEqual(outcome.dropped, ['response_format']);
    assert.deepEqual(server.requests[0].json.text, { format: { type: 'json_object' } });
  });

  it('Stop mid-stream: cancelled, the text so far kept, the connection closed', async () => {
    const text = fixture('openai-reasoning-summary.sse');
    server = await startTestServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Up to a little past the first text delta, then silence until the client hangs up.
      res.write(text.slice(0, text.indexOf('response.output_text.delta') + 2000));
    });
    const stop = new AbortController();
    const outcome = await chatWithFallback(options(server, { signal: stop.signal }), { model: 'o3-mini', stream: true, api: 'responses' }, ASK, undefined, (e) => {
      if (e.type === 'text') stop.abort();
    });
    assert.equal(outcome.result.ended, 'cancelled');
    assert.ok(outcome.result.text.length > 0);
    assert.ok(outcome.result.reasoning.length > 0);
    assert.equal((await server.waitForClose()).path, '/v1/responses');
  });
});

describe('Responses API: learnt from a refusal, remembered per origin and model', function () {
  this.timeout(20_000);
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** Refuses `refused` on chat completions with a recorded body; serves the recorded tool call on /v1/responses (or 404). */
  function gateway(refusal: string, status: number, responses = true) {
    return startTestServer((req, res) => {
      if (req.path === '/v1/chat/completions') {
        if (req.json.model === 'gpt-5.3-codex') return void res.writeHead(status, { 'content-type': 'application/json' }).end(fixture(refusal));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end('data: {"choices":[{"index":0,"delta":{"content":"chat"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
      }
      if (req.path === '/v1/responses' && responses) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(fixture('openai-tool-call.sse'));
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"Unknown request URL: POST /v1/responses","type":"invalid_request_error"}}');
    });
  }

  it('a model refused on chat completions is answered on /v1/responses; the next request goes there at once', async () => {
    server = await gateway('copilot-error-400-unsupported-api-for-model.json', 400);
    const store = memoryAdaptationStore();
    const settings: RequestSettings = { model: 'gpt-5.3-codex', stream: true, tools: TOOLS };
    const events: StreamEvent[] = [];
    const first = await chatAndLearn(store, options(server), settings, ASK, (e) => events.push(e));
    assert.equal(first.result.ended, 'done');
    assert.equal(first.result.toolCalls[0]?.function.name, 'get_capital');
    assert.equal(first.result.usage.total_tokens, 132);
    assert.equal(first.switched, true);
    // The refusal's events never reached the caller: only the answer's.
    assert.equal(joined(events, 'text'), first.result.text);
    assert.deepEqual(store.get(server.origin, 'gpt-5.3-codex'), { api: 'responses' });
    assert.deepEqual(server.requests.map((r) => r.path), ['/v1/chat/completions', '/v1/responses']);
    const second = await chatAndLearn(store, options(server), settings, ASK);
    assert.equal(second.result.ended, 'done');
    assert.deepEqual(server.requests.map((r) => r.path), ['/v1/chat/completions', '/v1/responses', '/v1/responses']);
    // Per model: another model of the same server stays on chat completions.
    const other = await chatAndLearn(store, options(server), { ...settings, model: 'gpt-4.1' }, ASK);
    assert.equal(other.result.text, 'chat');
    assert.equal(server.requests.at(-1)?.path, '/v1/chat/completions');
  });

  for (const [file, status] of [['openai-error-404-only-responses.json', 404], ['azure-error-400-operation-not-supported.json', 400]] as const) {
    it(`${file}: retried once on /v1/responses`, async () => {
      server = await gateway(file, status);
      const outcome = await chatWithFallback(options(server), { model: 'gpt-5.3-codex', stream: false }, ASK, undefined);
      assert.equal(outcome.result.ended, 'done');
      assert.deepEqual(outcome.adaptations, { api: 'responses' });
    });
  }

  it("OpenAI's refusal of tools with a reasoning effort (naming reasoning_effort) goes to /v1/responses, the effort kept", async () => {
    server = await gateway('openai-error-400-tools-effort-please-use.json', 400);
    const store = memoryAdaptationStore();
    const outcome = await chatAndLearn(store, options(server), { model: 'gpt-5.3-codex', stream: true, tools: TOOLS, extraBody: { reasoning_effort: 'high' } }, ASK);
    assert.equal(outcome.result.ended, 'done');
    assert.deepEqual(outcome.dropped, [], 'the effort is not dropped');
    assert.deepEqual(store.get(server.origin, 'gpt-5.3-codex'), { api: 'responses' });
    assert.deepEqual((server.requests.at(-1)?.json as { reasoning?: unknown }).reasoning, { summary: 'auto', effort: 'high' });
  });

  it('a refused reasoning summary (an organization not verified) is dropped alone: the effort stays', async () => {
    server = await startTestServer((req, res) => {
      const reasoning = (req.json as { reasoning?: { summary?: string } }).reasoning;
      if (reasoning?.summary) {
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Your organization must be verified to generate reasoning summaries.', type: 'invalid_request_error', param: 'reasoning.summary', code: 'unsupported_value' } }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(fixture('openai-after-tool-result.sse'));
    });
    const store = memoryAdaptationStore();
    const settings: RequestSettings = { model: 'o3', stream: true, api: 'responses', extraBody: { reasoning_effort: 'high' } };
    const outcome = await chatAndLearn(store, options(server), settings, ASK);
    assert.equal(outcome.result.ended, 'done');
    assert.deepEqual(outcome.dropped, ['reasoning.summary']);
    assert.deepEqual(server.requests.map((r) => (r.json as { reasoning?: unknown }).reasoning), [{ summary: 'auto', effort: 'high' }, { effort: 'high' }]);
    await chatAndLearn(store, options(server), settings, ASK);
    assert.deepEqual((server.requests.at(-1)?.json as { reasoning?: unknown }).reasoning, { effort: 'high' }, 'learnt');
  });

  it("a Responses refusal of one of the request's own fields is shown (the route is there); a stop before any output remembers nothing", async () => {
    let hold: (() => void) | undefined;
    server = await startTestServer((req, res) => {
      if (req.path === '/v1/chat/completions') return void res.writeHead(400, { 'content-type': 'application/json' }).end(fixture('copilot-error-400-unsupported-api-for-model.json'));
      if ((req.json as { include?: unknown }).include) {
        return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"Invalid value for include[0].","type":"invalid_request_error","param":"include[0]","code":"invalid_value"}}');
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': held\n\n');
      hold = () => res.end();
    });
    const store = memoryAdaptationStore();
    const own = await chatAndLearn(store, options(server), { model: 'gpt-5.3-codex', stream: true, extraBody: { include: ['nothing.real'] } }, ASK);
    assert.match(own.result.error?.message ?? '', /include\[0\]/, "the Responses API's own words, not the chat refusal");
    assert.deepEqual(store.get(server.origin, 'gpt-5.3-codex'), { api: 'responses' }, 'the route is there: remembered');

    const other = memoryAdaptationStore();
    const stop = new AbortController();
    const pending = chatAndLearn(other, options(server, { signal: stop.signal }), { model: 'gpt-5.3-codex', stream: true }, ASK);
    await waitUntil(() => hold !== undefined);
    stop.abort();
    const stopped = await pending;
    hold?.();
    assert.equal(stopped.result.ended, 'cancelled');
    assert.equal(other.get(server.origin, 'gpt-5.3-codex'), undefined, 'stopped before the Responses API answered: nothing remembered');
  });

  it('text deltas with no item id (a gateway): the message item at its end adds nothing again', async () => {
    const ev = (e: object) => `data: ${JSON.stringify(e)}\n\n`;
    server = await startTestServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(ev({ type: 'response.output_text.delta', delta: 'Hello' }) + ev({ type: 'response.output_text.delta', delta: ' there' })
        + ev({ type: 'response.output_item.done', item: { type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'Hello there' }] } })
        + ev({ type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 3, output_tokens: 2 } } }));
    });
    const { result } = await run(options(server), { model: 'm', stream: true, api: 'responses' });
    assert.equal(result.text, 'Hello there');
  });

  it('a server with no /v1/responses: the chat refusal stands, nothing is remembered, one retry only', async () => {
    server = await gateway('openai-error-404-not-a-chat-model.json', 404, false);
    const store = memoryAdaptationStore();
    const outcome = await chatAndLearn(store, options(server), { model: 'gpt-5.3-codex', stream: true }, ASK);
    assert.equal(outcome.result.ended, 'error');
    assert.match(outcome.result.error?.message ?? '', /not a chat model/);
    assert.equal(store.get(server.origin, 'gpt-5.3-codex'), undefined);
    assert.deepEqual(server.requests.map((r) => r.path), ['/v1/chat/completions', '/v1/responses']);
  });

  it('a profile\'s "api": "chat" never switches; "responses" goes there from the first request; without the module, chat completions', async () => {
    server = await gateway('copilot-error-400-unsupported-api-for-model.json', 400);
    const chatOnly = await chatWithFallback(options(server), { model: 'gpt-5.3-codex', stream: true, api: 'chat' }, ASK, { api: 'responses' });
    assert.equal(chatOnly.result.error?.code, 'unsupported_api_for_model');
    const direct = await chatWithFallback(options(server), { model: 'gpt-5.3-codex', stream: true, api: 'responses' }, ASK, undefined);
    assert.equal(direct.result.ended, 'done');
    assert.equal(direct.switched, undefined);
    const without = await chatWithFallback(options(server, { responses: undefined }), { model: 'gpt-5.3-codex', stream: true }, ASK, undefined);
    assert.equal(without.result.error?.code, 'unsupported_api_for_model');
    assert.deepEqual(server.requests.map((r) => r.path), ['/v1/chat/completions', '/v1/responses', '/v1/chat/completions']);
  });
});

/** Polls until `check` holds (every 10 ms, at most 5 s). */
async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'waited 5 s');
}
