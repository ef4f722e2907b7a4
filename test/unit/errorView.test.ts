// The error card mapping: each kind of failure in words, with the action that fixes it first, and no key text.
import * as assert from 'node:assert/strict';
import { errorView } from '../../src/core/errorView';
import { errorWords } from '../../src/core/lmMapping';
import { errorFromResponse, ParleyError } from '../../src/core/errors';
import { ACTION_IDS, type ErrorView } from '../../src/shared/protocol';

const OK_URL = 'http://127.0.0.1:1234/v1/chat/completions';
const ctx = (url = OK_URL) => ({ url, model: 'my-model' });
const json = (status: number, body: unknown, url = OK_URL) => errorFromResponse(status, 'application/json', JSON.stringify(body), { url, model: 'my-model' });

function view(err: ParleyError, url = OK_URL): ErrorView {
  const v = errorView(err, ctx(url));
  assert.ok(v.actions.length > 0, `${v.kind}: a card always has an action`);
  for (const a of v.actions) assert.ok(ACTION_IDS.includes(a), `${v.kind}: ${a} is a protocol action`);
  assert.equal(new Set(v.actions).size, v.actions.length, `${v.kind}: no action twice`);
  return v;
}

describe('errorView: error cards', () => {
  it('budget: the limit\'s words, Send once anyway and Open budget settings, no Retry; VS Code\'s chat gets the same words', () => {
    const words = 'Not sent: this request would cross your daily spend limit ($1.00, block); it may cost up to $1.10. $0.60 left; the limit resets at midnight tonight (local time).';
    const v = view(new ParleyError('budget', words));
    assert.equal(v.kind, 'budget');
    assert.equal(v.title, words);
    assert.deepEqual(v.actions, ['sendOnceAnyway', 'openBudgetSettings']);
    assert.match(v.hint ?? '', /Only you can raise or remove the limit \(parley\.budget\)/);
    assert.match(errorWords(new ParleyError('budget', words), ctx()), /^Parley: Not sent: .*\$0\.60 left.*Only you can raise or remove the limit \(parley\.budget\)\.$/);
  });

  it('401 and 403: authentication, with Set API Key as the first action', () => {
    const v = view(json(401, { error: { message: 'Incorrect API key provided: sk-ab****wxyz.', type: 'invalid_request_error', code: 'invalid_api_key', param: null } }));
    assert.equal(v.kind, 'auth');
    assert.equal(v.actions[0], 'setApiKey');
    assert.ok(v.actions.includes('retry'));
    assert.match(v.title, /rejected the API key \(HTTP 401\)/);
    assert.match(String(v.detail), /Incorrect API key provided/);
    assert.doesNotMatch(String(v.detail), /sk-ab|wxyz/, 'the masked key echo is redacted');

    const forbidden = view(json(403, { error: { message: 'Forbidden' } }));
    assert.equal(forbidden.kind, 'auth');
    assert.equal(forbidden.actions[0], 'setApiKey');
    assert.match(forbidden.title, /HTTP 403/);
    // A 200 carrying an authentication error in its body is still an auth card.
    const inBody = view(errorFromResponse(200, 'application/json', JSON.stringify({ error: { message: 'bad key', code: 'invalid_api_key' } }), ctx()));
    assert.equal(inBody.kind, 'auth');
    assert.equal(inBody.actions[0], 'setApiKey');
  });

  it('404: model not found or wrong URL, with Open Settings first and a /v1 hint', () => {
    const model = view(json(404, { error: { message: 'The model `my-model` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }));
    assert.equal(model.kind, 'not_found');
    assert.equal(model.actions[0], 'openSettings');
    assert.match(model.title, /The model "my-model" was not found/);
    assert.match(String(model.hint), /Check parley\.baseUrl/, 'a URL that has /v1 gets the general hint');

    const noVersionUrl = 'http://127.0.0.1:1234/chat/completions';
    const lacking = view(errorFromResponse(404, 'text/plain', '404 page not found', { url: noVersionUrl }), noVersionUrl);
    assert.equal(lacking.kind, 'not_found');
    assert.equal(lacking.actions[0], 'openSettings');
    assert.equal(lacking.title, 'The server answered 404: the URL or the model is wrong.');
    assert.match(String(lacking.hint), /no version segment.*\/v1/);

    const doubledUrl = 'https://api.example.com/v1/v1/chat/completions';
    const doubled = view(errorFromResponse(404, 'text/html', '<html><body><h1>Not Found</h1></body></html>', { url: doubledUrl }), doubledUrl);
    assert.equal(doubled.kind, 'not_found');
    assert.match(String(doubled.hint), /version segment twice \(for example \/v1\/v1\/\)/);
  });

  it('429: a rate limit asks to wait and retry; insufficient_quota is a quota card, not a rate limit', () => {
    const rate = view(json(429, { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }));
    assert.equal(rate.kind, 'rate_limit');
    assert.deepEqual(rate.actions, ['retry']);
    assert.match(rate.title, /Rate limited .*429.*retry/i);
    assert.match(String(rate.detail), /Rate limit reached/);

    const quota = view(json(429, { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' } }));
    assert.equal(quota.kind, 'quota');
    assert.match(quota.title, /out of quota or credit/);
    assert.ok(quota.actions.includes('openSettings'));
    // Quota words without a code (OpenRouter-style 429 text) are still quota.
    assert.equal(view(json(429, { error: { message: 'Insufficient credits. Add more using https://openrouter.ai/credits' } })).kind, 'quota');
  });

  it('context too long: says so and suggests a new chat', () => {
    const v = view(json(400, { error: { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } }));
    assert.equal(v.kind, 'context_length');
    assert.match(v.title, /too long for this model.*new chat/);
    assert.match(String(v.detail), /maximum context length is 8192/);
    assert.equal(view(json(400, { error: { message: 'prompt is too long: 210000 tokens > 200000 maximum' } })).kind, 'context_length');
  });

  it('connection: the message, a hint to check the server, Retry and Test Connection', () => {
    const v = view(new ParleyError('connection', 'Cannot reach http://localhost:11434/v1/chat/completions: connection refused (ECONNREFUSED).', { url: OK_URL }));
    assert.equal(v.kind, 'connection');
    assert.match(v.title, /Cannot reach/);
    assert.match(String(v.hint), /server running.*127\.0\.0\.1/);
    assert.equal(v.actions[0], 'retry');
    assert.ok(v.actions.includes('testConnection'));
  });

  it('timeout: a hint naming the setting that applies (headers vs stream idle)', () => {
    const headers = view(new ParleyError('timeout', 'No response from 127.0.0.1:1234 within 60 s (request timeout).', { timeout: 'headers' }));
    assert.equal(headers.kind, 'timeout');
    assert.match(String(headers.hint), /parley\.requestTimeoutSeconds/);
    assert.ok(headers.actions.includes('retry') && headers.actions.includes('openSettings'));
    const idle = view(new ParleyError('timeout', 'The stream went silent for 300 s.', { timeout: 'idle' }));
    assert.match(String(idle.hint), /parley\.streamIdleTimeoutSeconds/);
  });

  it('protocol (malformed reply): the message, a URL hint, Retry and Test Connection', () => {
    const url = 'http://127.0.0.1:1234/chat/completions';
    const v = view(errorFromResponse(200, 'text/html', '<!doctype html><html><body>Sign in</body></html>', { url }), url);
    assert.equal(v.kind, 'protocol');
    assert.match(v.title, /HTML page instead of a chat completion/);
    assert.match(String(v.hint), /no version segment/);
    assert.deepEqual(v.actions, ['retry', 'testConnection']);
  });

  it('other kinds map to their own cards', () => {
    assert.equal(view(json(400, { error: { message: 'Unrecognized request argument supplied: top_k', param: 'top_k' } })).title, 'The server refused the request (HTTP 400): parameter top_k.');
    const server = view(json(503, { error: { message: 'overloaded' } }));
    assert.equal(server.kind, 'server');
    assert.match(server.title, /HTTP 503/);
    const config = view(new ParleyError('config', 'parley.baseUrl is empty.'));
    assert.equal(config.kind, 'config');
    assert.equal(config.actions[0], 'openSettings');
    assert.equal(view(new ParleyError('cancelled', 'Cancelled.')).kind, 'unknown');
  });

  it('no key text reaches the card: full keys, Bearer tokens, key query parameters and registered secrets are redacted', () => {
    const key = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX0123456789';
    const custom = 'custom-secret-value-42'; // not key-shaped: only known because it was registered
    const err = errorFromResponse(
      401,
      'application/json',
      JSON.stringify({ error: { message: `Incorrect API key provided: ${key}. Header was Bearer ${custom}; see https://x.example/?api_key=${custom}&v=1`, code: 'invalid_api_key' } }),
      { url: OK_URL, secrets: [custom] },
    );
    const v = view(err);
    const card = JSON.stringify(v);
    assert.ok(!card.includes(key), 'the full key');
    assert.ok(!card.includes(custom), 'the registered secret');
    assert.ok(!card.includes('ABCDEFGHIJ'), 'no piece of the key');
    assert.match(String(v.detail), /\[redacted\]/);

    // Built directly (as the client does for connection errors), the message and the provider text are redacted too.
    const direct = new ParleyError('bad_request', `Refused: ${key}`, { providerMessage: `echo: Bearer ${key} and ${key}`, status: 400 });
    const d = view(direct);
    assert.ok(!JSON.stringify(d).includes(key));
    assert.match(String(d.detail), /Bearer \[redacted\]/);
    const conn = view(new ParleyError('connection', `Cannot reach https://h.example/v1/chat/completions?key=${custom}: refused`));
    assert.ok(!JSON.stringify(conn).includes(custom), 'a key in a URL query');
  });

  it('detail is left out when it only repeats the title text', () => {
    const e = new ParleyError('server', 'same words', { providerMessage: 'same words', status: 500 });
    assert.equal(errorView(e, ctx()).detail, undefined);
  });
});
