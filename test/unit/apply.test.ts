// Apply's pure logic (src/core/apply.ts): the target, the block's form, and the proposed text, in plain Node.
import * as assert from 'node:assert/strict';
import { applyHunks, blockForm, changedSpan, looksPartial, parseSearchReplace, pathFromInfo, pathFromLine, planApply, propose, type ApplySelection, type Proposal } from '../../src/core/apply';

const SR = (search: string, replace: string) => `<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n`;

function text(p: Proposal): string {
  if (!p.ok) assert.fail(`expected a proposal, got: ${p.error}`);
  return p.text;
}

function error(p: Proposal): string {
  if (p.ok) assert.fail(`expected an error, got a proposal: ${JSON.stringify(p.text)}`);
  return p.error;
}

const selection: ApplySelection = { path: 'src/sel.ts', startLine: 2, endLine: 3, code: 'b();\nc();', truncated: false };

describe('Apply: the target', () => {
  it('reads a path from the info string in its usual spellings', () => {
    assert.equal(pathFromInfo('ts path=src/app.ts'), 'src/app.ts');
    assert.equal(pathFromInfo('python filename="tools/run me.py"'), undefined, 'a path with a space is not taken');
    assert.equal(pathFromInfo("js file='lib/x.js'"), 'lib/x.js');
    assert.equal(pathFromInfo('{title=README.md}'), 'README.md');
    assert.equal(pathFromInfo('rust:src/main.rs'), 'src/main.rs');
    assert.equal(pathFromInfo('typescript src/app.ts'), 'src/app.ts');
    assert.equal(pathFromInfo('src/app.ts'), 'src/app.ts');
    assert.equal(pathFromInfo('text path=config/.env'), 'config/.env');
    assert.equal(pathFromInfo('ini .gitignore'), '.gitignore');
    assert.equal(pathFromInfo('ts'), undefined);
    assert.equal(pathFromInfo('c++'), undefined);
    assert.equal(pathFromInfo(''), undefined);
  });

  it('reads a path from the line before the block, and not from prose', () => {
    assert.equal(pathFromLine('Update `src/greet.ts` like this:'), 'src/greet.ts');
    assert.equal(pathFromLine('**stats.py**'), 'stats.py');
    assert.equal(pathFromLine('In src/lib/util.js, change the loop:'), 'src/lib/util.js');
    assert.equal(pathFromLine('app.ts:'), 'app.ts');
    assert.equal(pathFromLine('### File: Dockerfile'), 'Dockerfile');
    assert.equal(pathFromLine('Using Node.js, e.g. like this:'), undefined);
    assert.equal(pathFromLine('See https://example.com/a/b.ts for more:'), undefined);
    assert.equal(pathFromLine('Here is the updated code:'), undefined);
    // A word with a slash but no file extension is prose, not a path; in a code span it may be a folder's file.
    assert.equal(pathFromLine('Both client/server and read/write work, 50/50:'), undefined);
    assert.equal(pathFromLine('Edit `docker/Makefile`:'), 'docker/Makefile');
    assert.equal(pathFromLine('In docker/Dockerfile, use:'), 'docker/Dockerfile');
  });

  it('prefers the named path, then the selection, then the active editor, else asks', () => {
    const sr = SR('a', 'b');
    assert.deepEqual(planApply({ code: sr, info: 'ts path=x.ts', before: '`y.ts`' }, selection, 'active.ts').target, { path: 'x.ts', source: 'info' });
    assert.deepEqual(planApply({ code: sr, info: 'ts', before: '`y.ts`:' }, selection, 'active.ts').target, { path: 'y.ts', source: 'line' });
    assert.deepEqual(planApply({ code: sr, info: 'ts', before: '' }, selection, 'active.ts').target, { path: 'src/sel.ts', source: 'selection' });
    assert.deepEqual(planApply({ code: sr, info: 'ts', before: '' }, undefined, 'active.ts').target, { path: 'active.ts', source: 'active' });
    assert.equal(planApply({ code: sr, info: 'ts', before: '' }, undefined, undefined).target, undefined);
    const diff = '--- a/src/d.ts\n+++ b/src/d.ts\n@@ -1 +1 @@\n-a\n+b\n';
    assert.deepEqual(planApply({ code: diff, info: 'diff', before: '' }, undefined, 'active.ts').target, { path: 'src/d.ts', source: 'block' });
  });

  it('places plain code as the whole file when the block names it, else over the selection, else nowhere', () => {
    assert.deepEqual(planApply({ code: 'x\n', info: 'ts path=a.ts', before: '' }, selection, 'b.ts').placement, { kind: 'whole' });
    const sel = planApply({ code: 'x\n', info: 'ts', before: 'Here:' }, selection, 'b.ts');
    assert.deepEqual(sel, { target: { path: 'src/sel.ts', source: 'selection' }, placement: { kind: 'selection', selection } });
    assert.deepEqual(planApply({ code: 'x\n', info: 'ts', before: 'Here:' }, undefined, 'b.ts'), {});
  });
});

describe('Apply: a command or a fragment is not the whole file', () => {
  it('a shell block after "run `app.py`" is a command, not app.py; a script named before it is its target', () => {
    assert.equal(planApply({ code: 'python app.py\n', info: 'bash', before: 'Then run `app.py`:' }, undefined, undefined).target, undefined);
    assert.deepEqual(planApply({ code: 'python app.py\n', info: 'bash', before: 'Then run `app.py`:' }, undefined, undefined), {});
    assert.deepEqual(planApply({ code: 'echo hi\n', info: 'sh', before: 'Save it as `scripts/hi.sh`:' }, undefined, undefined).target, { path: 'scripts/hi.sh', source: 'line' });
    assert.deepEqual(planApply({ code: 'export PATH="$HOME/bin:$PATH"\n', info: 'bash', before: 'Add this to `.bashrc`:' }, undefined, undefined).target, { path: '.bashrc', source: 'line' });
    assert.deepEqual(planApply({ code: 'print(1)\n', info: 'python', before: 'Change `app.py`:' }, undefined, undefined).target, { path: 'app.py', source: 'line' });
  });

  it('looksPartial: a block under half the file that does not begin and end as it does is a part', () => {
    const file = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n') + '\n';
    assert.equal(looksPartial(file, 'line 7\nline 8 changed\nline 9\n'), true, 'a few lines from the middle');
    assert.equal(looksPartial(file, file.replace('line 5', 'line five')), false, 'the whole file, one line changed');
    assert.equal(looksPartial(file, 'line 0\nline 19\n'), false, 'a shortened file that begins and ends as it did');
    assert.equal(looksPartial(file.split('\n').slice(0, 11).join('\n'), 'line 3\nline 4\nline 5\nline 6\nline 7\nline 8\n'), false, 'half the file or more counts as whole');
    assert.equal(looksPartial('a\nb\nc\n', 'x\n'), false, 'a file of a few lines');
    assert.equal(looksPartial(undefined, 'x\n'), false, 'a new file');
    assert.equal(looksPartial('', 'x\n'), false, 'an empty file');
    assert.equal(looksPartial(file.replace(/\n/g, '\r\n'), 'line 7\r\n'), true, 'CRLF');
    assert.equal(looksPartial(file, 'line 0\n// ... existing code ...\nline 18 changed\nline 19\n'), true, 'begins and ends as the file, but leaves code out');
    assert.equal(looksPartial(file, file.replace('line 10\n', '# rest of the file unchanged\n')), true, 'an elision marker in a long block');
    assert.equal(looksPartial(file, file.replace('line 10\n', '  ...rest,\n')), false, 'a spread is code, not an elision');
    assert.equal(looksPartial('a\n// ... existing code ...\nb\nc\nd\ne\nf\n', 'a\n// ... existing code ...\nb\nc\nd\ne\nf\ng\n'), false, 'a marker the file itself has');
  });
});

describe('Apply: the forms', () => {
  it('tells the forms apart', () => {
    assert.equal(blockForm(SR('a', 'b')), 'searchReplace');
    assert.equal(blockForm('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n'), 'diff');
    assert.equal(blockForm('@@ -1,2 +1,2 @@\n a\n-b\n+c\n'), 'diff');
    assert.equal(blockForm('const a = 1;\n// ======= not a divider\n'), 'plain');
    assert.equal(blockForm('--- a heading in markdown\n'), 'plain');
  });

  it('a whole-file block replaces the file', () => {
    assert.equal(text(propose('old\n', 'new();\nmore();\n', { kind: 'whole' }, 'a.ts')), 'new();\nmore();\n');
  });

  it('applies search/replace hunks in order, with a path line before them', () => {
    const code = `src/a.ts\n${SR('b();', 'B();')}${SR('d();', 'D();\nE();')}`;
    const parsed = parseSearchReplace(code);
    assert.ok(typeof parsed !== 'string');
    assert.equal(parsed.path, 'src/a.ts');
    assert.equal(parsed.hunks.length, 2);
    assert.equal(text(propose('a();\nb();\nc();\nd();\n', code, { kind: 'searchReplace', hunks: parsed.hunks }, 'a.ts')), 'a();\nB();\nc();\nD();\nE();\n');
  });

  it('reports a hunk found nowhere or several times, naming each, and proposes nothing', () => {
    const err = error(applyHunks('x();\ny();\nx();\n', [{ search: 'y();', replace: 'Y();' }, { search: 'x();', replace: 'X' }, { search: 'zzz', replace: '' }], 'a.ts'));
    assert.match(err, /^2 of 3 hunks do not apply, so nothing was changed/);
    assert.match(err, /Hunk 2 \("x\(\);"\): the search text is in a\.ts 2 times; add lines around it/);
    assert.match(err, /Hunk 3 \("zzz"\): the search text is not in a\.ts\./);
    assert.doesNotMatch(err, /Hunk 1/);
  });

  it('refuses a broken search/replace block with what is missing', () => {
    assert.equal(parseSearchReplace('<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n'), 'Hunk 1 has no "=======" line after its search text.');
    assert.deepEqual(planApply({ code: '<<<<<<< SEARCH\na\n=======\nb\n', info: '', before: '' }, undefined, 'a.ts'), { error: 'Hunk 1 has no ">>>>>>> REPLACE" line after its replacement.' });
  });

  it('applies a unified diff with jsdiff, also with miscounted or missing line numbers', () => {
    const file = 'one\ntwo\nthree\nfour\n';
    const exact = '--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,2 @@\n two\n-three\n+THREE\n';
    assert.equal(text(propose(file, exact, { kind: 'diff', patch: exact }, 'f.txt')), 'one\ntwo\nTHREE\nfour\n');
    const miscounted = '@@ -1,9 +1,9 @@\n two\n-three\n+3\n four\n';
    assert.equal(text(propose(file, miscounted, { kind: 'diff', patch: miscounted }, 'f.txt')), 'one\ntwo\n3\nfour\n');
    const bare = '@@\n one\n-two\n+2\n';
    assert.equal(text(propose(file, bare, { kind: 'diff', patch: bare }, 'f.txt')), 'one\n2\nthree\nfour\n');
  });

  it('reports a diff that does not fit the file, or changes several files', () => {
    const wrong = '@@ -1,2 +1,2 @@\n one\n-nine\n+9\n';
    assert.match(error(propose('one\ntwo\n', wrong, { kind: 'diff', patch: wrong }, 'f.txt')), /does not apply to f\.txt/);
    const two = '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n';
    assert.match(error(propose('a\n', two, { kind: 'diff', patch: two }, 'x')), /changes 2 files/);
  });

  it('replaces the selection at its lines, or where its code now is, and reports it when it is gone', () => {
    const place = { kind: 'selection' as const, selection };
    assert.equal(text(propose('a();\nb();\nc();\nd();\n', 'X();\n', place, 'sel.ts')), 'a();\nX();\nd();\n');
    // Two lines were added above it: found by its code.
    assert.equal(text(propose('new();\nnew();\na();\nb();\nc();\nd();\n', 'X();\n', place, 'sel.ts')), 'new();\nnew();\na();\nX();\nd();\n');
    assert.match(error(propose('a();\nchanged();\nd();\n', 'X();\n', place, 'sel.ts')), /no longer in the file/);
    assert.match(error(propose('b();\nc();\nb();\nc();\n', 'X();\n', { kind: 'selection', selection: { ...selection, startLine: 9, endLine: 10 } }, 'sel.ts')), /2 times/);
    assert.match(error(propose('a\n', 'X\n', { kind: 'selection', selection: { ...selection, truncated: true } }, 'sel.ts')), /cut to fit/);
  });
});

describe('Apply: line endings, final newline, a changed file, a new file', () => {
  it('keeps a CRLF file CRLF, matching LF search text', () => {
    const crlf = 'a();\r\nb();\r\nc();\r\n';
    assert.equal(text(propose(crlf, '', { kind: 'searchReplace', hunks: [{ search: 'b();\nc();', replace: 'B();\nC();' }] }, 'a.ts')), 'a();\r\nB();\r\nC();\r\n');
    assert.equal(text(propose(crlf, 'x\ny\n', { kind: 'whole' }, 'a.ts')), 'x\r\ny\r\n');
    const diff = '@@ -1,2 +1,2 @@\n a();\n-b();\n+B();\n';
    assert.equal(text(propose(crlf, diff, { kind: 'diff', patch: diff }, 'a.ts')), 'a();\r\nB();\r\nc();\r\n');
  });

  it('keeps a file with no final newline without one', () => {
    assert.equal(text(propose('a\nb', 'x\ny\n', { kind: 'whole' }, 'a.ts')), 'x\ny');
    assert.equal(text(propose('a\nlast', '', { kind: 'searchReplace', hunks: [{ search: 'last', replace: 'LAST' }] }, 'a.ts')), 'a\nLAST');
    assert.equal(text(propose('a\nb\n', 'x\ny', { kind: 'whole' }, 'a.ts')), 'x\ny\n');
  });

  it('works from the current text: a hunk still there applies after other edits, one edited away is reported', () => {
    const hunks = [{ search: 'b();', replace: 'B();' }];
    assert.equal(text(propose('user();\na();\nb();\n', '', { kind: 'searchReplace', hunks }, 'a.ts')), 'user();\na();\nB();\n');
    assert.match(error(propose('a();\nbb2();\n', '', { kind: 'searchReplace', hunks }, 'a.ts')), /not in a\.ts/);
  });

  it('a new file is the whole block, or a hunk with an empty search text; other hunks are reported', () => {
    assert.equal(text(propose(undefined, 'x\n', { kind: 'whole' }, 'n.ts')), 'x\n');
    assert.equal(text(propose(undefined, '', { kind: 'searchReplace', hunks: [{ search: '', replace: 'x' }] }, 'n.ts')), 'x\n');
    assert.match(error(propose(undefined, '', { kind: 'searchReplace', hunks: [{ search: 'a', replace: 'x' }] }, 'n.ts')), /does not exist/);
    assert.match(error(propose('a\n', '', { kind: 'searchReplace', hunks: [{ search: '', replace: 'x' }] }, 'n.ts')), /empty search text/);
  });

  it('changedSpan finds the smallest edit and never splits a CRLF', () => {
    assert.deepEqual(changedSpan('abcdef', 'abXYef'), { start: 2, end: 4, text: 'XY' });
    const s = changedSpan('a\r\nb\r\n', 'a\r\nx\r\nb\r\n');
    assert.equal('a\r\nb\r\n'.slice(0, s.start) + s.text + 'a\r\nb\r\n'.slice(s.end), 'a\r\nx\r\nb\r\n');
    assert.notEqual('a\r\nb\r\n'[s.start - 1], '\r');
    assert.deepEqual(changedSpan('same', 'same'), { start: 4, end: 4, text: '' });
  });
});

describe('Apply: review fixes (issue 26)', () => {
  it('a block that starts with a bare @@ is a diff', () => {
    assert.equal(blockForm('@@\n one\n-two\n+2\n'), 'diff');
    assert.equal(blockForm('@@\t\n one\n-two\n+2\n'), 'diff');
    assert.equal(blockForm('@@x not a diff\n'), 'plain');
  });

  it('a bare @@ hunk whose old lines are in the file twice is refused, not applied at the first', () => {
    const file = 'x = 1\ny = 2\nx = 1\n';
    const bare = '@@\n-x = 1\n+x = 9\n';
    assert.match(error(propose(file, bare, { kind: 'diff', patch: bare }, 'f.py')), /no line numbers, and its old lines are in f\.py more than once/);
    const once = '@@\n-y = 2\n+y = 3\n';
    assert.equal(text(propose(file, once, { kind: 'diff', patch: once }, 'f.py')), 'x = 1\ny = 3\nx = 1\n');
    const numbered = '@@ -3,1 +3,1 @@\n-x = 1\n+x = 9\n';
    assert.equal(text(propose(file, numbered, { kind: 'diff', patch: numbered }, 'f.py')), 'x = 1\ny = 2\nx = 9\n', 'line numbers say which');
  });

  it('a removed line that starts with "-- " (so reads "--- ") stays in its hunk', () => {
    const file = 'select 1;\n-- old\nselect 2;\n';
    const patch = '--- a/q.sql\n+++ b/q.sql\n@@ -1,3 +1,2 @@\n select 1;\n--- old\n select 2;\n';
    assert.equal(text(propose(file, patch, { kind: 'diff', patch }, 'q.sql')), 'select 1;\nselect 2;\n');
    const added = '@@ -1,2 +1,3 @@\n select 1;\n+++ new\n -- old\n';
    assert.equal(text(propose(file, added, { kind: 'diff', patch: added }, 'q.sql')), 'select 1;\n++ new\n-- old\nselect 2;\n');
  });

  it('a search/replace hunk that deletes whole lines leaves no blank line', () => {
    assert.equal(text(applyHunks('a\nfoo\nb\n', [{ search: 'foo', replace: '' }], 'f')), 'a\nb\n');
    assert.equal(text(applyHunks('a\nfoo\nbar\nb\n', [{ search: 'foo\nbar', replace: '' }], 'f')), 'a\nb\n');
    assert.equal(text(applyHunks('a foo b\n', [{ search: 'foo', replace: '' }], 'f')), 'a  b\n', 'part of a line: only the text goes');
  });
});
