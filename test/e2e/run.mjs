// Runs the UI tests (test/e2e/*.e2e.mjs) against the packaged Parley in code-server, driven by Debian's Chromium.
//
// Usage: node test/e2e/run.mjs [file name filters…] [--no-package]
//   PARLEY_E2E_GREP=text   only scenarios whose title contains text
//   PARLEY_VSIX=path       use this .vsix instead of running `npm run package` (with or without --no-package)
//   --no-package           use the .vsix that `npm run package` made last, as it is
//
// Adding a scenario file: create test/e2e/<name>.e2e.mjs exporting
//   export const workbench = { workspace: 'basic', settings: {}, trust: true, endpoint: { chunkDelayMs: 25 } };
//   export const tests = { async 'what a person sees'(wb) { … } };
// The tests of a file run in order on one workbench (export `workbenchPerTest = true` for a fresh one each), with
// a fresh profile, browser context and demo endpoint per workbench. `wb` is a Workbench from harness.mjs. A test
// passes when its function resolves; each has a time limit (`export const timeoutMs`, default 60 s), and a failing
// test leaves test-results/<file>--<test>--failure.png.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, SetupError, codeServerVersion, ensureHost, installExtension, launchChromium, packageVsix, vsixIsFresh, vsixPath } from '../../scripts/vscode-host.mjs';
import { RESULTS_DIR, startWorkbench } from './harness.mjs';

const E2E_DIR = join(ROOT, 'test', 'e2e');
const DEFAULT_TEST_TIMEOUT_MS = 60_000;
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const say = (...a) => console.log('[e2e]', ...a);

const tempDirs = new Set();
process.on('exit', () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\n[e2e] ${signal}: stopping`);
    process.exit(130);
  });
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${seconds(ms)}: ${what}`)), ms)))]).finally(() => clearTimeout(timer));
}

/**
 * The .vsix to test: PARLEY_VSIX when set; else, with --no-package, the one `npm run package` made last; else a
 * fresh one from `npm run package` (the script CI and a release use), bounded by a time limit.
 */
async function vsixToTest(noPackage) {
  if (process.env.PARLEY_VSIX) {
    const vsix = resolve(process.env.PARLEY_VSIX);
    if (!existsSync(vsix)) throw new SetupError(`PARLEY_VSIX=${process.env.PARLEY_VSIX}: no such file`);
    say(`testing ${vsix} (PARLEY_VSIX)`);
    return vsix;
  }
  if (noPackage) {
    const vsix = vsixPath();
    if (!existsSync(vsix)) throw new SetupError(`--no-package: no ${basename(vsix)} at the root; run npm run package first, or drop --no-package`);
    say(`testing ${basename(vsix)} as it is (--no-package)${vsixIsFresh(vsix) ? '' : ': older than the sources it is built from'}`);
    return vsix;
  }
  return packageVsix({ say });
}

async function main() {
  const argv = process.argv.slice(2);
  const filters = argv.filter((a) => !a.startsWith('--'));
  const grep = process.env.PARLEY_E2E_GREP;
  const files = readdirSync(E2E_DIR)
    .filter((f) => f.endsWith('.e2e.mjs'))
    .filter((f) => !filters.length || filters.some((x) => f.includes(x)))
    .sort();
  if (!files.length) throw new SetupError(`no test/e2e/*.e2e.mjs file matches ${filters.join(', ')}`);

  ensureHost();
  const v = codeServerVersion();
  say(`host: code-server ${v.codeServer}, VS Code ${v.vscode}`);
  const vsix = await vsixToTest(argv.includes('--no-package'));

  // The .vsix is installed once; each workbench then starts with its own empty profile beside this extensions dir.
  const shared = mkdtempSync(join(tmpdir(), 'parley-e2e-'));
  tempDirs.add(shared);
  const extensionsDir = join(shared, 'extensions');
  await installExtension({ vsix, userDataDir: join(shared, 'install-profile'), extensionsDir });

  // Failure screenshots of an earlier run would look like this run's.
  if (existsSync(RESULTS_DIR)) for (const f of readdirSync(RESULTS_DIR)) if (f.endsWith('--failure.png')) rmSync(join(RESULTS_DIR, f));

  const browser = await launchChromium();
  const results = [];
  const t0 = Date.now();
  try {
    for (const file of files) {
      const mod = await import(pathToFileURL(join(E2E_DIR, file)).href);
      const fileName = file.replace(/\.e2e\.mjs$/, '');
      const title = mod.title ?? fileName;
      const tests = Object.entries(mod.tests ?? {}).filter(([name]) => !grep || `${title} ${name}`.includes(grep));
      if (!tests.length) continue;
      const timeoutMs = mod.timeoutMs ?? DEFAULT_TEST_TIMEOUT_MS;
      console.log(`\n  ${title}`);
      let wb;
      let startError;
      const start = async () => {
        try {
          wb = await startWorkbench({ browser, extensionsDir, name: fileName, ...(mod.workbench ?? {}) });
          startError = undefined;
        } catch (e) {
          startError = new Error(`starting the workbench: ${e.message}`, { cause: e });
        }
      };
      if (!mod.workbenchPerTest) await start();
      for (const [name, fn] of tests) {
        if (mod.workbenchPerTest) await start();
        const started = Date.now();
        let error = startError;
        if (!error) {
          try {
            await withTimeout(Promise.resolve().then(() => fn(wb)), timeoutMs, `test "${name}"`);
          } catch (e) {
            error = e;
            const shot = await wb.screenshot(`${fileName}--${name}--failure`, { keepHover: true }).catch(() => undefined);
            if (shot) error.screenshot = shot;
            if (wb.pageErrors.length) error.pageErrors = wb.pageErrors.slice(-5);
          }
        }
        const ms = Date.now() - started;
        results.push({ title, name, error, ms });
        console.log(error ? `    ✗ ${results.filter((r) => r.error).length}) ${name}` : `    ✔ ${name} (${ms} ms)`);
        if (mod.workbenchPerTest) await wb?.close();
      }
      if (!mod.workbenchPerTest) await wb?.close();
    }
  } finally {
    await browser.close().catch(() => {});
  }

  const failed = results.filter((r) => r.error);
  console.log(`\n  ${results.length - failed.length} passing (${seconds(Date.now() - t0)})`);
  if (failed.length) {
    console.log(`  ${failed.length} failing\n`);
    failed.forEach((r, i) => {
      console.log(`  ${i + 1}) ${r.title}\n       ${r.name}:\n     ${r.error.stack ?? r.error}`);
      if (r.error.screenshot) console.log(`     screenshot: ${r.error.screenshot}`);
      if (r.error.pageErrors) console.log(`     workbench page errors:\n       ${r.error.pageErrors.join('\n       ')}`);
      console.log();
    });
  }
  say(`screenshots in ${RESULTS_DIR}`);
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`[e2e] ${e instanceof SetupError ? e.message : e.stack}`);
    process.exit(1);
  },
);
