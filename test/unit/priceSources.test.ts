// Prices for the spend budget (issue 37): read from a server's model list (OpenRouter's shape from
// test/fixtures/models, and the other gateways whose fields are clear), in order after the user's own prices, cached
// prompt tokens at the cached rate, and the usage report's words on where each price came from.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findPrice, spentIn } from '../../src/core/budget';
import type { BudgetPrices } from '../../src/core/budgetSettings';
import { modelListFrom } from '../../src/core/modelInfo';
import { learnedFrom, listedPrice, listedPrices, priceSourcesMarkdown, withListed } from '../../src/core/priceSources';
import { addTo, costOf, dayOf, emptyTotals, recordFrom, type Ledger } from '../../src/core/usageLedger';
import { reportMarkdown } from '../../src/core/usageReport';
import { mergeLedger, parseLegacyLedger, parseUsageLog } from '../../src/core/usageLog';
import { pricesOf, reportPricing } from '../../src/vscode/budgetCheck';
import { memoryState } from '../support/memoryState';
import { repoRoot } from '../support/repoRoot';

const openRouterList = () => JSON.parse(fs.readFileSync(path.join(repoRoot(), 'test/fixtures/models/openrouter-models.json'), 'utf8')) as unknown;

describe('prices from a model list (priceSources)', () => {
  it("reads OpenRouter's per-token strings as prices per million, with the cached rate where listed", () => {
    const list = modelListFrom(openRouterList());
    assert.ok(list);
    assert.deepEqual(listedPrices(list), {
      'openai/gpt-5.4': { input: 2.5, output: 15, cached: 0.25 },
      'google/gemini-3.1-flash-lite-preview': { input: 0.25, output: 1.5, cached: 0.025 },
      'qwen/qwen3.5-27b': { input: 0.195, output: 1.56 },
      // "0": free, a known price of nothing.
      'openai/gpt-oss-20b:free': { input: 0, output: 0 },
      // openrouter/auto's "-1" is no fixed price: it is left out, not read as free.
    });
  });

  it('ignores malformed and missing fields, and numbers whose unit is not clear', () => {
    const none = [
      undefined, null, 'pricing', [], {}, { prompt: '0.000003' }, { completion: '0.000015' }, { prompt: '-1', completion: '-1' },
      { prompt: '0.000003', completion: '-0.000015' }, { prompt: '', completion: '' }, { prompt: 'abc', completion: '0.00001' },
      { prompt: '1.2.3', completion: '1' }, { prompt: null, completion: null }, { prompt: {}, completion: [] }, { prompt: -1, completion: 1 },
      // Numbers under input/output without Together's `hourly` beside them: per token or per million? Not read.
      { input: 0.3, output: 0.3 }, { input: 0.000003, output: 0.000015 },
    ];
    for (const p of none) assert.equal(listedPrice(p), undefined, JSON.stringify(p));
    // A bad cached rate is left out (cached tokens then cost the prompt rate); the price itself stands.
    assert.deepEqual(listedPrice({ prompt: '0.000003', completion: '0.000015', input_cache_read: 'n/a' }), { input: 3, output: 15 });
    assert.deepEqual(listedPrice({ prompt: '0.000003', completion: '0.000015', input_cache_read: '-1' }), { input: 3, output: 15 });
    assert.deepEqual(listedPrice({ prompt: ' 1e-6 ', completion: '2E-6' }), { input: 1, output: 2 });
    assert.deepEqual(listedPrice({ prompt: 0.000003, completion: 0.000015 }), { input: 3, output: 15 });
    assert.deepEqual(listedPrice({ prompt: '0', completion: '0' }), { input: 0, output: 0 });
  });

  it("reads Vercel's per-token strings and Together's per-million numbers", () => {
    // Vercel AI Gateway /v1/models: the same per-token strings under input/output.
    assert.deepEqual(listedPrice({ input: '0.000003', output: '0.000015', input_cache_read: '0.0000003', input_cache_write: '0.00000375', web_search: '10' }), { input: 3, output: 15, cached: 0.3 });
    // Together AI GET /v1/models: per million, with hourly, base and finetune beside them.
    assert.deepEqual(listedPrice({ base: 0, finetune: 0, hourly: 0, input: 0.3, output: 0.3, cached_input: 0.2 }), { input: 0.3, output: 0.3, cached: 0.2 });
    assert.deepEqual(listedPrice({ hourly: 0, input: 0.88, output: 0.88, base: 0, finetune: 0 }), { input: 0.88, output: 0.88 });
  });

  it('learns per ledger host: a new list replaces that host\'s, one that prices nothing changes nothing, damaged state is dropped', () => {
    const a = modelListFrom(openRouterList()) ?? [];
    const first = withListed({}, 'openrouter.ai', a, 1000);
    assert.ok(first);
    assert.equal(first['openrouter.ai'].at, 1000);
    const second = withListed(first, 'work (openrouter.ai)', [{ id: 'x', pricing: { prompt: '0.000001', completion: '0.000002' } }], 2000);
    assert.deepEqual(Object.keys(second ?? {}).sort(), ['openrouter.ai', 'work (openrouter.ai)']);
    assert.deepEqual(withListed(second ?? {}, 'openrouter.ai', [{ id: 'x', pricing: { prompt: '0.000004', completion: '0.000004' } }], 3000)?.['openrouter.ai'], { at: 3000, models: { x: { input: 4, output: 4 } } });
    assert.equal(withListed(first, '127.0.0.1:11434', [{ id: 'llama3.2' }, { id: 'qwen', pricing: {} }], 4000), undefined);
    // The same prices read again within the hour are not written again; after it, or changed, they are.
    assert.equal(withListed(first, 'openrouter.ai', a, 1000 + 30 * 60_000), undefined);
    assert.equal(withListed(first, 'openrouter.ai', a, 1000 + 61 * 60_000)?.['openrouter.ai'].at, 1000 + 61 * 60_000);
    // A model named __proto__ is a model like any other, in a list and in state read back.
    const odd = listedPrices([{ id: '__proto__', pricing: { prompt: '0.000001', completion: '0.000001' } }]);
    assert.deepEqual(Object.keys(odd), ['__proto__']);
    assert.equal(Object.getPrototypeOf(odd), Object.prototype);
    const read = learnedFrom(JSON.parse('{"h": {"at": 5, "models": {"m": {"input": 1, "output": 2, "cached": 0.5}, "bad": {"input": "x", "output": 1}, "__proto__": {"input": 1, "output": 1}}}, "junk": 7, "nomodels": {"at": 1}}'));
    assert.deepEqual(Object.keys(read), ['h']);
    assert.deepEqual(Object.keys(read.h.models).sort(), ['__proto__', 'm']);
    assert.deepEqual(read.h.models.m, { input: 1, output: 2, cached: 0.5 });
    assert.deepEqual(learnedFrom('not state'), {});
  });
});

describe('prices in order (findPrice)', () => {
  const prices: BudgetPrices = {
    pricing: { shared: { input: 2, output: 2 }, listed: { input: 5, output: 5 } },
    profiles: {
      mine: { workspace: false, models: { shared: { input: 1, output: 1 } } },
      repo: { workspace: true, models: { cheap: { input: 0, output: 0 }, only: { input: 7, output: 7 } } },
    },
    listed: {
      'gw.example': { at: 100, models: { listed: { input: 9, output: 9 }, cheap: { input: 3, output: 3 } } },
      'repo (gw.example)': { at: 200, models: { cheap: { input: 3, output: 3 } } },
    },
  };

  it("takes the profile's own, then parley.pricing, then the host's model list, then a workspace profile's", () => {
    assert.deepEqual(findPrice(prices, 'mine (gw.example)', 'shared'), { price: { input: 1, output: 1 }, source: 'profile' });
    assert.deepEqual(findPrice(prices, 'gw.example', 'shared'), { price: { input: 2, output: 2 }, source: 'pricing' });
    // The user's pricing wins over what the server lists.
    assert.deepEqual(findPrice(prices, 'gw.example', 'listed'), { price: { input: 5, output: 5 }, source: 'pricing' });
    assert.deepEqual(findPrice(prices, 'gw.example', 'cheap'), { price: { input: 3, output: 3 }, source: 'list', at: 100 });
    // A workspace profile's price of 0 does not undercut the server's list; it counts only where nothing else prices.
    assert.deepEqual(findPrice(prices, 'repo (gw.example)', 'cheap'), { price: { input: 3, output: 3 }, source: 'list', at: 200 });
    assert.deepEqual(findPrice(prices, 'repo (gw.example)', 'only'), { price: { input: 7, output: 7 }, source: 'workspace' });
    // A list prices its own host's requests only.
    assert.deepEqual(findPrice(prices, 'other.example', 'cheap'), { source: 'none' });
  });

  it("counts a workspace's parley.pricing after the user's and the model list's", () => {
    const user = { mine: { input: 4, output: 4 } };
    const workspace = { mine: { input: 0, output: 0 }, cheap: { input: 0, output: 0 }, theirs: { input: 6, output: 6 } };
    // A trusted workspace's parley.pricing replaces the user's in `pricing`; `userPricing` keeps the user's.
    const p = pricesOf({ pricing: workspace, userPricing: user, profiles: [] }, { get: <T>() => ({ 'gw.example': { at: 1, models: { cheap: { input: 3, output: 3 } } } }) as T });
    assert.deepEqual(findPrice(p, 'gw.example', 'mine'), { price: { input: 4, output: 4 }, source: 'pricing' });
    assert.deepEqual(findPrice(p, 'gw.example', 'cheap'), { price: { input: 3, output: 3 }, source: 'list', at: 1 });
    assert.deepEqual(findPrice(p, 'gw.example', 'theirs'), { price: { input: 6, output: 6 }, source: 'workspace' });
    // With no workspace value the two are the same: the user's, first.
    assert.deepEqual(findPrice(pricesOf({ pricing: user, userPricing: user, profiles: [] }), 'gw.example', 'mine'), { price: { input: 4, output: 4 }, source: 'pricing' });
  });
});

describe('cached prompt tokens (costOf, the ledger)', () => {
  it('costs cached prompt tokens at the cached rate, else at the prompt rate', () => {
    const t = { prompt: 1_000_000, completion: 100_000, cached: 800_000 };
    // 200,000 uncached at $3, 800,000 cached at $0.30, 100,000 out at $15.
    assert.equal(costOf(t, { input: 3, output: 15, cached: 0.3 })?.toFixed(6), (0.6 + 0.24 + 1.5).toFixed(6));
    assert.equal(costOf(t, { input: 3, output: 15 })?.toFixed(6), (3 + 1.5).toFixed(6));
    // A cached price set by hand that is not a price (negative) is not used: the prompt rate is.
    assert.equal(costOf(t, { input: 3, output: 15, cached: -1 })?.toFixed(6), (3 + 1.5).toFixed(6));
    // More cached than prompt (a damaged count) is capped at the prompt.
    assert.equal(costOf({ prompt: 10, completion: 0, cached: 50 }, { input: 1_000_000, output: 0, cached: 0 }), 0);
  });

  it('keeps cached tokens in the ledger totals; old ledgers and log lines without them still read', () => {
    const at = new Date(2026, 0, 5, 12).getTime();
    const withCache = recordFrom({ prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, prompt_tokens_details: { cached_tokens: 600 } }, { model: 'm', host: 'h', durationMs: 1, source: 'chat', at });
    const without = recordFrom({ prompt_tokens: 500, completion_tokens: 5, total_tokens: 505 }, { model: 'm', host: 'h', durationMs: 1, source: 'chat', at });
    assert.equal(addTo(addTo(emptyTotals(), withCache), without).cached, 600);
    assert.equal('cached' in addTo(emptyTotals(), without), false, 'a total with no cached tokens has no field for them');
    // A log line of an older version (no `cached`) and a hand-edited one (`cached` not a number) both read.
    const log = parseUsageLog(`${JSON.stringify(without)}\n${JSON.stringify({ ...withCache, cached: 'lots' })}\n`);
    assert.equal(log.length, 2);
    const legacy = parseLegacyLedger(JSON.stringify({ at: 1, ledger: { [`${dayOf(at)}|h|m`]: { requests: 1, prompt: 5, completion: 1, total: 6, estimatedTokens: 0 } } }));
    const ledger = mergeLedger([log], undefined, legacy);
    assert.deepEqual(ledger[`${dayOf(at)}|h|m`], { requests: 3, prompt: 1505, completion: 16, total: 1521, estimatedTokens: 0 });
    // A day's spend counts the cached tokens at their rate.
    const spent = spentIn({ period: 'day', unit: 'dollars' }, { [`${dayOf(at)}|h|m`]: addTo(emptyTotals(), withCache) }, { pricing: { m: { input: 1000, output: 0, cached: 100 } }, profiles: {} }, at);
    assert.equal(spent.toFixed(6), ((400 * 1000 + 600 * 100) / 1e6).toFixed(6));
  });
});

describe('where each price came from (the usage report)', () => {
  const at = new Date(2026, 2, 10, 9).getTime();
  const ledger: Ledger = {
    [`${dayOf(at)}|openrouter.ai|openai/gpt-5.4`]: { requests: 2, prompt: 1_000_000, completion: 0, total: 1_000_000, estimatedTokens: 0, cached: 1_000_000 },
    [`${dayOf(at)}|work (gw.example)|openai/gpt-5.4`]: { requests: 1, prompt: 1_000_000, completion: 0, total: 1_000_000, estimatedTokens: 0 },
    [`${dayOf(at)}|openrouter.ai|mine`]: { requests: 1, prompt: 10, completion: 10, total: 20, estimatedTokens: 0 },
    [`${dayOf(at)}|127.0.0.1:8080|local \`|x`]: { requests: 1, prompt: 10, completion: 10, total: 20, estimatedTokens: 0 },
  };

  it('prices each row at its own host\'s price, and says the source of each, the list with the day it was read', async () => {
    const state = memoryState();
    await state.update('parley.listedPrices', withListed({}, 'openrouter.ai', modelListFrom(openRouterList()) ?? [], at));
    await state.update('parley.unpricedModels', { '127.0.0.1:8080|local `|x': 'uncounted', 'gw.example|blocked-one': 'block' });
    const prices = reportPricing({ pricing: { mine: { input: 1, output: 1 } }, profiles: [] }, state);
    const md = reportMarkdown(ledger, emptyTotals(), prices, at);
    // gpt-5.4 at openrouter.ai: 1M cached tokens at the list's $0.25; at the profile's gateway it has no price.
    const alone = `${dayOf(at)}|openrouter.ai|openai/gpt-5.4`;
    assert.match(reportMarkdown({ [alone]: ledger[alone] }, emptyTotals(), prices, at), /\| `openai\/gpt-5\.4` \| 2 \| 1,000,000 \| 0 \| 1,000,000 \| 0% \| \$0\.25 \|/);
    assert.match(md, /\| `openai\/gpt-5\.4` \| 3 \| .* \| no price set \|/);
    const section = md.slice(md.indexOf('## Prices'));
    assert.match(section, new RegExp(`\\| \`openrouter\\.ai\` \\| \`openai/gpt-5\\.4\` \\| \\$2\\.5 prompt, \\$0\\.25 cached, \\$15 reply \\| the server's model list, read ${dayOf(at)} \\|`));
    assert.match(section, /\| `openrouter\.ai` \| `mine` \| \$1 prompt, \$1 reply \| `parley\.pricing` \|/);
    assert.match(section, /\| `work \(gw\.example\)` \| `openai\/gpt-5\.4` \| none \| none: set one in `parley\.pricing` \|/);
    assert.match(section, /uncounted in dollars[^\n]*\n\n- ``local `\|x`` at `127\.0\.0\.1:8080`/);
    assert.match(section, /Blocked while a dollar limit applies[^\n]*\n\n- `blocked-one` at `gw\.example`/);
    // The hostile model name stays inside its code cell: the table keeps four cells a row.
    for (const line of section.split('\n').filter((l: string) => l.startsWith('| `127'))) assert.equal(line.split(/(?<!\\)\|/).length, 6, line);
  });

  it('lists nothing uncounted when nobody answered', () => {
    const md = priceSourcesMarkdown(ledger, () => ({ source: 'none' }), {});
    assert.doesNotMatch(md, /uncounted|Blocked/);
  });
});
