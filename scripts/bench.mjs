// `npm run bench`: builds and runs the client benchmark (Parley vs a bare fetch + eventsource-parser loop vs the
// openai SDK), then the tool loop benchmark (runToolLoop vs the same requests back to back), then the search_text
// benchmark (its engine vs plain parallel fs reads), then the `@` picker's ranking of 1,000 to 20,000 files (vs reading
// them in parallel with fs), then the render benchmark when bench/render.mjs exists, then the
// end-to-end latency benchmark in the real VS Code (code-server, set up as for `npm test`). Each prints ratios
// against a baseline measured in the same run. Exits non-zero when any fails.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, SetupError, ensureProjectDependencies } from './vscode-host.mjs';

// A fresh clone: `npm run bench` alone installs the project's dependencies first, as `npm test` does.
try {
  ensureProjectDependencies();
} catch (e) {
  console.error(`[bench] installing the project's dependencies failed: ${e instanceof SetupError ? e.message : e.stack}`);
  process.exit(1);
}
const esbuild = await import('esbuild');
const clientBundle = join(ROOT, 'out', 'bench', 'client.js');
const toolLoopBundle = join(ROOT, 'out', 'bench', 'toolLoop.js');
const searchBundle = join(ROOT, 'out', 'bench', 'search.js');
const mentionsBundle = join(ROOT, 'out', 'bench', 'mentions.js');

/** `parley:search-worker` as esbuild.mjs resolves it: the worker's bundled source, as a string. */
const searchWorker = {
  name: 'parley-search-worker',
  setup(build) {
    build.onResolve({ filter: /^parley:search-worker$/ }, () => ({ path: 'search-worker', namespace: 'parley-search-worker' }));
    build.onLoad({ filter: /.*/, namespace: 'parley-search-worker' }, async () => {
      const r = await esbuild.build({ entryPoints: [join(ROOT, 'src/vscode/tools/searchWorker.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', write: false });
      return { contents: r.outputFiles[0].text, loader: 'text' };
    });
  },
};

// Bundled like the extension (node, cjs), so Parley's client runs as it ships; the SDK is bundled the same way.
for (const [entry, outfile] of [['client.ts', clientBundle], ['toolLoop.ts', toolLoopBundle], ['search.ts', searchBundle], ['mentions.ts', mentionsBundle]]) {
  await esbuild.build({
    entryPoints: [join(ROOT, 'bench', entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [searchWorker],
  });
}

let failed = false;
function run(title, args) {
  console.log(`━━ ${title} ━━`);
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`${title} benchmark failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
    failed = true;
  }
}

run('client', [clientBundle]);
console.log();
run('tool loop', [toolLoopBundle]);
console.log();
run('search_text', [searchBundle]);
console.log();
run('@ picker', [mentionsBundle]);
const render = join(ROOT, 'bench', 'render.mjs');
if (existsSync(render)) {
  console.log();
  run('render', [render, '--runs', '3']);
}
console.log();
// The real VS Code: code-server from npm and the packaged .vsix, set up as for `npm test` (a few minutes).
run('latency', [join(ROOT, 'bench', 'latency.mjs')]);
process.exit(failed ? 1 : 0);
