// `@` mentions in plain Node: the file ranking, one context budget, the blocks they send, and the messages' validation.
import * as assert from 'node:assert/strict';
import { contextBlock, type ContextItem } from '../../src/core/conversation';
import { applyContextBudget, budgetNote, FileListCache, fuzzyScore, isImagePath, rankMentions, rankMentionsInSlices } from '../../src/core/mentions';
import { LIMITS, parseWebviewMessage } from '../../src/shared/protocol';

const item = (path: string, code: string, extra: Partial<ContextItem> = {}): ContextItem => ({
  id: path, path, startLine: 1, endLine: code.split('\n').length, language: 'text', truncated: false, code, ...extra,
});

describe('mention ranking', () => {
  it('matches a subsequence of the path, ignoring case, and refuses what is not one', () => {
    assert.notEqual(fuzzyScore('gts', 'src/greet.ts'), undefined);
    assert.notEqual(fuzzyScore('GREET', 'src/greet.ts'), undefined);
    assert.equal(fuzzyScore('tsg', 'src/greet.ts'), undefined);
    assert.equal(fuzzyScore('x', 'src/greet.ts'), undefined);
  });

  it('puts the file whose name holds the query before one that only spreads it over the path', () => {
    const names = rankMentions('stats', ['src/stuff/another/things.ts', 'lib/stats.py', 'src/stats/index.ts'], []).filter((c) => c.kind === 'file').map((c) => c.path);
    assert.equal(names[0], 'lib/stats.py');
    assert.ok(names.indexOf('src/stuff/another/things.ts') > names.indexOf('src/stats/index.ts'));
  });

  it('offers open and recent files first, then the rest; the specials lead and filter by prefix', () => {
    const all = rankMentions('', ['a.ts', 'b.ts', 'c.ts'], ['c.ts', 'b.ts']);
    assert.deepEqual(all.map((c) => c.label), ['@selection', '@problems', '@open', 'c.ts', 'b.ts', 'a.ts']);
    assert.deepEqual(rankMentions('pro', ['problems.md'], []).map((c) => c.label), ['@problems', 'problems.md']);
    assert.deepEqual(rankMentions('sel', [], []).map((c) => c.kind), ['selection']);
  });

  it('caps the list and splits a path into name and folder', () => {
    const files = Array.from({ length: 200 }, (_, i) => `src/f${i}.ts`);
    const list = rankMentions('f', files, [], 50);
    assert.equal(list.length, 50);
    const one = rankMentions('deep', ['a/b/deep.ts'], [])[0];
    assert.deepEqual(one, { kind: 'file', label: 'deep.ts', detail: 'a/b', path: 'a/b/deep.ts' });
  });

  it('knows image files by their extension', () => {
    assert.ok(isImagePath('docs/shot.PNG'));
    assert.ok(isImagePath('a.jpeg') && isImagePath('a.webp') && isImagePath('a.gif'));
    assert.ok(!isImagePath('a.svg') && !isImagePath('png.ts'));
  });
});

/** A large workspace's paths: 20,000 files in nested folders, the last one `deep/tree/zeta-last-file.ts`. */
const bigTree = (): string[] => [
  ...Array.from({ length: 19_999 }, (_, i) => `packages/pkg${i % 97}/src/part${i % 13}/module-${i}.ts`),
  'deep/tree/zeta-last-file.ts',
];

/** What rankMentions must equal: every file scored, all sorted, the best kept (the ranking before top-k). */
function rankedByFullSort(query: string, files: readonly string[], first: readonly string[], limit: number): string[] {
  const specials = rankMentions(query, [], [], limit).filter((c) => c.kind !== 'file').length;
  const boost = new Map(first.map((p, i) => [p, first.length - i]));
  const scored = [...new Set([...first, ...files])].flatMap((path) => {
    const s = fuzzyScore(query.trim(), path);
    const b = boost.get(path);
    return s === undefined ? [] : [{ path, score: s + (b === undefined ? 0 : 20 + b / first.length) }];
  });
  scored.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
  return scored.slice(0, limit - specials).map((x) => x.path);
}

describe('mention ranking over a large workspace', () => {
  it('keeps the best entries exactly as sorting every match would, an open file listed once', () => {
    const files = bigTree();
    const first = ['packages/pkg3/src/part3/module-3.ts', 'deep/tree/zeta-last-file.ts'];
    for (const q of ['', 'm', 'module-1', 'zeta', 'zetalast', 'pkg9part1', 'P5/SRC']) {
      const got = rankMentions(q, files, first, 50).filter((c) => c.kind === 'file').map((c) => c.path);
      assert.deepEqual(got, rankedByFullSort(q, files, first, 50), `query "${q}"`);
      assert.equal(new Set(got).size, got.length, 'no path twice');
    }
  });

  it('finds the last of 20,000 files by its exact name and by a fuzzy query, in slices', async () => {
    const files = bigTree();
    for (const q of ['zeta-last-file.ts', 'zlastf', 'deep/zeta']) {
      const list = await rankMentionsInSlices(q, files, [], 50, () => false, 500);
      assert.equal(list?.[0]?.path, 'deep/tree/zeta-last-file.ts', `query "${q}"`);
      assert.deepEqual(list, rankMentions(q, files, [], 50), 'the same list as ranking in one go');
    }
  });

  it('lets other work run between slices, and drops the query when a newer one has come meanwhile', async () => {
    const files = bigTree();
    let newer = false;
    setTimeout(() => (newer = true), 0);
    assert.equal(await rankMentionsInSlices('m', files, [], 50, () => newer, 1000), undefined);
    assert.ok(newer, 'the timer ran while the ranking was under way');
    let asked = 0;
    assert.equal(await rankMentionsInSlices('m', files, [], 50, () => ++asked > 3, 1000), undefined);
    assert.equal(asked, 4, 'it stopped at the first slice after the query was dropped');
  });
});

describe('the kept file list', () => {
  /** A lister over `files` that counts its listings and how many run at once. */
  function lister(files: string[]) {
    const seen = { calls: 0, running: 0, most: 0 };
    const list = async (): Promise<readonly string[]> => {
      seen.calls++;
      seen.most = Math.max(seen.most, ++seen.running);
      const listed = [...files];
      await new Promise((r) => setTimeout(r, 20));
      seen.running--;
      return listed;
    };
    return { seen, list };
  }

  it('lists once and keeps the list until the files change; then the next use waits for a new listing', async () => {
    const files = ['a.ts'];
    const { seen, list } = lister(files);
    const cache = new FileListCache();
    assert.deepEqual(await cache.get('k', list), ['a.ts']);
    assert.deepEqual(await cache.get('k', list), ['a.ts']);
    assert.equal(seen.calls, 1);
    files.push('new.ts');
    cache.markStale();
    assert.deepEqual(await cache.get('k', list), ['a.ts', 'new.ts'], 'a file just made is found');
    assert.equal(seen.calls, 2);
    assert.deepEqual(await cache.get('other folders', list), ['a.ts', 'new.ts']);
    assert.equal(seen.calls, 3, 'other folders or excludes are listed again');
  });

  it('shares one listing between uses, never runs two at once, and lists again after a change made during one', async () => {
    const files = ['a.ts'];
    const { seen, list } = lister(files);
    const cache = new FileListCache();
    const one = cache.get('k', list);
    const two = cache.get('k', list);
    // A file made while the first listing runs (it has listed already, and waits before it answers).
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(seen.running, 1);
    files.push('b.ts');
    cache.markStale();
    const three = cache.get('k', list);
    assert.deepEqual(await one, ['a.ts']);
    assert.deepEqual(await two, ['a.ts']);
    assert.deepEqual(await three, ['a.ts', 'b.ts']);
    assert.equal(seen.calls, 2);
    assert.equal(seen.most, 1, 'listings never overlap');
    assert.deepEqual(await cache.get('k', list), ['a.ts', 'b.ts']);
    assert.equal(seen.calls, 2, 'the listing that saw the change is kept');
  });

  it('gives an empty list when a listing fails, and lists again on the next use', async () => {
    const cache = new FileListCache();
    let fail = true;
    const list = async (): Promise<readonly string[]> => {
      if (fail) throw new Error('no search provider');
      return ['a.ts'];
    };
    assert.deepEqual(await cache.get('k', list), []);
    fail = false;
    assert.deepEqual(await cache.get('k', list), ['a.ts']);
  });
});

describe('one budget for the attached context', () => {
  it('keeps what fits whole, cuts the item that crosses the limit at a line end, and empties those after it', () => {
    const a = item('a.ts', 'x'.repeat(60));
    const b = item('b.ts', 'line one\n'.repeat(10));
    const c = item('c.ts', 'more');
    const { items, cut } = applyContextBudget([a, b, c], 100);
    assert.equal(items[0], a, 'the first item is untouched');
    assert.ok(items[1].truncated && items[1].code.length <= 40 && items[1].code.endsWith('line one'));
    assert.equal(items[2].code, '');
    assert.ok(items[2].truncated);
    assert.deepEqual(cut, ['b.ts', 'c.ts']);
    assert.equal(items.reduce((n, i) => n + i.code.length, 0) <= 100, true);
  });

  it('changes nothing under the limit, and does not count an item already cut when picked as newly cut', () => {
    const sel = item('sel.ts', 'abc', { truncated: true });
    const { items, cut } = applyContextBudget([sel, item('x.ts', 'def')], 1000);
    assert.deepEqual(items.map((i) => i.code), ['abc', 'def']);
    assert.deepEqual(cut, []);
  });

  it('says what was cut, naming at most three paths', () => {
    assert.equal(budgetNote(['a.ts'], 24000), 'Attached context cut to 24,000 characters (parley.maxContextChars): a.ts');
    assert.match(budgetNote(['a', 'b', 'c', 'd', 'e'], 100), /: a, b, c and 2 more$/);
  });
});

describe('mention blocks and messages', () => {
  it('a file goes as a fenced block with its path and language; problems say whose they are', () => {
    assert.equal(contextBlock(item('src/a.py', 'x = 1', { language: 'python', mention: 'file' })), '`src/a.py`, line 1:\n```python\nx = 1\n```');
    assert.equal(contextBlock(item('src/a.py', 'src/a.py:1:1 error bad', { mention: 'problems', endLine: 9 })), 'Problems in `src/a.py`:\n```text\nsrc/a.py:1:1 error bad\n```');
    assert.match(contextBlock(item('b.ts', 'y', { truncated: true })), /^`b\.ts`, line 1 \(cut to fit; the rest is not shown\):/);
  });

  it('validates mentionQuery and addMention: kinds, lengths, a path only for files', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'mentionQuery', query: 'gre', extra: 1 }), { ok: true, message: { type: 'mentionQuery', query: 'gre' } });
    assert.equal(parseWebviewMessage({ type: 'mentionQuery', query: 'x'.repeat(LIMITS.mentionQueryChars + 1) }).ok, false);
    assert.equal(parseWebviewMessage({ type: 'mentionQuery' }).ok, false);
    assert.deepEqual(parseWebviewMessage({ type: 'addMention', kind: 'file', path: 'src/a.ts' }), { ok: true, message: { type: 'addMention', kind: 'file', path: 'src/a.ts' } });
    assert.deepEqual(parseWebviewMessage({ type: 'addMention', kind: 'open', path: '/etc/passwd' }), { ok: true, message: { type: 'addMention', kind: 'open' } });
    assert.equal(parseWebviewMessage({ type: 'addMention', kind: 'file' }).ok, false);
    assert.equal(parseWebviewMessage({ type: 'addMention', kind: 'file', path: '  ' }).ok, false);
    assert.equal(parseWebviewMessage({ type: 'addMention', kind: 'file', path: 'x'.repeat(LIMITS.pathChars + 1) }).ok, false);
    assert.equal(parseWebviewMessage({ type: 'addMention', kind: 'secrets' }).ok, false);
  });
});
