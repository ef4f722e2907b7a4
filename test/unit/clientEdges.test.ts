// The core client's edges against a real local HTTP server: split <think> tags, odd tool-call numbering, bodies
// that lie about their type, hanging error bodies, early exits, late iterators, redirects, logs and the fallback.
import * as assert from 'node:assert/strict';
import { listModels, streamChat, type ClientOptions } from '../../src/core/client';
import { WindowProbe } from '../../src/core/serverWindow';
import { chatWithFallback } from '../../src/core/fallback';
import { resolveEndpoint } from '../../src/core/endpoint';
import { errorFromResponse, ParleyError, wireError } from '../../src/core/errors';
import { validateHeaders } from '../../src/core/headers';
import { redact } from '../../src/core/redact';
import type { RequestSettings } from '../../src/core/request';
import { Accumulator } from '../../src/core/stream';
import type { ChatMessage, ChatResult, StreamEvent } from '../../src/core/types';
import { estimatePromptTokens, estimateTokens, TOKENS_PER_IMAGE } from '../../src/core/tokenEstimate';
import { CHAT_BODY, chunk, clientOptions, sameEveryWay } from '../support/client';
import { sse, startTestServer, withServer, type Handler } from '../support/server';

/** Serves `body` every way (random splits from seed 11); asserts identical results and returns the whole body's. */
const threeWays = async (body: string, headers?: Record<string, string>, status?: number): Promise<ChatResult> => (await sameEveryWay(11)(body, headers, status)).result;

const KEY = 'sk-proj-EDGEtestKEY0123456789abcdefWXYZ';

/** Feeds content pieces through the accumulator (no network) and returns text and reasoning. */
function accumulate(pieces: string[]): { text: string; reasoning: string; field?: string; events: StreamEvent[] } {
  const acc = new Accumulator({ url: 'http://x/v1/chat/completions' });
  const events: StreamEvent[] = [];
  for (const p of pieces) acc.chunk(chunk(p), events);
  acc.flush(events);
  const r = acc.result('done', { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  return { text: r.text, reasoning: r.reasoning, field: r.reasoningField, events };
}

describe('<think> tags split anywhere', () => {
  const content = '<think>Step 1.\nStep 2 </thi not yet.</think>\n\nThe answer is <b>4</b>.';

  it('gives the same reasoning and answer for every split of the content into three chunks', () => {
    for (let i = 0; i <= content.length; i++) {
      for (let j = i; j <= content.length; j++) {
        const r = accumulate([content.slice(0, i), content.slice(i, j), content.slice(j)]);
        const at = `split at ${i},${j}`;
        assert.equal(r.reasoning, 'Step 1.\nStep 2 </thi not yet.', at);
        assert.equal(r.text, 'The answer is <b>4</b>.', at);
        assert.equal(r.field, 'think_tag', at);
        // The events say the same as the result.
        assert.equal(r.events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), r.text, at);
        assert.equal(r.events.filter((e) => e.type === 'reasoning').map((e) => (e as { text: string }).text).join(''), r.reasoning, at);
      }
    }
  });

  it('drops the blank lines after </think> even when they come in later chunks, and keeps later blank lines', () => {
    assert.deepEqual(
      [accumulate(['<think>r</think>', '\n', '\n\n', 'A', '\n\nB']).text, accumulate(['<think>r</think>', '\n', '\n\n', 'A', '\n\nB']).reasoning],
      ['A\n\nB', 'r'],
    );
  });

  it('leading white space before <think> is allowed; <think> later in the answer is answer text', () => {
    const a = accumulate(['\n ', ' <thi', 'nk>x</think>y']);
    assert.equal(a.reasoning, 'x');
    assert.equal(a.text, 'y');
    const b = accumulate(['Sure. ', '<think>not reasoning</think>']);
    assert.equal(b.reasoning, '');
    assert.equal(b.text, 'Sure. <think>not reasoning</think>');
  });

  it('an unclosed <think> at the end is reasoning; a lone "<thi" is text', () => {
    const a = accumulate(['<think>still going', ' </thi']);
    assert.equal(a.reasoning, 'still going </thi');
    assert.equal(a.text, '');
    const b = accumulate(['<thi']);
    assert.equal(b.text, '<thi');
    assert.equal(b.reasoning, '');
  });

  it('over the wire, tags and blank lines in separate chunks, three ways', async () => {
    const r = await threeWays(sse([chunk('<'), chunk('think'), chunk('>'), chunk('Thinking…'), chunk('</'), chunk('think>'), chunk('\n\n'), chunk('Answer 🌍', {}, 'stop')]));
    assert.equal(r.reasoning, 'Thinking…');
    assert.equal(r.text, 'Answer 🌍');
    assert.equal(r.reasoningField, 'think_tag');
    assert.equal(r.ended, 'done');
  });

  it('reasoning_details text (OpenRouter) and reasoning together are taken once', async () => {
    const r = await threeWays(sse([
      chunk(null, { reasoning: 'Once.', reasoning_details: [{ type: 'reasoning.text', text: 'Once.' }] }),
      chunk(null, { reasoning_details: [{ type: 'reasoning.text', text: ' Twice.' }] }),
      chunk('Done.', {}, 'stop'),
    ]));
    assert.equal(r.reasoning, 'Once. Twice.');
    assert.equal(r.text, 'Done.');
    assert.equal(r.reasoningField, 'reasoning');
  });
});

describe('tool calls with odd numbering', function () {
  this.timeout(20_000);
  const tc = (calls: unknown[], finish: string | null = null) => ({ id: 'c', choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: finish }] });

  it('the same index with a new id is a new call (servers that number every call 0)', async () => {
    const r = await threeWays(sse([
      tc([{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]),
      tc([{ index: 0, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }]),
      tc([{ index: 0, function: { arguments: '"Rome"}' } }], 'tool_calls'),
    ]));
    assert.deepEqual(r.toolCalls, [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
    ]);
  });

  it('without index or id, a new name or a finished call starts a new call; fragments continue one', async () => {
    const r = await threeWays(sse([
      tc([{ type: 'function', function: { name: 'a', arguments: '{"x":1}' } }]),
      tc([{ type: 'function', function: { name: 'b', arguments: '{"y":' } }]),
      tc([{ function: { arguments: '2}' } }]),
      tc([{ type: 'function', function: { name: 'b', arguments: '{"y":3}' } }], 'tool_calls'),
    ]));
    assert.deepEqual(r.toolCalls.map((t) => [t.function.name, t.function.arguments]), [['a', '{"x":1}'], ['b', '{"y":2}'], ['b', '{"y":3}']]);
  });

  it('wire keys never become object keys: a call named __proto__ with id constructor is kept as data', async () => {
    const r = await threeWays(sse([
      tc([{ index: 0, id: 'constructor', function: { name: '__proto__', arguments: '{"__proto__":' } }]),
      tc([{ index: 0, function: { arguments: '{"polluted":true}}' } }], 'tool_calls'),
    ]));
    assert.equal(r.toolCalls.length, 1);
    assert.equal(r.toolCalls[0].function.name, '__proto__');
    assert.equal(r.toolCalls[0].id, 'constructor');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('bodies that are not what they say', function () {
  this.timeout(20_000);

  it('labelled text/event-stream but a JSON error: a typed error, not an empty reply', async () => {
    const r = await threeWays(JSON.stringify({ error: { message: 'model is loading', type: 'server_error', code: 503 } }));
    assert.equal(r.ended, 'error');
    assert.equal(r.error?.kind, 'server');
    assert.match(r.error?.providerMessage ?? '', /model is loading/);
  });

  it('labelled text/event-stream but one JSON completion: parsed as a completion', async () => {
    const r = await threeWays(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'all at once' }, finish_reason: 'stop' }] }));
    assert.equal(r.ended, 'done');
    assert.equal(r.text, 'all at once');
  });

  it('labelled text/event-stream but an HTML page: a protocol error with a tag-free excerpt', async () => {
    const r = await threeWays('<html><body><h1>Captive portal</h1><p>Please log in</p></body></html>');
    assert.equal(r.error?.kind, 'protocol');
    assert.match(r.error?.message ?? '', /Captive portal Please log in/);
    assert.doesNotMatch(r.error?.message ?? '', /<h1>/);
  });

  it('no content type at all: SSE and JSON are told apart by their first bytes', async () => {
    const a = await threeWays(sse([chunk('sniffed'), chunk('', {}, 'stop')]), {});
    assert.equal(a.text, 'sniffed');
    assert.equal(a.ended, 'done');
    const b = await threeWays(JSON.stringify({ choices: [{ index: 0, message: { content: 'json' }, finish_reason: 'stop' }] }), {});
    assert.equal(b.text, 'json');
  });

  it('only keep-alive comments, then EOF: incomplete, not done', async () => {
    const r = await threeWays(': ping\n\n: ping\n\n');
    assert.equal(r.ended, 'incomplete');
    assert.equal(r.text, '');
    assert.equal(r.usage.estimated, true);
  });
});

describe('nothing hangs, nothing is lost', function () {
  this.timeout(15_000);

  it('an error status whose body never ends gives up after the idle timeout with the status kept', async () => {
    await withServer(async (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.write('{"error":{"message":"over');
      await new Promise(() => undefined);
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { idleTimeoutMs: 200 }), CHAT_BODY).result;
      assert.equal(r.ended, 'error');
      assert.equal(r.error?.status, 503);
      assert.equal(r.error?.kind, 'server');
    });
  });

  it('iterating after the result is in still yields every event, the end last', async () => {
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('late '), chunk('reader', {}, 'stop'), { id: 'c', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }]));
    }, async (s) => {
      const stream = streamChat(clientOptions(s), CHAT_BODY);
      const result = await stream.result;
      const events: StreamEvent[] = [];
      for await (const e of stream) events.push(e);
      assert.equal(result.text, 'late reader');
      assert.equal(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), 'late reader');
      assert.ok(events.some((e) => e.type === 'usage'));
      assert.deepEqual(events.at(-1), { type: 'end', state: 'done', error: undefined });
    });
  });

  it('leaving the loop early cancels the request: the server sees the socket close', async () => {
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([chunk('first ')], { done: false }));
      await new Promise(() => undefined);
    }, async (s) => {
      const stream = streamChat(clientOptions(s), CHAT_BODY);
      for await (const e of stream) if (e.type === 'text') break;
      const r = await stream.result;
      const closed = await s.waitForClose(3000);
      assert.equal(closed.clientClosedEarly, true);
      assert.equal(r.ended, 'cancelled');
      assert.equal(r.error, undefined);
      assert.equal(r.text, 'first ');
    });
  });

  it('a cancelled stream estimates completion tokens from text and reasoning, prompt tokens from the request', async () => {
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([chunk(null, { reasoning_content: 'Let me think about this carefully.' }), chunk('The partial answer')], { done: false }));
      await new Promise(() => undefined);
    }, async (s) => {
      const ac = new AbortController();
      const stream = streamChat(clientOptions(s, { signal: ac.signal }), CHAT_BODY);
      for await (const e of stream) if (e.type === 'text') ac.abort();
      const r = await stream.result;
      assert.equal(r.ended, 'cancelled');
      assert.equal(r.reasoning, 'Let me think about this carefully.');
      assert.equal(r.usage.estimated, true);
      assert.equal(r.usage.completion_tokens, estimateTokens('The partial answer' + 'Let me think about this carefully.'));
      assert.equal(r.usage.prompt_tokens, estimatePromptTokens(CHAT_BODY.messages as ChatMessage[]));
      assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
      await s.waitForClose(3000);
    });
  });

  it('the request timeout covers only the headers, and an idle timeout of 0 is off', async () => {
    await withServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of ['slow ', 'but ', 'steady']) {
        res.write(sse([chunk(piece)], { done: false }));
        await new Promise((r) => setTimeout(r, 150));
      }
      res.end(sse([chunk('', {}, 'stop')]));
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { requestTimeoutMs: 100, idleTimeoutMs: 0 }), CHAT_BODY).result;
      assert.equal(r.ended, 'done', r.error?.message);
      assert.equal(r.text, 'slow but steady');
    });
  });

  it('an already aborted signal sends nothing', async () => {
    await withServer((_req, res) => void res.end(), async (s) => {
      const r = await streamChat(clientOptions(s, { signal: AbortSignal.abort() }), CHAT_BODY).result;
      assert.equal(r.ended, 'cancelled');
      assert.equal(s.requests.length, 0);
    });
  });

  it('an already aborted signal sends no GET either: not /models, not llama.cpp\'s /props', async () => {
    await withServer((_req, res) => void res.end('{"data":[]}'), async (s) => {
      await assert.rejects(listModels(clientOptions(s, { signal: AbortSignal.abort() })), (e: unknown) => e instanceof ParleyError && e.kind === 'cancelled');
      assert.deepEqual(await new WindowProbe(clientOptions(s, { signal: AbortSignal.abort() }), []).windowOf('m'), {});
      assert.equal(s.requests.length, 0);
    });
  });

  it('a connection dropped before any headers is retried; 408 and 409 are retried too', async () => {
    let n = 0;
    await withServer((_req, res) => {
      n++;
      if (n === 1) return void res.socket?.destroy();
      if (n === 2) {
        res.writeHead(408, { 'content-type': 'application/json', 'retry-after-ms': '0' });
        return void res.end('{"error":{"message":"timeout"}}');
      }
      if (n === 3) {
        res.writeHead(409, { 'content-type': 'application/json', 'retry-after-ms': '0' });
        return void res.end('{"error":{"message":"conflict"}}');
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('fourth'), chunk('', {}, 'stop')]));
    }, async (s) => {
      const reasons: string[] = [];
      const r = await streamChat(clientOptions(s, { maxRetries: 3, onRetry: (i) => reasons.push(i.reason) }), CHAT_BODY).result;
      assert.equal(r.text, 'fourth');
      assert.equal(r.ended, 'done');
      assert.equal(s.requests.length, 4);
      assert.equal(reasons.length, 3);
      assert.match(reasons[0], /Cannot reach|broke|reset|socket/i);
    });
  });
});

describe('models list', function () {
  this.timeout(10_000);

  it('rejects with typed errors only: auth (key not echoed), 200 error body, timeout, cancelled, connection', async () => {
    await withServer(async (req, res) => {
      if (req.headers['x-case'] === 'auth') {
        res.writeHead(401, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}`, code: 'invalid_api_key' } }));
      }
      if (req.headers['x-case'] === 'lmstudio') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"error":"Unexpected endpoint or method. (GET /models)"}');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":[');
      await new Promise(() => undefined);
    }, async (s) => {
      const kindOf = async (o: ClientOptions) => {
        try {
          await listModels(o);
          return 'resolved';
        } catch (e) {
          assert.ok(e instanceof ParleyError, String(e));
          assert.ok(!`${e.message} ${e.providerMessage} ${String(e)}`.includes(KEY));
          return e.kind;
        }
      };
      assert.equal(await kindOf(clientOptions(s, { apiKey: KEY, headers: { 'x-case': 'auth' } })), 'auth');
      assert.equal(await kindOf(clientOptions(s, { headers: { 'x-case': 'lmstudio' } })), 'not_found');
      assert.equal(await kindOf(clientOptions(s, { requestTimeoutMs: 200 })), 'timeout');
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      assert.equal(await kindOf(clientOptions(s, { signal: ac.signal })), 'cancelled');
      assert.equal(await kindOf(clientOptions(s, { signal: AbortSignal.abort() })), 'cancelled');
    });
    const gone = await startTestServer(() => undefined);
    await gone.close();
    await assert.rejects(listModels({ endpoint: resolveEndpoint(gone.url) }), (e: unknown) => e instanceof ParleyError && e.kind === 'connection');
  });

  it('asks again on another connection when the server closes a kept-alive one as it is reused (llama.cpp\'s router mode does)', async () => {
    // The first two connections reused are closed at that request, with no answer and no Connection: close before.
    const served = new WeakSet<object>();
    let closed = 0;
    await withServer((req, res) => {
      const socket = res.socket as object;
      if (served.has(socket) && closed < 2) {
        closed++;
        return void res.socket?.destroy();
      }
      served.add(socket);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.path.startsWith('/props') ? { default_generation_settings: { n_ctx: 2048 } } : { object: 'list', data: [{ id: 'tiny-a' }] }));
    }, async (s) => {
      for (let i = 0; i < 3; i++) assert.deepEqual(await listModels(clientOptions(s)), ['tiny-a']);
      const probe = new WindowProbe(clientOptions(s), [{ id: 'tiny-a', server: 'llama.cpp' }]);
      assert.deepEqual(await probe.windowOf('tiny-a'), { window: 2048, from: 'llama.cpp\'s /props', kind: 'llama.cpp', loaded: true });
      assert.equal(closed, 2, 'connections were closed as they were reused');
    });
  });
});

describe('redirects and logs', function () {
  this.timeout(10_000);

  it('follows at most 5 same-origin redirects, and refuses a 302 that would turn the POST into a GET', async () => {
    await withServer((req, res) => {
      const hop = Number(/hop(\d+)/.exec(req.path)?.[1] ?? 0);
      if (req.headers['x-case'] === '302') {
        res.writeHead(302, { location: '/elsewhere/v1/chat/completions' });
        return void res.end();
      }
      res.writeHead(308, { location: `/hop${hop + 1}/v1/chat/completions` });
      res.end();
    }, async (s) => {
      const r = await streamChat(clientOptions(s), CHAT_BODY).result;
      assert.equal(r.ended, 'error');
      assert.match(r.error?.message ?? '', /Too many redirects/);
      assert.equal(s.requests.length, 6);
      const before = s.requests.length;
      const r2 = await streamChat(clientOptions(s, { headers: { 'x-case': '302' } }), CHAT_BODY).result;
      assert.equal(r2.ended, 'error');
      assert.match(r2.error?.message ?? '', /GET/);
      assert.equal(s.requests.length, before + 1);
    });
  });

  it('log lines, retries, redirects and errors never carry the key', async () => {
    let n = 0;
    await withServer((req, res) => {
      n++;
      if (n === 1) {
        res.writeHead(307, { location: '/again/v1/chat/completions' });
        return void res.end();
      }
      if (n === 2) {
        res.writeHead(500, { 'content-type': 'application/json', 'retry-after-ms': '0' });
        return void res.end(JSON.stringify({ error: { message: `upstream said Authorization: ${req.headers.authorization}` } }));
      }
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY.slice(0, 7)}${'*'.repeat(20)}${KEY.slice(-4)}. Full: ${KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    }, async (s) => {
      const lines: string[] = [];
      const retries: string[] = [];
      const r = await streamChat(clientOptions(s, { apiKey: KEY, maxRetries: 1, log: (l) => lines.push(l), onRetry: (i) => retries.push(i.reason) }), CHAT_BODY).result;
      assert.equal(r.error?.kind, 'auth');
      assert.equal(s.requests[1].headers.authorization, `Bearer ${KEY}`);
      assert.ok(lines.length >= 2);
      assert.equal(retries.length, 1);
      const everything = [...lines, ...retries, r.error?.message, r.error?.providerMessage, String(r.error), JSON.stringify(r), r.error?.stack].join('\n');
      assert.ok(!everything.includes(KEY), everything);
      assert.ok(!everything.includes(KEY.slice(-4) + '.'), 'masked echo kept its tail');
    });
  });
});

describe('custom headers', function () {
  this.timeout(10_000);
  const refused = (h: unknown, re: RegExp) =>
    assert.throws(() => validateHeaders(h), (e: unknown) => e instanceof ParleyError && e.kind === 'config' && re.test(e.message), JSON.stringify(h));

  it('accepts ordinary headers, and none at all', () => {
    validateHeaders(undefined);
    validateHeaders({});
    validateHeaders({ 'HTTP-Referer': 'https://example.com', 'X-Title': 'Parley', 'x-api-version': '2024-10-21', 'OpenAI-Beta': 'a=v1', 'X-Tab': 'a\tb', 'X-Empty': '' });
  });

  it('refuses Authorization, Host, Content-Length and Cookie in any case, never showing the value', () => {
    for (const name of ['Authorization', 'authorization', 'AUTHORIZATION', 'Host', 'host', 'Content-Length', 'content-LENGTH', 'Cookie', 'cookie']) {
      refused({ [name]: 'Bearer sk-secret-value-0123456789' }, /not allowed/);
      try {
        validateHeaders({ [name]: 'Bearer sk-secret-value-0123456789' });
      } catch (e) {
        assert.ok(!String(e).includes('secret-value'), String(e));
      }
    }
    refused({ Authorization: 'x' }, /API key/);
  });

  it('refuses, in any case and with a reason, the connection-level headers fetch cannot send, proxy credentials and cookies by any name', () => {
    const connection = ['Transfer-Encoding', 'transfer-encoding', 'Keep-Alive', 'KEEP-ALIVE', 'Upgrade', 'Expect', 'Connection', 'connection', 'TE', 'te', 'Proxy-Connection'];
    for (const name of connection) refused({ [name]: 'close' }, /not allowed: it belongs to the connection/);
    for (const name of ['Proxy-Authorization', 'proxy-authorization']) refused({ [name]: 'Basic dXNlcjpwYXNz' }, /not allowed: it is a proxy’s credential/);
    for (const name of ['Set-Cookie', 'set-COOKIE', 'Cookie2', 'cookie2']) refused({ [name]: 'session=abc' }, /not allowed: Parley sends no cookies/);
    refused({ 'Content-Type': 'text/plain' }, /not allowed: Parley sends the body as JSON/);
    for (const name of [...connection, 'Proxy-Authorization', 'Set-Cookie', 'Cookie2']) {
      try {
        validateHeaders({ [name]: 'Bearer sk-secret-value-0123456789' });
      } catch (e) {
        assert.ok(!String(e).includes('secret-value'), String(e));
      }
    }
  });

  it('refuses two names that differ only in case, naming both', () => {
    refused({ 'X-Dup': 'a', 'x-dup': 'b' }, /"X-Dup" and "x-dup" are the same header/);
    refused({ 'X-Team': 'a', 'X-Other': 'c', 'X-TEAM': 'b' }, /"X-Team" and "X-TEAM"/);
    validateHeaders({ 'X-Dup': 'a', 'X-Dup2': 'b' });
  });

  it('refuses invalid names, control characters in names and values, and values that are not text', () => {
    for (const name of ['', 'X Title', 'X-Title:', 'X-T\u00e9', 'X-A\r\nX-B', 'X-\u0000', '(x)', 'a"b', 'a/b']) refused({ [name]: 'v' }, /not a valid HTTP header name/);
    for (const value of ['a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'a\u0000b', 'a\u001bb', 'a\u007fb']) refused({ 'X-Title': value }, /control character/);
    refused({ 'X-Title': 'Parley 🌍' }, /cannot carry/);
    validateHeaders({ 'X-Title': 'Café' });
    refused({ 'X-Title': 42 }, /must be text/);
    refused({ 'X-Title': null }, /must be text/);
    refused('X-Title: x', /object/);
    refused(['X-Title', 'x'], /object/);
    refused(null, /object/);
    // A name shown in a message is escaped: no raw line break gets into a log.
    try {
      validateHeaders({ 'X-A\r\nX-B': 'v' });
    } catch (e) {
      assert.ok(!/[\r\n]/.test((e as Error).message), (e as Error).message);
    }
  });

  it('a refused header ends the request as a config error before anything is sent; others reach the server', async () => {
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('ok'), chunk('', {}, 'stop')]));
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { apiKey: KEY, headers: { authorization: 'Bearer other' } }), CHAT_BODY).result;
      assert.equal(r.ended, 'error');
      assert.equal(r.error?.kind, 'config');
      const out = await chatWithFallback(clientOptions(s, { headers: { 'X-Title': 'a\r\nHost: evil' } }), { model: 'm', stream: true }, [{ role: 'user', content: 'x' }], undefined);
      assert.equal(out.result.error?.kind, 'config');
      await assert.rejects(listModels(clientOptions(s, { headers: { Cookie: 'a=b' } })), (e: unknown) => e instanceof ParleyError && e.kind === 'config');
      // Connection-level headers fetch would refuse: a config error at once, not "Cannot reach" after retries.
      const retries: string[] = [];
      const hopHeaders: Array<Record<string, string>> = [{ 'Transfer-Encoding': 'chunked' }, { Expect: '100-continue' }, { 'X-Dup': 'a', 'x-dup': 'b' }];
      for (const headers of hopHeaders) {
        const refusedHop = await streamChat(clientOptions(s, { apiKey: KEY, maxRetries: 2, headers, onRetry: (i) => retries.push(i.reason) }), CHAT_BODY).result;
        assert.equal(refusedHop.error?.kind, 'config', JSON.stringify(refusedHop.error));
        assert.doesNotMatch(refusedHop.error?.message ?? '', /Cannot reach/);
      }
      assert.deepEqual(retries, [], 'nothing was retried');
      assert.equal(s.requests.length, 0);
      const ok = await streamChat(clientOptions(s, { apiKey: KEY, headers: { 'X-Title': 'Parley' } }), CHAT_BODY).result;
      assert.equal(ok.text, 'ok');
      assert.equal(s.requests[0].headers['x-title'], 'Parley');
      assert.equal(s.requests[0].headers.authorization, `Bearer ${KEY}`);
    });
  });
});

describe('redaction and error bodies', () => {
  it('removes exact keys, Bearer tokens, masked echoes and key-like query values', () => {
    assert.equal(redact('Incorrect API key provided: DEAD****BEEF.', []), 'Incorrect API key provided: [redacted]');
    assert.equal(redact('key sk-abc1***********wxyz is wrong', []), 'key [redacted] is wrong');
    assert.equal(redact('authorization: Bearer abc.def.ghi', []), 'authorization: Bearer [redacted]');
    assert.equal(redact('GET https://x/v1/models?key=AIzaSECRET&alt=json', []), 'GET https://x/v1/models?key=[redacted]&alt=json');
    assert.equal(redact('my-own-secret-123 twice my-own-secret-123', ['my-own-secret-123']), '[redacted] twice [redacted]');
    assert.equal(redact('plain text, **bold** and 2 * 3', []), 'plain text, **bold** and 2 * 3');
  });

  it('removes key-shaped tokens it was not told about: OpenAI sk-, Groq gsk_, xAI xai-', () => {
    const groq = `gsk_${'A1b2C3d4E5'.repeat(5)}xy`;
    assert.equal(redact(`Invalid API Key: ${groq}.`, []), 'Invalid API Key: [redacted].');
    assert.equal(redact(`{"key":"${groq}"}`, []), '{"key":"[redacted]"}');
    assert.equal(redact('key sk-proj-abcdefghijklmnop1234 and xai-abcdefghijklmnop1234', []), 'key [redacted] and [redacted]');
    // Not keys: too short, or only a look-alike prefix.
    assert.equal(redact('gsk_short, task_queue_name_long_enough, gsk-', []), 'gsk_short, task_queue_name_long_enough, gsk-');
  });

  it('a key in the base URL query never reaches an error', () => {
    const e = errorFromResponse(404, 'text/plain', 'nope', { url: 'https://g.example/v1beta/openai/chat/completions?key=AIzaSyVERYSECRET' });
    assert.ok(!`${e.message} ${e.url}`.includes('AIzaSyVERYSECRET'), `${e.message} ${e.url}`);
  });

  it('reads every error shape: object, bare string, integer code, null type, pydantic detail', () => {
    assert.deepEqual(wireError({ error: 'Unexpected endpoint' }), { message: 'Unexpected endpoint' });
    assert.equal(wireError({ error: { message: 'x', code: 429, type: null } })?.status, 429);
    // vLLM / FastAPI 422
    const v = wireError({ detail: [{ loc: ['body', 'top_p'], msg: 'Input should be less than or equal to 1', type: 'less_than_equal', input: 5 }] });
    assert.equal(v?.param, 'top_p');
    assert.match(v?.message ?? '', /top_p: Input should be less than or equal to 1/);
    // Mistral: the parameter is only in message.detail[].loc, and `input` (the value sent) is left out of the message.
    const m = wireError({ object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'tools'], msg: 'Extra inputs are not permitted', input: [{ function: { parameters: { properties: { temperature: {} } } } }] }] }, type: 'invalid_request_error', param: null, code: null });
    assert.equal(m?.param, 'tools');
    assert.doesNotMatch(m?.message ?? '', /temperature/);
    const legacy = wireError({ object: 'error', message: JSON.stringify({ detail: [{ type: 'extra_forbidden', loc: ['body', 'frequency_penalty'], msg: 'Extra inputs are not permitted' }] }), type: 'internal_error_proxy', code: '1000' });
    assert.equal(legacy?.param, 'frequency_penalty');
    assert.equal(errorFromResponse(422, 'application/json', JSON.stringify({ object: 'Error', detail: [{ loc: ['body', 'tools'], msg: 'Extra inputs are not permitted' }], code: 3001 }), { url: 'http://h/v1/chat/completions' }).kind, 'bad_request');
  });

  it('context length is recognised by code or by words; a model 404 names the model', () => {
    const ctx = { url: 'http://h:1/v1/chat/completions', model: 'llama-9' };
    assert.equal(errorFromResponse(400, 'application/json', '{"error":{"message":"Prompt is too long: 9000 tokens"}}', ctx).kind, 'context_length');
    assert.equal(errorFromResponse(400, 'application/json', '{"error":{"message":"x","code":"context_length_exceeded"}}', ctx).kind, 'context_length');
    const nf = errorFromResponse(404, 'application/json', '{"error":{"message":"model \\"llama-9\\" not found, try pulling it first"}}', ctx);
    assert.equal(nf.kind, 'not_found');
    assert.match(nf.message, /"llama-9"/);
  });

  it('estimates: about 4 characters a token, at least one per word or symbol, images a fixed amount', () => {
    assert.equal(estimateTokens(''), 0);
    assert.equal(estimateTokens('abcdefgh'), 2);
    assert.ok(estimateTokens('a b c d e f g h') >= 6);
    const withImage: ChatMessage[] = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }];
    const without: ChatMessage[] = [{ role: 'user', content: [] }];
    assert.equal(estimatePromptTokens(withImage) - estimatePromptTokens(without), TOKENS_PER_IMAGE);
  });
});

describe('capability fallback', function () {
  this.timeout(20_000);
  const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
  const TOOL = { type: 'function' as const, function: { name: 'set_temperature', parameters: { type: 'object', properties: { temperature: { type: 'number' } } } } };
  const ALL: RequestSettings = {
    model: 'm', stream: true, temperature: 0.5, topP: 0.9, maxTokens: 20, presencePenalty: 0.1, frequencyPenalty: 0.1,
    tools: [TOOL], parallelToolCalls: true, responseFormat: { type: 'json_object' },
  };

  /** A server that refuses `param` while it is sent, in the given way, and otherwise streams "ok". */
  function refusing(param: string, how: 'param' | 'message' | 'pydantic', status = 400): Handler {
    return (req, res) => {
      if (req.json && req.json[param] !== undefined) {
        const body =
          how === 'param' ? { error: { message: `Unsupported parameter: '${param}'.`, type: 'invalid_request_error', param, code: 'unsupported_parameter' } }
          : how === 'message' ? { error: { message: `property '${param}' is unsupported, did you mean 'stream'?`, type: 'invalid_request_error' } }
          : { object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', param], msg: 'Extra inputs are not permitted', input: req.json[param] }] }, type: 'invalid_request_error', param: null, code: null };
        res.writeHead(status, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(body));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('ok'), chunk('', {}, 'stop')]));
    };
  }

  const PARAMS = ['stream_options', 'response_format', 'max_tokens', 'temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'tools', 'parallel_tool_calls'];
  for (const param of PARAMS) {
    for (const how of ['param', 'message', 'pydantic'] as const) {
      it(`${param}, named in ${how === 'pydantic' ? 'a 422 detail' : `the ${how}`}: one retry without it, then none`, async () => {
        await withServer(refusing(param, how, how === 'pydantic' ? 422 : 400), async (s) => {
          const first = await chatWithFallback(clientOptions(s), ALL, messages, undefined);
          assert.equal(first.result.text, 'ok', first.result.error?.message);
          assert.deepEqual(first.dropped, [param]);
          assert.equal(s.requests.length, 2);
          assert.equal(s.requests[1].json[param], undefined);
          if (param === 'max_tokens') {
            assert.equal(s.requests[1].json.max_completion_tokens, 20);
            assert.deepEqual(first.adaptations, { maxCompletionTokens: true });
          } else {
            assert.deepEqual(first.adaptations.drop, [param]);
          }
          if (param === 'tools') assert.equal(s.requests[1].json.parallel_tool_calls, undefined);
          // Everything else still went.
          for (const p of PARAMS) if (p !== param && !(param === 'tools' && p === 'parallel_tool_calls')) assert.notEqual(s.requests[1].json[p], undefined, p);
          const second = await chatWithFallback(clientOptions(s), ALL, messages, first.adaptations);
          assert.equal(second.result.text, 'ok');
          assert.deepEqual(second.dropped, []);
          assert.equal(s.requests.length, 3);
        });
      });
    }
  }

  it("LM Studio's response_format message, without streaming", async () => {
    await withServer((req, res) => {
      if (req.json.response_format) {
        res.writeHead(400, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: "'response_format.type' must be 'json_schema' or 'text'" }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { content: '{}' }, finish_reason: 'stop' }] }));
    }, async (s) => {
      const out = await chatWithFallback(clientOptions(s), { model: 'm', stream: false, responseFormat: { type: 'json_object' } }, messages, undefined);
      assert.equal(out.result.text, '{}');
      assert.deepEqual(out.dropped, ['response_format']);
      assert.equal(s.requests[1].json.stream, false);
    });
  });

  it('a refusal of tools whose schema mentions temperature drops tools, not temperature', async () => {
    await withServer(refusing('tools', 'pydantic', 422), async (s) => {
      const out = await chatWithFallback(clientOptions(s), ALL, messages, undefined);
      assert.deepEqual(out.dropped, ['tools']);
      assert.equal(s.requests[1].json.temperature, 0.5);
    });
  });

  it('a parameter that was not sent is not "dropped", and an error after streamed text is not retried', async () => {
    await withServer(refusing('temperature', 'param'), async (s) => {
      const out = await chatWithFallback(clientOptions(s), { model: 'm', stream: true }, messages, undefined);
      assert.equal(out.result.text, 'ok');
      assert.deepEqual(out.dropped, []);
      assert.equal(s.requests.length, 1);
    });
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse([chunk('half '), { error: { message: "Unsupported parameter: 'temperature'", param: 'temperature', code: 400 } }], { done: false }));
    }, async (s) => {
      const seen: StreamEvent[] = [];
      const out = await chatWithFallback(clientOptions(s), { model: 'm', stream: true, temperature: 1 }, messages, undefined, (e) => seen.push(e));
      assert.equal(out.result.ended, 'error');
      assert.equal(out.result.text, 'half ');
      assert.deepEqual(out.dropped, []);
      assert.equal(s.requests.length, 1);
      assert.ok(seen.some((e) => e.type === 'text'));
    });
  });
});
