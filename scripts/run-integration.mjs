// Runs the integration suite (out/test/integration/index.js) inside a real VS Code, once per run in test/integration/runs.mjs.
//
// Usage: node scripts/run-integration.mjs [run names…] [--no-build] [--which-host]
//   The host is chosen by PARLEY_TEST_HOST:
//   auto (default)                 desktop VS Code through @vscode/test-electron when one is cached in .vscode-test
//                                  or the VS Code update server answers within 3 s, and there is a display or
//                                  xvfb-run; otherwise code-server. It prints which one and why.
//   electron                       desktop VS Code, downloaded once (needs internet, and a display or xvfb-run);
//                                  PARLEY_VSCODE_VERSION picks its version (default: stable).
//   code-server                    code-server from scripts/vscode-host.mjs, driven by headless Chromium.
//   --which-host                   only print the host that would be used, and why.
//   PARLEY_TEST_TIMEOUT_SECONDS    limit per run (default 300).
//   PARLEY_TEST_GREP               only tests whose full title matches.
//   PARLEY_TEST_VERBOSE=1         also print the rest of the workbench's console (printed anyway when a run fails).
//   PARLEY_KEEP_TMP=1              keep each run's temp folder (profile, workspace copy) for a post-mortem.
// Each run gets a fresh profile, a copy of its fixture workspace and a free port, and is torn down even when it fails.
// Workspace trust stays on in code-server. A run with `trust: true` has its folder trusted the way a person does it,
// before the suite starts: see trustWorkspace(). Desktop VS Code is started with --disable-workspace-trust for those
// runs instead, because this runner cannot click in its windows.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { format } from 'node:util';
import { runs } from '../test/integration/runs.mjs';
import { BASE_USER_SETTINGS, CACHE_DIR, ROOT, SetupError, codeServerVersion, ensureHost, hasCommand, launchChromium, ownGroup, startCodeServer, writeUserSettings } from './vscode-host.mjs';

const TESTS_ENTRY = join(ROOT, 'out', 'test', 'integration', 'index.js');
/** A second extension the runs load: one language model tool, as another extension would offer it (vscode.lm.tools). */
const TOOL_EXTENSION = join(ROOT, 'test', 'integration', 'tool-extension');
const WORKSPACES = join(ROOT, 'test', 'integration', 'workspaces');
const RUN_TIMEOUT_MS = Number(process.env.PARLEY_TEST_TIMEOUT_SECONDS || 300) * 1000;
// From opening the page to the first line of the extension host: the workbench loads and starts the extension host.
const START_TIMEOUT_MS = 90_000;
// From opening the page without the test payload to the folder trusted and saved: see trustWorkspace().
const TRUST_TIMEOUT_MS = 90_000;
// For the screenshot of a run that timed out or could not trust its folder.
const SCREENSHOT_TIMEOUT_MS = 10_000;
// Starts each line of mocha's report; anything else reaching codeAutomationLog is the workbench's log or other console output.
const CONSOLE_MARK = '\u2063parley-host\u2063 ';

const say = (...a) => console.log('[integration]', ...a);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Rejects after ms with what was being waited for; clear() cancels it. */
function deadline(ms, what) {
  let timer;
  const promise = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${seconds(ms)} waiting for ${what}`)), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

const tempDirs = new Set();
process.on('exit', () => {
  if (process.env.PARLEY_KEEP_TMP) return;
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\n[integration] ${signal}: stopping`);
    // The 'exit' handlers kill the servers' process groups and remove the temp folders.
    process.exit(130);
  });
}

/**
 * A temp folder with the run's workspace copied from its fixture, and an empty profile. `open` is what VS Code opens:
 * the folder, or the run's `.code-workspace` file in it (a multi-root window).
 */
function prepare(run) {
  const fixture = join(WORKSPACES, run.workspace);
  if (!existsSync(fixture)) throw new Error(`run "${run.name}": no fixture folder ${fixture}`);
  const dir = mkdtempSync(join(tmpdir(), `parley-it-${run.name}-`));
  tempDirs.add(dir);
  const workspace = join(dir, run.workspace);
  cpSync(fixture, workspace, { recursive: true });
  // The profile's extensions: the test tool extension, installed as a folder the way VS Code lays one out.
  const extensionsDir = join(dir, 'extensions');
  cpSync(TOOL_EXTENSION, join(extensionsDir, 'parley-test.parley-test-tools-0.0.1'), { recursive: true });
  const open = run.workspaceFile ? join(workspace, run.workspaceFile) : workspace;
  if (!existsSync(open)) throw new Error(`run "${run.name}": no workspace file ${open}`);
  return { dir, workspace, open, userDataDir: join(dir, 'user'), extensionsDir };
}

function cleanup(dir) {
  if (process.env.PARLEY_KEEP_TMP) return say(`kept ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

// Where the workbench keeps the trusted folders: application storage, which code-server's workbench keeps in the
// browser profile's IndexedDB (this database, table ItemTable), as JSON { uriTrustInfo: [{ uri, trusted }] }.
const TRUSTED_FOLDERS_DB = 'vscode-web-state-db-global-shared';
const TRUSTED_FOLDERS_KEY = 'content.trust.model.key';

/**
 * Trusts the run's folder as a person does, in a first page load without the test payload: the folder opens in
 * Restricted Mode, the status bar's "Restricted Mode" item opens the Workspace Trust editor, and its Trust button
 * trusts the folder (no modal dialog, which enable-smoke-test-driver would refuse). Resolves once Restricted Mode
 * has ended and the trusted folder is saved in the browser profile, so the suite's page load, in the same browser
 * context, finds it trusted from the start. Bounded by TRUST_TIMEOUT_MS; the error names the step that failed.
 */
async function trustWorkspace(page, folderUrl, workspace) {
  const end = Date.now() + TRUST_TIMEOUT_MS;
  const step = async (what, action) => {
    const left = end - Date.now();
    if (left <= 0) throw new Error(`trusting the workspace took longer than ${seconds(TRUST_TIMEOUT_MS)}; not done: ${what}`);
    try {
      return await action(left);
    } catch (e) {
      throw new Error(`trusting the workspace (limit ${seconds(TRUST_TIMEOUT_MS)}): ${what}: ${String(e.message).split('\n')[0]}`);
    }
  };
  const restrictedMode = page.locator('[id="status.workspaceTrust"]');
  await step('opening the workbench without the test payload', (timeout) => page.goto(folderUrl, { timeout }));
  await step('waiting for the "Restricted Mode" item in the status bar (is workspace trust on?)', (timeout) => restrictedMode.waitFor({ timeout }));
  await step('clicking the "Restricted Mode" item', (timeout) => restrictedMode.click({ timeout }));
  const trustButton = page.locator('.workspace-trust-editor').getByRole('button', { name: 'Trust', exact: true });
  await step('clicking Trust in the Workspace Trust editor', (timeout) => trustButton.click({ timeout }));
  await step('waiting for Restricted Mode to end (its status bar item to go)', (timeout) => restrictedMode.waitFor({ state: 'detached', timeout }));
  // The workbench writes its storage to IndexedDB shortly after a change; leaving the page before that would lose it.
  await step(`waiting for the folder to be saved as trusted (IndexedDB ${TRUSTED_FOLDERS_DB}, key ${TRUSTED_FOLDERS_KEY})`, (timeout) =>
    page.waitForFunction(
      async ([dbName, key, path]) => {
        const db = await new Promise((resolve, reject) => {
          const open = indexedDB.open(dbName);
          open.onsuccess = () => resolve(open.result);
          open.onerror = () => reject(open.error);
        });
        try {
          if (!db.objectStoreNames.contains('ItemTable')) return false;
          const value = await new Promise((resolve, reject) => {
            const get = db.transaction('ItemTable', 'readonly').objectStore('ItemTable').get(key);
            get.onsuccess = () => resolve(get.result);
            get.onerror = () => reject(get.error);
          });
          return typeof value === 'string' && Boolean(JSON.parse(value).uriTrustInfo?.some((i) => i.trusted && i.uri?.path === path));
        } finally {
          db.close();
        }
      },
      [TRUSTED_FOLDERS_DB, TRUSTED_FOLDERS_KEY, workspace],
      { timeout, polling: 100 },
    ),
  );
}

/** A screenshot of the workbench of a run that failed, in test-results/ (git-ignored); its path, or undefined. */
async function failureScreenshot(page, run) {
  const file = join(ROOT, 'test-results', `integration-${run.name}-failure.png`);
  try {
    mkdirSync(dirname(file), { recursive: true });
    await page.screenshot({ path: file, timeout: SCREENSHOT_TIMEOUT_MS });
    return file;
  } catch {
    return undefined;
  }
}

/**
 * One run in code-server: with workspace trust on, trust the folder first when the run asks for it, then open the
 * workbench with the test payload and wait for codeAutomationExit.
 */
async function runInCodeServer(run) {
  const { dir, open, userDataDir, extensionsDir } = prepare(run);
  let server;
  let browser;
  let page;
  const workbenchErrors = [];
  let suiteStarted = false;
  const beforeSuite = [];
  const duringSuite = [];
  try {
    server = await startCodeServer({ userDataDir, extensionsDir, workspace: open, trust: false, extensionTests: true, env: { PARLEY_TEST_SUITE: run.name, PARLEY_TEST_CONSOLE_MARK: CONSOLE_MARK }, userSettings: run.settings });
    browser = await launchChromium();
    page = await browser.newPage();
    let exitWith;
    const exited = new Promise((resolve) => (exitWith = resolve));
    let started;
    const hostStarted = new Promise((resolve) => (started = resolve));
    await page.exposeFunction('codeAutomationExit', (code) => exitWith(code));
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      const [first, ...rest] = Array.isArray(args) ? args : [args];
      if (typeof first === 'string' && first.startsWith(CONSOLE_MARK)) {
        // A line of mocha's report, formatted in the extension host (see reportLine in test/integration/index.ts).
        started();
        suiteStarted = true;
        (type === 'error' ? process.stderr : process.stdout).write(`${first.slice(CONSOLE_MARK.length)}\n`);
      } else {
        // The workbench's own log, and the extension host's other console output: kept for failures.
        const line = `${type}: ${format(first, ...rest)}`;
        if (process.env.PARLEY_TEST_VERBOSE) console.log(`[workbench] ${line}`);
        (suiteStarted ? duringSuite : beforeSuite).push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
        if (beforeSuite.length > 40) beforeSuite.shift();
        if (duringSuite.length > 200) duringSuite.shift();
      }
    });
    page.on('pageerror', (e) => workbenchErrors.push(String(e)));
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', `vscode-remote://${server.authority}${ROOT}`],
      ['extensionTestsPath', `vscode-remote://${server.authority}${TESTS_ENTRY}`],
    ]);
    // The workbench opens a multi-root window from ?workspace=<.code-workspace file>, a folder from ?folder=.
    const folderUrl = `${server.url}/?${run.workspaceFile ? 'workspace' : 'folder'}=${encodeURIComponent(open)}`;
    if (run.trust) {
      const t0 = Date.now();
      await trustWorkspace(page, folderUrl, open);
      say(`run "${run.name}": trusted the folder in the Workspace Trust editor (${seconds(Date.now() - t0)})`);
    }
    await page.goto(`${folderUrl}&payload=${encodeURIComponent(payload)}`);

    const first = deadline(START_TIMEOUT_MS, 'the extension host to start the suite (first codeAutomationLog)');
    const whole = deadline(RUN_TIMEOUT_MS, `run "${run.name}" to finish (codeAutomationExit)`);
    try {
      await Promise.race([hostStarted, exited, first.promise]);
      first.clear();
      const code = await Promise.race([exited, whole.promise]);
      if (code !== 0 && duringSuite.length) console.error(`[integration] console of the workbench and extension host during run "${run.name}":\n  ${duringSuite.join('\n  ')}`);
      return code;
    } finally {
      first.clear();
      whole.clear();
    }
  } catch (e) {
    console.error(`[integration] run "${run.name}": ${e.message}`);
    const logged = [...beforeSuite, ...duringSuite];
    if (logged.length) console.error(`[integration] console of the workbench and extension host (last lines):\n  ${logged.slice(-60).join('\n  ')}`);
    if (workbenchErrors.length) console.error(`[integration] workbench page errors:\n  ${workbenchErrors.slice(-10).join('\n  ')}`);
    if (server) console.error(`[integration] code-server output (last lines):\n${server.output().split('\n').slice(-30).join('\n')}`);
    if (page) {
      const shot = await failureScreenshot(page, run);
      if (shot) console.error(`[integration] screenshot of the workbench: ${shot}`);
    }
    return 1;
  } finally {
    await browser?.close().catch(() => {});
    await server?.stop();
    cleanup(dir);
  }
}

// ── Choosing the host ────────────────────────────────────────────────────────────────────────────────────────────

const UPDATE_SERVER = 'https://update.code.visualstudio.com/api/releases/stable';
const PROBE_TIMEOUT_MS = 3000;

/** Versions of desktop VS Code that @vscode/test-electron has downloaded into the cache, newest first. */
async function cachedDesktopVersions() {
  // Its cache folders are named after its own name for this platform.
  const { systemDefaultPlatform } = await import('@vscode/test-electron/out/util.js');
  const prefix = `vscode-${systemDefaultPlatform}-`;
  let names = [];
  try {
    names = readdirSync(CACHE_DIR);
  } catch {}
  const semver = (v) => v.split('.').map(Number);
  return names
    .filter((n) => n.startsWith(prefix) && /^\d+\.\d+\.\d+$/.test(n.slice(prefix.length)) && existsSync(join(CACHE_DIR, n, 'is-complete')))
    .map((n) => n.slice(prefix.length))
    .sort((a, b) => {
      const [x, y] = [semver(a), semver(b)];
      return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
    });
}

/** Whether the VS Code update server answers within PROBE_TIMEOUT_MS, and how. */
async function probeUpdateServer() {
  const t0 = Date.now();
  try {
    const res = await fetch(UPDATE_SERVER, { method: 'HEAD', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return { reachable: true, how: `answered (HTTP ${res.status}) in ${seconds(Date.now() - t0)}` };
  } catch (e) {
    const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${seconds(PROBE_TIMEOUT_MS)}` : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { reachable: false, how: `not reachable (${why})` };
  }
}

/**
 * The host for this run: { host: 'electron' | 'code-server', why, version (for electron: what to ask
 * @vscode/test-electron for), xvfb (wrap it in xvfb-run), forced }.
 */
async function chooseHost() {
  const wanted = (process.env.PARLEY_TEST_HOST || 'auto').toLowerCase();
  if (!['auto', 'electron', 'code-server'].includes(wanted)) throw new SetupError(`PARLEY_TEST_HOST=${process.env.PARLEY_TEST_HOST}: use auto (the default), electron or code-server`);
  if (wanted === 'code-server') return { host: 'code-server', why: 'PARLEY_TEST_HOST=code-server', forced: true };

  const needsDisplay = process.platform === 'linux';
  const display = !needsDisplay || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
  const xvfb = !display && hasCommand('xvfb-run');
  const requested = process.env.PARLEY_VSCODE_VERSION || 'stable';
  if (wanted === 'electron') {
    if (!display && !xvfb) throw new SetupError('PARLEY_TEST_HOST=electron: desktop VS Code needs a display, and there is no DISPLAY and no xvfb-run (apt-get install xvfb), so it cannot run here. Unset PARLEY_TEST_HOST to run in code-server.');
    return { host: 'electron', why: 'PARLEY_TEST_HOST=electron', version: requested, xvfb, forced: true };
  }

  // auto
  if (!display && !xvfb) return { host: 'code-server', why: 'auto: no display (DISPLAY is unset) and no xvfb-run for desktop VS Code' };
  const cached = await cachedDesktopVersions();
  const pinned = requested !== 'stable' && requested !== 'insiders';
  if (pinned && cached.includes(requested)) return { host: 'electron', why: `auto: desktop VS Code ${requested} is cached in ${CACHE_DIR}`, version: requested, xvfb };
  const probe = await probeUpdateServer();
  if (probe.reachable) return { host: 'electron', why: `auto: the VS Code update server ${probe.how}`, version: requested, xvfb };
  if (cached.length && !pinned) return { host: 'electron', why: `auto: the VS Code update server is ${probe.how}, but desktop VS Code ${cached[0]} is cached`, version: cached[0], xvfb };
  return {
    host: 'code-server',
    why: `auto: the VS Code update server is ${probe.how} and no desktop VS Code${pinned ? ` ${requested}` : ''} is cached in ${CACHE_DIR}`,
  };
}

/** Desktop VS Code's executable and version, downloaded by @vscode/test-electron when not cached. */
async function prepareElectron(version) {
  const { downloadAndUnzipVSCode } = await import('@vscode/test-electron');
  const executable = await downloadAndUnzipVSCode({ version, cachePath: CACHE_DIR });
  // resources/app/package.json beside the executable (Linux, Windows), or in Contents/Resources on macOS.
  let found = 'unknown';
  for (const rel of ['resources/app/package.json', '../Resources/app/package.json']) {
    try {
      found = JSON.parse(readFileSync(join(dirname(executable), rel), 'utf8')).version;
      break;
    } catch {}
  }
  return { executable, vscodeVersion: found };
}

/** One run in desktop VS Code, downloaded by @vscode/test-electron, with the same entry and environment. */
async function runInElectron(run, { executable, xvfb }) {
  const { dir, open, userDataDir, extensionsDir } = prepare(run);
  writeUserSettings(userDataDir, run.settings, BASE_USER_SETTINGS, { remote: false });
  const args = [
    open,
    '--no-sandbox',
    '--disable-gpu-sandbox',
    '--disable-updates',
    '--skip-welcome',
    '--skip-release-notes',
    `--user-data-dir=${userDataDir}`,
    `--extensions-dir=${extensionsDir}`,
    `--extensionDevelopmentPath=${ROOT}`,
    `--extensionTestsPath=${TESTS_ENTRY}`,
    // This runner cannot click through desktop VS Code's Workspace Trust editor: trusted runs turn trust off there.
    ...(run.trust ? ['--disable-workspace-trust'] : []),
  ];
  const env = { ...process.env, PARLEY_TEST_SUITE: run.name };
  delete env.ELECTRON_RUN_AS_NODE;
  // xvfb-run -a: a virtual display on a free display number, for machines without one (CI, a container).
  const [cmd, cmdArgs] = xvfb ? ['xvfb-run', ['-a', executable, ...args]] : [executable, args];
  const child = spawn(cmd, cmdArgs, { env, stdio: 'inherit', detached: true });
  // Desktop VS Code runs in its own process group (with Xvfb, under xvfb-run): killed when done, or on exit.
  const release = ownGroup(child.pid);
  const whole = deadline(RUN_TIMEOUT_MS, `run "${run.name}" to finish (VS Code to exit)`);
  try {
    return await Promise.race([
      new Promise((resolve) => {
        child.on('error', (e) => {
          console.error(`[integration] run "${run.name}": ${cmd}: ${e.message}`);
          resolve(1);
        });
        child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
      }),
      whole.promise,
    ]);
  } catch (e) {
    console.error(`[integration] run "${run.name}": ${e.message}`);
    return 1;
  } finally {
    whole.clear();
    release();
    cleanup(dir);
  }
}

async function main() {
  const argv = process.argv.slice(2);
  const names = argv.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !runs.some((r) => r.name === n));
  if (unknown.length) throw new SetupError(`unknown run(s) ${unknown.join(', ')}; runs.mjs defines ${runs.map((r) => r.name).join(', ')}`);
  const selected = names.length ? runs.filter((r) => names.includes(r.name)) : runs;

  let choice = await chooseHost();
  if (argv.includes('--which-host')) {
    say(`host: ${choice.host === 'electron' ? `desktop VS Code ${choice.version} via @vscode/test-electron${choice.xvfb ? ' under xvfb-run' : ''}` : 'code-server'} (${choice.why})`);
    return 0;
  }
  if (!argv.includes('--no-build')) {
    const b = spawnSync(process.execPath, ['esbuild.mjs', '--tests'], { cwd: ROOT, stdio: 'inherit' });
    if (b.status !== 0) throw new Error('node esbuild.mjs --tests failed');
  }
  let electron;
  if (choice.host === 'electron') {
    try {
      electron = { ...(await prepareElectron(choice.version)), xvfb: choice.xvfb };
      say(`host: desktop VS Code ${electron.vscodeVersion} via @vscode/test-electron${electron.xvfb ? ' under xvfb-run' : ''} (${choice.why})`);
    } catch (e) {
      if (choice.forced) throw new SetupError(`@vscode/test-electron could not get desktop VS Code ${choice.version} (${e.message}). Without internet, unset PARLEY_TEST_HOST to run in code-server.`);
      say(`@vscode/test-electron could not get desktop VS Code ${choice.version} (${e.message}): using code-server instead`);
      choice = { host: 'code-server', why: 'auto: desktop VS Code could not be downloaded' };
    }
  }
  if (!electron) {
    ensureHost();
    const v = codeServerVersion();
    say(`host: code-server ${v.codeServer}, VS Code ${v.vscode} (${choice.why}${choice.forced ? '' : '; PARLEY_TEST_HOST=electron|code-server forces one'})`);
  }

  const results = [];
  for (const run of selected) {
    const trust = !run.trust
      ? 'workspace trust on: untrusted, Restricted Mode'
      : electron
        ? 'trusted (--disable-workspace-trust: desktop VS Code runs it with workspace trust off)'
        : 'workspace trust on: trusted in the Workspace Trust editor before the suite';
    say(`run "${run.name}": workspace ${run.workspace}${run.workspaceFile ? `/${run.workspaceFile}` : ''}, ${trust}`);
    const t0 = Date.now();
    const code = electron ? await runInElectron(run, electron) : await runInCodeServer(run);
    results.push({ name: run.name, code, ms: Date.now() - t0 });
  }
  console.log('\n[integration] summary');
  for (const r of results) console.log(`  ${r.code === 0 ? '✔' : '✗'} ${r.name} (${seconds(r.ms)})${r.code === 0 ? '' : ` exit ${r.code}`}`);
  return results.every((r) => r.code === 0) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`[integration] ${e instanceof SetupError ? e.message : e.stack}`);
    process.exit(1);
  },
);
