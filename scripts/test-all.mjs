// `npm test`: every test in one command: set-up, unit tests (plain Node), a real llama.cpp server, webview tests
// (Chromium), `npm start` smoke check, integration suite in a real VS Code, UI tests. One summary.
//
// Each phase runs even when an earlier one failed (except that nothing needing VS Code runs when the set-up failed),
// so one run shows everything that is broken. Exit code 1 when anything failed.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, SetupError, ensureProjectDependencies, vsixIsFresh } from './vscode-host.mjs';

// A fresh clone, or a lock that changed since the last install: `npm test` alone installs what it needs.
try {
  ensureProjectDependencies();
} catch (e) {
  console.error(`[test] installing the project's dependencies failed: ${e instanceof SetupError ? e.message : e.stack}`);
  console.error('[test] fix that, then run `npm test` again.');
  process.exit(1);
}

const node = process.execPath;
const phases = [
  { name: 'set-up (code-server, Node 24, Chromium)', cmd: node, args: [join(ROOT, 'scripts', 'vscode-host.mjs')], setup: true },
  { name: 'unit tests', cmd: 'npm', args: ['run', 'test:unit'] },
  // A real llama.cpp llama-server with tiny scripted models (test/llama/): built from source on the first run
  // (scripts/llama-server.mjs: minutes, with cmake and g++), cached in .vscode-test/ after that. Its own HTTP, then
  // Parley's core against it (the window, compaction, errors, router mode, Stop, tools, images, Test Connection).
  { name: 'llama-server tests (real llama.cpp)', cmd: 'npm', args: ['run', 'test:llama'] },
  // The webview in headless Chromium (test/webview/): needs the set-up's Chromium. `npm run test:webview` builds first;
  // after a passing unit phase, which has just built the same, mocha runs on out/test/webview directly (`built`).
  {
    name: 'webview tests (Chromium)', cmd: 'npm', args: ['run', 'test:webview'], needsSetup: true,
    built: { cmd: node, args: [join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'), 'out/test/webview/**/*.test.js'] },
  },
  // `npm start` brought up on free ports with a throwaway profile, checked over HTTP, and stopped (about 20 s).
  // It reuses the .vsix when it is fresh (CI packages just before); else it runs `npm run package`, which leaves a
  // minified dist/ behind.
  { name: 'npm start smoke', cmd: node, args: [join(ROOT, 'scripts', 'start.mjs'), '--check'], needsSetup: true, packages: true },
  // The unit phase has just built out/test and dist/ with `node esbuild.mjs --tests`; build again only if the unit
  // phase failed, or if the smoke phase has packaged since (minified dist/, no source maps).
  { name: 'integration tests (real VS Code)', cmd: node, args: [join(ROOT, 'scripts', 'run-integration.mjs')], needsSetup: true, buildFlag: true },
  { name: 'UI tests (Playwright)', cmd: node, args: [join(ROOT, 'test', 'e2e', 'run.mjs')], needsSetup: true },
];

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

let interrupted;
function runPhase(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: 'inherit' });
    // The child gets Ctrl+C from the terminal too and cleans up after itself; then no further phase starts.
    const forward = (signal) => {
      interrupted = signal;
      child.kill(signal);
    };
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('error', (e) => {
      console.error(`[test] ${cmd}: ${e.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const results = [];
const t0 = Date.now();
let setupFailed = false;
let unitPassed = false;
let repackaged = false;
for (const phase of phases) {
  if (phase.needsSetup && setupFailed) {
    results.push({ name: phase.name, status: 'skipped (set-up failed)', ok: false, ms: 0 });
    continue;
  }
  // What the unit phase built is still there to use (see the integration phase).
  const built = unitPassed && !repackaged;
  const { cmd, args } = phase.built && built ? phase.built
    : { cmd: phase.cmd, args: phase.buildFlag && built ? [...phase.args, '--no-build'] : phase.args };
  if (phase.packages && !vsixIsFresh()) repackaged = true;
  console.log(`\n━━ ${phase.name} ━━`);
  const started = Date.now();
  const code = await runPhase(cmd, args);
  const ok = code === 0;
  if (phase.setup && !ok) setupFailed = true;
  if (phase.name === 'unit tests') unitPassed = ok;
  results.push({ name: phase.name, status: ok ? 'passed' : `failed (exit ${code})`, ok, ms: Date.now() - started });
  if (interrupted) {
    console.error(`\n[test] ${interrupted}: stopped after ${phase.name}`);
    process.exit(130);
  }
}

console.log('\n━━ summary ━━');
for (const r of results) console.log(`  ${r.ok ? '✔' : '✗'} ${r.name.padEnd(42)} ${r.status.padEnd(26)} ${r.ms ? seconds(r.ms) : ''}`);
const failed = results.filter((r) => !r.ok);
console.log(`\n  ${failed.length ? `${failed.length} of ${results.length} phases failed` : 'all phases passed'} in ${seconds(Date.now() - t0)}`);
process.exit(failed.length ? 1 : 0);
