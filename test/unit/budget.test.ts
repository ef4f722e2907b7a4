// Spend budgets (src/core/budgetSettings.ts, src/core/budget.ts) in plain Node: the setting read across levels, the periods in local time, what a
// period spent, the estimate of one request, the decision (send, warn once per threshold, block), and the watch that
// stops a stream once it crosses a blocking limit.
import * as assert from 'node:assert/strict';
import { budgetStatus, decide, limitStatus, overrun, periodEnd, periodStart, requestCost, spentIn, warningKey, warningsNow, watchStream } from '../../src/core/budget';
import { parseLimits, readBudget, type BudgetLimit, type BudgetMistake, type BudgetPrices } from '../../src/core/budgetSettings';
import type { ScopedValue } from '../../src/core/scopedSettings';
import type { ChatResult, StreamEvent } from '../../src/core/types';
import { dayOf, type Ledger, type Totals } from '../../src/core/usageLedger';

/** Thursday, 27 November 2026, 15:00 local time. */
const NOW = new Date(2026, 10, 27, 15, 0).getTime();
const at = (y: number, m: number, d: number) => new Date(y, m - 1, d, 12).getTime();
const totals = (prompt: number, completion: number): Totals => ({ requests: 1, prompt, completion, total: prompt + completion, estimatedTokens: 0 });
const row = (when: number, host: string, model: string, t: Totals): Ledger => ({ [`${dayOf(when)}|${host}|${model}`]: t });
const PRICES: BudgetPrices = { pricing: { m: { input: 1, output: 2 } }, profiles: {} };
const limit = (l: Partial<BudgetLimit>): BudgetLimit => ({ period: 'day', unit: 'dollars', amount: 1, action: 'block', source: 'user', ...l });

function budget(levels: { user?: Record<string, unknown>; workspace?: Record<string, unknown>; folder?: Record<string, unknown> }, trusted = true) {
  const adjusted: string[] = [];
  const mistakes: BudgetMistake[] = [];
  const inspect = (key: string): ScopedValue => ({ globalValue: levels.user?.[key], workspaceValue: levels.workspace?.[key], workspaceFolderValue: levels.folder?.[key] });
  return { limits: readBudget(inspect, trusted, adjusted, mistakes), adjusted, mistakes };
}

describe('budget limits as data (parseLimits, readBudget)', () => {
  it('reads dollars and tokens of one entry as two limits; action defaults to block', () => {
    const problems: BudgetMistake[] = [];
    const l = parseLimits([{ period: 'week', dollars: 5, tokens: 1000, action: 'warn' }, { period: 'month', dollars: 20 }], 'user', undefined, problems);
    assert.deepEqual(l, [
      { period: 'week', unit: 'dollars', amount: 5, action: 'warn', source: 'user' },
      { period: 'week', unit: 'tokens', amount: 1000, action: 'warn', source: 'user' },
      { period: 'month', unit: 'dollars', amount: 20, action: 'block', source: 'user' },
    ]);
    assert.deepEqual(problems, []);
  });

  it('sets aside each entry it cannot read, as written and where it is; a right amount beside a wrong one still applies', () => {
    const problems: BudgetMistake[] = [];
    const entries = [{ period: 'year', dollars: 1 }, { period: 'day', dollars: -1 }, { period: 'day', action: 'stop', dollars: 1 }, { period: 'day' }, 'x', { period: 'week', dollars: 3, tokens: '9' }];
    const l = parseLimits(entries, 'workspace', 'Work', problems);
    assert.deepEqual(l, [{ period: 'week', unit: 'dollars', amount: 3, action: 'block', source: 'workspace', profile: 'Work' }]);
    assert.deepEqual(problems, entries.map((entry, index) => ({ source: 'workspace', profile: 'Work', index, entry })));
    const notList: BudgetMistake[] = [];
    assert.deepEqual(parseLimits({ period: 'day', dollars: 5 }, 'user', undefined, notList), []);
    assert.deepEqual(notList, [{ source: 'user', index: undefined, entry: { period: 'day', dollars: 5 } }]);
  });

  it('reads a limit of 0 as a limit (it blocks every counted request), not as a mistake', () => {
    const problems: BudgetMistake[] = [];
    assert.deepEqual(parseLimits([{ period: 'day', tokens: 0 }], 'user', undefined, problems).map((x) => x.amount), [0]);
    assert.deepEqual(problems, []);
  });

  it("finds the mistakes of every level: the user's, a profile's own, a trusted workspace's", () => {
    const { limits, mistakes } = budget({
      user: { budget: [{ period: 'daily', dollars: 5 }], endpoints: [{ name: ' Work ', budget: [{ period: 'day', dollars: '2' }] }] },
      workspace: { budget: [{ period: 'day' }] },
    });
    assert.deepEqual(limits, []);
    assert.deepEqual(mistakes.map((m) => [m.source, m.profile, m.index]), [['user', undefined, 0], ['user', 'Work', 0], ['workspace', undefined, 0]]);
    assert.deepEqual(budget({ workspace: { budget: [{ period: 'day' }] } }, false).mistakes, [], "Restricted Mode reads no workspace's limits");
  });

  it('adds a profile\'s own budget to the global limits', () => {
    const { limits } = budget({ user: { budget: [{ period: 'day', dollars: 10 }], endpoints: [{ name: 'Work', baseUrl: 'http://x/v1', budget: [{ period: 'day', dollars: 2 }] }] } });
    assert.deepEqual(limits.map((l) => [l.profile, l.amount]), [[undefined, 10], ['Work', 2]]);
  });

  it('lets a workspace add limits but never remove or raise the user\'s', () => {
    const { limits, adjusted } = budget({
      user: { budget: [{ period: 'day', dollars: 5 }], endpoints: [{ name: 'Work', budget: [{ period: 'week', tokens: 100 }] }] },
      // The workspace's lists replace the user's in VS Code's merged value; here they only add.
      workspace: { budget: [{ period: 'day', dollars: 50, action: 'warn' }, { period: 'month', dollars: 1 }], endpoints: [{ name: 'Work', baseUrl: 'http://evil/v1' }] },
    });
    assert.deepEqual(limits.map((l) => [l.source, l.profile, l.period, l.amount, l.action]), [
      ['user', undefined, 'day', 5, 'block'],
      ['user', 'Work', 'week', 100, 'block'],
      ['workspace', undefined, 'day', 50, 'warn'],
      ['workspace', undefined, 'month', 1, 'block'],
    ]);
    assert.match(adjusted.join('\n'), /the workspace's day limit of \$50\.00 is above yours \(\$5\.00\); yours applies/);
    // The workspace's higher daily limit changes nothing: the user's $5 still blocks.
    const d = decide({ limits, ledger: row(NOW, 'h', 'm', totals(1_000_000, 2_000_000)), prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 10, maxOutputTokens: 10, price: PRICES.pricing.m }, warned: new Set() });
    assert.equal(d.kind, 'block');
    assert.equal(d.kind === 'block' && d.limit.amount, 5);
  });

  it('ignores a workspace\'s limits in Restricted Mode', () => {
    const { limits } = budget({ user: { budget: [{ period: 'day', dollars: 5 }] }, workspace: { budget: [{ period: 'day', dollars: 1 }] } }, false);
    assert.deepEqual(limits.map((l) => l.amount), [5]);
  });
});

describe('budget periods in local time', () => {
  it('a day starts at local midnight; a week on Monday; a month on the 1st', () => {
    assert.deepEqual(periodStart('day', NOW), new Date(2026, 10, 27));
    assert.deepEqual(periodStart('week', NOW), new Date(2026, 10, 23));
    assert.deepEqual(periodStart('week', new Date(2026, 10, 23, 0, 0).getTime()), new Date(2026, 10, 23));
    assert.deepEqual(periodStart('week', new Date(2026, 10, 22, 23, 59).getTime()), new Date(2026, 10, 16), 'Sunday belongs to the week before');
    assert.deepEqual(periodStart('month', NOW), new Date(2026, 10, 1));
    assert.deepEqual(periodEnd('day', NOW), new Date(2026, 10, 28));
    assert.deepEqual(periodEnd('week', NOW), new Date(2026, 10, 30));
    assert.deepEqual(periodEnd('month', NOW), new Date(2026, 11, 1));
    assert.deepEqual(periodEnd('month', new Date(2026, 11, 31, 23).getTime()), new Date(2027, 0, 1));
  });

  it('counts only the period\'s days, for each period', () => {
    const ledger: Ledger = {
      ...row(NOW, 'h', 'm', totals(100, 0)), // today
      ...row(at(2026, 11, 24), 'h', 'm', totals(10, 0)), // this week (Tuesday)
      ...row(at(2026, 11, 22), 'h', 'm', totals(1, 0)), // Sunday: last week, this month
      ...row(at(2026, 10, 31), 'h', 'm', totals(1000, 0)), // last month
    };
    assert.equal(spentIn({ period: 'day', unit: 'tokens' }, ledger, PRICES, NOW), 100);
    assert.equal(spentIn({ period: 'week', unit: 'tokens' }, ledger, PRICES, NOW), 110);
    assert.equal(spentIn({ period: 'month', unit: 'tokens' }, ledger, PRICES, NOW), 111);
  });

  it('prices dollars per model (a profile\'s own price first) and counts only a profile\'s rows for its limits', () => {
    const prices: BudgetPrices = { pricing: { m: { input: 1, output: 2 } }, profiles: { Work: { workspace: false, models: { m: { input: 10, output: 10 } } } } };
    const ledger: Ledger = { ...row(NOW, 'h', 'm', totals(1_000_000, 1_000_000)), ...row(NOW, 'Work (h)', 'm', totals(1_000_000, 0)), ...row(NOW, 'h', 'unpriced', totals(5_000_000, 0)) };
    assert.equal(spentIn({ period: 'day', unit: 'dollars' }, ledger, prices, NOW), 3 + 10);
    assert.equal(spentIn({ period: 'day', unit: 'dollars', profile: 'Work' }, ledger, prices, NOW), 10);
    assert.equal(spentIn({ period: 'day', unit: 'tokens', profile: 'Work' }, ledger, prices, NOW), 1_000_000);
    // A workspace profile cannot make the user's priced model cheaper.
    const ws: BudgetPrices = { ...prices, profiles: { Work: { workspace: true, models: { m: { input: 0, output: 0 } } } } };
    assert.equal(spentIn({ period: 'day', unit: 'dollars', profile: 'Work' }, ledger, ws, NOW), 1);
    // Nor by replacing the user's profile of the same name: the user's own price of it still comes first.
    const shadow: BudgetPrices = { ...prices, profiles: { Work: { workspace: true, models: { m: { input: 0, output: 0 } }, user: { m: { input: 10, output: 10 } } } } };
    assert.equal(spentIn({ period: 'day', unit: 'dollars', profile: 'Work' }, ledger, shadow, NOW), 10);
  });
});

describe('the decision before a request (decide)', () => {
  const request = { promptTokens: 1000, maxOutputTokens: 1000, price: { input: 100, output: 100 } };

  it('estimates the prompt plus the most the reply may write, at the model\'s price', () => {
    assert.deepEqual(requestCost(request), { tokens: 2000, dollars: 0.2 });
    assert.deepEqual(requestCost({ promptTokens: 10, price: undefined }), { tokens: 4106, dollars: undefined });
  });

  it('sends under every limit, and blocks a request that would cross a blocking one, with what is left and when it resets', () => {
    const ledger = row(NOW, 'h', 'm', totals(400_000, 0)); // $0.40 at PRICES
    const limits = [limit({ amount: 1 })];
    assert.equal(decide({ limits, ledger, prices: PRICES, now: NOW, profile: undefined, request: { ...request, maxOutputTokens: 1 }, warned: new Set() }).kind, 'send');
    const big = { promptTokens: 1000, maxOutputTokens: 10_000, price: { input: 100, output: 100 } }; // $1.10
    const d = decide({ limits, ledger, prices: PRICES, now: NOW, profile: undefined, request: big, warned: new Set() });
    assert.equal(d.kind, 'block');
    if (d.kind !== 'block') return;
    assert.equal(d.left, 0.6);
    assert.equal(d.resetsAt, new Date(2026, 10, 28).getTime());
    assert.equal(d.words, 'Not sent: this request would cross your daily spend limit ($1.00, block); it may cost up to $1.10. $0.60 left; the limit resets at midnight tonight (local time).');
  });

  it('blocks on tokens, per week and month, and names a profile\'s limit', () => {
    const ledger = row(at(2026, 11, 2), 'Work (h)', 'm', totals(900, 0));
    const limits = [limit({ period: 'month', unit: 'tokens', amount: 1000, profile: 'Work' })];
    const d = decide({ limits, ledger, prices: PRICES, now: NOW, profile: 'Work', request: { promptTokens: 50, maxOutputTokens: 51, price: undefined }, warned: new Set() });
    assert.equal(d.kind, 'block');
    assert.match(d.kind === 'block' ? d.words : '', /monthly token limit for the profile "Work" \(1,000 tokens, block\).*100 tokens left; the limit resets on Tuesday, December 1 at 00:00 \(local time\)/);
    // Another profile's requests do not count against it, nor are they stopped by it.
    assert.equal(decide({ limits, ledger, prices: PRICES, now: NOW, profile: 'Home', request: { promptTokens: 50, maxOutputTokens: 5000, price: undefined }, warned: new Set() }).kind, 'send');
    const week = [limit({ period: 'week', unit: 'tokens', amount: 1000, profile: 'Work' })];
    assert.equal(decide({ limits: week, ledger, prices: PRICES, now: NOW, profile: 'Work', request: { promptTokens: 50, maxOutputTokens: 51, price: undefined }, warned: new Set() }).kind, 'send', 'spent in an earlier week');
  });

  it('never blocks on a warn limit, but warns at 50, 80 and 100 %, each once per period', () => {
    const limits = [limit({ unit: 'tokens', amount: 100, action: 'warn' })];
    const warned = new Set<string>();
    const step = (spent: number) => {
      const d = decide({ limits, ledger: row(NOW, 'h', 'm', totals(spent, 0)), prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 1000, price: undefined }, warned });
      assert.notEqual(d.kind, 'block');
      const w = d.kind === 'warn' ? d.warnings : [];
      for (const x of w) for (const k of x.keys) warned.add(k);
      return w.map((x) => x.threshold);
    };
    assert.deepEqual(step(10), []);
    assert.deepEqual(step(50), [50]);
    assert.deepEqual(step(60), []);
    assert.deepEqual(step(85), [80]);
    assert.deepEqual(step(200), [100]);
    assert.deepEqual(step(300), []);
    // A new day is a new period: its thresholds are said again.
    const tomorrow = NOW + 86_400_000;
    assert.notEqual(warningKey(limits[0], 100, tomorrow), warningKey(limits[0], 100, NOW));
  });

  it('says only the highest threshold crossed at once, and remembers the ones below it', () => {
    const limits = [limit({ unit: 'tokens', amount: 100, action: 'warn' })];
    const d = decide({ limits, ledger: row(NOW, 'h', 'm', totals(90, 0)), prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 1, price: undefined }, warned: new Set() });
    assert.equal(d.kind, 'warn');
    if (d.kind !== 'warn') return;
    assert.deepEqual(d.warnings.map((w) => w.threshold), [80]);
    assert.equal(d.warnings[0].keys.length, 2);
    assert.equal(d.warnings[0].words, '80 % of your daily token limit (100 tokens, warn) is spent (90 tokens). It resets at midnight tonight (local time).');
  });

  it('a blocking limit warns too before it blocks; a spent one blocks even a free request', () => {
    const limits = [limit({ amount: 1 })];
    const d = decide({ limits, ledger: row(NOW, 'h', 'm', totals(500_000, 0)), prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 1, maxOutputTokens: 1, price: undefined }, warned: new Set() });
    assert.equal(d.kind, 'warn');
    const spent = decide({ limits, ledger: row(NOW, 'h', 'm', totals(1_000_000, 0)), prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 1, maxOutputTokens: 1, price: undefined }, warned: new Set() });
    assert.equal(spent.kind, 'block');
    assert.match(spent.kind === 'block' ? spent.words : '', /\$1\.00 is spent already\. \$0 left/);
  });

  it('tells the status bar each limit\'s share', () => {
    const s = limitStatus([limit({ unit: 'tokens', amount: 200, action: 'warn' })], row(NOW, 'h', 'm', totals(100, 0)), PRICES, NOW);
    assert.equal(s[0].share, 0.5);
  });

  it('draws the status bar\'s budget lines, with the warning colour only at 100 % of a warn limit', () => {
    const ledger = row(NOW, 'h', 'm', totals(100, 0));
    const warn = limitStatus([limit({ unit: 'tokens', amount: 100, action: 'warn' })], ledger, PRICES, NOW);
    const s = budgetStatus(warn, NOW);
    assert.equal(s.reached, true);
    assert.equal(s.markdown, '**Budgets** (calendar periods in your local time; weeks start on Monday)\n\n- your daily token limit (100 tokens, warn): 100 tokens spent (100 %), resets at midnight tonight (local time)');
    assert.equal(budgetStatus(limitStatus([limit({ unit: 'tokens', amount: 101, action: 'warn' })], ledger, PRICES, NOW), NOW).reached, false);
    assert.equal(budgetStatus(limitStatus([limit({ unit: 'tokens', amount: 100 })], ledger, PRICES, NOW), NOW).reached, false, 'a block limit stops requests instead');
    assert.deepEqual(budgetStatus([], NOW), { markdown: '', reached: false });
    // A workspace's profile name is text in the tooltip: no image, no link, no HTML.
    const hostile = budgetStatus(limitStatus([limit({ profile: '![x](https://evil.example/p.png) <img src=x>' })], {}, PRICES, NOW), NOW).markdown;
    assert.match(hostile, /`"!\[x\]\(https:\/\/evil\.example\/p\.png`/, 'the image inside a code span');
    assert.doesNotMatch(hostile, /(?<!\\)<img/);
  });
});

describe('the watch of a streaming request (watchStream)', () => {
  /** The watch decides after the events handed over together (one network read): a microtask later. */
  const settled = () => new Promise<void>((r) => setImmediate(r));
  const text = (t: string): StreamEvent => ({ type: 'text', choice: 0, text: t });
  const cancelled = (t: string): ChatResult => ({ text: t, reasoning: '', refusal: '', toolCalls: [], finishReason: null, choices: [{ index: 0, text: t, reasoning: '', refusal: '', toolCalls: [], finishReason: null }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, estimated: true }, ended: 'cancelled', sawDone: false });

  it('a request let go has the headroom of each blocking limit; a dollar limit only at a known price', () => {
    const limits = [limit({ amount: 1 }), limit({ unit: 'tokens', amount: 1_000_000 }), limit({ unit: 'tokens', amount: 10, action: 'warn' })];
    const ledger = row(NOW, 'h', 'm', totals(400_000, 0));
    const d = decide({ limits, ledger, prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 10, maxOutputTokens: 10, price: { input: 1, output: 2 } }, warned: new Set() });
    assert.notEqual(d.kind, 'block');
    assert.deepEqual(d.kind === 'block' ? [] : d.headroom?.map((h) => [h.limit.unit, h.left]), [['dollars', 0.6], ['tokens', 600_000]]);
    const free = decide({ limits, ledger, prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 10, maxOutputTokens: 10, price: undefined }, warned: new Set() });
    assert.deepEqual(free.kind === 'block' ? [] : free.headroom?.map((h) => h.limit.unit), ['tokens'], 'no price: the stream adds nothing to a dollar limit');
    // What the other requests in flight may cost is theirs: it is not this stream's to spend.
    const held = decide({ limits, ledger, prices: PRICES, now: NOW, profile: undefined, request: { promptTokens: 10, maxOutputTokens: 10, price: undefined }, warned: new Set(), inFlight: row(NOW, 'h', 'm', totals(100_000, 0)) });
    assert.deepEqual(held.kind === 'block' ? [] : held.headroom?.map((h) => h.left), [500_000]);
  });

  it('weighs the prompt and what arrived against what is left, in tokens and at the price', () => {
    const tokens = { limit: limit({ unit: 'tokens', amount: 100 }), left: 100, price: undefined };
    assert.equal(overrun([tokens], 60, 40), undefined, 'exactly at the limit is not past it');
    assert.equal(overrun([tokens], 60, 41), tokens);
    const dollars = { limit: limit({ amount: 1 }), left: 0.5, price: { input: 1, output: 4 } };
    assert.equal(overrun([dollars], 100_000, 100_000), undefined, '$0.50 is not past $0.50');
    assert.equal(overrun([dollars], 100_000, 100_001), dollars);
  });

  it('stops the stream on the delta that crosses a limit, passes every event on, and ends the result as a Stop with the budget\'s error and its text', async () => {
    const seen: StreamEvent[] = [];
    const caller = new AbortController();
    const w = watchStream({ headroom: [{ limit: limit({ unit: 'tokens', amount: 100 }), left: 30, price: undefined }], prompt: 10, now: NOW, signal: caller.signal, onEvent: (e) => seen.push(e) });
    // 'word word word word ' is 5 tokens (20 characters), as estimateTokens counts the whole text.
    for (let i = 0; i < 4; i++) w.onEvent(text('word word word word '));
    await settled();
    assert.equal(w.signal.aborted, false, '10 + 20 tokens is not past 30');
    w.onEvent({ type: 'reasoning', choice: 0, text: 'hm' });
    await settled();
    assert.equal(w.signal.aborted, true, 'reasoning counts too');
    assert.equal(caller.signal.aborted, false, 'the caller was not stopped');
    w.onEvent(text('after'));
    assert.equal(seen.length, 6);
    const r = w.result(cancelled('word word'));
    assert.equal(r.ended, 'cancelled');
    assert.equal(r.text, 'word word');
    assert.equal(r.error?.kind, 'budget');
    assert.equal(r.error?.message, 'Stopped: this reply crossed your daily token limit (100 tokens, block) while it streamed. The text so far is kept and counted; the limit resets at midnight tonight (local time).');
    assert.equal(r.usage.estimated, true, 'counted as a Stop is');
  });

  it('counts tool calls and the server\'s own usage mid-stream; stops nothing once the reply is whole, nor a reader\'s Stop', async () => {
    const headroom = [{ limit: limit({ unit: 'tokens', amount: 100 }), left: 100, price: undefined }];
    const calls = watchStream({ headroom, prompt: 0, now: NOW });
    calls.onEvent({ type: 'tool_call', choice: 0, index: 0, name: 'read_file', arguments: 'x'.repeat(400) });
    await settled();
    assert.equal(calls.signal.aborted, true);

    const usage = watchStream({ headroom, prompt: 0, now: NOW });
    usage.onEvent({ type: 'usage', usage: { prompt_tokens: 90, completion_tokens: 11, total_tokens: 101 } });
    await settled();
    assert.equal(usage.signal.aborted, true);

    const whole = watchStream({ headroom, prompt: 90, now: NOW });
    whole.onEvent({ type: 'finish', choice: 0, reason: 'stop' });
    whole.onEvent(text('x'.repeat(400)));
    whole.onEvent({ type: 'usage', usage: { prompt_tokens: 90, completion_tokens: 400, total_tokens: 490 } });
    await settled();
    assert.equal(whole.signal.aborted, false);
    assert.equal(whole.result(cancelled('')).error, undefined);

    const caller = new AbortController();
    const stopped = watchStream({ headroom, prompt: 0, now: NOW, signal: caller.signal });
    caller.abort();
    assert.equal(stopped.signal.aborted, true);
    assert.equal(stopped.result(cancelled('some')).error, undefined, 'the reader stopped it: no budget card');
  });

  it('names the thresholds the spend crossed, not yet said (said right after a request)', () => {
    const limits = [limit({ unit: 'tokens', amount: 100, action: 'warn' }), limit({ unit: 'tokens', amount: 100, profile: 'Other' })];
    const w = warningsNow({ limits, ledger: row(NOW, 'h', 'm', totals(85, 0)), prices: PRICES, now: NOW, profile: undefined, warned: new Set() });
    assert.deepEqual(w.map((x) => x.threshold), [80]);
    assert.deepEqual(warningsNow({ limits, ledger: row(NOW, 'h', 'm', totals(85, 0)), prices: PRICES, now: NOW, profile: undefined, warned: new Set(w[0].keys) }), []);
  });
});
