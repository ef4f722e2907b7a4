// Parley's inline completions (issue 36) against a real llama.cpp llama-server: the route probe the extension runs
// (core/completion/routes.ts) picks /infill for a model with FIM tokens and gets its scripted middle back, other files'
// chunks included; a model without FIM tokens gets the server's 501, which ends the probe, Test Connection's too. The
// server's bodies are the recordings in test/fixtures/completion/ (PARLEY_LLAMA_RECORD=1 rewrites them).
import * as assert from 'node:assert/strict';
import { listModels } from '../../src/core/client';
import { errorFromResponse } from '../../src/core/errors';
import { failedFetch, readText, send } from '../../src/core/transport';
import {
  probeRoutes, requestCompletion, routeRequest, stateRouteStore, tryRoute,
  type CompletionFailure, type FimInput, type RawCompletion, type RouteOutcome, type Wire,
} from '../../src/core/completion/routes';
import { COMPLETION_ROUTES_STATE } from '../../src/core/completion/settings';
import { shapeCompletion } from '../../src/core/completion/shape';
import { completionFixturePath } from '../support/completionServers';
import { selectorToken } from '../support/scriptedModel.mjs';
import { matchesRecording } from './recordings.mjs';
import { clientOptions, countingProxy, llamaServers } from './support';
import { memoryState } from '../support/memoryState';

/** The wire the extension hands in: the client's own functions. */
const WIRE: Wire = { send, readText, errorFromResponse, failedFetch, listModels };

/** A completion in a Python file, with chunks of two other files, as the engine builds it (single line: stop at `\n`). */
function input(model: string): FimInput {
  return {
    model,
    prefix: 'def add(a, b):\n    return ',
    suffix: '\n\nprint(add(1, 2))\n',
    file: 'src/add.py',
    languageId: 'python',
    extras: [
      { filename: 'src/util.py', text: 'def sub(a, b):\n    return a - b' },
      { filename: 'src/main.py', text: 'from add import add\nprint(add(2, 3))' },
    ],
    maxTokens: 64,
    stop: ['\n'],
  };
}

const isOk = (r: RawCompletion | CompletionFailure): r is RawCompletion => 'text' in r;

/** Parley's own request on `route` (its URL and body, from routeRequest), sent as is; the answer's status and bytes. */
async function rawRoute(url: string, key: string, route: Parameters<typeof routeRequest>[0], fim: FimInput, change: (body: Record<string, unknown>) => void = () => undefined) {
  const r = routeRequest(route, clientOptions(url, key).endpoint, fim);
  assert.ok(r, route);
  change(r.body);
  const response = await fetch(r.url, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(r.body) });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

describe('Parley against llama-server: inline completions through /infill', function () {
  this.timeout(60_000);

  it('a model with FIM tokens: the probe picks /infill, gets the scripted middle with the server\'s own counts, and remembers it', async () => {
    const { infill, key, fim } = llamaServers();
    const proxy = await countingProxy(infill);
    try {
      const state = memoryState();
      const store = stateRouteStore(state);
      const opts = clientOptions(proxy.url, key, { maxRetries: 0 });
      const first = await requestCompletion(opts, WIRE, store, input('tiny-fim'));
      assert.ok(isOk(first), 'error' in first ? first.error.message : '');
      assert.equal(first.route, 'infill');
      assert.equal(first.text, fim.text);
      assert.equal(first.usage.estimated, undefined, 'llama.cpp counts the tokens: nothing estimated');
      assert.equal(first.usage.completion_tokens, fim.pieces + 1, 'the middle\'s tokens and the end-of-generation one');
      assert.ok(first.usage.prompt_tokens > 30, `the prompt holds the prefix, the suffix and the other files: ${first.usage.prompt_tokens} tokens`);
      assert.deepEqual(state.data[COMPLETION_ROUTES_STATE], { [`${opts.endpoint.origin} tiny-fim`]: 'infill' });
      assert.equal(shapeCompletion(first.text, { mode: 'single', lineBefore: '    return ', suffix: input('tiny-fim').suffix, languageId: 'python' }), 'a + b', 'the ghost text');

      const second = await requestCompletion(opts, WIRE, store, input('tiny-fim'));
      assert.ok(isOk(second));
      assert.equal(second.text, fim.text);
      assert.equal(proxy.count('POST', '/infill'), 2, 'both requests went to /infill');
      for (const path of ['/v1/completions', '/v1/fim/completions', '/api/generate']) assert.equal(proxy.count('POST', path), 0, `${path} was never asked`);
    } finally {
      await proxy.close();
    }
  });

  it("llama.cpp puts the other files' chunks (input_extra) before the prefix, each after a file separator; the reply is the recording", async () => {
    const { infill, key, fim } = llamaServers();
    const answer = await rawRoute(infill, key, 'infill', input('tiny-fim'));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.type, 'application/json; charset=utf-8');
    const body = JSON.parse(answer.text) as { content: string; prompt: string; stop_type: string };
    assert.equal(body.content, fim.text);
    assert.equal(body.stop_type, 'eos');
    // The server's own prompt, detokenized (the scripted vocabulary knows no word of it: each is [UNK]).
    assert.match(body.prompt, /^<\|repo_name\|>.*<\|fim_prefix\|>.*<\|fim_suffix\|>.*<\|fim_middle\|>$/s);
    assert.equal(body.prompt.split('<|file_sep|>').length - 1, 3, 'one separator for each of the two chunks, and one for the current file');
    matchesRecording(completionFixturePath('llamacpp-infill.json'), answer.text);

    const alone = JSON.parse((await rawRoute(infill, key, 'infill', { ...input('tiny-fim'), extras: [] })).text) as { prompt: string };
    assert.equal(alone.prompt.split('<|file_sep|>').length - 1, 1, 'without chunks, only the current file\'s separator');
  });

  it("with the model family's FIM tokens in a prompt (route 4), llama.cpp's /v1/completions reads them as the model's own and answers the middle too", async () => {
    const { infill, key, fim } = llamaServers();
    const t = await tryRoute(clientOptions(infill, key, { maxRetries: 0 }), WIRE, 'tokens', { ...input('tiny-fim'), family: 'qwen' });
    assert.ok(t && 'ok' in t, t && 'error' in t ? t.error.message : 'no request');
    assert.equal(t.ok.text, fim.text);
  });

  it('a model without FIM tokens: the 501 ends the probe in the server\'s words and says what to do; nothing else is asked or remembered', async () => {
    const { single, key } = llamaServers();
    const proxy = await countingProxy(single);
    try {
      const state = memoryState();
      const result = await requestCompletion(clientOptions(proxy.url, key, { maxRetries: 0 }), WIRE, stateRouteStore(state), input('tiny'));
      assert.ok(!isOk(result));
      assert.equal(result.final, true);
      assert.equal(result.error.status, 501);
      assert.match(result.error.message, /^llama\.cpp says this model cannot fill in the middle: Infill is not supported by this model: prefix token is missing\. suffix token is missing\. middle token is missing\. Load a model with FIM tokens/);
      assert.equal(proxy.count('POST', '/infill'), 1);
      assert.equal(proxy.count('POST', '/v1/completions'), 0);
      assert.deepEqual(state.data, {}, 'a failure is not remembered as a route');
    } finally {
      await proxy.close();
    }
    const answer = await rawRoute(single, key, 'infill', input('tiny'));
    assert.equal(answer.status, 501);
    matchesRecording(completionFixturePath('llamacpp-infill-501.json'), answer.text);
  });

  it('Test Connection on that model: after the 501 no other route is asked, so none is taken for it', async () => {
    const { single, key } = llamaServers();
    const proxy = await countingProxy(single);
    try {
      const outcomes: RouteOutcome[] = [];
      const result = await probeRoutes(clientOptions(proxy.url, key, { maxRetries: 0 }), WIRE, input('tiny'), outcomes, true);
      assert.ok(!isOk(result), `no route works; this one was taken: ${isOk(result) ? result.route : ''}`);
      assert.equal(result.final, true);
      assert.match(result.error.message, /cannot fill in the middle/);
      assert.deepEqual(outcomes.map((o) => [o.route, o.verdict, o.status]), [
        ['infill', 'refused', 501], ['completions', 'skipped', undefined], ['fim', 'skipped', undefined], ['generate', 'skipped', undefined], ['tokens', 'skipped', undefined],
      ]);
      assert.deepEqual([proxy.count('POST', '/infill'), proxy.count('POST', '/v1/completions')], [1, 0]);
    } finally {
      await proxy.close();
    }
  });

  it("llama.cpp's /v1/completions answers 200 and leaves `suffix` unread, which is why nothing may go there after the 501", async () => {
    const { single, key, expected } = llamaServers();
    // A prefix that ends in the plain script's selector, so that the model's answer is the same on every run.
    const fim = { ...input('tiny'), prefix: `def add(a, b):\n    return ${selectorToken('plain')}` };
    const withSuffix = await rawRoute(single, key, 'completions', fim);
    const without = await rawRoute(single, key, 'completions', fim, (b) => delete b.suffix);
    assert.equal(withSuffix.status, 200, withSuffix.text);
    assert.equal(without.status, 200, without.text);
    const read = (t: string) => JSON.parse(t) as { choices: { text: string }[]; usage: { prompt_tokens: number } };
    assert.equal(read(withSuffix.text).choices[0].text, expected.plain.text);
    // Each word of the suffix would count a token of the prompt.
    assert.equal(read(withSuffix.text).usage.prompt_tokens, read(without.text).usage.prompt_tokens, 'the suffix adds nothing to the prompt');
    matchesRecording(completionFixturePath('llamacpp-v1-completions-suffix-unread.json'), withSuffix.text);
  });

  it('the routes llama.cpp does not serve answer 404 File Not Found', async () => {
    const { single, key } = llamaServers();
    for (const route of ['fim', 'generate'] as const) {
      const answer = await rawRoute(single, key, route, input('tiny'));
      assert.equal(answer.status, 404, route);
      matchesRecording(completionFixturePath('llamacpp-404.json'), answer.text);
    }
  });
});
