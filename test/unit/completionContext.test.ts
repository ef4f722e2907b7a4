// Issue 36: the cache (typing through a suggestion, going back), the context budget and ring, the adaptive debounce,
// the FIM tokens per family, and the settings: only the user's own settings name where completions go.
import * as assert from 'node:assert/strict';
import { CompletionCache, type CompletionPlace } from '../../src/core/completion/cache';
import { AdaptiveDebounce, ChunkRing, clipPrefix, clipSuffix } from '../../src/core/completion/context';
import { chooseFimFamily, fimFamilyOf, fimPrompt } from '../../src/core/completion/fim';
import { completionChoice, languageEnabled, readCompletionSettings } from '../../src/core/completion/settings';
import { readProfiles } from '../../src/core/profiles';
import type { ScopedValue } from '../../src/core/scopedSettings';
import { emptyTotals } from '../../src/core/usageLedger';
import { reportMarkdown } from '../../src/core/usageReport';
import { pricingOnly } from '../support/pricing';

/** The place after `typed` more characters were typed at `p`. */
const typedAt = (p: CompletionPlace, typed: string): CompletionPlace => ({ ...p, offset: p.offset + typed.length, prefix: p.prefix + typed });

describe('completion cache (issue 36)', () => {
  const at: CompletionPlace = { doc: 'file:///a.ts', offset: 30, prefix: 'function add(a, b) {\n  return ', suffix: '\n}\n' };

  it('typing the first characters of a shown suggestion keeps the rest; going back shows what was shown there', () => {
    const c = new CompletionCache();
    c.put(at, 'a + b;');
    assert.equal(c.lookup(at)?.text, 'a + b;');
    assert.equal(c.lookup(typedAt(at, 'a'))?.text, ' + b;');
    assert.equal(c.lookup(typedAt(at, 'a + '))?.text, 'b;');
    assert.equal(c.lookup(typedAt(at, 'a -')), undefined, 'typed something else');
    assert.equal(c.lookup(typedAt(at, 'a + b;')), undefined, 'typed it all: nothing left to show');
    assert.equal(c.lookup(at)?.text, 'a + b;', 'back where it was shown');
  });

  it('a window that starts later (a long file) still matches by the cursor\'s offset and the text before it', () => {
    const c = new CompletionCache();
    const long: CompletionPlace = { doc: 'd', offset: 10_030, prefix: 'x'.repeat(6000) + 'return ', suffix: '' };
    c.put(long, 'a + b');
    const moved = { ...long, offset: long.offset + 1, prefix: long.prefix.slice(1) + 'a' };
    assert.equal(c.lookup(moved)?.text, ' + b');
  });

  it('another document, other text after the cursor, or other text before it: no match', () => {
    const c = new CompletionCache();
    c.put(at, 'a + b;');
    assert.equal(c.lookup({ ...at, doc: 'file:///b.ts' }), undefined);
    assert.equal(c.lookup({ ...at, suffix: '\n  x();\n}\n' }), undefined);
    assert.equal(c.lookup({ ...at, prefix: 'function sub(a, b) {\n  return ' }), undefined);
  });

  it("a closing bracket the editor typed for the person (auto-closing) is taken over by the rest of the suggestion", () => {
    const c = new CompletionCache();
    const call: CompletionPlace = { doc: 'd', offset: 6, prefix: 'x = f(', suffix: ')\n' };
    c.put({ ...call, prefix: 'x = ', offset: 4, suffix: '\n' }, 'f(a, b);');
    assert.deepEqual(c.lookup(call), { text: 'a, b);', replace: 1 });
    assert.equal(c.lookup({ ...call, suffix: ']\n' }), undefined, 'a closer the rest does not hold');
  });

  it('an empty completion is remembered: that place asks nothing again', () => {
    const c = new CompletionCache();
    c.put(at, '');
    assert.equal(c.lookup(at)?.text, '');
  });
});

describe('completion context (issue 36)', () => {
  it('the text around the cursor is cut at whole lines to the budget', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join('\n');
    const p = clipPrefix(lines, { prefixTokens: 100, suffixTokens: 100, extraTokens: 0 });
    assert.ok(p.length <= 350 && p.endsWith('line 1999'));
    assert.match(p, /^line \d+\n/);
    const s = clipSuffix(lines, { prefixTokens: 100, suffixTokens: 100, extraTokens: 0 });
    assert.ok(s.length <= 350 && s.startsWith('line 0\n') && s.endsWith('\n'));
    assert.equal(clipPrefix('short'), 'short');
  });

  it('the ring keeps recent chunks of other files, newest nearest the cursor, within the budget', () => {
    const ring = new ChunkRing(3);
    ring.add({ doc: 'a', filename: 'a.ts', startLine: 0, text: 'a0\na1\na2\na3' });
    ring.add({ doc: 'a', filename: 'a.ts', startLine: 1, text: 'a1\na2\na3\na4' });
    assert.equal(ring.length, 1, 'a chunk overlapping one of the same file by more than half replaces it');
    ring.add({ doc: 'b', filename: 'b.ts', startLine: 0, text: 'b' });
    ring.add({ doc: 'c', filename: 'c.ts', startLine: 0, text: 'c' });
    ring.add({ doc: 'd', filename: 'd.ts', startLine: 0, text: 'd' });
    assert.equal(ring.length, 3, 'the oldest goes');
    assert.deepEqual(ring.pick('c').map((e) => e.filename), ['b.ts', 'd.ts'], 'not the current file; the newest last');
    ring.drop('d');
    assert.deepEqual(ring.pick('x').map((e) => e.filename), ['b.ts', 'c.ts']);
    const big = new ChunkRing();
    big.add({ doc: 'e', filename: 'e.ts', startLine: 0, text: 'x'.repeat(5000) });
    assert.deepEqual(big.pick('x', { prefixTokens: 0, suffixTokens: 0, extraTokens: 1024 }), [], 'a chunk over the budget is not sent');
  });

  it('the debounce follows the person\'s pace: steady typing waits longer than a gap, fast typing waits little', () => {
    const d = new AdaptiveDebounce();
    assert.equal(d.delay(), AdaptiveDebounce.FIRST);
    for (let t = 0; t <= 2000; t += 200) d.keystroke(t);
    assert.equal(d.delay(), 240);
    const fast = new AdaptiveDebounce();
    for (let t = 0; t <= 300; t += 20) fast.keystroke(t);
    assert.equal(fast.delay(), AdaptiveDebounce.MIN);
    const slow = new AdaptiveDebounce();
    for (let t = 0; t <= 9000; t += 900) slow.keystroke(t);
    assert.equal(slow.delay(), AdaptiveDebounce.MAX);
  });
});

describe('FIM tokens per family (issue 36)', () => {
  it('the family comes from the model id, or from the override', () => {
    const cases: Array<[string, string | undefined]> = [
      ['qwen2.5-coder:1.5b-base', 'qwen'], ['Qwen/Qwen2.5-Coder-7B', 'qwen'], ['qwen3-coder:30b', 'qwen'], ['bigcode/starcoder2-3b', 'starcoder'],
      ['codellama:7b-code', 'codellama'], ['deepseek-coder:1.3b-base', 'deepseek'], ['deepseek-ai/DeepSeek-Coder-V2-Lite-Base', 'deepseek'],
      ['codestral-latest', 'codestral'], ['google/codegemma-2b', 'codegemma'], ['llama3.2:1b', undefined], ['gpt-4o-mini', undefined],
    ];
    for (const [id, family] of cases) assert.equal(fimFamilyOf(id), family, id);
    assert.equal(chooseFimFamily('my-finetune', 'starcoder'), 'starcoder');
    assert.equal(chooseFimFamily('qwen2.5-coder', 'auto'), 'qwen');
  });

  it("each family's prompt, in its own order and spelling", () => {
    assert.equal(fimPrompt('qwen', 'P', 'S', 'f', []), '<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>');
    assert.equal(fimPrompt('starcoder', 'P', 'S', 'f', [{ filename: 'g', text: 'G' }]), '<file_sep>g\nG\n<file_sep>f\n<fim_prefix>P<fim_suffix>S<fim_middle>');
    assert.equal(fimPrompt('codellama', 'P', 'S', 'f', []), '<PRE> P <SUF>S <MID>');
    assert.equal(fimPrompt('deepseek', 'P', 'S', 'f', []), '<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>');
    assert.equal(fimPrompt('codestral', 'P', 'S', 'f', []), '[SUFFIX]S[PREFIX]P');
    assert.equal(fimPrompt('codegemma', 'P', 'S', 'f', []), '<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>');
  });
});

/** An inspect() over the given levels of `parley.completion.*` keys. */
function inspector(levels: Record<string, ScopedValue>): (key: string) => ScopedValue | undefined {
  return (key) => levels[key];
}

describe('completion settings (issue 36)', () => {
  it('the model and endpoint come from user settings only; a workspace can turn completions off, not on', () => {
    const s = readCompletionSettings(inspector({
      'completion.model': { globalValue: 'qwen2.5-coder:1.5b', workspaceValue: 'evil-model' },
      'completion.endpoint': { workspaceValue: 'Theirs' },
      'completion.enabled': { defaultValue: true, workspaceValue: false },
      'completion.languages': { defaultValue: { '*': true }, globalValue: { python: false }, workspaceValue: { python: true, go: false } },
    }), true);
    assert.equal(s.model, 'qwen2.5-coder:1.5b');
    assert.equal(s.endpoint, '');
    assert.equal(s.enabled, false);
    assert.equal(languageEnabled(s, 'python'), false, 'a workspace cannot turn a language on');
    assert.equal(languageEnabled(s, 'go'), false, 'but it can turn one off');
    assert.equal(languageEnabled(s, 'rust'), true);
    assert.equal(languageEnabled(s, 'plaintext'), false, 'off by default');
    const off = readCompletionSettings(inspector({ 'completion.enabled': { globalValue: false, workspaceValue: true } }), true);
    assert.equal(off.enabled, false);
    const untrusted = readCompletionSettings(inspector({ 'completion.enabled': { defaultValue: true, workspaceValue: false } }), false);
    assert.equal(untrusted.enabled, true, 'in Restricted Mode the workspace says nothing');
  });

  it("the completion model: parley.completion.model, else the active profile's completionModel; a workspace's profile never serves", () => {
    const { profiles, problems } = readProfiles({ baseUrl: 'http://localhost:11434', model: 'llama3.2' }, [
      { source: 'user', value: [
        { name: 'Ollama', baseUrl: 'http://localhost:11434', model: 'llama3.2', completionModel: 'qwen2.5-coder:1.5b' },
        { name: 'Cloud', baseUrl: 'https://api.openai.com', model: 'gpt-4o', completionModel: { profile: 'Ollama', model: 'qwen2.5-coder:7b' } },
        { name: 'Bad', baseUrl: 'http://x', completionModel: 7 },
      ] },
      { source: 'workspace', value: [{ name: 'Repo', baseUrl: 'https://evil.example', model: 'm', completionModel: 'grab-everything' }] },
    ]);
    assert.ok(problems.some((p) => /Bad.*completionModel must be/.test(p)));
    const settings = readCompletionSettings(inspector({}), true);
    assert.deepEqual(completionChoice(settings, profiles, 'Ollama'), { profile: 'Ollama', model: 'qwen2.5-coder:1.5b', from: 'completionModel of the profile "Ollama"' });
    assert.deepEqual(completionChoice(settings, profiles, 'Cloud'), { profile: 'Ollama', model: 'qwen2.5-coder:7b', from: 'completionModel of the profile "Cloud"' });
    assert.match((completionChoice(settings, profiles, 'Repo') as { off: string }).off, /comes from this workspace's settings/);
    assert.match((completionChoice(settings, profiles, 'Default') as { off: string }).off, /No completion model is set/);
    const global = { ...settings, model: 'codestral-latest', endpoint: 'Cloud' };
    assert.deepEqual(completionChoice(global, profiles, 'Ollama'), { profile: 'Cloud', model: 'codestral-latest', from: 'parley.completion.model' });
    assert.match((completionChoice({ ...global, endpoint: 'Repo' }, profiles, 'Ollama') as { off: string }).off, /not one of your own profiles/);
  });
});

describe('completion usage (issue 36)', () => {
  it('shows in the report under its own source, "Completions"', () => {
    const md = reportMarkdown({}, emptyTotals(), pricingOnly(), Date.now(), { chat: { ...emptyTotals(), requests: 2, total: 100 }, complete: { ...emptyTotals(), requests: 40, total: 1200, estimatedTokens: 1200 } });
    assert.match(md, /\| Completions \| 40 \| 1,200 \| 100% \|/);
    assert.match(md, /\| Parley's chat panel \| 2 \| 100 \| 0% \|/);
  });
});
