// Builds the extension bundle (node, cjs), the webview bundle (browser, iife) and, with --tests, the tests: unit (plain
// Node, test/unit), webview (Chromium, test/webview), llama (Parley against a real llama-server, test/llama) and
// integration (inside VS Code, test/integration), all under out/test.
import * as esbuild from 'esbuild';
import { readdirSync, readFileSync, statSync, copyFileSync, mkdirSync, rmSync, writeFileSync, watch as watchFiles } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { buildNodeBundles } from './scripts/node-bundles.mjs';
import { commonBuildOptions, highlightWorkerBuildOptions, webviewBuildOptions } from './scripts/webview-build.mjs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');

/** Every *.ts file under dir whose name matches re. */
function findFiles(dir, re) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findFiles(p, re));
    else if (re.test(name)) out.push(p);
  }
  return out;
}

const common = commonBuildOptions(production);

/**
 * Modules loaded on first use, each in a file of its own in dist/, so that the extension's own bundle does not carry
 * them. In src they are `require('./<name>.js')`, in src/vscode/lazy/<name>.ts only: one loader each, in step with this list.
 * The extension bundle leaves each as a require of dist/<name>.js (built below); a test bundle, which has no such
 * file beside it, gets the source inlined. They share the code they have in common with the extension's bundle and
 * with each other (scripts/node-bundles.mjs): each class is defined in one file of dist/.
 */
const LAZY = {
  /** Test Connection with its checks and report. */
  testConnection: 'src/vscode/testConnection.ts',
  /** Parley as a language model provider: loaded when VS Code's chat first asks. */
  chatProvider: 'src/vscode/chatProvider.ts',
  /** The built-in workspace tools: loaded by the first turn that offers tools. */
  builtinTools: 'src/vscode/tools/builtinTools.ts',
  /** Apply with its reviews and jsdiff: loaded by the first Apply, review command or propose_edit. */
  apply: 'src/vscode/apply/apply.ts',
  /** `@` mentions: loaded by the picker, Add File to Chat or a question with a mention. */
  mentions: 'src/vscode/mentions.ts',
  /** Compaction's summary request: loaded by the first compaction. */
  summarize: 'src/vscode/summarize.ts',
  /** Damaged files, interrupted replies and failed saves. */
  durability: 'src/vscode/durability.ts',
  /** The images of saved conversations: loaded by the first conversation with images. */
  historyImages: 'src/vscode/historyImages.ts',
  /** Set Header Secret with its origin picker: loaded by the command. */
  headerSecretCommand: 'src/vscode/headerSecretCommand.ts',
  /** The questions before a workspace's system prompt or its profile's additions are used: loaded when first asked. */
  promptQuestion: 'src/vscode/promptQuestion.ts',
  /** Tool calls a model writes as text: loaded by the first request that offers tools. */
  textToolCalls: 'src/core/textToolCalls.ts',
  /** The Responses API: loaded by the first request to a model served there, or a refusal that may say it is. */
  responses: 'src/core/responses.ts',
  /** What window a local server runs a model at, and its words: loaded by the first context meter. */
  serverWindow: 'src/core/serverWindow.ts',
  /** Explain Selection, Add Selection to Chat and Generate Code: loaded by the first of these commands. */
  editorCommands: 'src/vscode/editorCommands.ts',
  /** Inline completions (Parley Complete): loaded by the first completion request or the status bar's menu. */
  completion: 'src/vscode/completion/engine.ts',
  /** Spend budgets' arithmetic and words: loaded by the first request or status bar render with a limit set. */
  budget: 'src/vscode/budgetCheck.ts',
  /** Project rules (AGENTS.md and the other tools' rule files): loaded by the first chat request. */
  rules: 'src/vscode/rules.ts',
  /** Account balances for the tooltip and the report: loaded by the first render once a profile turns them on. */
  balance: 'src/vscode/balances.ts',
  /** The usage report with its chart: loaded when the report is first shown. */
  usageReport: 'src/core/usageReport.ts',
  /** Prompt files (`/name`): loaded by the first `/` typed at the start of the composer. */
  promptFiles: 'src/vscode/promptFiles.ts',
  /** Select Model, Switch Endpoint, the presets, the resets and the key commands: loaded by the first of these commands or header picks. */
  endpointCommands: 'src/vscode/endpointCommands.ts',
  /** The panel's reasoning effort (its offer, choice and learning): loaded by the panel's first header. */
  reasoningEffort: 'src/vscode/reasoningEffort.ts',
};

/**
 * Resolves `parley:search-worker` to the source of search_text's worker thread (src/vscode/tools/searchWorker.ts,
 * bundled on its own for Node), as a string: searchEngine.ts starts it with `new Worker(source, { eval: true })`, so
 * the worker travels inside the bundle that uses it (dist/builtinTools.js, or a test bundle) with no file to find.
 */
function searchWorkerPlugin() {
  return {
    name: 'parley-search-worker',
    setup(build) {
      build.onResolve({ filter: /^parley:search-worker$/ }, () => ({ path: 'search-worker', namespace: 'parley-search-worker' }));
      build.onLoad({ filter: /.*/, namespace: 'parley-search-worker' }, async () => {
        const result = await esbuild.build({
          ...common,
          // Inlined as a string: a source map file would not be found from an eval'd worker.
          sourcemap: false,
          entryPoints: ['src/vscode/tools/searchWorker.ts'],
          platform: 'node',
          format: 'cjs',
          target: 'node20',
          write: false,
          metafile: true,
        });
        return { contents: result.outputFiles[0].text, loader: 'text', watchFiles: Object.keys(result.metafile.inputs).map((f) => resolve(f)) };
      });
    },
  };
}

/** The folder of the LAZY modules' loaders: src/vscode/lazy/<name>.ts is the one file that requires ./<name>.js. */
const LOADERS = resolve('src/vscode/lazy');

function lazyModules(inline) {
  return {
    name: 'parley-lazy-modules',
    setup(build) {
      build.onResolve({ filter: /^\.\/\w+\.js$/ }, (args) => {
        const name = args.path.slice(2, -3);
        if (!Object.prototype.hasOwnProperty.call(LAZY, name) || !args.importer.includes(`${sep}src${sep}`)) return undefined;
        if (args.importer !== join(LOADERS, `${name}.ts`)) return { errors: [{ text: `dist/${name}.js is loaded through its loader, src/vscode/lazy/${name}.ts, not required here` }] };
        return inline ? { path: resolve(LAZY[name]) } : { path: `./${name}.js`, external: true };
      });
    },
  };
}

/** dist/extension.js, the LAZY bundles and dist/shared.js (what two of them share that extension.js does not carry). */
function buildExtension() {
  return buildNodeBundles({
    options: { ...common, platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] },
    plugins: () => [lazyModules(false), searchWorkerPlugin()],
    main: 'src/extension.ts',
    mainName: 'extension',
    lazy: LAZY,
    outdir: 'dist',
  });
}

const builds = [
  webviewBuildOptions({ outfile: 'dist/webview.js', production }),
  highlightWorkerBuildOptions({ outfile: 'dist/highlightWorker.js', production }),
];

if (tests) {
  // out/test is made afresh, so a test file that moved or was deleted leaves no stale bundle for mocha to run.
  rmSync('out/test', { recursive: true, force: true });
  // One mocha bundle per *.test.ts: out/test/unit/x.test.js runs in plain Node, out/test/webview/x.test.js drives
  // Chromium (its own phase, `npm run test:webview`), out/test/llama/x.test.js runs against the real llama-servers
  // that test/llama/servers.mjs starts (`npm run test:llama`).
  builds.push({
    ...common,
    minify: false,
    sourcemap: 'inline',
    entryPoints: [...findFiles('test/unit', /\.test\.ts$/), ...findFiles('test/webview', /\.test\.ts$/), ...findFiles('test/llama', /\.test\.ts$/)],
    outdir: 'out/test',
    outbase: 'test',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // typescript: the structure test's parser, loaded from node_modules rather than bundled (9 MB).
    external: ['vscode', 'mocha', 'playwright-core', 'typescript'],
    plugins: [lazyModules(true), searchWorkerPlugin()],
  });
  // The integration suite runs inside the extension host: one bundle with a run() entry, mocha included, and every
  // test/integration/**/*.test.ts behind the virtual module `parley:integration-tests` (loaded lazily by run()).
  builds.push({
    ...common,
    minify: false,
    sourcemap: 'inline',
    entryPoints: ['test/integration/index.ts'],
    outfile: 'out/test/integration/index.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    plugins: [integrationTestsPlugin('test/integration'), lazyModules(true), searchWorkerPlugin()],
    // Mocha's parallel mode resolves worker files at run time; the suite runs serially, so that code is never used.
    logOverride: { 'require-resolve-not-external': 'silent' },
  });
}

/** Resolves `parley:integration-tests` to `{ name: () => module }` for every *.test.ts under dir, name without `.test.ts`. */
function integrationTestsPlugin(dir) {
  return {
    name: 'parley-integration-tests',
    setup(build) {
      build.onResolve({ filter: /^parley:integration-tests$/ }, () => ({ path: 'integration-tests', namespace: 'parley' }));
      build.onLoad({ filter: /.*/, namespace: 'parley' }, () => {
        const names = findFiles(dir, /\.test\.ts$/)
          .map((f) => relative(dir, f).split(sep).join('/').replace(/\.test\.ts$/, ''))
          .sort();
        const entries = names.map((n) => `  ${JSON.stringify(n)}: () => require(${JSON.stringify(`./${n}.test.ts`)}),`);
        return { contents: `module.exports = {\n${entries.join('\n')}\n};\n`, resolveDir: resolve(dir), loader: 'js', watchDirs: [resolve(dir)] };
      });
    },
  };
}

/** The panel's stylesheet in dist/: minified for the package (its comments and spaces took about 2 KB of the .vsix). */
function copyCss() {
  mkdirSync('dist', { recursive: true });
  if (!production) return copyFileSync('media/webview.css', 'dist/webview.css');
  writeFileSync('dist/webview.css', esbuild.transformSync(readFileSync('media/webview.css', 'utf8'), { loader: 'css', minify: true }).code);
}

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
  // The Node bundles are laid out together (scripts/node-bundles.mjs), so any change under src/ builds them all again.
  let again = Promise.resolve();
  let timer;
  const rebuild = () => {
    again = again.then(buildExtension).then(() => console.log('[watch] built dist/extension.js and the lazy bundles'), (e) => console.error(`[watch] ${e.message}`));
  };
  watchFiles('src', { recursive: true }, () => {
    clearTimeout(timer);
    timer = setTimeout(rebuild, 100);
  });
  rebuild();
  copyCss();
  console.log('[watch] watching for changes');
} else {
  await Promise.all([buildExtension(), ...builds.map((b) => esbuild.build(b))]);
  copyCss();
}
