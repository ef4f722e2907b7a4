// Account balances (src/core/balance.ts, src/vscode/balances.ts) in plain Node: the three servers' answers and bad
// ones, which server a profile asks and where, the five-minute cache, and that the key goes only to its own origin
// (real HTTP on 127.0.0.1; the answers' shapes are the ones each server's documentation or source gives, cited in
// src/core/balance.ts).
import * as assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import {
  BALANCE_INTERVAL_MS,
  BalanceCache,
  balanceKind,
  balancesMarkdown,
  balanceUrls,
  fetchBalance,
  readBalanceAnswer,
  readDeepSeekBalance,
  readLiteLlmKeyInfo,
  readOpenRouterCredits,
  readOpenRouterKey,
  type BalanceReading,
} from '../../src/core/balance';
import { resolveEndpoint } from '../../src/core/endpoint';
import type { Profile } from '../../src/core/profiles';
import { markdown, type BalanceKeys } from '../../src/vscode/balances';
import { startTestServer, withServer, type TestServer } from '../support/server';

const ok = (text: string): BalanceReading => ({ ok: true, text });
const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const profile = (p: Partial<Profile>): Profile => ({ name: 'P', baseUrl: 'https://openrouter.ai/api/v1', model: 'm', models: {}, source: 'user', ...p });

describe('balance answers read defensively', () => {
  it('OpenRouter /credits: credit left, from numbers or numeric strings', () => {
    // The docs' example, and the unrounded usage a real account answers with.
    assert.deepEqual(readOpenRouterCredits({ data: { total_credits: 100.5, total_usage: 25.75 } }), ok('$74.75 left ($100.50 bought, $25.75 used)'));
    assert.deepEqual(readOpenRouterCredits({ data: { total_credits: 20, total_usage: 15.989331752 } }), ok('$4.01 left ($20.00 bought, $15.99 used)'));
    assert.deepEqual(readOpenRouterCredits({ data: { total_credits: '10', total_usage: '12.5' } }), ok('-$2.50 left ($10.00 bought, $12.50 used)'));
    for (const bad of [{}, { data: null }, { data: { total_credits: 5 } }, { data: { total_credits: 'five', total_usage: 1 } }, [], 'x', null]) {
      assert.deepEqual(readOpenRouterCredits(bad), { ok: false, reason: 'the answer has no total_credits and total_usage' }, JSON.stringify(bad));
    }
  });

  it('OpenRouter /key: what is left of the key’s limit, or its usage when it has none', () => {
    assert.deepEqual(readOpenRouterKey({ data: { label: 'sk-or-v1-au7...890', limit: 100, limit_remaining: 74.5, usage: 25.5, is_free_tier: false } }), ok('$74.50 left of this key’s $100.00 limit'));
    assert.deepEqual(readOpenRouterKey({ data: { limit: null, limit_remaining: null, usage: '3.2' } }), ok('$3.20 used; this key has no limit (the account’s credit needs a management key)'));
    assert.equal(readOpenRouterKey({ data: { limit: 'none' } }).ok, false);
    assert.equal(readOpenRouterKey({ data: { limit: null } }).ok, false);
  });

  it('DeepSeek /user/balance: each currency, amounts as strings; is_available false is said', () => {
    const doc = { is_available: true, balance_infos: [{ currency: 'CNY', total_balance: '110.00', granted_balance: '10.00', topped_up_balance: '100.00' }] };
    assert.deepEqual(readDeepSeekBalance(doc), ok('110.00 CNY (10.00 granted, 100.00 topped up) left'));
    const two = { is_available: true, balance_infos: [{ currency: 'CNY', total_balance: '-0.04', granted_balance: '0.00', topped_up_balance: '-0.04' }, { currency: 'USD', total_balance: '14.59', granted_balance: '0.00', topped_up_balance: '14.59' }] };
    assert.deepEqual(readDeepSeekBalance(two), ok('-0.04 CNY (0.00 granted, -0.04 topped up), $14.59 ($0.00 granted, $14.59 topped up) left'));
    assert.deepEqual(readDeepSeekBalance({ is_available: false, balance_infos: [{ currency: 'USD', total_balance: '0.00' }] }), ok('$0.00 left; not available for API calls'));
    // A currency that is not an ISO code is not shown; an entry without a total is skipped.
    assert.deepEqual(readDeepSeekBalance({ balance_infos: [{ currency: '<img src=x>', total_balance: 1 }, { currency: 'USD' }] }), ok('1.00 left'));
    for (const bad of [{}, { balance_infos: [] }, { balance_infos: 'none' }, { balance_infos: [{ currency: 'USD' }] }]) {
      assert.deepEqual(readDeepSeekBalance(bad), { ok: false, reason: 'the answer has no balance_infos' }, JSON.stringify(bad));
    }
  });

  it('LiteLLM /key/info: the key’s budget and spend; the key it echoes is never shown', () => {
    const secret = 'sk-litellm-0123456789abcdef';
    const withBudget = readLiteLlmKeyInfo({ key: secret, info: { key_name: 'sk-...cdef', spend: 1.25, max_budget: 10, budget_reset_at: null } });
    assert.deepEqual(withBudget, ok('$8.75 left of this key’s $10.00 budget ($1.25 spent)'));
    assert.deepEqual(readLiteLlmKeyInfo({ key: secret, info: { spend: '0.5', max_budget: null } }), ok('$0.50 spent; this key has no budget'));
    assert.deepEqual(readLiteLlmKeyInfo({ key: secret, info: [] }), { ok: false, reason: 'the answer has no spend' });
    assert.doesNotMatch(JSON.stringify([withBudget]), /sk-litellm/);
  });

  it('statuses, web pages and non-JSON answers give a short reason of Parley’s own, never the server’s text', () => {
    const page = '<!DOCTYPE html><html><body><script>alert(1)</script>sk-or-v1-secret</body></html>';
    const cases: Array<[number, string, string, string]> = [
      [401, 'application/json', '{"error":{"message":"No auth credentials found sk-or-v1-secret","code":401}}', 'the server refused the key (401)'],
      [403, 'application/json', '{"error":{"message":"Only management keys can perform this operation","code":403}}', 'this key may not read the balance (403)'],
      [404, 'text/html', page, 'the server has no balance at this address (404)'],
      [502, 'text/plain', 'Bad gateway sk-or-v1-secret', 'the server answered 502'],
      [200, 'text/html; charset=utf-8', page, 'the server answered with a web page, not JSON'],
      [200, '', `  \n${page}`, 'the server answered with a web page, not JSON'],
      [200, 'application/json', 'credits: 5 sk-or-v1-secret', 'the answer is not JSON'],
    ];
    for (const [status, type, text, reason] of cases) {
      assert.deepEqual(readBalanceAnswer(readOpenRouterCredits, status, type, text), { ok: false, reason }, `${status} ${type}`);
    }
    assert.deepEqual(readBalanceAnswer(readOpenRouterCredits, 200, 'application/json', '{"data":{"total_credits":1,"total_usage":0}}'), ok('$1.00 left ($1.00 bought, $0.00 used)'));
  });
});

describe('which server a profile asks, and where', () => {
  const at = (url: string) => resolveEndpoint(url);

  it('true picks the kind by host; a kind’s name says it for any host; anything else is said', () => {
    assert.deepEqual(balanceKind({ balance: true, source: 'user' }, at('https://openrouter.ai/api/v1')), { kind: 'openrouter' });
    assert.deepEqual(balanceKind({ balance: true, source: 'user' }, at('https://api.deepseek.com')), { kind: 'deepseek' });
    assert.match((balanceKind({ balance: true, source: 'user' }, at('http://127.0.0.1:4000')) as { reason: string }).reason, /cannot tell which server/);
    assert.deepEqual(balanceKind({ balance: 'litellm', source: 'user' }, at('http://127.0.0.1:4000')), { kind: 'litellm' });
    assert.deepEqual(balanceKind({ balance: 'openrouter', source: 'user' }, at('http://127.0.0.1:4000/api/v1')), { kind: 'openrouter' });
    for (const bad of ['OpenRouter', 'toString', 1, {}]) {
      assert.deepEqual(balanceKind({ balance: bad, source: 'user' }, at('https://openrouter.ai/api/v1')), { reason: '"balance" must be true, "openrouter", "deepseek" or "litellm"' }, String(bad));
    }
    assert.equal(balanceKind({ balance: undefined, source: 'user' }, at('https://openrouter.ai/api/v1')), undefined);
    assert.equal(balanceKind({ balance: false, source: 'user' }, at('https://openrouter.ai/api/v1')), undefined);
  });

  it('a workspace’s profile cannot turn balances on (it would spend the user’s key)', () => {
    for (const source of ['workspace', 'folder'] as const) {
      const plan = balanceKind({ balance: 'openrouter', source }, at('https://openrouter.ai/api/v1'));
      assert.match((plan as { reason: string }).reason, /workspace’s profile cannot turn balances on/);
    }
  });

  it('each kind’s address, on the endpoint’s own origin', () => {
    assert.deepEqual(balanceUrls('openrouter', at('https://openrouter.ai/api/v1')), ['https://openrouter.ai/api/v1/credits', 'https://openrouter.ai/api/v1/key']);
    assert.deepEqual(balanceUrls('openrouter', at('http://127.0.0.1:9/api/v1/')), ['http://127.0.0.1:9/api/v1/credits', 'http://127.0.0.1:9/api/v1/key']);
    assert.deepEqual(balanceUrls('deepseek', at('https://api.deepseek.com')), ['https://api.deepseek.com/user/balance']);
    assert.deepEqual(balanceUrls('deepseek', at('https://api.deepseek.com/v1')), ['https://api.deepseek.com/user/balance']);
    assert.deepEqual(balanceUrls('litellm', at('http://proxy.internal:4000/v1')), ['http://proxy.internal:4000/key/info']);
    assert.deepEqual(balanceUrls('litellm', at('https://gw.example.com/litellm/v1/chat/completions')), ['https://gw.example.com/litellm/key/info']);
  });
});

describe('asking a balance over HTTP (fetchBalance)', function () {
  this.timeout(20_000);
  const KEY = 'sk-or-v1-balance-test-key';

  it('GETs /credits with the key as a Bearer token and reads the answer', async () => {
    await withServer((_req, res) => json(res, 200, { data: { total_credits: 100.5, total_usage: 25.75 } }), async (s) => {
      const r = await fetchBalance('openrouter', resolveEndpoint(`${s.url}/api/v1`), KEY);
      assert.deepEqual(r, ok('$74.75 left ($100.50 bought, $25.75 used)'));
      assert.deepEqual(s.requests.map((q) => [q.method, q.path, q.headers.authorization]), [['GET', '/api/v1/credits', `Bearer ${KEY}`]]);
    });
  });

  it('OpenRouter: a 403 on /credits (not a management key) asks /key instead; other kinds ask one address', async () => {
    await withServer((req, res) => (req.path.endsWith('/credits') ? json(res, 403, { error: { message: 'Forbidden', code: 403 } }) : json(res, 200, { data: { limit: 10, limit_remaining: 2.5, usage: 7.5 } })), async (s) => {
      assert.deepEqual(await fetchBalance('openrouter', resolveEndpoint(`${s.url}/api/v1`), KEY), ok('$2.50 left of this key’s $10.00 limit'));
      assert.deepEqual(s.requests.map((q) => q.path), ['/api/v1/credits', '/api/v1/key']);
    });
    await withServer((_req, res) => json(res, 403, { detail: 'no' }), async (s) => {
      assert.deepEqual(await fetchBalance('litellm', resolveEndpoint(`${s.url}/v1`), KEY), { ok: false, reason: 'this key may not read the balance (403)' });
      assert.deepEqual(s.requests.map((q) => q.path), ['/key/info']);
    });
  });

  it('a 401, a web page, a closed port and a silent server each give a reason, never the key or the page', async () => {
    await withServer((req, res) => {
      if (req.path === '/user/balance') return json(res, 401, { error: { message: `Authentication Fails, Your api key: ****${KEY.slice(-4)} is invalid` } });
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Sign in</body></html>');
    }, async (s) => {
      const denied = await fetchBalance('deepseek', resolveEndpoint(s.url), KEY);
      assert.deepEqual(denied, { ok: false, reason: 'the server refused the key (401)' });
      const page = await fetchBalance('litellm', resolveEndpoint(s.url), KEY);
      assert.deepEqual(page, { ok: false, reason: 'the server answered with a web page, not JSON' });
    });
    const closed = await startTestServer(() => undefined);
    await closed.close();
    assert.deepEqual(await fetchBalance('deepseek', resolveEndpoint(closed.url), KEY), { ok: false, reason: `cannot reach ${closed.origin}` });
    await withServer(() => new Promise<void>(() => undefined), async (s) => {
      assert.deepEqual(await fetchBalance('deepseek', resolveEndpoint(s.url), KEY, 1000), { ok: false, reason: 'no answer within 1 s' });
    });
  });

  it('the key goes only to its own origin: a redirect to another port is not followed, and that server sees nothing', async () => {
    await withServer((_req, res) => json(res, 200, { data: { total_credits: 1, total_usage: 0 } }), async (other) => {
      await withServer((_req, res) => {
        res.writeHead(307, { location: `${other.url}/api/v1/credits` });
        res.end();
      }, async (own) => {
        const r = await fetchBalance('openrouter', resolveEndpoint(`${own.url}/api/v1`), KEY);
        assert.deepEqual(r, { ok: false, reason: 'the server sent the request elsewhere (a redirect Parley does not follow)' });
        assert.equal(own.requests.length, 1);
        assert.equal(own.requests[0].headers.authorization, `Bearer ${KEY}`);
        assert.deepEqual(other.requests, [], 'the other origin saw no request, so no key');
      });
    });
  });
});

describe('the five-minute cache (BalanceCache)', () => {
  /** A cache on a clock the test moves, and a read that resolves when the test says. */
  function harness() {
    let now = 1_000_000;
    const cache = new BalanceCache(() => now);
    const reads: Array<(r: BalanceReading) => void> = [];
    const read = () => new Promise<BalanceReading>((resolve) => reads.push(resolve));
    let arrivals = 0;
    const arrived = () => {
      arrivals++;
    };
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    return { cache, reads, read, arrived, settle, arrivals: () => arrivals, advance: (ms: number) => (now += ms), now: () => now };
  }

  it('asks once, shows "reading" meanwhile, then the reading with its time, and asks again only after 5 minutes', async () => {
    const h = harness();
    const asked = h.now();
    assert.deepEqual(h.cache.lookup('o k a', h.read, h.arrived), { reading: undefined, at: undefined, pending: true });
    // Shown again (by another render) while the read is under way: no second request.
    assert.equal(h.cache.lookup('o k a', h.read, () => h.arrived()).pending, true);
    assert.equal(h.reads.length, 1);
    h.advance(1500);
    h.reads[0](ok('$1.00 left'));
    await h.settle();
    assert.equal(h.arrivals(), 2, 'each look made while the read was under way is told');
    h.advance(BALANCE_INTERVAL_MS - 1500 - 1);
    assert.deepEqual(h.cache.lookup('o k a', h.read, h.arrived), { reading: ok('$1.00 left'), at: asked + 1500, pending: false });
    assert.equal(h.reads.length, 1, 'not asked again within 5 minutes of the last ask');
    h.advance(1);
    const again = h.cache.lookup('o k a', h.read, h.arrived);
    assert.equal(h.reads.length, 2, 'asked again 5 minutes after the last ask');
    assert.deepEqual(again, { reading: ok('$1.00 left'), at: asked + 1500, pending: true }, 'the old reading shows until the new one arrives');
    h.reads[1]({ ok: false, reason: 'the server answered 502' });
    await h.settle();
    h.advance(60_000);
    assert.deepEqual(h.cache.lookup('o k a', h.read, h.arrived).reading, { ok: false, reason: 'the server answered 502' });
    assert.equal(h.reads.length, 2, 'a failure is kept for 5 minutes too: a failing server is not asked at every render');
  });

  it('each balance has its own time; forgetting an origin (its key changed) asks again at the next look', async () => {
    const h = harness();
    h.cache.lookup('http://a:1 openrouter x', h.read, h.arrived);
    h.cache.lookup('http://b:2 deepseek y', h.read, h.arrived);
    assert.equal(h.reads.length, 2);
    h.reads.forEach((f) => f(ok('x')));
    await h.settle();
    h.cache.forget('http://a:1');
    h.cache.lookup('http://a:1 openrouter x', h.read, h.arrived);
    h.cache.lookup('http://b:2 deepseek y', h.read, h.arrived);
    assert.equal(h.reads.length, 3, 'only the forgotten origin is asked again');
  });
});

describe('the balances’ Markdown', () => {
  it('names each profile as text, escapes $ (no math), says when it was read and why one is unavailable', () => {
    const now = new Date(2026, 10, 27, 15, 0).getTime();
    const md = balancesMarkdown([
      { profile: 'OpenRouter [x](https://evil.example)', kind: 'openrouter', reading: ok('$4.01 left ($20.00 bought, $15.99 used)'), at: new Date(2026, 10, 27, 14, 5).getTime(), pending: false },
      { profile: 'Proxy', kind: 'litellm', pending: true },
      { profile: 'Deep', kind: 'deepseek', reading: { ok: false, reason: 'the server refused the key (401)' }, at: new Date(2026, 10, 26, 9, 30).getTime(), pending: true },
    ], now);
    assert.equal(md, [
      '',
      '',
      '**Balances**',
      '',
      '- `OpenRouter [x](https://evil.example)` (OpenRouter): \\$4.01 left (\\$20.00 bought, \\$15.99 used), read at 02:05 PM',
      '- `Proxy` (LiteLLM): reading…',
      '- `Deep` (DeepSeek): balance unavailable: the server refused the key (401), read at Nov 26, 09:30 AM (reading again…)',
    ].join('\n'));
    const report = balancesMarkdown([{ profile: 'P', kind: 'openrouter', reading: ok('$1.00 left'), at: now, pending: false }], now, true);
    assert.match(report, /^\n\n## Balances\n\n- `P` \(OpenRouter\): \\\$1\.00 left, read at 03:00 PM\n\nAsked at most every 5 minutes/);
    assert.equal(balancesMarkdown([], now), '');
  });
});

describe('balances for the tooltip and the report (src/vscode/balances.ts)', function () {
  this.timeout(20_000);
  let own: TestServer;
  let other: TestServer;
  const KEYS: Record<string, string> = {};
  const keys: BalanceKeys = {
    get: (origin) => Promise.resolve(Object.prototype.hasOwnProperty.call(KEYS, origin) ? { kind: 'key', key: KEYS[origin] } : { kind: 'missing' }),
    onDidChange: () => ({ dispose: () => undefined }),
  };

  before(async () => {
    const credits = (_req: unknown, res: ServerResponse) => json(res, 200, { data: { total_credits: 100.5, total_usage: 25.75 } });
    own = await startTestServer(credits);
    other = await startTestServer(credits);
    KEYS[own.origin] = 'sk-own-origin-key-000000';
    KEYS[other.origin] = 'sk-other-origin-key-11111';
  });
  after(async () => {
    await own.close();
    await other.close();
  });

  it('asks only the opted-in profile’s origin, with that origin’s key; a second look within 5 minutes asks nothing', async () => {
    const profiles = [
      profile({ name: 'Mine', baseUrl: `${own.url}/api/v1`, balance: 'openrouter' }),
      profile({ name: 'Other', baseUrl: `${other.url}/api/v1` }),
    ];
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const first = markdown({ profiles }, keys, () => arrived());
    assert.match(first, /`Mine` \(OpenRouter\): reading…/);
    assert.doesNotMatch(first, /Other/);
    await arrival;
    const second = markdown({ profiles }, keys, () => assert.fail('nothing was asked, so nothing arrives'), true);
    assert.match(second, /## Balances\n\n- `Mine` \(OpenRouter\): \\\$74\.75 left \(\\\$100\.50 bought, \\\$25\.75 used\), read at /);
    assert.deepEqual(own.requests.map((r) => [r.path, r.headers.authorization]), [['/api/v1/credits', 'Bearer sk-own-origin-key-000000']]);
    assert.deepEqual(other.requests, [], 'the profile without balances, on another port, saw no request and no key');
  });

  it('no key stored for the origin: nothing is sent, and the line says so', async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    // A host that resolves nowhere: had anything been sent, the line would say it could not be reached.
    const profiles = [profile({ name: 'Far', baseUrl: 'https://llm.example.invalid/v1', balance: 'litellm' })];
    markdown({ profiles }, keys, () => arrived());
    await arrival;
    assert.match(markdown({ profiles }, keys, () => undefined), /`Far` \(LiteLLM\): balance unavailable: no API key is set for `https:\/\/llm\.example\.invalid`, read at /);
  });
});
