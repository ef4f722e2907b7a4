// The lazily loaded bundles: each LAZY module of esbuild.mjs has its loader, src/vscode/lazy/<name>.ts, and is kept by
// .vscodeignore (or the installed extension fails the first time it requires it: only the packaged extension shows
// it, tests inline them).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository root: the nearest folder above this file (src or bundle) holding package.json. */
function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

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

describe('packaging', () => {
  it('.vscodeignore keeps every lazily loaded bundle of esbuild.mjs', () => {
    const kept = new Set(read('.vscodeignore').split(/\r?\n/).map((l) => l.trim()));
    assert.deepEqual(lazyNames().filter((name) => !kept.has(`!dist/${name}.js`)), [], 'each is listed as !dist/<name>.js');
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
});
