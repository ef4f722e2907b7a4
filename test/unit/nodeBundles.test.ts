// scripts/node-bundles.mjs on a project of three small modules: a lazy bundle may take another's exports as it loads,
// but two that take each other's would meet half-made exports in the packaged extension only, so the build refuses.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../support/repoRoot';

const script = pathToFileURL(path.join(repoRoot(), 'scripts', 'node-bundles.mjs')).href;
const made: string[] = [];

/** Builds main.ts with a.ts and b.ts as lazy bundles in a fresh folder; the build's exit status and its dist/ files. */
function build(files: Record<string, string>): { status: number | null; stderr: string; dist: string[]; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bundles-'));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const driver = `import { buildNodeBundles } from ${JSON.stringify(script)};
await buildNodeBundles({ options: { bundle: true, platform: 'node', format: 'cjs', logLevel: 'silent' }, plugins: () => [],
  main: 'main.ts', mainName: 'extension', lazy: { a: 'a.ts', b: 'b.ts' }, outdir: 'dist' });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', driver], { cwd: dir, encoding: 'utf8' });
  const dist = fs.existsSync(path.join(dir, 'dist')) ? fs.readdirSync(path.join(dir, 'dist')).filter((f) => f.endsWith('.js')).sort() : [];
  return { status: r.status, stderr: r.stderr, dist, dir };
}

describe('node-bundles: lazy bundles that load each other', () => {
  after(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('a lazy bundle that takes another\'s exports as it loads builds, and works', () => {
    const r = build({
      'main.ts': 'export const version = 1;\n',
      'a.ts': `import { fb } from './b';\nexport const fa = (): number => fb() + 1;\n`,
      'b.ts': `export const fb = (): number => 41;\n`,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.dist, ['a.js', 'b.js', 'extension.js']);
    const a = fs.readFileSync(path.join(r.dir, 'dist', 'a.js'), 'utf8');
    assert.match(a, /require\("\.\/b\.js"\)/, 'a.js takes b.js rather than carrying its code');
    const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(require("./dist/a.js").fa()))'], { cwd: r.dir, encoding: 'utf8' });
    assert.equal(run.stdout, '42', run.stderr);
  });

  it('two lazy bundles that take each other\'s exports as they load are refused, naming the circle', () => {
    const r = build({
      'main.ts': 'export const version = 1;\n',
      'a.ts': `import { fb } from './b';\nexport const fa = (): number => fb() + 1;\nexport const one = (): number => 1;\n`,
      'b.ts': `import { one } from './a';\nexport const fb = (): number => one() + 40;\n`,
    });
    assert.notEqual(r.status, 0, 'the build fails');
    assert.match(r.stderr, /lazy bundles require each other as they load: dist\/(a|b)\.js → dist\/(a|b)\.js → dist\/\1\.js/);
  });
});
