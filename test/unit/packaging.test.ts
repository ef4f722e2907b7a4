// The .vsix carries every lazily loaded bundle: each LAZY module of esbuild.mjs is kept by .vscodeignore, or the
// installed extension fails the first time it requires it (only the packaged extension shows it; tests inline them).
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

describe('packaging', () => {
  it('.vscodeignore keeps every lazily loaded bundle of esbuild.mjs', () => {
    const root = repoRoot();
    const build = fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8');
    const block = /const LAZY = \{([\s\S]*?)\n\};/.exec(build)?.[1];
    assert.ok(block, 'LAZY found in esbuild.mjs');
    const lazy = [...block.matchAll(/^\s+(\w+): '[^']+\.ts',$/gm)].map((m) => m[1]);
    assert.ok(lazy.length >= 10, `LAZY modules read: ${lazy.join(', ')}`);
    const kept = new Set(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split(/\r?\n/).map((l) => l.trim()));
    assert.deepEqual(lazy.filter((name) => !kept.has(`!dist/${name}.js`)), [], 'each is listed as !dist/<name>.js');
  });
});
