// The lazily loaded bundles: each LAZY module of esbuild.mjs has its loader, src/vscode/lazy/<name>.ts, and is kept by
// .vscodeignore (or the installed extension fails the first time it requires it: only the packaged extension shows
// it, tests inline them), and the bundles of dist/ share their code, so that each class is defined once.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../support/repoRoot';


const root = repoRoot();
const read = (...p: string[]) => fs.readFileSync(path.join(root, ...p), 'utf8');

/** LAZY in esbuild.mjs: each lazily loaded bundle's name and source. */
function lazyModules(): Map<string, string> {
  const block = /const LAZY = \{([\s\S]*?)\n\};/.exec(read('esbuild.mjs'))?.[1];
  assert.ok(block, 'LAZY found in esbuild.mjs');
  const lazy = new Map([...block.matchAll(/^\s+(\w+): '([^']+\.ts)',$/gm)].map((m) => [m[1], m[2]]));
  assert.ok(lazy.size >= 10, `LAZY modules read: ${[...lazy.keys()].join(', ')}`);
  return lazy;
}

/** The names of LAZY in esbuild.mjs. */
const lazyNames = () => [...lazyModules().keys()];

/** Every class declared in src/ outside the webview (which is a browser bundle of its own), by file. */
function classesOfSrc(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        if (p !== 'src/webview') walk(p);
      } else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) {
        const names = [...read(p).matchAll(/^\s*(?:export\s+)?(?:abstract\s+)?class\s+(\w+)/gm)].map((m) => m[1]);
        if (names.length > 0) out.set(p, names);
      }
    }
  };
  walk('src');
  return out;
}

describe('packaging', () => {
  it('.vscodeignore keeps every lazily loaded bundle of esbuild.mjs, and the code they share', () => {
    const kept = new Set(read('.vscodeignore').split(/\r?\n/).map((l) => l.trim()));
    assert.deepEqual([...lazyNames(), 'shared'].filter((name) => !kept.has(`!dist/${name}.js`)), [], 'each is listed as !dist/<name>.js');
  });

  it('src/vscode/lazy/ has one loader per LAZY module of esbuild.mjs: <name>.ts requires ./<name>.js, typed as its source', () => {
    const lazy = lazyModules();
    const files = fs.readdirSync(path.join(root, 'src/vscode/lazy')).map((f) => f.replace(/\.ts$/, ''));
    assert.deepEqual(files.sort(), [...lazy.keys()].sort(), 'one file each, named as in LAZY');
    for (const [name, source] of lazy) {
      const loader = read('src/vscode/lazy', `${name}.ts`);
      assert.deepEqual([...loader.matchAll(/require\('\.\/(\w+)\.js'\)/g)].map((m) => m[1]), [name], `${name}.ts requires ./${name}.js only`);
      assert.match(loader, new RegExp(`^export const ${name} = \\(\\): typeof \\w+ =>`, 'm'), `${name}.ts exports ${name}()`);
      const typed = /^import type \* as \w+ from '([^']+)';$/m.exec(loader)?.[1] ?? '';
      assert.equal(path.posix.join('src/vscode/lazy', `${typed}.ts`), source, `${name}() is typed as ${source}`);
    }
  });

  it('each class of src/ is defined in one bundle of dist/ only (so instanceof holds across bundles)', () => {
    // dist/ as `node esbuild.mjs` (which `npm run test:unit` runs first) leaves it: not minified, each module's code
    // after a `// <path>` line.
    const bundles = ['extension', ...lazyNames(), 'shared'].map((n) => `${n}.js`).filter((f) => fs.existsSync(path.join(root, 'dist', f)));
    const classes = classesOfSrc();
    const definedIn = new Map<string, string[]>();
    for (const bundle of bundles) {
      const parts = read('dist', bundle).split(/^\/\/ (\S+)$/m);
      for (let i = 1; i < parts.length; i += 2) {
        for (const name of classes.get(parts[i]) ?? []) {
          // esbuild writes `class X` or `var X = class`, and X2 where two modules of one bundle have an X.
          const n = parts[i + 1].match(new RegExp(`(?:^|[^\\w$.])class ${name}\\d*\\b|\\b${name}\\d* = class\\b`, 'g'))?.length ?? 0;
          const key = `${parts[i]}: ${name}`;
          for (let k = 0; k < n; k++) definedIn.set(key, [...(definedIn.get(key) ?? []), bundle]);
        }
      }
    }
    assert.deepEqual(definedIn.get('src/core/errors.ts: ParleyError')?.length, 1, 'ParleyError found once (dist/ built, not minified)');
    assert.deepEqual([...definedIn].filter(([, where]) => where.length > 1).map(([key, where]) => `${key} in ${where.join(', ')}`), []);
  });
});
