// Faults found against real third-party servers and in an adversarial review (issue 21): errors inside a 200
// stream, error bodies with a name and a message, half characters, NaN settings, keys of any shape in errors,
// servers that were reached but answered malformed HTTP, and bodies too large to read. Real HTTP on 127.0.0.1.
import * as assert from 'node:assert/strict';
import { complete, listModels, MAX_BODY_BYTES, streamChat, type ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import { errorFromResponse } from '../../src/core/errors';
import { errorView } from '../../src/core/errorView';
import { validateSettings } from '../../src/core/request';
import { CHAT_BODY, clientOptions, deltaChunk, streamOneWay, type Streamed } from '../support/client';
import { allWays, sse, startTestServer, wayLabel, withServer, type Handler } from '../support/server';

/** Streams `body` (SSE, one way: whole unless told) and returns every event and the result. */
const streamed = (body: string, options: Partial<ClientOptions> = {}, way = allWays(3)[0]): Promise<Streamed> => streamOneWay(body, way, { options });


/** Half a character: a high surrogate without its low one after it, or a low one without its high one before. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('errors inside a 200 stream: the status and the message agree', function () {
  this.timeout(20_000);

  it('an invalid_api_key error chunk is a 401, and its message and card say where it came from, never "(HTTP 200)"', async () => {
    const { result } = await streamed(sse([{ error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' } }]));
    const e = result.error;
    assert.equal(e?.kind, 'auth');
    assert.equal(e?.status, 401);
    assert.match(e!.message, /status 401, inside an HTTP 200 response/);
    assert.doesNotMatch(e!.message, /\(HTTP 200\)/);
    const card = errorView(e!, { model: 'm', url: e!.url ?? '' });
    assert.match(card.title, /status 401, inside an HTTP 200 response/);
  });

  it('a plain-text `event: error` frame keeps the 200 it came in, and says nothing of a 500', async () => {
    const { result, events } = await streamed(sse([deltaChunk({ content: 'so far' }), 'event: error\ndata: upstream exploded\n\n'], { done: false }));
    const e = result.error;
    assert.equal(result.ended, 'error');
    assert.equal(result.text, 'so far');
    assert.equal(e?.kind, 'server');
    assert.equal(e?.status, 200);
    assert.equal(e?.providerMessage, 'upstream exploded');
    assert.match(e!.message, /upstream exploded/);
    assert.doesNotMatch(e!.message, /500/);
    assert.doesNotMatch(errorView(e!, { model: 'm', url: '' }).title, /500/);
    assert.equal(events.at(-1)?.type, 'end');
  });

  it('a JSON `event: error` with no error field is still the server’s own error, not an invented 500', async () => {
    const { result } = await streamed(sse(['event: error\ndata: {"message":"worker crashed","type":"overloaded"}\n\n'], { done: false }));
    assert.equal(result.error?.status, 200);
    assert.match(result.error!.message, /worker crashed/);
    assert.doesNotMatch(result.error!.message, /500/);
  });
});

describe('error bodies that name the error and describe it', () => {
  it('{"error": "TypeError", "message": "…", "status": 500} shows both the name and the message', () => {
    const body = JSON.stringify({ error: 'TypeError', message: "Cannot read properties of null (reading 'choices')", status: 500 });
    const e = errorFromResponse(500, 'application/json', body, { url: 'http://h.example/v1/chat/completions' });
    assert.equal(e.kind, 'server');
    assert.equal(e.providerMessage, "TypeError: Cannot read properties of null (reading 'choices')");
    assert.match(e.message, /TypeError: Cannot read properties of null/);
    // The body's status counts for an error inside a 200 response too.
    const inBand = errorFromResponse(200, 'application/json', body, { url: 'http://h.example/v1/chat/completions' });
    assert.equal(inBand.status, 500);
    assert.match(inBand.message, /TypeError: Cannot read properties of null/);
  });

  it('a bare string error without a message is shown as it is', () => {
    const e = errorFromResponse(400, 'application/json', JSON.stringify({ error: 'Unexpected endpoint' }), { url: 'http://h.example/v1' });
    assert.equal(e.providerMessage, 'Unexpected endpoint');
  });
});

describe('half characters never reach an event', function () {
  this.timeout(30_000);

  it('an emoji split across two chunks by UTF-16 unit arrives whole, in text, reasoning and refusal, every way the bytes are cut', async () => {
    const body = sse([
      deltaChunk({ reasoning_content: 'think \ud83d' }),
      deltaChunk({ reasoning_content: '\ude00 done' }),
      deltaChunk({ content: 'A\ud83d' }),
      deltaChunk({ content: '\ude00B\ud83d' }),
      deltaChunk({ content: '\ude01' }),
      deltaChunk({ refusal: 'no \ud83d' }),
      deltaChunk({ refusal: '\ude02' }, 'stop'),
    ]);
    for (const way of allWays(21)) {
      const { events, result } = await streamed(body, {}, way);
      for (const e of events) {
        if (e.type === 'text' || e.type === 'reasoning' || e.type === 'refusal') {
          assert.doesNotMatch(e.text, LONE_SURROGATE, `${wayLabel(way)}: a ${e.type} event carries half a character: ${JSON.stringify(e.text)}`);
        }
      }
      assert.equal(result.text, 'A😀B😁', wayLabel(way));
      assert.equal(result.reasoning, 'think 😀 done', wayLabel(way));
      assert.equal(result.refusal, 'no 😂', wayLabel(way));
      const joined = events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join('');
      assert.equal(joined, 'A😀B😁', wayLabel(way));
    }
  });

  it('a half character whose pair never comes is let out at the end: the text is what the server sent', async () => {
    const { events, result } = await streamed(sse([deltaChunk({ content: 'end \ud83d' }, 'stop')]));
    assert.equal(result.text, 'end \ud83d');
    assert.equal(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), 'end \ud83d');
  });
});

describe('settings that are not numbers', () => {
  it('NaN and Infinity are refused by their names, never as "null"', () => {
    for (const [value, shown] of [[NaN, 'NaN'], [Infinity, 'Infinity'], [-Infinity, '-Infinity']] as const) {
      assert.throws(() => validateSettings({ model: 'm', stream: true, temperature: value }), (e: Error) => {
        assert.match(e.message, new RegExp(`parley\\.temperature \\(temperature\\) must be a number from 0 to 2; it is ${shown}\\.`));
        assert.doesNotMatch(e.message, /null/);
        return true;
      });
    }
    assert.throws(() => validateSettings({ model: 'm', stream: true, maxTokens: NaN }), /it is NaN\./);
    assert.throws(() => validateSettings({ model: 'm', stream: true, topP: '0.5' as unknown as number }), /it is "0\.5"\./);
  });
});

describe('a registered key of any shape never reaches an error', function () {
  this.timeout(30_000);
  // Neither key looks like a key: no sk- prefix, no Bearer before it, no masked echo. Only exact redaction finds them.
  const KEYS = ['my-local-proxy-token-42', 'localsecret-abc123-DEF456'];

  function assertClean(where: string, e: { message: string; providerMessage?: string; url?: string } | undefined, key: string): void {
    assert.ok(e, `${where}: no error`);
    for (const [field, text] of Object.entries({ message: e.message, providerMessage: e.providerMessage, url: e.url })) {
      assert.ok(!text?.includes(key), `${where}: the key is in error.${field}: ${text}`);
    }
  }

  it('errorFromResponse leaves out the exact keys it is given, in every body shape', () => {
    const key = KEYS[0];
    const ctx = { url: 'http://h.example/v1/chat/completions', secrets: [key] };
    const bodies: Array<[number, string, string]> = [
      [401, 'text/plain', `token ${key} is not valid`],
      [401, 'application/json', JSON.stringify({ error: { message: `token ${key} is not valid`, code: 'invalid_api_key' } })],
      [403, 'application/json', JSON.stringify({ error: `token ${key} is not valid` })],
      [500, 'text/html', `<html><body><h1>token ${key} is not valid</h1></body></html>`],
      [200, 'application/json', JSON.stringify({ error: { message: `token ${key} is not valid` } })],
      [200, 'text/plain', `token ${key} is not valid`],
      [422, 'application/json', JSON.stringify({ detail: [{ loc: ['body', 'model'], msg: `token ${key} is not valid` }] })],
    ];
    for (const [status, type, body] of bodies) {
      const e = errorFromResponse(status, type, body, ctx);
      assertClean(`${status} ${type}`, e, key);
      assert.match(`${e.message} ${e.providerMessage}`, /\[redacted\]/, `${status} ${type}: the redaction is not shown`);
    }
  });

  it('over the wire: error statuses, error chunks, non-JSON chunks, error events and the models list', async () => {
    for (const key of KEYS) {
      const said = `token ${key} is not valid`;
      const cases: Array<[string, Handler]> = [
        ['401 text', (_q, res) => void res.writeHead(401, { 'content-type': 'text/plain' }).end(said)],
        ['401 JSON', (_q, res) => void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: said } }))],
        ['200 not JSON', (_q, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(said)],
        ['error chunk', (_q, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sse([{ error: { message: said } }]))],
        ['chunk that is not JSON', (_q, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: {bad key was ${key}\n\n`)],
        ['event: error', (_q, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: error\ndata: ${said}\n\n`)],
      ];
      for (const [name, handler] of cases) {
        const r = await withServer(handler, (s) => streamChat(clientOptions(s, { apiKey: key }), CHAT_BODY).result);
        assert.equal(r.ended, 'error', name);
        assertClean(`${name} (${key})`, r.error, key);
      }
      await withServer((_q, res) => void res.writeHead(401, { 'content-type': 'text/plain' }).end(said), async (s) => {
        await assert.rejects(listModels(clientOptions(s, { apiKey: key })), (e: Error & { providerMessage?: string }) => {
          assertClean(`models list (${key})`, e, key);
          return true;
        });
      });
    }
  });
});

describe('servers that were reached but answered malformed HTTP', function () {
  this.timeout(30_000);

  it('a connection that breaks mid-reply says so, never "Cannot reach", and keeps the text', async () => {
    await withServer(async (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse([deltaChunk({ content: 'half a reply' })], { done: false }));
      await new Promise((r) => setTimeout(r, 50));
      res.destroy();
    }, async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 2 }), CHAT_BODY).result;
      assert.equal(r.ended, 'error');
      assert.equal(r.text, 'half a reply');
      assert.equal(r.error?.kind, 'connection');
      assert.match(r.error!.message, /^The connection to 127\.0\.0\.1:\d+ broke mid-reply: /);
      assert.doesNotMatch(r.error!.message, /Cannot reach/);
    });
  });

  const malformed: Array<[string, Handler, RegExp]> = [
    ['an unsolicited 100 Continue', (_q, res) => {
      res.writeContinue();
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sse([deltaChunk({ content: 'x' }, 'stop')]));
    }, /was reached, but it sent an informational \(1xx\) response/],
    ['a Location header that is not a URL', (_q, res) => void res.writeHead(307, { location: 'http://[::1' }).end(), /was reached, but it answered 307 with a redirect to an address that is not a URL/],
    ['bytes that are not HTTP at all', (_q, res) => void res.socket?.end('HELLO\r\n\r\n'), /was reached, but its response is not valid HTTP/],
  ];
  for (const [what, handler, said] of malformed) {
    it(`${what}: a protocol error that says the server was reached, not retried`, async () => {
      await withServer(handler, async (s) => {
        const r = await streamChat(clientOptions(s, { maxRetries: 2 }), CHAT_BODY).result;
        assert.equal(r.ended, 'error');
        assert.equal(r.error?.kind, 'protocol');
        assert.match(r.error!.message, said);
        assert.doesNotMatch(r.error!.message, /Cannot reach/);
        assert.equal(s.requests.length, 1, 'retried a malformed answer');
      });
    });
  }

  it('a server that is not running is still "Cannot reach", and still retried', async () => {
    const s = await startTestServer(() => undefined);
    const url = s.url;
    await s.close();
    const r = await streamChat({ endpoint: resolveEndpoint(url), maxRetries: 1, requestTimeoutMs: 5000 }, CHAT_BODY).result;
    assert.equal(r.error?.kind, 'connection');
    assert.match(r.error!.message, /^Cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused/);
  });
});

describe('bodies too large to read', function () {
  this.timeout(60_000);

  /** Serves `total` bytes of `type` in 64 KB writes, stopping when the client hangs up; resolves the bytes written. */
  function download(type: string, total: number): { handler: Handler; written: () => number } {
    let written = 0;
    const piece = Buffer.alloc(64 * 1024, 'A');
    return {
      written: () => written,
      handler: async (_q, res) => {
        res.writeHead(200, { 'content-type': type });
        // One wake-up for both 'drain' and 'close', so no listener piles up across writes.
        let wake: (() => void) | undefined;
        const resume = () => wake?.();
        res.on('drain', resume).on('close', resume);
        while (written < total && !res.destroyed) {
          const ok = res.write(piece);
          written += piece.length;
          if (!ok) await new Promise<void>((r) => (wake = r));
        }
        if (!res.destroyed) res.end();
      },
    };
  }

  for (const [via, type] of [['streamChat', 'application/octet-stream'], ['complete', 'application/json']] as const) {
    it(`${via}: a 32 MB ${type} body is not read whole; the error says it was too large`, async () => {
      const total = 32 * 1024 * 1024;
      const d = download(type, total);
      await withServer(d.handler, async (s) => {
        const r = via === 'complete' ? await complete(clientOptions(s), CHAT_BODY) : await streamChat(clientOptions(s), CHAT_BODY).result;
        assert.equal(r.ended, 'error');
        assert.equal(r.error?.kind, 'protocol');
        assert.match(r.error!.message, new RegExp(`larger than ${MAX_BODY_BYTES / 1024 / 1024} MB that is not an event stream`));
        const rec = await s.waitForClose();
        assert.ok(rec.clientClosedEarly, 'the client read the whole body');
        assert.ok(d.written() < total, `the server wrote all ${total} bytes`);
      });
    });
  }
});
