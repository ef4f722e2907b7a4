// Issue 36: the completion routes against servers that answer as llama.cpp, Ollama, vLLM, LM Studio, Mistral and
// OpenAI do (bodies from test/fixtures/completion, see SOURCES.md): the probe finds the route, remembers it per origin
// and model, asks it straight away next time, and says why when none works.
import * as assert from 'node:assert/strict';
import { listModels } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import { errorFromResponse } from '../../src/core/errors';
import { failedFetch, readText, send } from '../../src/core/transport';
import { fimPrompt } from '../../src/core/completion/fim';
import {
  parseRouteResponse, probeRoutes, requestCompletion, routeRequest, serverRoot, stateRouteStore,
  type CompletionFailure, type FimInput, type RawCompletion, type RouteOutcome, type Wire,
} from '../../src/core/completion/routes';
import { COMPLETION_ROUTES_STATE } from '../../src/core/completion/settings';
import { clientOptions } from '../support/client';
import { completionFixture, completionServer, type CompletionServerKind } from '../support/completionServers';
import { startTestServer, withServer, type TestServer } from '../support/server';
import { memoryState } from '../support/memoryState';

const INPUT: FimInput = {
  model: 'qwen2.5-coder:1.5b-base',
  prefix: 'def add(a, b):\n    return ',
  suffix: '\n\nprint(add(1, 2))\n',
  file: 'src/add.py',
  languageId: 'python',
  extras: [{ filename: 'src/util.py', text: 'def sub(a, b):\n    return a - b' }],
  maxTokens: 64,
  stop: ['\n'],
  family: 'qwen',
};

/** The wire the extension hands in: the client's own functions. */
const WIRE: Wire = { send, readText, errorFromResponse, failedFetch, listModels };

const paths = (s: TestServer) => s.requests.map((r) => r.path);
const isOk = (r: RawCompletion | CompletionFailure): r is RawCompletion => 'text' in r;

async function probe(kind: CompletionServerKind, input: FimInput = INPUT) {
  return withServer(completionServer(kind), async (s) => {
    const state = memoryState();
    const store = stateRouteStore(state);
    const first = await requestCompletion(clientOptions(s), WIRE, store, input);
    const probed = paths(s);
    const second = await requestCompletion(clientOptions(s), WIRE, store, input);
    return { first, second, probed, again: paths(s).slice(probed.length), state, server: s };
  });
}

describe('completion routes (issue 36)', () => {
  it("llama.cpp: /infill with input_prefix, input_suffix, input_extra and cache_prompt; remembered, so the next request goes there at once", async () => {
    const { first, second, probed, again, state, server } = await probe('llamacpp');
    assert.ok(isOk(first) && isOk(second));
    assert.equal(first.route, 'infill');
    assert.equal(first.text, 'a + b');
    assert.deepEqual(probed, ['/infill']);
    assert.deepEqual(again, ['/infill'], 'the second request asks the remembered route, nothing else');
    const body = server.requests[0].json;
    assert.equal(body.input_prefix, INPUT.prefix);
    assert.equal(body.input_suffix, INPUT.suffix);
    assert.deepEqual(body.input_extra, [{ filename: 'src/util.py', text: 'def sub(a, b):\n    return a - b' }]);
    assert.equal(body.cache_prompt, true);
    assert.equal(body.stream, false);
    // llama.cpp's own counts: tokens_evaluated and tokens_predicted (of the recorded reply).
    assert.deepEqual({ p: first.usage.prompt_tokens, c: first.usage.completion_tokens, e: first.usage.estimated }, { p: 62, c: 3, e: undefined });
    assert.deepEqual(state.data[COMPLETION_ROUTES_STATE], { [`${server.origin} ${INPUT.model}`]: 'infill' });
  });

  it('llama.cpp with a model without FIM tokens: its 501 ends the probe with what to do, and nothing else is asked', async () => {
    const { first, probed, state } = await probe('llamacpp-nofim');
    assert.ok(!isOk(first));
    assert.equal(first.final, true);
    assert.match(first.error.message, /llama\.cpp says this model cannot fill in the middle: Infill is not supported by this model.*FIM tokens/);
    assert.deepEqual(probed, ['/infill'], "llama.cpp's /v1/completions would drop the suffix unread: it is not tried");
    assert.deepEqual(state.data, {}, 'a failure is not remembered as a route');
  });

  it("Test Connection on llama.cpp with a model without FIM tokens: nothing is asked after the 501, so /v1/completions (which leaves the suffix unread) is never taken", async () => {
    await withServer(completionServer('llamacpp-nofim'), async (s) => {
      const outcomes: RouteOutcome[] = [];
      const r = await probeRoutes(clientOptions(s), WIRE, INPUT, outcomes, true);
      assert.ok(!isOk(r), `no route works; this one was taken: ${isOk(r) ? r.route : ''}`);
      assert.equal(r.final, true);
      assert.match(r.error.message, /^llama\.cpp says this model cannot fill in the middle/);
      assert.deepEqual(outcomes.map((o) => [o.route, o.verdict, o.status]), [
        ['infill', 'refused', 501], ['completions', 'skipped', undefined], ['fim', 'skipped', undefined], ['generate', 'skipped', undefined], ['tokens', 'skipped', undefined],
      ]);
      assert.match(outcomes[1].why, /^not asked: the server said qwen2\.5-coder:1\.5b-base cannot fill in the middle$/);
      assert.deepEqual(paths(s), ['/infill']);
    });
  });

  it("Ollama: /infill answers 404; /v1/completions takes prompt and suffix", async () => {
    const { first, probed, again, server } = await probe('ollama');
    assert.ok(isOk(first));
    assert.equal(first.route, 'completions');
    assert.deepEqual(probed, ['/infill', '/v1/completions']);
    assert.deepEqual(again, ['/v1/completions']);
    const body = server.requests[1].json;
    assert.equal(body.suffix, INPUT.suffix);
    assert.match(body.prompt, /# Path: src\/util\.py\n# def sub\(a, b\):\n#     return a - b\n# Path: src\/add\.py\ndef add\(a, b\):\n    return $/, 'other files go before the prefix as comments');
    assert.deepEqual(first.usage, { prompt_tokens: 29, completion_tokens: 4, total_tokens: 33 });
  });

  it('Ollama with a model that "does not support insert": with known FIM tokens, /api/generate raw; without, a clear message', async () => {
    const known = await probe('ollama-noinsert', { ...INPUT, model: 'llama3.2:1b', family: 'qwen' });
    assert.ok(isOk(known.first));
    assert.equal(known.first.route, 'generate-tokens');
    assert.deepEqual(known.probed, ['/infill', '/v1/completions', '/v1/fim/completions', '/api/generate', '/api/generate']);
    const raw = known.server.requests[4].json;
    assert.equal(raw.raw, true);
    assert.equal(raw.suffix, undefined);
    assert.equal(raw.prompt, fimPrompt('qwen', INPUT.prefix, INPUT.suffix, INPUT.file, INPUT.extras));
    assert.deepEqual({ p: known.first.usage.prompt_tokens, c: known.first.usage.completion_tokens }, { p: 27, c: 4 });
    assert.ok(!known.server.requests.some((r) => r.path === '/v1/completions' && r.json.suffix === undefined), "FIM tokens never go through Ollama's /v1/completions (its template would wrap them as a chat)");

    const unknown = await probe('ollama-noinsert', { ...INPUT, model: 'llama3.2:1b', family: undefined });
    assert.ok(!isOk(unknown.first));
    assert.equal(unknown.first.final, true);
    assert.match(unknown.first.error.message, /Ollama says llama3\.2:1b does not support insert .*qwen2\.5-coder:1\.5b-base.*parley\.completion\.fimTokens/);
    const generate = unknown.first.outcomes.find((o) => o.route === 'generate');
    assert.equal(generate?.verdict, 'refused');
    assert.match(generate?.why ?? '', /does not support insert/);
  });

  it('vLLM: 400 "suffix is not currently supported", then /v1/completions with the model family\'s FIM tokens', async () => {
    const { first, probed, again, server } = await probe('vllm', { ...INPUT, model: 'Qwen/Qwen2.5-Coder-1.5B' });
    assert.ok(isOk(first));
    assert.equal(first.route, 'tokens');
    assert.deepEqual(probed, ['/infill', '/v1/completions', '/v1/fim/completions', '/api/generate', '/v1/completions']);
    assert.deepEqual(again, ['/v1/completions']);
    const refused = first.route === 'tokens' && server.requests[1].json;
    assert.equal(refused.suffix, INPUT.suffix, 'the refused request carried the suffix');
    const body = server.requests[4].json;
    assert.equal(body.suffix, undefined);
    assert.equal(body.prompt, '<|file_sep|>src/util.py\ndef sub(a, b):\n    return a - b\n<|file_sep|>src/add.py\n<|fim_prefix|>def add(a, b):\n    return <|fim_suffix|>\n\nprint(add(1, 2))\n<|fim_middle|>');
    assert.deepEqual(body.stop, ['\n', '<|endoftext|>', '<|file_sep|>', '<|fim_prefix|>'], 'at most 4 stop sequences');
  });

  it("vLLM with a model whose FIM tokens are unknown: the suffix refusal, and the fix, are said", async () => {
    const { first } = await probe('vllm', { ...INPUT, model: 'my-org/custom-7b', family: undefined });
    assert.ok(!isOk(first));
    assert.match(first.error.message, /took none of the completion routes for my-org\/custom-7b.*suffix is not currently supported/);
    assert.equal(first.outcomes.find((o) => o.route === 'tokens')?.verdict, 'skipped');
  });

  it('LM Studio: its 200 "Unexpected endpoint" refuses /infill; the FIM tokens go first, as its /v1/completions has no suffix', async () => {
    const { first, probed, server } = await probe('lmstudio', { ...INPUT, model: 'qwen2.5-coder-1.5b-instruct' });
    assert.ok(isOk(first));
    assert.equal(first.route, 'tokens');
    assert.deepEqual(probed, ['/infill', '/v1/completions']);
    assert.match(server.requests[1].json.prompt, /^<\|file_sep\|>.*<\|fim_middle\|>$/s);
  });

  it('Mistral (Codestral): /v1/fim/completions, answered in chat shape', async () => {
    const { first, probed } = await probe('mistral', { ...INPUT, model: 'codestral-latest', family: 'codestral' });
    assert.ok(isOk(first));
    assert.equal(first.route, 'fim');
    assert.equal(first.text, 'a + b');
    assert.deepEqual(probed, ['/infill', '/v1/completions', '/v1/fim/completions']);
    assert.deepEqual(first.usage, { prompt_tokens: 23, completion_tokens: 4, total_tokens: 27 });
  });

  it('OpenAI with a chat model: every route refuses, and the answer that names the model is the one said', async () => {
    const { first, probed } = await probe('openai-chat', { ...INPUT, model: 'gpt-4o-mini', family: undefined });
    assert.ok(!isOk(first));
    assert.match(first.error.message, /took none of the completion routes for gpt-4o-mini.*This is a chat model and not supported in the v1\/completions endpoint/);
    assert.deepEqual(probed, ['/infill', '/v1/completions', '/v1/fim/completions', '/api/generate']);
  });

  it('usage is estimated when the server reports none', async () => {
    const { first } = await probe('no-usage', { ...INPUT, family: undefined });
    assert.ok(isOk(first));
    assert.equal(first.usage.estimated, true);
    assert.ok(first.usage.prompt_tokens > 5 && first.usage.completion_tokens >= 1);
    assert.equal(first.usage.total_tokens, first.usage.prompt_tokens + first.usage.completion_tokens);
  });

  it('a rejected key stops the probe and is not remembered; a remembered route that now refuses is probed again', async () => {
    const state = memoryState();
    const store = stateRouteStore(state);
    await withServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
    }, async (s) => {
      const r = await requestCompletion(clientOptions(s, { apiKey: 'sk-test-1234567890abcdef' }), WIRE, store, INPUT);
      assert.ok(!isOk(r));
      assert.equal(r.error.kind, 'auth');
      assert.equal(r.final, false);
      assert.deepEqual(paths(s), ['/infill'], 'no other route is tried after a rejected key');
      assert.deepEqual(state.data, {});
      assert.ok(!r.error.message.includes('sk-test-1234567890abcdef'));
    });
    // A server that took /infill before and now is Ollama at the same origin.
    const s = await startTestServer(completionServer('ollama'));
    try {
      await store.set(s.origin, INPUT.model, 'infill');
      const r = await requestCompletion(clientOptions(s), WIRE, store, INPUT);
      assert.ok(isOk(r));
      assert.equal(r.route, 'completions');
      assert.deepEqual(paths(s), ['/infill', '/infill', '/v1/completions'], 'the remembered route, then the probe from the start');
      assert.equal(store.get(s.origin, INPUT.model), 'completions');
    } finally {
      await s.close();
    }
  });

  it('aborting the signal closes the request at the server', async () => {
    const s = await startTestServer(() => new Promise(() => undefined));
    try {
      const controller = new AbortController();
      const pending = requestCompletion(clientOptions(s, { signal: controller.signal }), WIRE, stateRouteStore(memoryState()), INPUT);
      while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      controller.abort();
      const r = await pending;
      assert.ok(!isOk(r));
      assert.equal(r.error.kind, 'cancelled');
      const closed = await s.waitForClose(2000);
      assert.equal(closed.path, '/infill');
      assert.equal(s.requests.length, 1, 'a cancelled probe tries nothing more');
    } finally {
      await s.close();
    }
  });

  it('Test Connection probes every route and says what each did', async () => {
    await withServer(completionServer('vllm'), async (s) => {
      const outcomes: RouteOutcome[] = [];
      const r = await probeRoutes(clientOptions(s), WIRE, { ...INPUT, model: 'Qwen/Qwen2.5-Coder-1.5B' }, outcomes, true);
      assert.ok(isOk(r));
      assert.deepEqual(outcomes.map((o) => [o.route, o.verdict, o.status]), [
        ['infill', 'refused', 404], ['completions', 'refused', 400], ['fim', 'refused', 404], ['generate', 'refused', 404], ['tokens', 'works', undefined],
      ]);
      assert.match(outcomes[1].why, /suffix is not currently supported/);
      assert.deepEqual(outcomes.map((o) => o.usage !== undefined), [false, false, false, false, true], 'only the route that answered carries a (billed) usage');
      assert.ok((outcomes[4].usage?.total_tokens ?? 0) > 0);
      assert.equal(typeof outcomes[4].durationMs, 'number', 'and its time, for the usage record');
    });
  });

  it('URLs: /infill and /api/generate at the server root, DeepSeek at /beta/completions, Mistral at /v1/fim/completions', () => {
    assert.equal(serverRoot(resolveEndpoint('http://127.0.0.1:8080/v1')), 'http://127.0.0.1:8080');
    assert.equal(routeRequest('infill', resolveEndpoint('http://127.0.0.1:8080'), INPUT)?.url, 'http://127.0.0.1:8080/infill');
    assert.equal(routeRequest('generate', resolveEndpoint('http://localhost:11434/v1'), INPUT)?.url, 'http://localhost:11434/api/generate');
    assert.equal(routeRequest('completions', resolveEndpoint('https://api.deepseek.com'), INPUT)?.url, 'https://api.deepseek.com/beta/completions');
    assert.equal(routeRequest('fim', resolveEndpoint('https://codestral.mistral.ai/v1'), INPUT)?.url, 'https://codestral.mistral.ai/v1/fim/completions');
    assert.equal(routeRequest('tokens', resolveEndpoint('http://h'), { ...INPUT, family: undefined }), undefined, 'no FIM tokens, no tokens route');
  });

  it('every fixture that answers with a completion parses, on its own route', () => {
    const cases: Array<[Parameters<typeof parseRouteResponse>[0], string]> = [
      ['infill', 'llamacpp-infill.json'], ['completions', 'ollama-v1-completions.json'], ['generate', 'ollama-api-generate.json'],
      ['tokens', 'vllm-completions.json'], ['tokens', 'lmstudio-completions.json'], ['fim', 'mistral-fim.json'],
    ];
    for (const [route, file] of cases) assert.equal(parseRouteResponse(route, JSON.parse(completionFixture(file)))?.text, 'a + b', file);
    assert.equal(parseRouteResponse('infill', JSON.parse(completionFixture('lmstudio-infill-200.json'))), undefined);
  });
});
