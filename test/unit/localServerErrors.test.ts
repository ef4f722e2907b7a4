// Issue 34's errors from local servers and gateways, against real servers on 127.0.0.1: an overflow is a context_length
// error, an image a text-only model cannot take is refused and never retried, a reply after reasoning starts without
// the server's blank lines, Test Connection's words for a /v1 Parley added and for a gateway that breaks streaming.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listModelInfo, streamChat } from '../../src/core/client';
import { diagnose, reportMarkdown } from '../../src/core/diagnose';
import { resolveEndpoint } from '../../src/core/endpoint';
import { errorView } from '../../src/core/errorView';
import { chatWithFallback } from '../../src/core/fallback';
import { readProfiles } from '../../src/core/profiles';
import type { StreamEvent } from '../../src/core/types';
import { CHAT_BODY, chunk, clientOptions, deltaChunk, sameEveryWay } from '../support/client';
import { sse, withServer, type RecordedRequest } from '../support/server';
import type { ServerResponse } from 'node:http';

const threeWays = sameEveryWay(34);

/** A body from test/fixtures/providers (SOURCES.md says where each comes from). */
function fixture(name: string): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return fs.readFileSync(path.join(dir, 'test/fixtures/providers', name), 'utf8');
}

function json(res: ServerResponse, status: number, body: string | object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const posts = (requests: RecordedRequest[]) => requests.filter((r) => r.method === 'POST');
const completion = (content: string) => ({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } });

describe("issue 34: llama.cpp's overflow is a context-length error (item 2)", function () {
  this.timeout(20_000);

  it('the 400 exceed_context_size_error is context_length, sent once (no retry), and its card says how to make room', async () => {
    const body = fixture('llamacpp-error-400-exceed-context-size.json');
    await withServer((_req, res) => json(res, 400, body), async (s) => {
      const stream = streamChat(clientOptions(s, { maxRetries: 2 }), CHAT_BODY);
      const r = await stream.result;
      assert.equal(r.error?.kind, 'context_length', String(r.error));
      assert.equal(r.error?.status, 400);
      assert.match(String(r.error?.providerMessage), /request \(2248 tokens\) exceeds the available context size \(2048 tokens\)/);
      assert.equal(posts(s.requests).length, 1, 'the same request overflows again: it is not retried');
      const view = errorView(r.error!, { model: 'tiny', url: s.url });
      assert.equal(view.kind, 'context_length');
      assert.match(String(view.hint), /llama\.cpp's -c/);
    });
  });

  it('an overflow is never retried, even when a server says it with a 5xx', async () => {
    const body = JSON.stringify({ error: { code: 500, message: 'request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it', type: 'server_error' } });
    await withServer((_req, res) => json(res, 500, body), async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 2 }), CHAT_BODY).result;
      assert.equal(r.error?.kind, 'context_length');
      assert.equal(posts(s.requests).length, 1);
    });
  });
});

describe('issue 34: an image sent to a text-only model (item 4)', function () {
  this.timeout(20_000);

  it("llama.cpp's 500 \"image input is not supported\": one request, no retry, and a card that says the model takes no images", async () => {
    const body = fixture('llamacpp-error-500-image-input-not-supported.json');
    await withServer((_req, res) => json(res, 500, body), async (s) => {
      const r = await streamChat(clientOptions(s, { maxRetries: 2 }), { ...CHAT_BODY, model: 'tiny' }).result;
      assert.equal(r.error?.kind, 'no_image_input', String(r.error));
      assert.equal(posts(s.requests).length, 1, 'a 500 that says the model takes no images is not retried');
      const view = errorView(r.error!, { model: 'tiny', url: s.url });
      assert.match(view.title, /^The model "tiny" takes no images \(HTTP 500\)/);
      assert.doesNotMatch(view.title, /retry in a moment/i);
      assert.match(String(view.hint), /--mmproj/);
      assert.equal(view.actions[0], 'switchEndpoint');
      assert.match(String(view.detail), /image input is not supported/);
    });
  });

  it("what each server says of a model and images: llama.cpp (one model, recorded; router mode's architecture.input_modalities, as OpenRouter's), a full capability list, LM Studio", async () => {
    // llama.cpp's single-model /v1/models: `data` without capabilities, and an Ollama-style `models` beside it whose
    // capabilities say whether a projector is loaded. Recorded from a real llama-server without --mmproj (the `llama`
    // helper's test/fixtures/llama-server/v1-models.json, wt-llama 609b220); with one, tools/server/server-context.cpp
    // get_res_models lists ["completion", "multimodal"].
    const recorded = '{"models":[{"name":"tiny","model":"tiny","modified_at":"","size":"","digest":"","type":"model","description":"","tags":[""],"capabilities":["completion"],"parameters":"","details":{"parent_model":"","format":"gguf","family":"","families":[""],"parameter_size":"","quantization_level":""}}],"object":"list","data":[{"id":"tiny","aliases":["tiny"],"tags":[],"object":"model","created":1795752157,"owned_by":"llamacpp","meta":{"vocab_type":3,"n_vocab":75,"n_ctx":2048,"n_ctx_train":32768,"n_embd":32,"n_params":7712,"size":30848,"ftype":"(guessed) all F32"}}]}';
    const withProjector = recorded.replace('"capabilities":["completion"]', '"capabilities":["completion","multimodal"]');
    // Router mode (tools/server/server-models.cpp): architecture.input_modalities on each entry.
    const router = { object: 'list', data: [
      { id: 'text.gguf', object: 'model', owned_by: 'llamacpp', architecture: { input_modalities: ['text'], output_modalities: ['text'] } },
      { id: 'vision.gguf', object: 'model', owned_by: 'llamacpp', architecture: { input_modalities: ['text', 'image'], output_modalities: ['text'] } },
    ] };
    const ollama = { models: [{ name: 'llama3.2:latest', capabilities: ['completion', 'tools'] }, { name: 'llava:latest', capabilities: ['completion', 'vision'] }] };
    const lmStudio = { data: [{ id: 'qwen', object: 'model', capabilities: ['tool_use'] }] };
    const bodies = [recorded, withProjector, router, ollama, lmStudio];
    let n = 0;
    await withServer((_req, res) => json(res, 200, bodies[n++]), async (s) => {
      const ask = async () => (await listModelInfo(clientOptions(s))).map((m) => [m.id, m.imageInput]);
      assert.deepEqual(await ask(), [['tiny', false]], 'llama.cpp without --mmproj');
      assert.deepEqual(await ask(), [['tiny', true]], 'llama.cpp with --mmproj');
      assert.deepEqual(await ask(), [['text.gguf', false], ['vision.gguf', true]], 'llama.cpp router mode');
      assert.deepEqual(await ask(), [['llama3.2:latest', false], ['llava:latest', true]], 'a full capability list');
      assert.deepEqual(await ask(), [['qwen', undefined]], "LM Studio's capability list names only tool use: it says nothing of images");
    });
  });
});

describe('issue 34: Test Connection (item 5)', function () {
  this.timeout(30_000);

  it('a base URL ".../api" that had no /v1: no "extra /v1" to remove; it names the URL that answers', async () => {
    // A server whose API is at /api (no version segment): /api/models and /api/chat/completions, 404 elsewhere.
    await withServer((req, res) => {
      if (req.path === '/api/models') return json(res, 200, { data: [{ id: 'test-model' }] });
      if (req.path === '/api/chat/completions') return json(res, 200, completion('OK'));
      return json(res, 404, { detail: 'Not Found' });
    }, async (s) => {
      const r = await diagnose({ endpoint: resolveEndpoint(`${s.origin}/api`), model: 'test-model', timeoutMs: 5_000 });
      assert.equal(r.url, `${s.origin}/api/v1/chat/completions`, 'Parley added /v1');
      assert.equal(r.ok, false);
      assert.equal(r.causes[0]?.id, 'no-v1');
      assert.equal(r.causes[0].fix, `Parley added /v1 to parley.baseUrl, which had none, and this server answers without it: set parley.baseUrl to ${s.origin}/api/chat/completions`);
      assert.doesNotMatch(reportMarkdown(r), /Remove the extra \/v1/);
    });
  });

  it('a /v1 the user typed twice is still "the extra /v1"', async () => {
    await withServer((req, res) => {
      if (req.path === '/v1/models') return json(res, 200, { data: [{ id: 'test-model' }] });
      return json(res, 404, { detail: 'Not Found' });
    }, async (s) => {
      const r = await diagnose({ endpoint: resolveEndpoint(`${s.origin}/v1/v1`), model: 'test-model', timeoutMs: 5_000 });
      assert.equal(r.causes[0]?.id, 'remove-v1');
    });
  });

  it("a gateway's {\"status\": \"failure\", \"message\": …} body: the report quotes the message, not the JSON", async () => {
    const body = fixture('portkey-error-500-something-went-wrong.json');
    await withServer((_req, res) => json(res, 500, body), async (s) => {
      const r = await diagnose({ endpoint: resolveEndpoint(s.url), model: 'test-model', timeoutMs: 5_000, stream: false });
      assert.match(String(r.chat.error?.message), /failed \(HTTP 500\): Something went wrong$/);
      assert.equal(r.models.error?.message, 'Something went wrong');
      const md = reportMarkdown(r);
      assert.match(md, /Something went wrong/);
      assert.doesNotMatch(md, /"status"|failure/);
    });
  });
});

describe('issue 34: the answer after reasoning starts without blank lines (item 6)', function () {
  this.timeout(20_000);

  it('after a reasoning_content block, as after </think>: "\\n\\nThe answer is 4." becomes "The answer is 4."', async () => {
    // llama.cpp's shape (test/fixtures/providers/llamacpp-reasoning-timings-excerpt.sse): reasoning_content deltas, then
    // content whose first deltas are the template's blank lines.
    const field = sse([
      deltaChunk({ role: 'assistant', content: null }),
      deltaChunk({ reasoning_content: '2 + 2' }),
      deltaChunk({ reasoning_content: ' is 4.' }),
      deltaChunk({ content: '\n' }),
      deltaChunk({ content: '\n' }),
      deltaChunk({ content: 'The answer is 4.' }),
      deltaChunk({}, 'stop'),
    ]);
    const tags = sse([chunk('<think>2 + 2 is 4.</think>'), chunk('\n\n'), chunk('The answer is 4.'), chunk('', {}, 'stop')]);
    for (const body of [field, tags]) {
      const { result, events } = await threeWays(body);
      assert.equal(result.text, 'The answer is 4.');
      assert.equal(result.reasoning, '2 + 2 is 4.');
      assert.equal(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), 'The answer is 4.', 'the deltas too');
    }
  });

  it('a whole (non-streamed) reply with reasoning_content: the same', async () => {
    const body = JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', reasoning_content: 'Easy.', content: '\n\nThe answer is 4.' }, finish_reason: 'stop' }] });
    const { result } = await threeWays(body, { 'content-type': 'application/json' });
    assert.equal(result.text, 'The answer is 4.');
  });

  it('without reasoning, the text is as sent', async () => {
    const { result } = await threeWays(sse([chunk('\n\n'), chunk('    indented code'), chunk('', {}, 'stop')]));
    assert.equal(result.text, '\n\n    indented code');
  });
});

describe('issue 34: a gateway that fails streamed requests (item 8)', function () {
  this.timeout(30_000);

  /** Portkey 1.15.2 as the issue found it: 500 to every streamed request and to GET /models; whole replies work. */
  const gateway = (req: RecordedRequest, res: ServerResponse) => {
    if (req.method === 'POST' && req.json?.stream === false) return json(res, 200, completion('OK'));
    return json(res, 500, fixture('portkey-error-500-something-went-wrong.json'));
  };

  it('Test Connection: streamed fails, whole works, so it says to turn streaming off in the profile', async () => {
    await withServer(gateway, async (s) => {
      const r = await diagnose({ endpoint: resolveEndpoint(s.url), model: 'm', timeoutMs: 5_000, profile: 'Gateway' });
      assert.equal(r.ok, false);
      assert.equal(r.chat.streamed, true);
      assert.deepEqual(r.causes.map((c) => c.id), ['stream-off']);
      assert.match(r.causes[0].fix, /add "stream": false to the profile "Gateway" in parley\.endpoints/);
      const bodies = posts(s.requests).map((q) => q.json.stream);
      assert.deepEqual(bodies, [true, false], 'the streamed test, then the same request not streamed');
      const implicit = await diagnose({ endpoint: resolveEndpoint(s.url), model: 'm', timeoutMs: 5_000 });
      assert.match(implicit.causes[0].fix, /add a profile with this base URL and "stream": false to parley\.endpoints/);
    });
  });

  it('each request the server billed is counted (onBilled): the failed stream costs nothing, the whole reply is counted', async () => {
    await withServer(gateway, async (s) => {
      const billed: Array<{ total: number; estimated: boolean }> = [];
      await diagnose({ endpoint: resolveEndpoint(s.url), model: 'm', timeoutMs: 5_000, onBilled: (u) => billed.push({ total: u.total_tokens, estimated: u.estimated === true }) });
      assert.equal(posts(s.requests).length, 2);
      assert.equal(billed.length, 1, 'only the whole reply was billed');
      assert.ok(billed[0].total > 0);
    });
  });

  it('a server that fails both ways: no such advice', async () => {
    await withServer((_req, res) => json(res, 500, fixture('portkey-error-500-something-went-wrong.json')), async (s) => {
      const r = await diagnose({ endpoint: resolveEndpoint(s.url), model: 'm', timeoutMs: 5_000 });
      assert.deepEqual(r.causes.map((c) => c.id), ['server-error']);
    });
  });

  it('with streaming off, Test Connection sends what chat sends (stream: false) and the connection works', async () => {
    await withServer(gateway, async (s) => {
      const r = await diagnose({ endpoint: resolveEndpoint(s.url), model: 'm', timeoutMs: 5_000, stream: false });
      assert.equal(r.ok, true, JSON.stringify(r.chat.error));
      assert.equal(r.chat.streamed, false);
      assert.deepEqual(posts(s.requests).map((q) => [q.json.stream, 'stream_options' in q.json]), [[false, false]]);
      assert.match(reportMarkdown(r), /## 3\. A one-token request, not streamed/);
    });
  });

  it('a request with streaming off hands its events over at its end (the panel and VS Code chat show the reply) and counts usage', async () => {
    await withServer(gateway, async (s) => {
      const events: StreamEvent[] = [];
      const { result } = await chatWithFallback(clientOptions(s), { model: 'm', stream: false }, [{ role: 'user', content: 'hi' }], undefined, (e) => events.push(e));
      assert.equal(result.ended, 'done');
      assert.equal(result.text, 'OK');
      assert.deepEqual(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text), ['OK']);
      assert.deepEqual(result.usage, { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 });
    });
  });

  it('a profile\'s "stream" is read: false turns streaming off; anything but a boolean is refused in words', () => {
    const { profiles, problems } = readProfiles({ baseUrl: 'http://x', model: 'm' }, [{
      source: 'user',
      value: [{ name: 'Gateway', baseUrl: 'http://g', model: 'm', stream: false }, { name: 'Odd', baseUrl: 'http://o', stream: 'no' }],
    }]);
    assert.equal(profiles.find((p) => p.name === 'Gateway')?.stream, false);
    assert.equal(profiles.find((p) => p.name === 'Odd')?.stream, undefined);
    assert.deepEqual(problems, ['parley.endpoints "Odd": stream must be true or false; ignored.']);
  });
});
