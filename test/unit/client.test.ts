// The core client against a real local HTTP server: every stream shape three ways (whole, byte by byte, random splits).
import * as assert from 'node:assert/strict';
import { complete, listModels, streamChat } from '../../src/core/client';
import { chatWithFallback } from '../../src/core/fallback';
import { backoffMs, retryAfterMs } from '../../src/core/retry';
import { resolveEndpoint } from '../../src/core/endpoint';
import { ParleyError } from '../../src/core/errors';
import { redact } from '../../src/core/redact';
import { buildRequestBody } from '../../src/core/request';
import { estimateTokens } from '../../src/core/tokenEstimate';
import { CHAT_BODY, chunk, clientOptions, sameEveryWay } from '../support/client';
import { sse, startTestServer, withServer } from '../support/server';

/** Every stream shape whole, byte by byte and in random splits (seed 7); the same result every way. */
const threeWays = sameEveryWay(7);

describe('endpoint', () => {
  it('turns every spelling of a base into one chat/completions URL', () => {
    for (const b of ['https://host', 'https://host/', 'https://host/v1', 'https://host/v1/']) {
      assert.equal(resolveEndpoint(b).url, 'https://host/v1/chat/completions', b);
    }
    assert.equal(resolveEndpoint('https://openrouter.ai/api/v1').url, 'https://openrouter.ai/api/v1/chat/completions');
    assert.equal(resolveEndpoint('https://g.googleapis.com/v1beta/openai').url, 'https://g.googleapis.com/v1beta/openai/chat/completions');
    assert.equal(resolveEndpoint('https://open.bigmodel.cn/api/paas/v4/').url, 'https://open.bigmodel.cn/api/paas/v4/chat/completions');
    assert.equal(resolveEndpoint('http://x:8000/custom/chat/completions').url, 'http://x:8000/custom/chat/completions');
    const e = resolveEndpoint('http://localhost:11434');
    assert.equal(e.origin, 'http://localhost:11434');
    assert.equal(e.modelsUrl, 'http://localhost:11434/v1/models');
  });

  it('rejects what it cannot use, saying what is wrong', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['ftp://host', /http:\/\/ or https:\/\//],
      ['javascript:alert(1)', /http:\/\/ or https:\/\//],
      ['file:///etc/passwd', /http:\/\/ or https:\/\//],
      ['http://user:pass@host', /user name or password/],
      ['http://ho st', /spaces/],
      [' https://host', /spaces/],
      ['not a url', /spaces|valid URL/],
      ['::::', /valid URL/],
      [42, /a number/],
      ['', /empty/],
    ];
    for (const [v, re] of cases) {
      assert.throws(() => resolveEndpoint(v), (e: unknown) => e instanceof ParleyError && e.kind === 'config' && re.test(e.message), String(v));
    }
  });
});

describe('request body', () => {
  const msgs = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'see' }, { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA' } }] }];

  it('sends only what is set, never null, never empty tools', () => {
    const b = buildRequestBody({ model: 'm', stream: false, tools: [] }, msgs);
    assert.deepEqual(b, { model: 'm', messages: msgs, stream: false });
    const full = buildRequestBody({ model: 'm', stream: true, temperature: 0, topP: 1, maxTokens: 10, stop: ['x', 'y'], presencePenalty: -2, frequencyPenalty: 2, responseFormat: { type: 'json_object' } }, msgs);
    assert.deepEqual(full, {
      model: 'm', messages: msgs, stream: true, stream_options: { include_usage: true }, temperature: 0, top_p: 1, max_tokens: 10,
      stop: ['x', 'y'], presence_penalty: -2, frequency_penalty: 2, response_format: { type: 'json_object' },
    });
    assert.equal(buildRequestBody({ model: 'm', stream: false, stop: 'END' }, msgs).stop, 'END');
    assert.ok(!JSON.stringify(full).includes('null'));
  });

  it('sends parallel_tool_calls only when it is set, and only with tools', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f' } }];
    const unset = buildRequestBody({ model: 'm', stream: false, tools }, msgs);
    assert.deepEqual(unset, { model: 'm', messages: msgs, stream: false, tools });
    assert.equal(buildRequestBody({ model: 'm', stream: false, tools, parallelToolCalls: false }, msgs).parallel_tool_calls, false);
    assert.equal(buildRequestBody({ model: 'm', stream: false, tools, parallelToolCalls: true }, msgs).parallel_tool_calls, true);
    // OpenAI refuses it without tools.
    assert.ok(!('parallel_tool_calls' in buildRequestBody({ model: 'm', stream: false, parallelToolCalls: true }, msgs)));
    assert.ok(!('parallel_tool_calls' in buildRequestBody({ model: 'm', stream: false, tools: [], parallelToolCalls: false }, msgs)));
    assert.ok(!('parallel_tool_calls' in buildRequestBody({ model: 'm', stream: false, tools, parallelToolCalls: true }, msgs, { drop: ['tools'] })));
  });

  it('checks ranges before any network call', () => {
    const bad = [{ temperature: 2.1 }, { temperature: -0.1 }, { topP: 1.5 }, { presencePenalty: 3 }, { frequencyPenalty: -2.5 }, { maxTokens: 0 }, { maxTokens: 1.5 }, { temperature: Number.NaN }];
    for (const b of bad) {
      assert.throws(() => buildRequestBody({ model: 'm', stream: false, ...b }, msgs), (e: unknown) => e instanceof ParleyError && e.kind === 'config', JSON.stringify(b));
    }
    assert.throws(() => buildRequestBody({ model: 'gpt 4', stream: false }, msgs), /spaces or line breaks/);
    assert.throws(() => buildRequestBody({ model: 'm', stream: false }, []), /nothing to send/);
  });

  it('applies learnt adaptations', () => {
    const b = buildRequestBody({ model: 'm', stream: true, maxTokens: 5 }, msgs, { drop: ['stream_options'], maxCompletionTokens: true });
    assert.equal(b.stream_options, undefined);
    assert.equal(b.max_tokens, undefined);
    assert.equal(b.max_completion_tokens, 5);
  });
});

describe('streaming', function () {
  this.timeout(20_000);

  it('assembles text through empty choices, missing deltas, null content, empty and repeated roles, comments', async () => {
    const body = sse([
      ': OPENROUTER PROCESSING',
      '\n\n',
      { id: 'c', choices: [] },
      { id: 'c', choices: [{ index: 0 }] },
      chunk(null, { role: 'assistant' }),
      chunk('Héllo ', { role: '' }),
      chunk('wörld 🌍 ', { role: 'assistant' }),
      { id: 'c', choices: [] },
      chunk('中文', {}, null),
      chunk('', {}, 'stop'),
      { id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
    ]);
    const { result, events } = await threeWays(body);
    assert.equal(result.text, 'Héllo wörld 🌍 中文');
    assert.ok(!result.text.includes('\uFFFD'));
    assert.equal(result.finishReason, 'stop');
    assert.deepEqual(result.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    assert.equal(result.ended, 'done');
    assert.equal(result.sawDone, true);
    assert.deepEqual(events.at(-1), { type: 'end', state: 'done', error: undefined });
  });

  for (const eol of ['\r\n', '\r'] as const) {
    it(`reads ${JSON.stringify(eol)} line endings, and data: without a space`, async () => {
      const body = sse([chunk('a'), `data:${JSON.stringify(chunk('b'))}\n\n`, chunk('', {}, 'stop')], { eol });
      const { result } = await threeWays(body);
      assert.equal(result.text, 'ab');
      assert.equal(result.ended, 'done');
    });
  }

  it('keeps reasoning apart from the answer, under either name and in <think> tags split across chunks', async () => {
    const r1 = await threeWays(sse([chunk(null, { reasoning_content: 'Let me ' }), chunk(null, { reasoning_content: 'think.' }), chunk('Answer.', {}, 'stop')]));
    assert.equal(r1.result.reasoning, 'Let me think.');
    assert.equal(r1.result.text, 'Answer.');
    assert.equal(r1.result.reasoningField, 'reasoning_content');
    const r2 = await threeWays(sse([chunk(null, { reasoning: 'Hmm.' }), chunk('Yes.', {}, 'stop')]));
    assert.equal(r2.result.reasoning, 'Hmm.');
    assert.equal(r2.result.reasoningField, 'reasoning');
    const r3 = await threeWays(sse([chunk('<th'), chunk('ink>deep'), chunk(' thought</thi'), chunk('nk>\n\nThe answer'), chunk(' is 4.', {}, 'stop')]));
    assert.equal(r3.result.reasoning, 'deep thought');
    assert.equal(r3.result.text, 'The answer is 4.');
    assert.equal(r3.result.reasoningField, 'think_tag');
    const r4 = await threeWays(sse([chunk('<b>not thinking</b>', {}, 'stop')]));
    assert.equal(r4.result.text, '<b>not thinking</b>');
    assert.equal(r4.result.reasoning, '');
  });

  it('assembles tool calls by index (from 1, null or missing arguments, id "" continuations), names never concatenated', async () => {
    const tc = (calls: unknown[], finish: string | null = null) => ({ id: 'c', choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: finish }] });
    const { result } = await threeWays(sse([
      tc([{ index: 1, id: 'call_1', type: 'function', function: { name: 'get_weather' } }]),
      tc([{ index: 1, id: '', function: { arguments: null } }]),
      tc([{ index: 1, id: '', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }]),
      tc([{ index: 1, function: { arguments: 'ty":"Paris"}' } }]),
      tc([{ index: 2, id: 'call_2', function: { name: 'noop', arguments: null } }], 'tool_calls'),
    ]));
    assert.deepEqual(result.toolCalls, [
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_2', type: 'function', function: { name: 'noop', arguments: '' } },
    ]);
    assert.equal(result.finishReason, 'tool_calls');
  });

  it('assembles tool calls without index by id (Mistral), and by position otherwise', async () => {
    const tc = (calls: unknown[]) => ({ id: 'c', choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: null }] });
    const { result } = await threeWays(sse([
      tc([{ id: 'a', function: { name: 'f', arguments: '{}' } }, { id: 'b', function: { name: 'g', arguments: '{"x":1}' } }]),
      { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ]));
    assert.deepEqual(result.toolCalls.map((t) => [t.id, t.function.name, t.function.arguments]), [['a', 'f', '{}'], ['b', 'g', '{"x":1}']]);
    const r2 = await threeWays(sse([tc([{ function: { name: 'h', arguments: '{"a"' } }]), tc([{ function: { arguments: ':2}' } }]), chunk('', {}, 'tool_calls')]));
    assert.deepEqual(r2.result.toolCalls.map((t) => [t.function.name, t.function.arguments]), [['h', '{"a":2}']]);
  });

  it('keeps the last usage, never the sum, and does not require one', async () => {
    const withU = (c: object, n: number) => ({ ...c, usage: { prompt_tokens: 10, completion_tokens: n, total_tokens: 10 + n } });
    const { result } = await threeWays(sse([withU(chunk('a'), 1), withU(chunk('b'), 2), { ...chunk('', {}, 'stop'), usage: null }, withU({ id: 'c', choices: [] }, 3)]));
    assert.equal(result.usage.total_tokens, 13);
    assert.equal(result.usage.estimated, undefined);
    const r2 = await threeWays(sse([chunk('no usage at all'), chunk('', {}, 'stop')]));
    assert.equal(r2.result.usage.estimated, true);
    assert.equal(r2.result.usage.completion_tokens, estimateTokens('no usage at all'));
    assert.ok(r2.result.usage.prompt_tokens > 0);
  });

  it('stops at [DONE] and ignores anything after it', async () => {
    const { result } = await threeWays(sse([chunk('kept'), chunk('', {}, 'stop')]) + `data: ${JSON.stringify(chunk(' ignored'))}\n\n`);
    assert.equal(result.text, 'kept');
  });

  it('EOF after a finish_reason without [DONE] is a normal end; without either it is incomplete', async () => {
    const a = await threeWays(sse([chunk('x'), chunk('', {}, 'length')], { done: false }));
    assert.equal(a.result.ended, 'done');
    assert.equal(a.result.finishReason, 'length');
    assert.equal(a.result.sawDone, false);
    const b = await threeWays(sse([chunk('cut off mid')], { done: false }));
    assert.equal(b.result.ended, 'incomplete');
    assert.equal(b.result.text, 'cut off mid');
    assert.equal(b.result.usage.estimated, true);
  });

  it('turns an error inside a 200 stream into a typed error, keeping the text so far', async () => {
    const a = await threeWays(sse([chunk('partial '), { error: { message: 'The server had an error while processing your request.', type: 'server_error', code: null } }], { done: false }));
    assert.equal(a.result.ended, 'error');
    assert.equal(a.result.text, 'partial ');
    assert.equal(a.result.error?.kind, 'server');
    const b = await threeWays(sse([chunk('so far'), 'event: error\ndata: {"error":{"message":"rate limited upstream","code":429}}\n\n'], { done: false }));
    assert.equal(b.result.ended, 'error');
    assert.equal(b.result.text, 'so far');
    assert.equal(b.result.error?.kind, 'rate_limit');
  });

  it('parses application/json from a server that ignores stream, and treats a 200 error body as an error', async () => {
    const completion = { id: 'x', object: 'chat.completion', model: 'served', choices: [{ index: 0, message: { role: 'assistant', content: 'whole reply', reasoning_content: 'why' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
    const a = await threeWays(JSON.stringify(completion), { 'content-type': 'application/json' });
    assert.equal(a.result.text, 'whole reply');
    assert.equal(a.result.reasoning, 'why');
    assert.equal(a.result.ended, 'done');
    assert.equal(a.result.model, 'served');
    const b = await threeWays('{"error":"Unexpected endpoint or method. (POST /chat/completions)"}', { 'content-type': 'application/json' });
    assert.equal(b.result.ended, 'error');
    assert.equal(b.result.error?.kind, 'not_found');
    assert.match(b.result.error?.message ?? '', /Unexpected endpoint/);
  });

  it('keeps several choices apart by index', async () => {
    const c = (i: number, t: string, f: string | null = null) => ({ id: 'c', choices: [{ index: i, delta: { content: t }, finish_reason: f }] });
    const { result } = await threeWays(sse([c(0, 'A1'), c(1, 'B1'), c(2, 'C1'), c(1, 'B2'), c(0, 'A2'), c(2, 'C2', 'stop'), c(0, '', 'stop'), c(1, '', 'length')]));
    assert.deepEqual(result.choices.map((x) => [x.index, x.text, x.finishReason]), [[0, 'A1A2', 'stop'], [1, 'B1B2', 'length'], [2, 'C1C2', 'stop']]);
    assert.equal(result.text, 'A1A2');
  });

  it('EOF in the middle of an event: incomplete with the text so far (or done after a finish_reason), never a protocol error', async () => {
    const cut = await threeWays(sse([chunk('kept '), chunk('text')], { done: false }) + 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"lo');
    assert.equal(cut.result.ended, 'incomplete');
    assert.equal(cut.result.error, undefined);
    assert.equal(cut.result.text, 'kept text');
    assert.equal(cut.result.usage.estimated, true);
    assert.deepEqual(cut.events.at(-1), { type: 'end', state: 'incomplete', error: undefined });
    // Cut inside a UTF-8 character: nothing of the broken event, and no U+FFFD, reaches the text.
    const bytes = Buffer.from(`${sse([chunk('ok ')], { done: false })}data: {"choices":[{"index":0,"delta":{"content":"🌍`, 'utf8');
    const mid = await threeWays(bytes.subarray(0, bytes.length - 2));
    assert.equal(mid.result.ended, 'incomplete');
    assert.equal(mid.result.text, 'ok ');
    // A finish_reason came before the cut: a normal end.
    const finished = await threeWays(sse([chunk('all'), chunk('', {}, 'stop')], { done: false }) + 'data: {"id":"c","choi');
    assert.equal(finished.result.ended, 'done');
    assert.equal(finished.result.error, undefined);
    assert.equal(finished.result.text, 'all');
    // The cut fell after the last line of an event but before its blank line: the event is whole, and counts.
    const whole = await threeWays(sse([chunk('a')], { done: false }) + `data: ${JSON.stringify(chunk('b', {}, 'stop'))}`);
    assert.equal(whole.result.ended, 'done');
    assert.equal(whole.result.text, 'ab');
    const done = await threeWays(sse([chunk('a')], { done: false }) + 'data: [DONE]');
    assert.equal(done.result.ended, 'done');
    assert.equal(done.result.sawDone, true);
    // Cut after a whole line but before the blank line: the event is unfinished, so still not a protocol error.
    const line = await threeWays(sse([chunk('a')], { done: false }) + 'data: {"id":"c","choi\n');
    assert.equal(line.result.ended, 'incomplete');
    assert.equal(line.result.text, 'a');
    // But an event the body did end (CR line endings, its blank line the very last byte) is read as usual.
    const malformed = await threeWays(sse([chunk('a')], { done: false, eol: '\r' }) + 'data: {not json\r\r');
    assert.equal(malformed.result.ended, 'error');
    assert.equal(malformed.result.error?.kind, 'protocol');
    assert.equal(malformed.result.text, 'a');
  });

  it('with several choices and no [DONE], ends done only when every choice that appeared got a finish_reason', async () => {
    const c = (i: number, t: string, f: string | null = null) => ({ id: 'c', choices: [{ index: i, delta: { content: t }, finish_reason: f }] });
    const cut = await threeWays(sse([c(0, 'A1'), c(1, 'B1'), c(0, 'A2', 'stop'), c(1, 'B2')], { done: false }));
    assert.equal(cut.result.ended, 'incomplete');
    assert.deepEqual(cut.result.choices.map((x) => [x.index, x.text, x.finishReason]), [[0, 'A1A2', 'stop'], [1, 'B1B2', null]]);
    assert.equal(cut.result.error, undefined);
    const whole = await threeWays(sse([c(0, 'A1'), c(1, 'B1'), c(0, 'A2', 'stop'), c(1, 'B2', 'length')], { done: false }));
    assert.equal(whole.result.ended, 'done');
    assert.equal(whole.result.sawDone, false);
  });

  it('reports malformed JSON and an HTML page as protocol errors with a short, tag-free excerpt', async () => {
    const a = await threeWays(sse([chunk('ok '), 'data: {not json\n\n'], { done: false }));
    assert.equal(a.result.error?.kind, 'protocol');
    assert.equal(a.result.text, 'ok ');
    const html = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>b{}</style></head><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>';
    const b = await threeWays(html, { 'content-type': 'text/html' }, 502);
    assert.equal(b.result.ended, 'error');
    assert.equal(b.result.error?.kind, 'server');
    assert.match(b.result.error?.message ?? '', /HTML page/);
    assert.match(b.result.error?.message ?? '', /502 Bad Gateway/);
    assert.ok(!/[<>]/.test(b.result.error?.message ?? ''));
    const c = await threeWays(html, { 'content-type': 'text/html' }, 200);
    assert.equal(c.result.error?.kind, 'protocol');
  });
});

describe('errors', function () {
  this.timeout(10_000);
  const KEY = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234';

  async function errorFor(status: number, body: unknown, headers: Record<string, string> = {}) {
    return withServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    }, async (s) => (await streamChat(clientOptions(s, { apiKey: KEY }), CHAT_BODY).result).error);
  }

  it('types errors from status and body, in every body shape', async () => {
    assert.equal((await errorFor(401, { error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key', param: null } }))?.kind, 'auth');
    assert.equal((await errorFor(403, { error: 'forbidden' }))?.kind, 'auth');
    const nf = await errorFor(404, { error: { message: 'The model `m` does not exist', type: 'invalid_request_error', code: 'model_not_found' } });
    assert.equal(nf?.kind, 'not_found');
    assert.match(nf?.message ?? '', /"m"/);
    assert.equal((await errorFor(429, { error: { message: 'Rate limit reached', type: 'tokens', code: 'rate_limit_exceeded' } }))?.kind, 'rate_limit');
    assert.equal((await errorFor(429, { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } }))?.kind, 'quota');
    assert.equal((await errorFor(400, { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } }))?.kind, 'context_length');
    // DeepSeek and vLLM say it only in words.
    assert.equal((await errorFor(400, { object: 'error', message: 'This model\'s maximum context length is 4096 tokens. However, you requested 5000 tokens', type: 'BadRequestError', code: 400 }))?.kind, 'context_length');
    const br = await errorFor(400, { error: { message: "Unsupported parameter: 'max_tokens'", type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' } });
    assert.equal(br?.kind, 'bad_request');
    assert.equal(br?.param, 'max_tokens');
    assert.match(br?.message ?? '', /max_tokens/);
    assert.equal((await errorFor(422, { error: { message: 'invalid', type: null, code: 422 } }))?.kind, 'bad_request');
    assert.equal((await errorFor(503, { error: { message: 'overloaded', code: 503 } }))?.kind, 'server');
  });

  it('never carries the key, even when the server echoes it', async () => {
    const e = await errorFor(401, { error: { message: `Incorrect API key provided: ${KEY}. Masked: sk-proj-****1234.`, type: 'invalid_request_error', code: 'invalid_api_key' } });
    assert.ok(e);
    for (const s of [e.message, e.providerMessage ?? '', String(e), JSON.stringify(e), e.stack ?? '']) {
      assert.equal(s.includes(KEY), false, s);
      assert.equal(s.includes('****1234'), false, s);
    }
    assert.equal(redact(`Authorization: Bearer ${KEY}`, []), 'Authorization: Bearer [redacted]');
    assert.equal(redact(`key ${KEY} here`, [KEY]), 'key [redacted] here');
  });

  it('names the host and port it cannot reach', async () => {
    const s = await startTestServer(() => undefined);
    const url = s.url;
    await s.close();
    const r = await streamChat({ endpoint: resolveEndpoint(url), maxRetries: 0 }, CHAT_BODY).result;
    assert.equal(r.ended, 'error');
    assert.equal(r.error?.kind, 'connection');
    assert.match(r.error?.message ?? '', new RegExp(`Cannot reach ${url.replace(/[.]/g, '\\.')}`));
  });

  it('times out waiting for headers, and on a silent stream, saying which', async () => {
    await withServer(() => new Promise(() => undefined), async (s) => {
      const r = await streamChat(clientOptions(s, { requestTimeoutMs: 200 }), CHAT_BODY).result;
      assert.equal(r.error?.kind, 'timeout');
      assert.equal(r.error?.timeout, 'headers');
    });
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([chunk('before silence')], { done: false }));
      await new Promise(() => undefined);
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { idleTimeoutMs: 300 }), CHAT_BODY).result;
      assert.equal(r.error?.kind, 'timeout');
      assert.equal(r.error?.timeout, 'idle');
      assert.equal(r.text, 'before silence');
    });
  });

  it('counts SSE comments as activity for the idle timeout', async () => {
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 6; i++) {
        res.write(': keep-alive\n\n');
        await new Promise((r) => setTimeout(r, 100));
      }
      res.end(sse([chunk('done'), chunk('', {}, 'stop')]));
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { idleTimeoutMs: 350 }), CHAT_BODY).result;
      assert.equal(r.ended, 'done');
      assert.equal(r.text, 'done');
    });
  });
});

describe('retries', function () {
  this.timeout(15_000);

  it('retries 5xx and 429 until success, honouring retry-after-ms and retry-after', async () => {
    let n = 0;
    const delays: number[] = [];
    await withServer((_req, res) => {
      n++;
      if (n === 1) {
        res.writeHead(500, { 'content-type': 'application/json' });
        return void res.end('{"error":{"message":"boom"}}');
      }
      if (n === 2) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '30' });
        return void res.end('{"error":{"message":"slow down","code":"rate_limit_exceeded"}}');
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('third time'), chunk('', {}, 'stop')]));
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 2, onRetry: (i) => delays.push(i.delayMs) }), CHAT_BODY).result;
      assert.equal(r.text, 'third time');
      assert.equal(s.requests.length, 3);
      assert.equal(delays.length, 2);
      assert.ok(delays[0] >= 500 && delays[0] <= 1000, `backoff ${delays[0]}`);
      assert.equal(delays[1], 30);
    });
    const h = new Headers({ 'retry-after': '2' });
    assert.equal(retryAfterMs(h), 2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now), 5000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '3600' })), undefined);
  });

  it('retry-after-ms wins over retry-after; one above 60 s is ignored for the backoff', async () => {
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '30', 'retry-after': '5' })), 30);
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '120000' })), undefined);
    let n = 0;
    const delays: number[] = [];
    await withServer((_req, res) => {
      n++;
      if (n === 1) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after-ms': '120000' });
        return void res.end('{"error":{"message":"busy"}}');
      }
      if (n === 2) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '20', 'retry-after': '30' });
        return void res.end('{"error":{"message":"slow down","code":"rate_limit_exceeded"}}');
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('third'), chunk('', {}, 'stop')]));
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 2, onRetry: (i) => delays.push(i.delayMs) }), CHAT_BODY).result;
      assert.equal(r.text, 'third');
      assert.equal(s.requests.length, 3);
      // The first wait is the first backoff (0.5-1 s), not two minutes.
      assert.ok(delays[0] >= 500 && delays[0] <= 1000, `backoff ${delays[0]}`);
      assert.equal(delays[1], 20, 'retry-after-ms, not retry-after');
    });
  });

  it('honours retry-after given as an HTTP date', async () => {
    let n = 0;
    let date = '';
    const delays: number[] = [];
    const expected: number[] = [];
    const at: number[] = [];
    await withServer((_req, res) => {
      n++;
      at.push(Date.now());
      if (n === 1) {
        // Whole seconds only: 3 s ahead is 2 to 3 s ahead, longer than the first backoff (at most 1 s).
        date = new Date(Date.now() + 3000).toUTCString();
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': date });
        return void res.end('{"error":{"message":"busy"}}');
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('later'), chunk('', {}, 'stop')]));
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 1, onRetry: (i) => {
        delays.push(i.delayMs);
        expected.push(Date.parse(date) - Date.now());
      } }), CHAT_BODY).result;
      assert.equal(r.text, 'later');
      assert.equal(s.requests.length, 2);
      // The wait comes from the date, not from the backoff: it is what was left until the date when the retry was
      // planned. A backoff (0.5-1 s) would be over a second away from it, as the date is 2-3 s ahead.
      assert.ok(delays[0] > 0 && delays[0] <= 3000, `delay ${delays[0]}`);
      assert.ok(Math.abs(delays[0] - expected[0]) < 500, `delay ${delays[0]}, the date is ${expected[0]} ms away`);
      assert.ok(at[1] - at[0] >= delays[0] - 20, `the retry came ${at[1] - at[0]} ms later`);
    });
  });

  it('backs off between 0.5 s and 8 s, exponentially, with jitter', () => {
    const lowest = () => 0;
    const highest = () => 1 - Number.EPSILON;
    for (let n = 0; n <= 10; n++) {
      for (const random of [lowest, () => 0.25, () => 0.5, highest, Math.random, Math.random, Math.random]) {
        const v = backoffMs(n, random);
        assert.ok(Number.isInteger(v) && v >= 500 && v <= 8000, `attempt ${n}: ${v}`);
      }
      assert.ok(backoffMs(n) >= 500 && backoffMs(n) <= 8000, `attempt ${n}, Math.random`);
      // Jitter at every attempt, the cap included.
      assert.ok(backoffMs(n, highest) > backoffMs(n, lowest), `attempt ${n}: no jitter`);
      if (n === 10) continue;
      // Grows: the next wait's range never starts lower, nor ends lower; until the cap it starts where this one ends.
      assert.ok(backoffMs(n + 1, lowest) >= backoffMs(n, lowest), `attempt ${n + 1} can wait less than attempt ${n}`);
      assert.ok(backoffMs(n + 1, highest) >= backoffMs(n, highest), `attempt ${n + 1} waits at most less than attempt ${n}`);
      if (n < 3) assert.ok(backoffMs(n + 1, lowest) >= backoffMs(n, highest), `attempt ${n + 1} overlaps attempt ${n}`);
    }
    assert.equal(backoffMs(0, lowest), 500);
    assert.equal(backoffMs(10, highest), 8000);
    assert.equal(backoffMs(3, lowest), 4000);
  });

  it('does not retry insufficient_quota, 400s, or anything once body bytes were handed out', async () => {
    for (const [status, body] of [[429, '{"error":{"message":"quota","code":"insufficient_quota"}}'], [400, '{"error":{"message":"bad"}}']] as const) {
      await withServer((_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      }, async (s) => {
        await streamChat(clientOptions(s, { maxRetries: 3 }), CHAT_BODY).result;
        assert.equal(s.requests.length, 1);
      });
    }
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([chunk('half')], { done: false }));
      setTimeout(() => res.destroy(), 50);
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 3 }), CHAT_BODY).result;
      assert.equal(s.requests.length, 1);
      assert.equal(r.text, 'half');
      assert.notEqual(r.ended, 'done');
    });
  });

  it('gives up after maxRetries, and a cancel during the wait ends it at once', async () => {
    await withServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end('{"error":{"message":"busy"}}');
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 1 }), CHAT_BODY).result;
      assert.equal(s.requests.length, 2);
      assert.equal(r.error?.kind, 'server');
      const ac = new AbortController();
      const p = streamChat(clientOptions(s, { maxRetries: 5, signal: ac.signal, onRetry: () => setTimeout(() => ac.abort(), 10) }), CHAT_BODY).result;
      const r2 = await p;
      assert.equal(r2.ended, 'cancelled');
      assert.equal(s.requests.length, 3);
    });
  });
});

describe('cancellation, redirects, complete() and models', function () {
  this.timeout(15_000);

  it('a cancel closes the socket, keeps the partial text, ends cancelled with an estimated usage', async () => {
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([chunk('partial text')], { done: false }));
      await new Promise(() => undefined);
    }, async (s) => {
      const ac = new AbortController();
      const stream = streamChat(clientOptions(s, { signal: ac.signal }), CHAT_BODY);
      for await (const e of stream) if (e.type === 'text') ac.abort();
      const r = await stream.result;
      const closed = await s.waitForClose(3000);
      assert.equal(closed.clientClosedEarly, true);
      assert.equal(r.ended, 'cancelled');
      assert.equal(r.error, undefined);
      assert.equal(r.text, 'partial text');
      assert.equal(r.usage.estimated, true);
      assert.equal(r.usage.completion_tokens, estimateTokens('partial text'));
    });
  });

  it('a cancel while waiting for the response headers closes the socket and ends cancelled', async () => {
    await withServer(async (_req, res) => {
      // Headers only after 10 s (or never, once the client left): the cancel comes long before.
      await new Promise<void>((r) => {
        const t = setTimeout(r, 10_000);
        res.on('close', () => {
          clearTimeout(t);
          r();
        });
      });
      if (!res.destroyed) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sse([chunk('too late')]));
    }, async (s) => {
      const ac = new AbortController();
      const stream = streamChat(clientOptions(s, { signal: ac.signal, requestTimeoutMs: 20_000 }), CHAT_BODY);
      while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      ac.abort();
      // Had the cancel not worked, the result would come with the server's late text (or a header timeout).
      const r = await stream.result;
      assert.equal(r.ended, 'cancelled');
      assert.equal(r.error, undefined);
      assert.equal(r.text, '');
      assert.equal(r.usage.estimated, true);
      assert.equal(await stream.response, undefined);
      const closed = await s.waitForClose(3000);
      assert.equal(closed.clientClosedEarly, true);
    });
  });

  it('after [DONE] the body is released, though the server keeps the connection open and keeps writing', async () => {
    let writes = 0;
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([chunk('the answer'), chunk('', {}, 'stop')]));
      // Never ends: more events after [DONE], for as long as the client listens.
      while (!res.destroyed && writes < 500) {
        res.write(`data: ${JSON.stringify(chunk(' and more'))}\n\n`);
        writes++;
        await new Promise((r) => setTimeout(r, 10));
      }
    }, async (s) => {
      const r = await streamChat(clientOptions(s), CHAT_BODY).result;
      assert.equal(r.ended, 'done');
      assert.equal(r.sawDone, true);
      assert.equal(r.text, 'the answer');
      const closed = await s.waitForClose(3000);
      assert.equal(closed.clientClosedEarly, true);
      assert.ok(writes < 500, 'the server wrote until the end of its loop: nobody closed the connection');
    });
  });

  it('follows a same-origin 307 with the key, and refuses a redirect to another origin', async () => {
    const KEY = 'sk-redirect-test-key-0123456789';
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('B'), chunk('', {}, 'stop')]));
    }, async (b) => {
      await withServer((req, res) => {
        if (req.path.startsWith('/moved')) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return void res.end(sse([chunk('same origin'), chunk('', {}, 'stop')]));
        }
        if (req.json?.model === 'cross') {
          res.writeHead(307, { location: `${b.url}/v1/chat/completions` });
          return void res.end();
        }
        res.writeHead(307, { location: '/moved/v1/chat/completions' });
        res.end();
      }, async (a) => {
        const r = await streamChat(clientOptions(a, { apiKey: KEY }), CHAT_BODY).result;
        assert.equal(r.text, 'same origin');
        assert.equal(a.requests[1].headers.authorization, `Bearer ${KEY}`);
        const r2 = await streamChat(clientOptions(a, { apiKey: KEY }), { ...CHAT_BODY, model: 'cross' }).result;
        assert.equal(r2.ended, 'error');
        assert.match(r2.error?.message ?? '', /another origin/);
        assert.equal(b.requests.length, 0);
        assert.ok(!JSON.stringify(r2).includes(KEY));
      });
    });
  });

  it('complete() gives the same result type for a JSON completion, and sends no key when none is set', async () => {
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: '{"a":1}', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }));
    }, async (s) => {
      const r = await complete(clientOptions(s), CHAT_BODY);
      // Checked on the recorded request: an assertion inside the handler would fail unseen.
      assert.equal(s.requests.length, 1);
      assert.equal(s.requests[0].json.stream, false);
      assert.equal(s.requests[0].json.stream_options, undefined);
      assert.equal(s.requests[0].headers.authorization, undefined);
      assert.equal(r.text, '{"a":1}');
      assert.equal(r.ended, 'done');
      assert.deepEqual(r.toolCalls, [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }]);
      assert.equal(r.usage.total_tokens, 5);
    });
  });

  it('a bad setting comes back from chatWithFallback as a config error, with nothing sent', async () => {
    await withServer((_req, res) => void res.end(), async (s) => {
      const out = await chatWithFallback(clientOptions(s), { model: 'm', stream: true, temperature: 9 }, [{ role: 'user', content: 'x' }], undefined);
      assert.equal(out.result.error?.kind, 'config');
      assert.equal(s.requests.length, 0);
    });
  });

  it('lists models from data[].id or models[].name', async () => {
    await withServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.path.startsWith('/v1/models') ? { object: 'list', data: [{ id: 'a' }, { id: 'b' }] } : {}));
    }, async (s) => {
      assert.deepEqual(await listModels(clientOptions(s)), ['a', 'b']);
    });
  });
});
