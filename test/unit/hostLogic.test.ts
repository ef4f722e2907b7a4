// Pure pieces the extension glue stands on: conversations, usage bookkeeping, editor prompts, protocol validation.
import * as assert from 'node:assert/strict';
import { contextBlock, fenceFor, titleFrom, toMarkdown, toMessages, toView, type Conversation, type Turn } from '../../src/core/conversation';
import { cutToLimit, enclosingBlock, generateMessages, GENERATE_SYSTEM_PROMPT } from '../../src/core/editorPrompts';
import { firstJsonObject, parseGenerated } from '../../src/core/generatedCode';
import { addToLedger, costOf, formatCost, recordFrom, tooltipMarkdown, emptyTotals, addTo } from '../../src/core/usageLedger';
import { reportMarkdown } from '../../src/core/usageReport';
import { dataUrlHead, sniffImage } from '../../src/core/images';
import { versionHint } from '../../src/core/errorView';
import { DeltaPacer, MAX_INTERVAL_MS, MIN_INTERVAL_MS, QUIET_MS, type PacerClock } from '../../src/core/deltaPacer';
import { parseWebviewMessage, LIMITS } from '../../src/shared/protocol';
import { pricingOnly } from '../support/pricing';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('conversation', () => {
  const turns: Turn[] = [
    {
      id: 'u1', role: 'user', text: 'What does this do?', status: 'done',
      contextItems: [{ id: 'c1', path: 'src/a.ts', startLine: 3, endLine: 5, language: 'typescript', truncated: false, code: 'const x = 1;' }],
    },
    { id: 'a1', role: 'assistant', text: 'It sets x.', reasoning: 'think', status: 'done' },
    { id: 'u2', role: 'user', text: 'And this?', images: [{ name: 'p.png', dataUrl: PNG }], status: 'done' },
    { id: 'a2', role: 'assistant', text: '', status: 'error', error: { kind: 'auth', title: 'bad key', actions: ['setApiKey'] } },
  ];

  it('builds wire messages: system, fenced context with path and language, images as parts, no failed replies, no reasoning', () => {
    const m = toMessages('sys', turns, { sendReasoningBack: false });
    assert.equal(m.length, 4);
    assert.deepEqual(m[0], { role: 'system', content: 'sys' });
    assert.equal(m[1].role, 'user');
    assert.match(String(m[1].content), /`src\/a\.ts`, lines 3-5:\n```typescript\nconst x = 1;\n```\n\nWhat does this do\?$/);
    assert.deepEqual(m[2], { role: 'assistant', content: 'It sets x.' });
    assert.ok(Array.isArray(m[3].content));
    assert.deepEqual(m[3].content, [
      { type: 'text', text: 'And this?' },
      { type: 'image_url', image_url: { url: PNG } },
    ]);
  });

  it('sends reasoning back only when asked', () => {
    const m = toMessages('', turns.slice(0, 2), { sendReasoningBack: true });
    assert.equal(m.length, 2);
    assert.equal(m[1].reasoning_content, 'think');
  });

  it('sends reasoning back under the name the server used', () => {
    const back = (reasoningField?: string) =>
      toMessages('', [{ ...turns[1], reasoningField }], { sendReasoningBack: true })[0];
    assert.deepEqual(back('reasoning_content'), { role: 'assistant', content: 'It sets x.', reasoning_content: 'think' });
    assert.deepEqual(back('reasoning'), { role: 'assistant', content: 'It sets x.', reasoning: 'think' });
    assert.deepEqual(back('reasoning_details'), { role: 'assistant', content: 'It sets x.', reasoning: 'think' });
    assert.deepEqual(back('think_tag'), { role: 'assistant', content: '<think>think</think>\n\nIt sets x.' });
    assert.deepEqual(back(undefined), { role: 'assistant', content: 'It sets x.', reasoning_content: 'think' });
    assert.deepEqual(toMessages('', [{ ...turns[1], reasoningField: 'reasoning' }], { sendReasoningBack: false })[0], { role: 'assistant', content: 'It sets x.' });
  });

  it('fences code that itself contains fences with a longer fence', () => {
    assert.equal(fenceFor('a ``` b'), '````');
    assert.equal(fenceFor('plain'), '```');
    assert.match(contextBlock({ path: 'x.md', startLine: 1, endLine: 1, language: 'markdown', code: '```js\n```', truncated: true }), /^`x\.md`, line 1 \(cut to fit; the rest is not shown\):\n````markdown\n/);
  });

  it('titles from the first line of the first question', () => {
    assert.equal(titleFrom('  Hello there\nsecond'), 'Hello there');
    assert.equal(titleFrom(''), 'New chat');
    assert.equal(titleFrom('x'.repeat(100)).length, 60);
  });

  it('gives the webview chips without code bodies', () => {
    const c: Conversation = { id: 'c', title: 't', createdAt: 0, updatedAt: 0, turns };
    const v = toView(c);
    assert.equal(JSON.stringify(v).includes('const x = 1;'), false);
    assert.deepEqual(v.turns[0].context, [{ id: 'c1', path: 'src/a.ts', startLine: 3, endLine: 5, language: 'typescript', truncated: false }]);
  });

  it('marks a turn still streaming as another window\'s, unless it is the one this window streams', () => {
    const streaming: Turn = { id: 's', role: 'assistant', text: '', status: 'streaming' };
    const c: Conversation = { id: 'c', title: 't', createdAt: 0, updatedAt: 0, turns: [...turns, streaming] };
    assert.deepEqual(toView(c).turns.map((t) => t.elsewhere ?? false), [...turns.map(() => false), true]);
    assert.deepEqual(toView(c, 's').turns.map((t) => t.elsewhere ?? false), [...turns.map(() => false), false]);
  });

  it('exports Markdown with the status of a failed reply and no image data', () => {
    const md = toMarkdown({ id: 'c', title: 'T', createdAt: 0, updatedAt: 0, turns });
    assert.match(md, /^# T\n/);
    assert.match(md, /## You/);
    assert.match(md, /_Error: bad key_/);
    assert.match(md, /\[image: p\.png\]/);
    assert.equal(md.includes('base64'), false);
  });
});

describe('usage ledger', () => {
  const at = new Date(2026, 10, 22, 10).getTime();
  const server = recordFrom(
    { prompt_tokens: 1000, completion_tokens: 234, total_tokens: 1234, completion_tokens_details: { reasoning_tokens: 100 }, prompt_tokens_details: { cached_tokens: 0 } },
    { model: 'gpt-x', host: 'api.example.com', durationMs: 2000, source: 'chat', at },
  );
  const estimate = recordFrom({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, estimated: true }, { model: 'llama', host: '127.0.0.1:11434', durationMs: 500, source: 'explain', at });

  // The status bar's text ($(pulse) 1,234) is tested in test/integration/chat.test.ts, beside the status bar.
  it('keeps reasoning tokens, and cached tokens only when there are some', () => {
    assert.equal(server.reasoning, 100);
    assert.equal(server.cached, undefined);
  });

  it('trusts total_tokens when the server counts reasoning outside prompt+completion', () => {
    const r = recordFrom({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 40 }, { model: 'm', host: 'h', durationMs: 1, source: 'chat', at });
    assert.equal(r.total, 40);
  });

  it('sums by day, endpoint and model, with the estimated share and cost', () => {
    let ledger = addToLedger({}, server);
    ledger = addToLedger(ledger, server);
    ledger = addToLedger(ledger, estimate);
    const key = `2026-11-22|api.example.com|gpt-x`;
    assert.deepEqual(ledger[key], { requests: 2, prompt: 2000, completion: 468, total: 2468, estimatedTokens: 0 });
    const md = reportMarkdown(ledger, addTo(emptyTotals(), server), pricingOnly({ 'gpt-x': { input: 1, output: 2 }, llama: { input: 0, output: 0 } }), at);
    assert.match(md, /\| `gpt-x` \| 2 \| 2,000 \| 468 \| 2,468 \| 0% \| \$0\.0029 \|/);
    assert.match(md, /\| `llama` \| 1 \| 10 \| 5 \| 15 \| 100% \| \$0 \|/);
    assert.match(md, /\| 2026-11-22 \| 3 \| 2,483 \| 1% \|/);
    assert.doesNotMatch(md, /to see costs/, 'every model used has a price: no hint to set prices');
    assert.match(reportMarkdown(ledger, emptyTotals(), pricingOnly({ llama: { input: 0, output: 0 } }), at), /Set prices .* to see costs/, 'gpt-x has none');
    const tip = tooltipMarkdown(server, addTo(emptyTotals(), server), ledger);
    assert.match(tip, /Completion: 234 \(reasoning 100\)/);
    assert.match(tip, /tokens\/s/);
  });

  it('tells a zero price from no price', () => {
    assert.equal(formatCost(costOf({ prompt: 100, completion: 100 }, { input: 0, output: 0 })), '$0');
    assert.equal(formatCost(costOf({ prompt: 100, completion: 100 }, undefined)), 'no price set');
    assert.equal(costOf({ prompt: 1_000_000, completion: 500_000 }, { input: 0.15, output: 0.6 }), 0.45);
  });
});

describe('editor prompts', () => {
  it('finds the enclosing block by indentation and brackets', () => {
    const src = ['function f() {', '  const a = 1;', '  if (a) {', '    g();', '  }', '}', 'h();'];
    assert.deepEqual(enclosingBlock(src, 3), { start: 2, end: 4 });
    assert.deepEqual(enclosingBlock(src, 1), { start: 0, end: 5 });
    assert.equal(enclosingBlock(src, 6), undefined);
    const py = ['def f(x):', '    y = x', '    return y', '', 'z = 1'];
    assert.deepEqual(enclosingBlock(py, 2), { start: 0, end: 2 });
  });

  it('places a blank line by the next line with text: inside a block only when that line is', () => {
    const py = ['def f(x):', '    y = x', '', '    return y', '', 'z = 1', ''];
    assert.deepEqual(enclosingBlock(py, 2), { start: 0, end: 3 }, 'between two statements of f');
    assert.equal(enclosingBlock(py, 4), undefined, 'after f, before top-level code');
    assert.equal(enclosingBlock(py, 6), undefined, 'at the end of the file');
    const js = ['function f() {', '  if (a) {', '    g();', '', '  }', '', '  h();', '}', '', 'k();'];
    assert.deepEqual(enclosingBlock(js, 3), { start: 1, end: 4 }, 'before the closing bracket of the if');
    assert.deepEqual(enclosingBlock(js, 5), { start: 0, end: 7 }, 'after the if, still in f');
    assert.equal(enclosingBlock(js, 8), undefined, 'between f and top-level code');
  });

  it('cuts long code at a line end and says so', () => {
    const code = 'abcdefghi\n'.repeat(100);
    const r = cutToLimit(code, 95);
    assert.equal(r.truncated, true);
    assert.ok(r.code.length <= 95);
    assert.equal(r.code.endsWith('abcdefghi'), true);
    assert.deepEqual(cutToLimit('short', 95), { code: 'short', truncated: false });
  });

  it('asks for JSON with the shape, and parses the reply or the first object in prose', () => {
    assert.match(GENERATE_SYSTEM_PROMPT, /JSON/);
    assert.match(GENERATE_SYSTEM_PROMPT, /"language".*"filename".*"code"/);
    const m = generateMessages('a sum function');
    assert.equal(m[0].role, 'system');
    assert.equal(m[1].content, 'a sum function');
    const ok = parseGenerated('Sure! ```json\n{"language":"python","filename":"../../etc/sum.py","code":"def s(a,b):\\n  return a+b # {not json}"}\n```');
    assert.ok(ok.ok);
    if (ok.ok) {
      assert.equal(ok.value.language, 'python');
      assert.equal(ok.value.filename, 'sum.py');
      assert.equal(ok.value.code, 'def s(a,b):\n  return a+b # {not json}');
    }
    assert.deepEqual(parseGenerated('not json at all'), { ok: false, reason: 'The reply is not valid JSON.' });
    assert.deepEqual(parseGenerated('{"language":"js"}'), { ok: false, reason: 'The reply is JSON but has no "code" string.' });
    assert.deepEqual(firstJsonObject('x {"a": "}"} y'), { a: '}' });
  });
});

describe('images and hints', () => {
  it('recognises real images by their bytes, not their name', () => {
    assert.equal(sniffImage(dataUrlHead(PNG)), 'image/png');
    const elf = 'data:image/png;base64,' + Buffer.from('\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00', 'latin1').toString('base64');
    assert.equal(sniffImage(dataUrlHead(elf)), undefined);
  });

  it('hints at a missing or doubled /v1', () => {
    assert.match(versionHint('http://127.0.0.1:1234/chat/completions') ?? '', /no version segment/);
    assert.match(versionHint('https://api.x.com/v1/v1/chat/completions') ?? '', /twice/);
  });
});

describe('webview message validation', () => {
  it('accepts protocol messages and drops unknown fields', () => {
    const r = parseWebviewMessage({ type: 'send', text: 'hi', images: [{ name: 'p.png', dataUrl: PNG }], extra: 'x' });
    assert.deepEqual(r, { ok: true, message: { type: 'send', text: 'hi', images: [{ name: 'p.png', dataUrl: PNG }] } });
    assert.deepEqual(parseWebviewMessage({ type: 'stop', junk: 1 }), { ok: true, message: { type: 'stop' } });
    assert.deepEqual(parseWebviewMessage({ type: 'applyCode', code: 'x\n', info: 'ts path=a.ts', before: 'In a.ts:', path: '/etc/passwd' }), { ok: true, message: { type: 'applyCode', code: 'x\n', info: 'ts path=a.ts', before: 'In a.ts:' } });
  });

  it('refuses what is not in the protocol, with a reason', () => {
    const cases: unknown[] = [
      null, 'send', [], { type: 'runCommand', command: 'workbench.action.terminal.new' },
      { type: 'send', text: 'x'.repeat(LIMITS.promptChars + 1), images: [] },
      { type: 'send', text: 'x', images: [{ name: 'a.svg', dataUrl: 'data:image/svg+xml;base64,PHN2Zz4=' }] },
      { type: 'send', text: 'x', images: 'nope' },
      { type: 'openLink', url: 5 },
      { type: 'action', action: 'runShell' },
      { type: 'setModel', model: 'm'.repeat(1000) },
      { type: 'applyCode', code: 'x', info: 'i'.repeat(LIMITS.infoChars + 1), before: '' },
      { type: 'applyCode', code: 'x', info: '' },
      // Stopping is 'stop'; Retry and Continue come only as actions.
      { type: 'cancel' }, { type: 'retry' }, { type: 'continue' },
    ];
    for (const c of cases) {
      const r = parseWebviewMessage(c);
      assert.equal(r.ok, false, JSON.stringify(c)?.slice(0, 80));
      if (!r.ok) assert.ok(r.reason.length > 0);
    }
  });

  it('refuses a 10 MB prompt without copying it into the reason', () => {
    const r = parseWebviewMessage({ type: 'send', text: 'y'.repeat(10 * 1024 * 1024), images: [] });
    assert.equal(r.ok, false);
    if (!r.ok) assert.ok(r.reason.length < 200);
  });
});

describe('delta pacer', () => {
  /** A clock that only moves when told, running due timers in order; and a pacer on it that records its posts. */
  function paced() {
    let now = 0;
    let wakes = 0;
    const timers = new Map<number, { at: number; fn: () => void }>();
    let nextId = 1;
    const clock: PacerClock = {
      now: () => now,
      setTimer: (fn, ms) => {
        timers.set(nextId, { at: now + ms, fn });
        return nextId++;
      },
      clearTimer: (id) => timers.delete(id as number),
    };
    const posts: number[] = [];
    /** Arrival time of each piece of text not yet posted, and how long each posted piece waited. */
    let waiting: number[] = [];
    const waited: number[] = [];
    const pacer = new DeltaPacer(() => {
      posts.push(now);
      for (const at of waiting) waited.push(now - at);
      waiting = [];
    }, clock);
    const advance = (to: number) => {
      for (;;) {
        const next = [...timers].sort((a, b) => a[1].at - b[1].at)[0];
        if (!next || next[1].at > to) break;
        timers.delete(next[0]);
        now = next[1].at;
        wakes++;
        next[1].fn();
      }
      now = to;
    };
    const text = (at: number) => {
      advance(at);
      waiting.push(at);
      pacer.add();
    };
    return { pacer, text, advance, posts, waited, wakes: () => wakes, pending: () => timers.size };
  }

  const gaps = (posts: number[]) => posts.slice(1).map((t, i) => t - posts[i]);

  it('posts the first text at once, then a fast stream every MAX_INTERVAL_MS, waking at most once per QUIET_MS', () => {
    const p = paced();
    for (let t = 0; t < 1000; t++) p.text(t);
    assert.equal(p.posts[0], 0, 'the first text goes out at once');
    for (const gap of gaps(p.posts)) assert.ok(gap >= MAX_INTERVAL_MS && gap <= MAX_INTERVAL_MS + 1, `posts ${gap} ms apart`);
    assert.equal(p.posts.length, Math.ceil(1000 / MAX_INTERVAL_MS));
    assert.ok(p.wakes() <= 1000 / QUIET_MS + p.posts.length, `${p.wakes()} timer wake-ups for 1,000 pieces of text`);
  });

  it('posts the last text of a burst QUIET_MS after it came, and nothing more', () => {
    const p = paced();
    for (let t = 0; t <= 300; t += 5) p.text(t);
    p.advance(2000);
    assert.equal(p.posts.at(-1), 300 + QUIET_MS);
    assert.equal(p.waited.length, 61, 'every piece of text was posted once');
    assert.equal(p.pending(), 0, 'no timer left');
  });

  it('posts a slow stream as it comes: never closer than MIN_INTERVAL_MS, no text waiting longer than MIN_INTERVAL_MS + QUIET_MS', () => {
    const p = paced();
    for (let t = 0; t <= 2000; t += 50) p.text(t);
    p.advance(3000);
    for (const gap of gaps(p.posts)) assert.ok(gap >= MIN_INTERVAL_MS, `posts ${gap} ms apart`);
    assert.ok(Math.max(...p.waited) <= MIN_INTERVAL_MS + QUIET_MS, `text waited up to ${Math.max(...p.waited)} ms`);
    assert.ok(p.posts.length >= 2000 / (MIN_INTERVAL_MS + QUIET_MS), `${p.posts.length} posts in 2 s`);
  });

  it('postNow posts what waits at once and nothing after it; cancel drops it', () => {
    const p = paced();
    p.text(0);
    p.text(10);
    p.pacer.postNow();
    assert.deepEqual(p.posts, [0, 10]);
    p.advance(1000);
    p.pacer.postNow();
    assert.deepEqual(p.posts, [0, 10], 'nothing waited, nothing posted');
    p.text(1010);
    p.text(1020);
    p.pacer.cancel();
    p.advance(2000);
    assert.deepEqual(p.posts, [0, 10, 1010], 'the text after the cancel was never posted');
  });
});
