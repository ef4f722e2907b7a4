// `npm run bench`: builds and runs the client benchmark (Parley vs a bare fetch + eventsource-parser loop vs the
// openai SDK), then the tool loop benchmark (runToolLoop vs the same requests back to back), then the search_text
// benchmark (its engine vs plain parallel fs reads), then the `@` picker's ranking of 1,000 to 20,000 files (vs reading
// them in parallel with fs), then the spend budget benchmark (a request's path with limits set vs none, and a
// stream under the budget's watch vs none), then the render benchmark when bench/render.mjs exists, then the
// end-to-end latency benchmark in the real VS Code (code-server, set up as for `npm test`). Each prints ratios
// against a baseline measured in the same run. Exits non-zero when any fails. Names after it run only those
// benchmarks (`npm run bench -- budget toolLoop`): client, toolLoop, search, mentions, budget, render, latency.
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
const budgetBundle = join(ROOT, 'out', 'bench', 'budget.js');

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

/**
 * The lazy bundles a benchmark loads (LAZY in esbuild.mjs), bundled in, as the unit tests have them: the entries of
 * dist/budget.js. Any other lazy bundle is left to a require that a benchmark never makes.
 */
const lazyModules = {
  name: 'parley-lazy-modules',
  setup(build) {
    const inline = { budget: 'src/vscode/budgetCheck.ts' };
    build.onResolve({ filter: /^\.\/\w+\.js$/ }, (args) => {
      const name = args.path.slice(2, -3);
      if (args.importer !== join(ROOT, 'src', 'vscode', 'lazy', `${name}.ts`)) return undefined;
      return Object.prototype.hasOwnProperty.call(inline, name) ? { path: join(ROOT, inline[name]) } : { path: args.path, external: true };
    });
  },
};

// Bundled like the extension (node, cjs), so Parley's client runs as it ships; the SDK is bundled the same way.
for (const [entry, outfile] of [['client.ts', clientBundle], ['toolLoop.ts', toolLoopBundle], ['search.ts', searchBundle], ['mentions.ts', mentionsBundle], ['budget.ts', budgetBundle]]) {
  await esbuild.build({
    entryPoints: [join(ROOT, 'bench', entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    // VS Code's types only: a benchmark that loaded its runtime would fail at once.
    external: ['vscode'],
    plugins: [searchWorker, lazyModules],
  });
}

let failed = false;
const only = process.argv.slice(2);
function run(name, title, args) {
  if (only.length > 0 && !only.includes(name)) return;
  console.log(`━━ ${title} ━━`);
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`${title} benchmark failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
    failed = true;
  }
}

run('client', 'client', [clientBundle]);
console.log();
run('toolLoop', 'tool loop', [toolLoopBundle]);
console.log();
run('search', 'search_text', [searchBundle]);
console.log();
run('mentions', '@ picker', [mentionsBundle]);
console.log();
run('budget', 'spend budget', [budgetBundle]);
const render = join(ROOT, 'bench', 'render.mjs');
if (existsSync(render)) {
  console.log();
  run('render', 'render', [render, '--runs', '3']);
}
console.log();
// The real VS Code: code-server from npm and the packaged .vsix, set up as for `npm test` (a few minutes).
run('latency', 'latency', [join(ROOT, 'bench', 'latency.mjs')]);
process.exit(failed ? 1 : 0);
