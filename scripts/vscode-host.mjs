// A real VS Code for `npm start` and the tests: installs code-server and its Node into .vscode-test/, and starts them.
//
// These machines cannot download desktop VS Code, but code-server (VS Code as a server) and the Node 24 it needs
// install from the npm registry, and Debian's Chromium drives the workbench. ../shared/real-vscode.md has the recipe.
// Run directly (`node scripts/vscode-host.mjs`) it only does the set-up, which is idempotent: a second run takes
// well under a second.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, lstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The one place where the versions of code-server and of the Node it runs on are pinned. */
export const VERSIONS = Object.freeze({ codeServer: '4.139.1', node: '24.21.0' });

/** Limits for the slow steps, so that a hung npm or code-server CLI ends with a message instead of forever. */
const NPM_CI_TIMEOUT_MS = 15 * 60_000;
const PACKAGE_TIMEOUT_MS = 5 * 60_000;
const INSTALL_EXTENSION_TIMEOUT_MS = 2 * 60_000;

/** Root of the repository. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Git-ignored cache for everything this script installs and for `npm start`'s profile. */
export const CACHE_DIR = process.env.PARLEY_VSCODE_CACHE ? resolve(process.env.PARLEY_VSCODE_CACHE) : join(ROOT, '.vscode-test');
const HOST_DIR = join(CACHE_DIR, 'code-server');
const STAMP = join(HOST_DIR, 'installed.json');
// A config file of our own, so that ~/.config/code-server/config.yaml (password, certs...) neither applies nor gets written.
const CONFIG = join(HOST_DIR, 'config.yaml');

/** Chromium from Debian; PARLEY_CHROMIUM points elsewhere on other systems. */
export const CHROMIUM = process.env.PARLEY_CHROMIUM || '/usr/bin/chromium';

const nodePackage = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const nodeDir = join(HOST_DIR, 'node_modules', nodePackage);

/** Where the installed binaries live (they exist once ensureHost() has run). */
export const paths = Object.freeze({
  nodeDir,
  nodeBinDir: join(nodeDir, 'bin'),
  node: join(nodeDir, 'bin', 'node'),
  codeServer: join(HOST_DIR, 'node_modules', '.bin', 'code-server'),
});

/**
 * User settings that every profile gets, so the workbench starts quiet and offline: no welcome page, no update or
 * telemetry traffic, no built-in AI chat competing for the side bar.
 */
export const BASE_USER_SETTINGS = Object.freeze({
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'security.workspace.trust.startupPrompt': 'never',
});

const log = (...a) => console.log('[vscode-host]', ...a);

/** Runs a command in the foreground, output passed through; throws with the command line when it fails. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

export function hasCommand(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function isDebianLike() {
  try {
    const osRelease = readFileSync('/etc/os-release', 'utf8');
    return /^(ID|ID_LIKE)=.*\b(debian|ubuntu)\b/m.test(osRelease);
  } catch {
    return false;
  }
}

/** The Debian packages that are missing, each with how we know. */
function missingSystemPackages({ chromium, buildTools }) {
  const missing = [];
  if (chromium && !existsSync(CHROMIUM)) missing.push('chromium');
  // code-server builds the kerberos native module, which needs gssapi.h from libkrb5-dev.
  if (buildTools && !existsSync('/usr/include/gssapi/gssapi.h') && !existsSync('/usr/include/gssapi.h')) missing.push('libkrb5-dev');
  return missing;
}

function installSystemPackages(pkgs) {
  const command = `apt-get update && apt-get install -y --no-install-recommends ${pkgs.join(' ')}`;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !isDebianLike() || !hasCommand('apt-get')) {
    const how = isDebianLike() ? `sudo sh -c '${command}'` : `install ${pkgs.join(' ')} with your package manager (on Debian/Ubuntu: sudo sh -c '${command}')`;
    throw new SetupError(`missing system packages: ${pkgs.join(', ')}.\nRun:\n  ${how}\nthen run this again.`);
  }
  log(`installing ${pkgs.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Try without `apt-get update` first: it is slow, and the package lists are usually recent enough.
  const quick = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { stdio: 'inherit', env });
  if (quick.status !== 0) {
    run('apt-get', ['update'], { env });
    run('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { env });
  }
}

/** A set-up problem that a person fixes by running a command; printed without a stack. */
export class SetupError extends Error {}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return undefined;
  }
}

function hostIsInstalled() {
  const s = readStamp();
  return s?.codeServer === VERSIONS.codeServer && s?.node === VERSIONS.node && existsSync(paths.node) && existsSync(paths.codeServer);
}

/**
 * process.env without what an enclosing `npm run`/`npm start`/`npm test` put there. The npm_config_* variables
 * are read as npm configuration by the nested npm: an inherited npm_config_user_agent names the outer Node
 * (v20), and code-server's postinstall then refuses to install.
 */
function envWithoutOuterNpm() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'NODE'));
}

function installHost() {
  if (process.platform !== 'linux') log(`warning: only tested on Linux; using npm package ${nodePackage}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  rmSync(STAMP, { force: true });
  mkdirSync(HOST_DIR, { recursive: true });
  if (!existsSync(join(HOST_DIR, 'package.json'))) {
    writeFileSync(join(HOST_DIR, 'package.json'), JSON.stringify({ name: 'parley-vscode-host', private: true, description: 'code-server and Node for Parley; made by scripts/vscode-host.mjs' }, null, 2));
  }
  const quiet = ['--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
  const t0 = Date.now();
  if (!existsSync(paths.node) || readStamp()?.node !== VERSIONS.node) {
    log(`installing Node ${VERSIONS.node} (npm package ${nodePackage})`);
    run(npm, ['install', ...quiet, `${nodePackage}@${VERSIONS.node}`], { cwd: HOST_DIR, env: envWithoutOuterNpm() });
  }
  // node-gyp expects common.gypi and config.gypi at the root of --nodedir; the package has them under include/node.
  for (const f of ['common.gypi', 'config.gypi']) {
    const link = join(nodeDir, f);
    let present = false;
    try {
      lstatSync(link);
      present = true;
    } catch {}
    if (!present) symlinkSync(join(nodeDir, 'include', 'node', f), link);
  }
  log(`installing code-server ${VERSIONS.codeServer} with Node ${VERSIONS.node} (builds native modules; 2–10 minutes)`);
  // npm runs with Node 24 first on PATH, so install scripts and node-gyp build against Node 24's own headers, offline.
  const env = { ...envWithoutOuterNpm(), PATH: `${paths.nodeBinDir}:${process.env.PATH}`, npm_config_nodedir: nodeDir };
  run(npm, ['install', ...quiet, `code-server@${VERSIONS.codeServer}`], { cwd: HOST_DIR, env });
  if (!existsSync(paths.codeServer)) throw new Error(`code-server was installed but ${paths.codeServer} is missing`);
  writeFileSync(STAMP, JSON.stringify({ ...VERSIONS, installedAt: new Date().toISOString() }, null, 2));
  log(`code-server installed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/**
 * Why node_modules does not match package-lock.json, or undefined when it does. npm keeps a copy of the lock as it
 * was installed in node_modules/.package-lock.json; a package whose version differs, a package of the lock that is
 * missing (optional ones excepted: they are platform-specific), or a package that the lock no longer has, all mean
 * that the lock changed (a pull, a switched branch) since the last `npm ci`.
 */
function dependenciesOutOfDate() {
  let lock;
  try {
    lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  } catch {
    // npm ci, which runs next, says what is wrong with it.
    return 'package-lock.json is missing or unreadable';
  }
  let installed;
  try {
    installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', '.package-lock.json'), 'utf8'));
  } catch {
    return existsSync(join(ROOT, 'node_modules')) ? 'node_modules has no .package-lock.json (not installed by npm ≥ 7)' : 'node_modules is missing';
  }
  const want = lock.packages ?? {};
  const have = installed.packages ?? {};
  const differences = [];
  for (const [key, entry] of Object.entries(want)) {
    if (!key.startsWith('node_modules/')) continue;
    const got = have[key];
    if (!got) {
      if (!entry.optional) differences.push(`${key.slice(13)} missing`);
    } else if (got.version !== entry.version) {
      differences.push(`${key.slice(13)} ${got.version ?? '?'} installed, ${entry.version ?? '?'} in the lock`);
    }
  }
  for (const key of Object.keys(have)) if (key.startsWith('node_modules/') && !(key in want)) differences.push(`${key.slice(13)} no longer in the lock`);
  // The hidden lock can be right while a folder was deleted by hand: check the packages the build needs.
  for (const name of ['esbuild', 'eventsource-parser']) if (want[`node_modules/${name}`] && !existsSync(join(ROOT, 'node_modules', name, 'package.json'))) differences.push(`${name} missing`);
  if (!differences.length) return undefined;
  return `${differences.slice(0, 3).join('; ')}${differences.length > 3 ? ` (and ${differences.length - 3} more)` : ''}`;
}

/**
 * Installs the project's own dependencies (`npm ci`) when they are missing or no longer match package-lock.json,
 * so that `npm start` and `npm test` alone set up a fresh clone, and notice a changed lock.
 */
export function ensureProjectDependencies() {
  const why = dependenciesOutOfDate();
  if (!why) return;
  log(`node_modules does not match package-lock.json (${why}): installing the project's dependencies (npm ci)`);
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit', timeout: NPM_CI_TIMEOUT_MS, killSignal: 'SIGKILL' });
  if (r.error?.code === 'ETIMEDOUT') throw new SetupError(`npm ci did not finish within ${NPM_CI_TIMEOUT_MS / 60_000} minutes and was stopped: run \`npm ci\` by hand and read its output`);
  if (r.signal) throw Object.assign(new SetupError(`npm ci was stopped by ${r.signal}`), { signal: r.signal });
  if (r.status !== 0) throw new SetupError(`npm ci failed (exit ${r.status}): run \`npm ci\` by hand and read its error`);
  const still = dependenciesOutOfDate();
  if (still) throw new SetupError(`after npm ci, node_modules still does not match package-lock.json (${still}): run \`rm -rf node_modules && npm ci\``);
}

/**
 * Makes sure code-server, its Node and (when `chromium`) Debian's Chromium are installed. Idempotent and fast when
 * everything is there. Throws SetupError with the command to run when it cannot install something itself.
 */
export function ensureHost({ chromium = true } = {}) {
  const installed = hostIsInstalled();
  const missing = missingSystemPackages({ chromium, buildTools: !installed });
  if (missing.length) {
    installSystemPackages(missing);
    const still = missingSystemPackages({ chromium, buildTools: !installed });
    if (still.length) throw new SetupError(`still missing after apt-get: ${still.join(', ')} (Chromium is looked for at ${CHROMIUM}; PARLEY_CHROMIUM changes that)`);
  }
  if (!installed) installHost();
  return paths;
}

/** The environment code-server runs in: Node 24 first on PATH. */
function hostEnv(extra = {}) {
  // code-server rejects an empty file; the options themselves are passed on the command line.
  if (!existsSync(CONFIG)) writeFileSync(CONFIG, '# Made by scripts/vscode-host.mjs: options are passed on the command line.\nauth: none\n');
  return { ...process.env, PATH: `${paths.nodeBinDir}:${process.env.PATH}`, ...extra };
}

/** code-server's version line and the VS Code version it embeds, e.g. `{ codeServer: '4.139.1', vscode: '1.139.0' }`. */
export function codeServerVersion() {
  const r = spawnSync(paths.codeServer, ['--config', CONFIG, '--version'], { env: hostEnv(), encoding: 'utf8' });
  const line = (r.stdout || '').trim().split('\n').pop() ?? '';
  const m = /^(\S+)\s+\S+\s+with Code\s+(\S+)/.exec(line);
  return { codeServer: m?.[1] ?? line, vscode: m?.[2] ?? 'unknown', raw: line };
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

/** Keys of Parley's settings whose scope is machine or machine-overridable, from package.json. */
function machineScopedKeys() {
  try {
    const props = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).contributes?.configuration?.properties ?? {};
    return new Set(Object.keys(props).filter((k) => /^machine/.test(props[k].scope ?? '')));
  } catch {
    return new Set();
  }
}

/**
 * Parses a settings.json as VS Code does: JSON with comments and trailing commas (jsonc-parser, VS Code's own
 * parser). Throws with the file's name when it is not even that, so that a person's file is never replaced by a
 * fresh one.
 */
function readSettingsFile(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  if (!text.trim()) return {};
  // Required here, not imported at the top: this module also runs before `npm ci` on a fresh clone.
  const { parse, printParseErrorCode } = createRequire(import.meta.url)('jsonc-parser');
  const errors = [];
  const value = parse(text, errors, { allowTrailingComma: true });
  if (errors.length || !value || typeof value !== 'object' || Array.isArray(value)) {
    const why = errors.length ? `${printParseErrorCode(errors[0].error)} at offset ${errors[0].offset}` : 'not an object';
    throw new SetupError(`cannot read ${file} (${why}): fix it, or delete it to start with fresh settings`);
  }
  return value;
}

/** Writes `settings` (undefined removes a key) and fills missing `defaults`; leaves the file alone when nothing changes. */
function updateSettingsFile(file, settings, defaults) {
  const current = readSettingsFile(file);
  const next = { ...defaults, ...current, ...settings };
  for (const [k, v] of Object.entries(next)) if (v === undefined) delete next[k];
  const changed = !existsSync(file) || Object.keys(next).length !== Object.keys(current).length || Object.keys(next).some((k) => JSON.stringify(next[k]) !== JSON.stringify(current[k]));
  if (!changed) return;
  mkdirSync(dirname(file), { recursive: true });
  // Comments in a file that has to change are lost; VS Code's own Settings editor writes none.
  writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`);
}

/**
 * Seeds the settings code-server reads at start: `settings` are set (an undefined value removes the key),
 * `defaults` only fill keys that are missing, so a person's changes survive. A file is rewritten only when a value
 * changes.
 * code-server is a remote window: settings with a machine scope (parley.baseUrl) are read only from the remote
 * side's settings, `<userDataDir>/Machine/settings.json` ("Remote" in the Settings editor), and the browser-side
 * `User/settings.json` value is ignored. So each key goes to the one file that VS Code reads it from.
 * `remote: false` (desktop VS Code) puts everything in User/settings.json.
 */
export function writeUserSettings(userDataDir, settings, defaults = {}, { remote = true } = {}) {
  const machine = remote ? machineScopedKeys() : new Set();
  const pick = (obj, wantMachine) => Object.fromEntries(Object.entries(obj).filter(([k]) => machine.has(k) === wantMachine));
  updateSettingsFile(join(userDataDir, 'User', 'settings.json'), pick(settings, false), pick(defaults, false));
  updateSettingsFile(join(userDataDir, 'Machine', 'settings.json'), pick(settings, true), pick(defaults, true));
}

/**
 * The settings in effect in a profile, as VS Code reads them: in a remote window (code-server), the Remote
 * (`Machine/settings.json`) values win over the User ones, and machine-scoped keys come only from there.
 */
export function readUserSettings(userDataDir, { remote = true } = {}) {
  const user = readSettingsFile(join(userDataDir, 'User', 'settings.json'));
  if (!remote) return user;
  const machine = machineScopedKeys();
  const fromUser = Object.fromEntries(Object.entries(user).filter(([k]) => !machine.has(k)));
  return { ...fromUser, ...readSettingsFile(join(userDataDir, 'Machine', 'settings.json')) };
}

/**
 * Runs a command in its own process group, output captured (and passed through with `echo`), and resolves with
 * { status, signal, output, timedOut }. After `timeoutMs` the whole group is stopped, grandchildren included
 * (`npm run` starts a shell that starts node); so is it when this process exits or stopEverything() runs.
 */
function runBounded(cmd, args, { timeoutMs, cwd = ROOT, env = process.env, echo = false } = {}) {
  return new Promise((resolveRun) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    const onData = (d) => {
      output += d;
      if (echo) process.stdout.write(d);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    let timedOut = false;
    let killTimer;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), 3000);
    }, timeoutMs);
    liveGroups.add(child.pid);
    const job = { stop: () => killGroup(child.pid, 'SIGTERM') };
    liveJobs.add(job);
    const finish = (result) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      liveJobs.delete(job);
      // Whatever the command left running in its group goes with it.
      killGroup(child.pid, 'SIGKILL');
      liveGroups.delete(child.pid);
      resolveRun({ output, timedOut, ...result });
    };
    child.on('error', (e) => finish({ status: null, signal: null, error: e }));
    // Something the command left running in the background would hold its output open, and 'close' back.
    child.on('exit', () => killGroup(child.pid, 'SIGKILL'));
    child.on('close', (status, signal) => finish({ status, signal }));
  });
}

/** What a bounded command's failure says: timed out, stopped by a signal, or its exit code and output. */
function boundedFailure(what, r, timeoutMs) {
  if (r.timedOut) return new SetupError(`${what} did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped; its output:\n${r.output.slice(-3000)}`);
  if (r.error) return new SetupError(`${what} could not start: ${r.error.message}`);
  if (r.signal) return Object.assign(new SetupError(`${what} was stopped by ${r.signal}`), { signal: r.signal });
  return new SetupError(`${what} failed (exit ${r.status}); its output:\n${r.output.slice(-6000)}`);
}

/** The .vsix that `npm run package` makes: `<name>-<version>.vsix` at the root. */
export function vsixPath() {
  const { name, version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return join(ROOT, `${name}-${version}.vsix`);
}

/** The newest modification time among the files a .vsix is built from. */
function newestPackageInput() {
  let newest = 0;
  const visit = (p) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of ['src', 'media', 'package.json', 'package-lock.json', 'esbuild.mjs', 'scripts/node-bundles.mjs', 'scripts/package-readme.mjs', 'docs', '.vscodeignore', 'README.md', 'CHANGELOG.md', 'LICENSE']) visit(join(ROOT, p));
  return newest;
}

/** True when the .vsix exists and is newer than every file it is built from (src/, package.json, …). */
export function vsixIsFresh(vsix = vsixPath()) {
  try {
    return statSync(vsix).mtimeMs > newestPackageInput();
  } catch {
    return false;
  }
}

/**
 * Builds and packages Parley with the project's own script (`npm run package`, as CI and a release do), bounded by
 * PACKAGE_TIMEOUT_MS, and returns the .vsix's path. `reuseFresh` skips the build when the .vsix is fresh.
 */
export async function packageVsix({ reuseFresh = false, say = log } = {}) {
  const vsix = vsixPath();
  if (reuseFresh && vsixIsFresh(vsix)) {
    say(`reusing ${basename(vsix)}: newer than src/, package.json and the other inputs`);
    return vsix;
  }
  say('building and packaging Parley (npm run package)');
  const r = await runBounded('npm', ['run', 'package'], { timeoutMs: PACKAGE_TIMEOUT_MS });
  if (r.status !== 0) throw boundedFailure('npm run package', r, PACKAGE_TIMEOUT_MS);
  if (!existsSync(vsix)) throw new SetupError(`npm run package succeeded but ${vsix} is missing`);
  say(`packaged ${basename(vsix)} (${(statSync(vsix).size / 1024).toFixed(0)} KB)`);
  return vsix;
}

/** Installs a packaged .vsix into an extensions dir with code-server's CLI, bounded by INSTALL_EXTENSION_TIMEOUT_MS. */
export async function installExtension({ vsix, userDataDir, extensionsDir }) {
  if (!existsSync(vsix)) throw new SetupError(`no .vsix at ${vsix}: run npm run package`);
  const r = await runBounded(paths.codeServer, ['--config', CONFIG, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', vsix, '--force'], { env: hostEnv(), timeoutMs: INSTALL_EXTENSION_TIMEOUT_MS });
  if (r.status !== 0 || !/was successfully installed/.test(r.output)) {
    throw boundedFailure(`installing ${basename(vsix)} with code-server --install-extension`, r.status === 0 ? { ...r, status: '0 without "was successfully installed"' } : r, INSTALL_EXTENSION_TIMEOUT_MS);
  }
}

/** Resolves when `url` answers HTTP, rejects with `what` after timeoutMs or as soon as `failed()` says so. */
async function waitForHttp(url, what, timeoutMs, failed) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = failed();
    if (reason) throw new Error(`${what}: ${reason}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts code-server on 127.0.0.1:port and resolves once it answers. `trust: false` leaves workspace trust on, so
 * an untrusted folder opens in Restricted Mode. `env` reaches the extension host, which inherits the server's.
 * `extensionTests: true` lets the page run an extension test suite from its `payload` query parameter.
 * The handle's stop() ends the whole process group (server, extension hosts, pty host). Its output is kept in
 * memory for failure reports, and also appended to `logFile` or printed (`echo`) when asked.
 */
export async function startCodeServer({ port, userDataDir, extensionsDir, workspace, trust = true, extensionTests = false, env = {}, userSettings = {}, extraArgs = [], startTimeoutMs = 60_000, echo = false, logFile }) {
  if (!port) port = await freePort();
  mkdirSync(userDataDir, { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  writeUserSettings(userDataDir, userSettings, BASE_USER_SETTINGS);
  const args = [
    '--config', CONFIG,
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--user-data-dir', userDataDir,
    '--extensions-dir', extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    // Makes the built workbench honour the `payload` query parameter that runs extension tests. It also turns
    // notification toasts and modal dialogs off, so it is only for the integration runner, not for people or UI tests.
    ...(extensionTests ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    ...(trust ? ['--disable-workspace-trust'] : []),
    ...extraArgs,
    ...(workspace ? [workspace] : []),
  ];
  const child = spawn(paths.codeServer, args, { env: hostEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  let exited;
  const onData = (d) => {
    output += d;
    if (logFile) appendFileSync(logFile, d);
    if (output.length > 200_000) output = output.slice(-100_000);
    if (echo) process.stdout.write(d);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exitedPromise = new Promise((r) => child.on('exit', (code, signal) => r((exited = { code, signal }))));
  child.on('error', (e) => (exited = { error: e }));

  let stopped;
  const handle = {
    port,
    url: `http://127.0.0.1:${port}`,
    authority: `127.0.0.1:${port}`,
    process: child,
    /** Everything code-server printed so far (for failure reports). */
    output: () => output,
    /** Stops code-server and every process it started; safe to call twice. */
    stop() {
      stopped ??= (async () => {
        if (exited) return;
        killGroup(child.pid, 'SIGTERM');
        const done = await Promise.race([exitedPromise, new Promise((r) => setTimeout(() => r(undefined), 5000))]);
        if (!done) killGroup(child.pid, 'SIGKILL');
        // The group may outlive its leader: make sure nothing of it is left.
        killGroup(child.pid, 'SIGKILL');
      })();
      return stopped;
    },
  };
  liveGroups.add(child.pid);
  liveServers.add(handle);
  child.on('exit', () => setTimeout(() => liveGroups.delete(child.pid), 6000).unref());
  void exitedPromise.then(() => liveServers.delete(handle));
  try {
    await waitForHttp(`${handle.url}/healthz`, `code-server to listen on ${handle.authority}`, startTimeoutMs, () =>
      exited ? `it exited (${exited.error?.message ?? exited.code ?? exited.signal}) before listening:\n${output.slice(-4000)}` : undefined,
    );
  } catch (e) {
    await handle.stop();
    throw e;
  }
  return handle;
}

/** Process groups started here (code-servers, bounded commands) that may still be running. */
const liveGroups = new Set();
/** Handles of the code-servers started here and not yet stopped. */
const liveServers = new Set();
/** Bounded commands (npm run package, --install-extension) still running. */
const liveJobs = new Set();
function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {}
}

/**
 * Takes the process group of `pid` (started elsewhere, detached) in with the ones this module kills on exit.
 * Returns what to call once it is done with: the group is then killed (whatever it left running) and let go.
 */
export function ownGroup(pid) {
  liveGroups.add(pid);
  return () => {
    killGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
  };
}
// If this process exits without stopping its servers (an uncaught error, process.exit in a signal handler), take
// them down with it. Node does not run this on a signal that has no handler: scripts that start servers handle
// SIGINT and SIGTERM themselves, and call stopEverything() or process.exit().
process.on('exit', () => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
});

/**
 * Stops every code-server started by this process, also one still starting (SIGTERM to its group, SIGKILL after
 * 5 s), and every bounded command still running. For signal handlers: safe to call at any moment, and twice.
 */
export async function stopEverything() {
  for (const job of liveJobs) job.stop();
  await Promise.all([...liveServers].map((h) => h.stop()));
}

/** The Chromium flags from the recipe: headless, no sandbox (root in a container), no network chatter. */
export const CHROMIUM_ARGS = Object.freeze(['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage']);

/** Launches Debian's Chromium through playwright-core. */
export async function launchChromium({ headless = true, args = [] } = {}) {
  const { chromium } = await import('playwright-core');
  if (!existsSync(CHROMIUM)) throw new SetupError(`Chromium not found at ${CHROMIUM}: run node scripts/vscode-host.mjs (or set PARLEY_CHROMIUM)`);
  return chromium.launch({ executablePath: CHROMIUM, headless, args: [...CHROMIUM_ARGS, ...args] });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = Date.now();
  try {
    ensureHost({ chromium: !process.argv.includes('--no-chromium') });
    const v = codeServerVersion();
    log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: code-server ${v.codeServer} (VS Code ${v.vscode}), Node ${VERSIONS.node}, ${CHROMIUM}`);
  } catch (e) {
    console.error(`[vscode-host] ${e instanceof SetupError ? e.message : e.stack}`);
    process.exit(1);
  }
}
