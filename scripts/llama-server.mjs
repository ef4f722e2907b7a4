// A real llama.cpp `llama-server` for the tests: built once from the llama.cpp source that the npm package
// node-llama-cpp ships (llama/gitRelease.bundle), cached beside the VS Code host in .vscode-test/, and started on a
// free port of 127.0.0.1 with the tiny scripted models of test/support/scriptedModel.mjs.
//
// The registry is the only thing these machines reach, so the source comes through `npm pack` (the tarball only,
// not the package's 670 MB of optional prebuilt binaries); cmake and g++ build the server target alone, without the
// web UI, HTTPS or downloads. Run directly (`node scripts/llama-server.mjs`) it only makes sure the build is there:
// the first time takes minutes, later runs well under a second. The version is pinned below; changing it rebuilds.
// PARLEY_LLAMA_SERVER=/path/to/llama-server uses that binary instead (nothing is built); a different llama.cpp may
// word its errors differently from the recordings in test/fixtures/llama-server/.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, copyFileSync, chmodSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CACHE_DIR, SetupError, freePort, hasCommand } from './vscode-host.mjs';

/** The node-llama-cpp release whose llama.cpp source is built; llama/llama.cpp.info.json in it names the tag. */
export const LLAMA_VERSION = Object.freeze({ nodeLlamaCpp: '3.22.1' });

const LLAMA_DIR = join(CACHE_DIR, `llama-server-${LLAMA_VERSION.nodeLlamaCpp}`);
const STAMP = join(LLAMA_DIR, 'built.json');
const LOCK = `${LLAMA_DIR}.lock`;

/** Where the built server lives once ensureLlamaServer() has run. */
export const llamaPaths = Object.freeze({ dir: LLAMA_DIR, binary: join(LLAMA_DIR, 'bin', 'llama-server'), stamp: STAMP });

/**
 * The cmake options: the server alone, for this architecture in general rather than this CPU (on x86-64: AVX2),
 * nothing fetched at build time.
 */
export const CMAKE_OPTIONS = Object.freeze([
  '-DCMAKE_BUILD_TYPE=Release',
  '-DBUILD_SHARED_LIBS=OFF',
  '-DGGML_NATIVE=OFF',
  '-DGGML_CCACHE=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_BUILD_APP=OFF',
  // The web UI would be built with npm or downloaded from Hugging Face: the tests need only the API.
  '-DLLAMA_BUILD_UI=OFF',
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  // No HTTPS, so no model downloads (this llama.cpp has no CURL option any more: it fetches over its own HTTP client).
  '-DLLAMA_OPENSSL=OFF',
]);

const PACK_TIMEOUT_MS = 5 * 60_000;
const BUILD_TIMEOUT_MS = 90 * 60_000;
const HEALTH_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
/** How long a second process waits for another one's build before giving up. */
const LOCK_WAIT_MS = 100 * 60_000;

const log = (...a) => console.log('[llama-server]', ...a);

/** The environment without what an enclosing `npm run` set (npm reads npm_config_* as its own configuration). */
function envWithoutOuterNpm() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'NODE'));
}

/** Runs a command, output passed through; throws SetupError naming it when it fails or overruns. */
function run(cmd, args, { cwd, timeoutMs, env = process.env } = {}) {
  const r = spawnSync(cmd, args, { cwd, env, stdio: 'inherit', timeout: timeoutMs, killSignal: 'SIGKILL' });
  const line = `${cmd} ${args.join(' ')}`;
  if (r.error?.code === 'ETIMEDOUT') throw new SetupError(`${line} did not finish within ${Math.round(timeoutMs / 60_000)} minutes and was stopped`);
  if (r.error) throw new SetupError(`${line}: ${r.error.message}`);
  if (r.status !== 0) throw new SetupError(`${line} failed (${r.signal ?? `exit ${r.status}`})`);
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return undefined;
  }
}

function isBuilt() {
  return readStamp()?.nodeLlamaCpp === LLAMA_VERSION.nodeLlamaCpp && existsSync(llamaPaths.binary);
}

/** What the build needs from the system, and how to get it on Debian/Ubuntu. */
function checkBuildTools() {
  const missing = [
    ['cmake', 'cmake'],
    ['g++', 'g++'],
    ['make', 'make'],
    ['git', 'git'],
    ['tar', 'tar'],
    ['npm', 'npm'],
  ].filter(([cmd]) => !hasCommand(cmd));
  if (missing.length) {
    const pkgs = missing.map(([, pkg]) => pkg).filter((p) => p !== 'npm');
    throw new SetupError(
      `building llama-server needs ${missing.map(([c]) => c).join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not on PATH.\n` +
        (pkgs.length ? `On Debian/Ubuntu: sudo apt-get install -y ${pkgs.join(' ')}\n` : '') +
        (missing.some(([c]) => c === 'npm') ? 'npm comes with Node.js.\n' : '') +
        'then run `node scripts/llama-server.mjs` (or the tests) again.',
    );
  }
}

/** Is a process with this id alive? */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/**
 * Takes the build lock (a folder, made atomically), or waits while another live process holds it. Returns false when
 * that other process finished the build meanwhile.
 */
function takeLock() {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return true;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    let holder;
    try {
      holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    } catch {
      holder = undefined;
    }
    // A lock whose pid file is not written yet is fresh; one whose process is gone was left by a killed build.
    const age = Date.now() - statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs;
    if ((holder && !alive(holder)) || (!holder && age > 60_000)) {
      log(`removing the build lock of a process that is gone (${holder ?? 'unknown'})`);
      rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (isBuilt()) return false;
    if (Date.now() > deadline) throw new SetupError(`another process (${holder}) has been building llama-server for too long; if it is stuck, stop it and remove ${LOCK}`);
    if (!announced) log(`waiting for the build that process ${holder} is running`);
    announced = true;
    spawnSync('sleep', ['2']);
  }
}

/** Downloads node-llama-cpp's tarball, builds the server from its llama.cpp bundle, and installs it with its stamp. */
function build() {
  const t0 = Date.now();
  // Under the lock, a build folder left here is one of a build that was killed.
  for (const old of readdirSync(CACHE_DIR)) if (old.startsWith('llama-build-')) rmSync(join(CACHE_DIR, old), { recursive: true, force: true });
  // Beside the result, so that the final rename stays on one file system; removed whatever happens.
  const work = mkdtempSync(join(CACHE_DIR, 'llama-build-'));
  try {
    const spec = `node-llama-cpp@${LLAMA_VERSION.nodeLlamaCpp}`;
    log(`fetching ${spec} from the npm registry (its llama.cpp source only is used)`);
    run('npm', ['pack', spec, '--pack-destination', work, '--silent', '--no-update-notifier'], { cwd: work, timeoutMs: PACK_TIMEOUT_MS, env: envWithoutOuterNpm() });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new SetupError(`npm pack ${spec} left no .tgz in ${work}`);
    run('tar', ['-xzf', tarball, 'package/llama/gitRelease.bundle', 'package/llama/llama.cpp.info.json'], { cwd: work, timeoutMs: PACK_TIMEOUT_MS });
    rmSync(join(work, tarball));
    const info = JSON.parse(readFileSync(join(work, 'package', 'llama', 'llama.cpp.info.json'), 'utf8'));
    const src = join(work, 'llama.cpp');
    run('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', join(work, 'package', 'llama', 'gitRelease.bundle'), src], { timeoutMs: PACK_TIMEOUT_MS });
    const commit = spawnSync('git', ['-C', src, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
    const jobs = process.env.PARLEY_LLAMA_BUILD_JOBS || '2';
    log(`building llama-server from llama.cpp ${info.tag} (${commit.slice(0, 10)}) with ${jobs} jobs: several minutes the first time`);
    const buildDir = join(work, 'build');
    run('cmake', ['-S', src, '-B', buildDir, ...CMAKE_OPTIONS], { timeoutMs: PACK_TIMEOUT_MS });
    run('cmake', ['--build', buildDir, '--target', 'llama-server', '-j', jobs], { timeoutMs: BUILD_TIMEOUT_MS });
    const built = join(buildDir, 'bin', 'llama-server');
    if (!existsSync(built)) throw new SetupError(`the build finished but ${built} is missing`);
    // The binary appears under its final name whole (rename), and the stamp that makes it count comes last.
    rmSync(STAMP, { force: true });
    mkdirSync(join(LLAMA_DIR, 'bin'), { recursive: true });
    const partial = `${llamaPaths.binary}.partial`;
    copyFileSync(built, partial);
    chmodSync(partial, 0o755);
    renameSync(partial, llamaPaths.binary);
    const seconds = Math.round((Date.now() - t0) / 1000);
    writeFileSync(STAMP, JSON.stringify({ ...LLAMA_VERSION, llamaCpp: info.tag, commit, cmake: CMAKE_OPTIONS, buildSeconds: seconds, builtAt: new Date().toISOString() }, null, 2));
    log(`llama-server built in ${seconds} s: ${llamaPaths.binary}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Makes sure the pinned llama-server is built (building it when missing or of another version) and returns the
 * binary's path. Throws SetupError with what to install or do when it cannot.
 */
export function ensureLlamaServer() {
  if (process.env.PARLEY_LLAMA_SERVER) {
    const own = resolve(process.env.PARLEY_LLAMA_SERVER);
    if (!existsSync(own)) throw new SetupError(`PARLEY_LLAMA_SERVER=${process.env.PARLEY_LLAMA_SERVER}: no such file`);
    return own;
  }
  if (isBuilt()) return llamaPaths.binary;
  checkBuildTools();
  mkdirSync(CACHE_DIR, { recursive: true });
  if (!takeLock()) return llamaPaths.binary;
  try {
    if (!isBuilt()) build();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  return llamaPaths.binary;
}

/** What the built server reports about itself: the stamp (version, commit, build time) of the last build. */
export function llamaServerInfo() {
  return readStamp();
}

const running = new Set();
process.on('exit', () => {
  for (const child of running) killGroup(child.pid, 'SIGKILL');
});

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {}
}

/**
 * @typedef {object} LlamaServerOptions
 * @property {string} [model]            A GGUF file: one model, the ordinary mode (`-m`).
 * @property {string|null} [alias]      With `model`: the id the server gives it (`--alias`); default the file's name
 *                                       without `.gguf`, as router mode names its models; null: the path, as given.
 * @property {string[]} [models]         GGUF files for router mode: linked into a temporary --models-dir, each
 *                                       served under its file name without `.gguf`.
 * @property {string} [routerModelsDir]  A --models-dir of your own, for router mode.
 * @property {number} [ctx]              The context window (`-c`); default: the model's own (its n_ctx_train).
 * @property {string} [apiKey]           `--api-key`: requests without `Authorization: Bearer <key>` get 401.
 * @property {boolean} [jinja]           `--jinja` (default true): the model's own chat template, tools, reasoning.
 * @property {string[]} [extraArgs]      Any further arguments, passed last.
 * @property {boolean} [echo]            Pass the server's output through to this process's (default: kept quiet).
 */

/**
 * @typedef {object} LlamaServer
 * @property {string} url        http://127.0.0.1:PORT (no /v1)
 * @property {number} port
 * @property {string} binary     The llama-server that runs.
 * @property {string[]} args     The command line after the binary, for reports.
 * @property {() => string} output  What the server has printed so far (stdout and stderr, the last 1 MB).
 * @property {() => Promise<void>} stop  Stops it (and, in router mode, the model processes it started).
 */

/**
 * Starts llama-server (ensureLlamaServer() first) on a free port of 127.0.0.1 and resolves once `/health` answers
 * 200. In router mode that is when the router is up; each model loads on its first request.
 * @param {LlamaServerOptions} options
 * @returns {Promise<LlamaServer>}
 */
export async function startLlamaServer({ model, alias, models, routerModelsDir, ctx, apiKey, jinja = true, extraArgs = [], echo = false } = {}) {
  const binary = ensureLlamaServer();
  if ([model, models, routerModelsDir].filter((x) => x !== undefined).length !== 1) throw new Error('startLlamaServer: give exactly one of model, models or routerModelsDir');
  let tempDir;
  let modelArgs;
  if (model) {
    modelArgs = ['-m', resolve(model)];
    const id = alias === undefined ? basename(model).replace(/\.gguf$/i, '') : alias;
    if (id !== null) modelArgs.push('--alias', id);
  } else {
    let dir = routerModelsDir;
    if (models) {
      tempDir = mkdtempSync(join(tmpdir(), 'parley-llama-models-'));
      for (const m of models) symlinkSync(resolve(m), join(tempDir, basename(m)));
      dir = tempDir;
    }
    modelArgs = ['--models-dir', resolve(dir)];
  }
  const port = await freePort();
  const args = [
    ...modelArgs,
    '--host', '127.0.0.1',
    '--port', String(port),
    // One thread: the models are tiny, and the test machines are shared.
    '--threads', '1',
    ...(ctx !== undefined ? ['-c', String(ctx)] : []),
    ...(apiKey !== undefined ? ['--api-key', apiKey] : []),
    jinja ? '--jinja' : '--no-jinja',
    ...extraArgs,
  ];
  // llama-server reads LLAMA_ARG_* (and HF_*) variables as options: only the command line counts here.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(LLAMA_ARG_|HF_|LLAMA_API_KEY)/.test(k)));
  const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  let output = '';
  const onData = (d) => {
    output = (output + d).slice(-1_000_000);
    if (echo) process.stderr.write(d);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let exited;
  const exit = new Promise((resolveExit) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      running.delete(child);
      // The router's model processes are in its group.
      killGroup(child.pid, 'SIGKILL');
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
      resolveExit(exited);
    });
    child.on('error', (e) => {
      exited = { error: e };
      running.delete(child);
      resolveExit(exited);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (exited) return;
    killGroup(child.pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), STOP_GRACE_MS);
    await exit;
    clearTimeout(timer);
  };
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  for (;;) {
    if (exited) throw new Error(`llama-server ${args.join(' ')} exited (${exited.error?.message ?? exited.signal ?? `code ${exited.code}`}) before it was ready:\n${output.slice(-4000)}`);
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server did not answer /health within ${HEALTH_TIMEOUT_MS / 1000} s:\n${output.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, port, binary, args, output: () => output, stop };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const binary = ensureLlamaServer();
    const info = llamaServerInfo();
    if (process.env.PARLEY_LLAMA_SERVER) log(`using ${binary} (PARLEY_LLAMA_SERVER)`);
    else log(`ready: ${binary} (llama.cpp ${info?.llamaCpp} ${info?.commit?.slice(0, 10)}, from node-llama-cpp ${info?.nodeLlamaCpp}; built in ${info?.buildSeconds} s)`);
  } catch (e) {
    console.error(`[llama-server] ${e instanceof SetupError ? e.message : e.stack}`);
    process.exit(1);
  }
}
