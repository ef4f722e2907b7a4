// The exclude globs' matcher: agrees with zeptomatch (the oracle) on a generated corpus, and its work stays bounded.
import * as assert from 'node:assert/strict';
import zeptomatch from 'zeptomatch';
import { GlobError, MAX_BRACE_DEPTH, MAX_GLOB_SIZE, compileGlob, type CompiledGlob } from '../../src/core/glob';
import { DEFAULT_TOOL_EXCLUDE, MAX_TOOL_NAME, MAX_TOOL_PATH, ToolError, excludeMatcher, excludedMessage, resolveToolPath } from '../../src/core/toolPaths';
import { seededRandom } from '../support/random';

/** What excludeMatcher did with zeptomatch: each prefix of the path tested against the case-insensitive RegExp. */
const oracles = new Map<string, RegExp | undefined>();

function oracleLongest(glob: string, path: string): number | 'invalid' {
  if (!oracles.has(glob)) {
    try {
      const z = zeptomatch.compile(glob.replace(/\\/g, '/'));
      oracles.set(glob, new RegExp(z.source, `${z.flags}i`));
    } catch {
      oracles.set(glob, undefined);
    }
  }
  const re = oracles.get(glob);
  if (!re) return 'invalid';
  const segments = path.split('/');
  for (let n = segments.length; n >= 1; n--) {
    const prefix = segments.slice(0, n).join('/');
    if (re.test(prefix)) return prefix.length;
  }
  return 0;
}

const compiled = new Map<string, CompiledGlob | undefined>();

function longest(glob: string, path: string): number | 'invalid' {
  if (!compiled.has(glob)) {
    try {
      compiled.set(glob, compileGlob(glob));
    } catch (e) {
      assert.ok(e instanceof GlobError, String(e));
      compiled.set(glob, undefined);
    }
  }
  return compiled.get(glob)?.longestMatch(path) ?? 'invalid';
}

const ATOMS = [
  'a', 'A', 'b', 'B', '.', '-', 'x', '_', '1', 'é', 'É', 'k', '\u212a', 'ß', 'ſ', 'ı', 'i', 's', '*', '*', '**', '***', '?', '/', '/', '\\',
  '**/', '/**', '/**/', '[ab]', '[a-c]', '[A-Z]', '[0-9]', '[!a]', '[^b]', '[/]', '[a-]', '[]', '[!]', '[.]', '[k]',
  '{a,b}', '{a,{b,c}}', '{,a}', '{a/b,x}', '{*.a,b*}', '{**/a,b}', '{a/**}', '{}', '{1..3}', '{a..c}', '{x,[ab]}',
  '[', ']', '{', '}', ',', '(', ')', '$', '^', '+', '|', '!', 'a*', '.env',
  // Astral characters, whole (two UTF-16 units each), in globs as in paths.
  '😀', '𝐬', '𠀀',
];

function genGlob(r: () => number): string {
  const n = 1 + Math.floor(r() * 6);
  let g = r() < 0.08 ? '!' : '';
  for (let i = 0; i < n; i++) g += ATOMS[Math.floor(r() * ATOMS.length)];
  return g;
}

const CHARS = ['a', 'A', 'b', 'B', 'c', 'x', 'X', '.', '-', '_', '1', '2', '3', 'é', 'É', 'k', 'K', '\u212a', 'ß', 'S', 'ſ', 'ı', 'I', 'i', '[', ']', '{', '}', ',', '(', '$', '^', '+', '!', '😀', '𝐬', '𠀀', '\ud83d'];

function genPath(r: () => number): string {
  const depth = 1 + Math.floor(r() * 5);
  const segs: string[] = [];
  for (let d = 0; d < depth; d++) {
    const len = 1 + Math.floor(r() * 4);
    let s = r() < 0.2 ? '.' : '';
    for (let i = 0; i < len; i++) s += CHARS[Math.floor(r() * CHARS.length)];
    segs.push(s === '.' ? 'x' : s); // excludeMatcher drops `.` segments

  }
  return segs.join('/');
}

describe('exclude globs (compileGlob)', () => {
  const fixed = [
    ...DEFAULT_TOOL_EXCLUDE,
    'secrets', 'build/*.log', '**/*.{crt,p12}', 'tmp/[ab]?.txt', 'a/**', '**', '**/a', 'a/**/b', 'a***', '!a', '!!a', '!!!a', 'a/', '[!/]',
    '{1..3}', '{01..10}', '{a..c}', '{Y..AB}', '{}', 'x{a,}', '[a', '{a,b', 'a[/]b', '[A-z]', '[z-a]', '**/x/**/y', '*/', '*/*', '**/*/**',
    'a\\b', 'a\nb', 'a\n**', '**\\.env', '{a,b}{c,d}', '{**/a,b}', '{a/**}',
    '**/😀secret', '**/𝐬𝐞𝐜𝐫𝐞𝐭𝐬/**', '𠀀/**', '😀', '?', '??',
  ];
  const fixedPaths = [
    'a', 'b', 'A/B', 'a/b/c', 'x/a', 'b/a', 'ab', 'abc', '.env', 'x/.ENV.local', 'node_modules', 'p/NODE_MODULES/q', 'c.CRT', 'a/x/b', 'x/y',
    'x/q/y', '1', '01', '10', '2', 'aa', 'ab', 'y', 'z', 'aa/ab', '[a', '{a,b', 'k', '\u212a', 'a_b', '^', 'z/x/b/y', 'home/.ssh/id_rsa.pub',
    'tmp/a1.txt', 'build/x.log', 'secrets/a/b.txt', 'ac', 'bd', 'a.pem/x', '.git', 'sub/.git/HEAD',
    'a/😀secret', '𝐬𝐞𝐜𝐫𝐞𝐭𝐬/key.txt', '𠀀/x', '😀', '\ud83d', '\ud83d\ude00x',
  ];

  it('agrees with zeptomatch on the default list, the globs of the other tests and their quirks', () => {
    for (const g of fixed) for (const p of fixedPaths) assert.equal(longest(g, p), oracleLongest(g, p), `${JSON.stringify(g)} on ${JSON.stringify(p)}`);
  });

  it('agrees with zeptomatch on generated globs and paths (dotfiles, case, deep paths, backslashes)', () => {
    const r = seededRandom(32);
    const paths = [...fixedPaths, ...Array.from({ length: 150 }, () => genPath(r))];
    let compared = 0;
    let invalid = 0;
    let matched = 0;
    for (let k = 0; k < 600; k++) {
      const g = genGlob(r);
      for (const p of paths) {
        const want = oracleLongest(g, p);
        assert.equal(longest(g, p), want, `${JSON.stringify(g)} on ${JSON.stringify(p)}`);
        if (want === 'invalid') invalid++;
        else if (want > 0) matched++;
        compared++;
      }
    }
    assert.ok(compared > 100_000 && invalid < compared / 10 && matched > compared / 20, `${compared} compared, ${invalid} invalid, ${matched} matched`);
  });

  it('excludeMatcher names the glob zeptomatch did: the first to match the longest prefix', () => {
    const r = seededRandom(7);
    for (let k = 0; k < 300; k++) {
      const globs = Array.from({ length: 3 }, () => genGlob(r)).filter((g) => oracleLongest(g, 'x') !== 'invalid');
      const m = excludeMatcher(globs);
      for (let j = 0; j < 30; j++) {
        const p = genPath(r);
        let want: string | undefined;
        let best = 0;
        for (const g of globs) {
          const n = oracleLongest(g, p) as number;
          if (n > best) [want, best] = [g, n];
        }
        const given = r() < 0.3 ? `./${p.replace(/\//g, '\\')}/` : p;
        assert.equal(m.match(given), want, `${JSON.stringify(globs)} on ${JSON.stringify(given)}`);
      }
    }
  });

  it('takes at most (path length + 1) × 2 × size steps on globs that make a backtracking RegExp run for ever', () => {
    // A `b` in front, so that the glob's required letter is there and the VM runs through the whole path.
    const a255 = `b${'a'.repeat(254)}`;
    const deep = `${'a/'.repeat(2047)}c`;
    const cases: Array<[string, string]> = [
      ['**/*a*a*a*a*a*a*a*a*b', a255],
      ['**/*a*a*a*b', a255],
      ['**/*a*a*a*a*a*a*a*a*b', `${'x/'.repeat(100)}${a255}`],
      ['**/a/**/a/**/a/**/b', deep],
      ['{**/a,a/**}/{*a,a*}*a*a*a*b', deep],
      ['!**/*a*a*a*a*a*a*a*a*b', a255],
    ];
    for (const [glob, path] of cases) {
      const c = compileGlob(glob);
      const meter = { steps: 0 };
      const n = c.longestMatch(path, meter);
      assert.equal(n, glob.startsWith('!') ? path.length : 0, glob);
      const work = `${glob}: ${meter.steps} steps for ${path.length} characters and size ${c.size}`;
      assert.ok(meter.steps >= path.length && meter.steps <= (path.length + 1) * 2 * c.size, work);
      // The same through excludeMatcher, as the tools call it: the old RegExps did not return from these.
      assert.equal(excludeMatcher([glob]).match(path), glob.startsWith('!') ? glob : undefined, glob);
    }
  });

  it('does work linear in the path: twice the path, about twice the steps (a quadratic matcher would take four times)', () => {
    const c = compileGlob('**/a/**/a/**/a/**/b');
    const steps = (segments: number): number => {
      const meter = { steps: 0 };
      c.longestMatch(`${'a/'.repeat(segments - 1)}c`, meter);
      return meter.steps;
    };
    const one = steps(500);
    const two = steps(1000);
    assert.ok(two < 2.1 * one, `${one} then ${two}`);
  });

  it('refuses, and excludeMatcher fails closed on, globs it cannot match safely or that zeptomatch refuses', () => {
    for (const g of ['[z-a]', 'a\nb', '{'.repeat(MAX_BRACE_DEPTH + 1), `${'{a,'.repeat(MAX_BRACE_DEPTH + 1)}b`, `{1..${MAX_GLOB_SIZE * 10}}`, '{1..99999999999999999999999}', `**/{${Array.from({ length: 2000 }, (_, i) => `f${i}`).join(',')}}`, 'x'.repeat(MAX_GLOB_SIZE + 1)]) {
      assert.throws(() => compileGlob(g), GlobError, g.slice(0, 40));
      const m = excludeMatcher(['**/.env*', g]);
      assert.deepEqual(m.invalid, [g]);
      assert.equal(m.match('src/a.ts'), g);
      assert.equal(m.match('.env'), '**/.env*');
      assert.equal(m.match(''), undefined);
    }
    // Many ranges in one glob: refused as they are read, before any is expanded past the budget (zeptomatch, and a
    // parser without a shared budget, would build millions of nodes first).
    assert.throws(() => compileGlob('{0000..4095}'.repeat(300)), /ranges with too many values in all/);
    assert.match(excludedMessage('src/a.ts', '[z-a]', true), /\(\[z-a\]\): that glob cannot be read, so it excludes every path until the setting is mended/);
  });

  it('compiles braces nested as deep as allowed, and a long list of names', () => {
    const nested = `${'{a,'.repeat(MAX_BRACE_DEPTH)}b${'}'.repeat(MAX_BRACE_DEPTH)}/x`;
    for (const p of ['a/x', 'b/x', 'c/x', 'b/x/y']) assert.equal(longest(nested, p), oracleLongest(nested, p), p);
    const names = `**/{${Array.from({ length: 200 }, (_, i) => `secret${i}.txt`).join(',')}}`;
    const m = excludeMatcher([names]);
    assert.deepEqual(m.invalid, []);
    assert.equal(m.match('a/b/SECRET199.TXT'), names);
    assert.equal(m.match('a/b/secret200.txt'), undefined);
  });
});

describe('tool paths (names and paths no file system holds)', () => {
  const ONE = [{ name: 'app', path: '/home/u/app' }];
  const refusal = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      assert.ok(e instanceof ToolError);
      return e.message;
    }
    assert.fail('no refusal');
  };

  it(`refuses a name over ${MAX_TOOL_NAME} characters and a path over ${MAX_TOOL_PATH}, before any glob sees it`, () => {
    assert.equal(resolveToolPath(`src/${'a'.repeat(255)}`, ONE).relative, `src/${'a'.repeat(255)}`);
    assert.equal(resolveToolPath(`src/${'😀'.repeat(255)}`, ONE).relative.length, 4 + 510);
    assert.match(refusal(() => resolveToolPath(`src/${'a'.repeat(256)}/x`, ONE)), /a name of 256 characters \("a{40}…"\); no file system allows a name longer than 255/);
    assert.match(refusal(() => resolveToolPath(`src\\${'b'.repeat(300)}`, ONE)), /a name of 300 characters/);
    assert.equal(resolveToolPath('a/'.repeat(2048), ONE).relative.length, 4095);
    assert.match(refusal(() => resolveToolPath(`${'a/'.repeat(2048)}b`, ONE)), /The path is 4097 characters long; no workspace file has a path longer than 4096/);
  });
});
