// search_text's engine (src/vscode/tools/searchEngine.ts) in plain Node: the model's regex runs in a worker thread, so a
// catastrophic pattern ends as "too slow" while this thread keeps running, Stop ends it, and ordinary searches still work.
import * as assert from 'node:assert/strict';
import { MAX_LINE_CHARS } from '../../src/core/lineMatch';
import { compileQuery } from '../../src/core/toolText';
import { LineSearch, SearchTooSlowError } from '../../src/vscode/tools/searchEngine';

/** A file with one line on which `(.*.*)*X` backtracks for about 40 s on the extension host's thread (issue 32). */
const SLOW_FILE = ['fine', 'a'.repeat(16), 'also fine'].join('\n');
const SLOW = compileQuery('(.*.*)*X', true, false);

describe('search engine (LineSearch)', function () {
  this.timeout(20_000);

  it('a catastrophic regex ends as too slow, and this thread stays free meanwhile: a timer keeps ticking', async () => {
    const search = new LineSearch(SLOW, new AbortController().signal, 500);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      await assert.rejects(search.match(SLOW_FILE, 50), SearchTooSlowError);
    } finally {
      clearInterval(timer);
      search.dispose();
    }
    assert.ok(ticks > 0, 'the timer ticked while the regex ran');
    // Spent: the next file is refused at once, without a new worker.
    await assert.rejects(search.match('X', 50), SearchTooSlowError);
  });

  it('Stop ends a running search: the match rejects with the abort reason', async () => {
    const stop = new AbortController();
    // A budget far longer than the test: only Stop can end this search.
    const search = new LineSearch(SLOW, stop.signal, 10 * 60_000);
    let ticks = 0;
    // Stopped from a timer, which can only fire while the regex runs if it runs off this thread.
    const timer = setInterval(() => {
      if (++ticks === 3) stop.abort();
    }, 5);
    try {
      await assert.rejects(search.match(SLOW_FILE, 50), (e: Error) => e.name === 'AbortError');
    } finally {
      clearInterval(timer);
      search.dispose();
    }
    await assert.rejects(search.match('X', 50), (e: Error) => e.name === 'AbortError', 'a stopped search matches nothing more');
  });

  it('literal and regex searches find what they found before, capped at max, with excerpts of long lines', async () => {
    const text = ['const a = 1;', 'A.B here', 'axb', 'nothing', `${'x'.repeat(300)} needle ${'y'.repeat(300)}`, 'a.b again', ''].join('\r\n');
    const run = async (query: string, isRegex: boolean, caseSensitive: boolean, max = 50) => {
      const search = new LineSearch(compileQuery(query, isRegex, caseSensitive), new AbortController().signal);
      try {
        return await search.match(text, max);
      } finally {
        search.dispose();
      }
    };
    assert.deepEqual((await run('a.b', false, false)).matches, [{ line: 2, text: 'A.B here' }, { line: 6, text: 'a.b again' }]);
    assert.deepEqual((await run('a.b', true, true)).matches.map((m) => m.line), [3, 6]);
    assert.deepEqual((await run('a.b', true, false, 1)).matches.map((m) => m.line), [2]);
    const long = (await run('needle', false, true)).matches;
    assert.equal(long.length, 1);
    assert.equal(long[0].line, 5);
    assert.ok(long[0].text.length <= 202 && long[0].text.includes('needle') && long[0].text.startsWith('…'), long[0].text);
    assert.deepEqual(await run('nope', false, false), { matches: [], longLines: 0 });
  });

  it(`a line longer than ${MAX_LINE_CHARS} characters is searched in its first ${MAX_LINE_CHARS} only, and counted`, async () => {
    const near = `${'n'.repeat(MAX_LINE_CHARS - 10)}findme`;
    const far = `${'f'.repeat(MAX_LINE_CHARS)}findme`;
    const search = new LineSearch(compileQuery('findme', false, false), new AbortController().signal);
    try {
      const r = await search.match([near + 'z'.repeat(500), far, 'findme'].join('\n'), 50);
      assert.deepEqual(r.matches.map((m) => m.line), [1, 3]);
      assert.equal(r.longLines, 2);
      assert.ok(r.matches[0].text.length <= 202, 'a bounded excerpt');
    } finally {
      search.dispose();
    }
  });

  it('files sent together are matched in turn by one worker, each with its own answer', async () => {
    const search = new LineSearch(compileQuery('k\\d', true, false), new AbortController().signal);
    try {
      const answers = await Promise.all(['k1', 'no', 'x\nk2\nk3'].map((t) => search.match(t, 50)));
      assert.deepEqual(answers.map((a) => a.matches.map((m) => m.line)), [[1], [], [2, 3]]);
    } finally {
      search.dispose();
    }
  });
});

