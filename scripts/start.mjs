// `npm start`: builds and packages Parley, and serves a real VS Code (code-server) with it installed on 127.0.0.1.
//
// Parley talks to PARLEY_BASE_URL (and PARLEY_MODEL) when set, else to a local demo endpoint started here
// (scripts/demo-endpoint.mjs) on port 8079 (PARLEY_DEMO_PORT), so that the endpoint's origin, and what Parley keeps
// per origin, stays the same from one run to the next. The profile persists in .vscode-test/profile; the workspace
// is .vscode-test/demo-workspace. PORT picks the port (default 8080). Ctrl+C (or SIGTERM) at any moment stops
// everything started here.
//
// Settings: parley.baseUrl and parley.model are written into the profile when they come from PARLEY_BASE_URL /
// PARLEY_MODEL, or when the profile has no value, or still has the value that npm start wrote last time (kept in
// .vscode-test/profile/npm-start.json). A value a person changed in VS Code stays.
//
// `node scripts/start.mjs --check`: the same on free ports with a throwaway profile; fetches the workbench page,
// the demo endpoint's model list and a streamed answer, checks that Parley is installed, stops everything and
// exits 0 or 1. It reuses the .vsix when it is newer than everything it is built from.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DEMO_MODEL, startDemoEndpoint } from './demo-endpoint.mjs';
import { CACHE_DIR, ROOT, SetupError, codeServerVersion, ensureHost, ensureProjectDependencies, installExtension, packageVsix, readUserSettings, startCodeServer, stopEverything, writeUserSettings } from './vscode-host.mjs';

const CHECK = process.argv.includes('--check');
/** The demo endpoint's port unless PARLEY_DEMO_PORT says otherwise; a free one when it is taken. */
const DEFAULT_DEMO_PORT = 8079;
/** --check gives up after this long, whatever it is waiting for. */
const CHECK_TIMEOUT_MS = 180_000;

const PREFIX = CHECK ? '[start --check]' : '[start]';
const say = (...a) => console.log(PREFIX, ...a);

// ── Stopping ─────────────────────────────────────────────────────────────────────────────────────────────────────
// Installed before anything starts: Node runs no 'exit' handler on a signal it does not handle, and code-server runs
// in its own process group, where the terminal's Ctrl+C does not reach it.

let endpoint;
let tempDir;
let shuttingDown;

async function shutdown(why, code) {
  say(`${why}: stopping everything started so far`);
  try {
    await stopEverything();
    await endpoint?.close();
  } finally {
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    process.exit(code);
  }
}

/** Shuts down for `why` unless a shutdown is already under way (that one exits). */
function shutdownOnce(why, code) {
  if (shuttingDown) return undefined;
  shuttingDown = Date.now();
  return shutdown(why, code);
}

function onSignal(signal) {
  if (shuttingDown) {
    // `npm start` passes the terminal's Ctrl+C on to this process, which has had it from the terminal already.
    if (Date.now() - shuttingDown < 1000) return;
    say(`${signal} again: killing everything at once`);
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    process.exit(130); // the 'exit' handler of vscode-host.mjs SIGKILLs the process groups
  }
  void shutdownOnce(signal === 'SIGINT' ? 'Ctrl+C' : signal, 130);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => onSignal(signal));
// `kill <pid of npm>` does not reach this process: npm passes the signal to the shell it ran this in, which exits
// and leaves this process behind. So a parent that went away counts as a SIGTERM.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) void shutdownOnce(`the parent process (${parentPid}) exited`, 130);
}, 1000).unref();

// ── The demo workspace ───────────────────────────────────────────────────────────────────────────────────────────

/** Files of the demo workspace; created when missing, never overwritten, so a person's edits stay. */
const DEMO_FILES = {
  'README.md': `# Parley demo workspace

Open the Parley view from the activity bar and ask something, or select code in \`src/\` and run
**Parley: Explain Selection** (Ctrl+Alt+E) or **Parley: Generate Code** from the command palette (F1).

This folder lives in \`.vscode-test/demo-workspace\` and is kept between runs of \`npm start\`.
`,
  'src/greet.ts': `/** Greets someone, politely. */
export function greet(name: string): string {
  return \`Hello, \${name}!\`;
}

/** Greets everyone in the list, one line each. */
export function greetAll(names: readonly string[]): string {
  return names.map(greet).join('\\n');
}
`,
  'src/stats.py': `def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
`,
};

function makeDemoWorkspace(workspace) {
  for (const [rel, text] of Object.entries(DEMO_FILES)) {
    const file = join(workspace, rel);
    if (existsSync(file)) continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

// ── Endpoint and settings ────────────────────────────────────────────────────────────────────────────────────────

/** Starts the demo endpoint on `port`, or on a free port (with a message) when that one is taken. */
async function startDemo(port) {
  try {
    return await startDemoEndpoint({ port });
  } catch (e) {
    if (e.code !== 'EADDRINUSE' || !port) throw e;
    const other = await startDemoEndpoint({ port: 0 });
    say(`the demo endpoint's port ${port} is in use (another npm start?): using ${other.port} this time. Parley keeps some`);
    say(`things per endpoint (usage ledger, what it learned about the server), so they start afresh for this origin.`);
    say(`PARLEY_DEMO_PORT=<port> npm start picks the port.`);
    return other;
  }
}

const KEYS = ['parley.baseUrl', 'parley.model'];

/** What npm start wrote into a profile last time: `{ written: { key: value } }`, or undefined before the first time. */
function readRecord(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Decides which of parley.baseUrl and parley.model to write. `wanted[key]` is `{ value, fromEnv }` (value undefined:
 * remove). A key is written when its value comes from the environment, when the profile has no value, or when the
 * profile's value is the one npm start wrote last time (`record`). Profiles from before the record existed: a
 * 127.0.0.1 base URL and the demo model count as npm start's. Anything else is a person's choice, and stays.
 */
function decideSettings(current, wanted, record) {
  const set = {};
  const kept = {};
  const oursLastTime = (key, value) => {
    if (record) return record.written?.[key] !== undefined && record.written[key] === value;
    return key === 'parley.baseUrl' ? /^http:\/\/127\.0\.0\.1:\d+\/v1$/.test(String(value)) : value === DEMO_MODEL;
  };
  for (const key of KEYS) {
    const { value, fromEnv } = wanted[key];
    const now = current[key];
    if (fromEnv || now === undefined || oursLastTime(key, now)) {
      if (value !== now) set[key] = value;
    } else if (value !== now) {
      kept[key] = now;
    }
  }
  const effective = { ...current, ...set };
  for (const k of KEYS) if (effective[k] === undefined) delete effective[k];
  // Remember what npm start put in place (or found already equal to what it wanted); a kept value is the person's.
  const written = Object.fromEntries(KEYS.filter((k) => !(k in kept) && effective[k] !== undefined).map((k) => [k, effective[k]]));
  return { set, kept, effective, written };
}

/** Points the profile's Parley at the endpoint, leaving a person's own values alone. Returns the values in effect. */
function configureProfile({ userDataDir, recordFile, demoUrl, baseUrlFromEnv, modelFromEnv }) {
  const wanted = baseUrlFromEnv
    ? { 'parley.baseUrl': { value: baseUrlFromEnv, fromEnv: true }, 'parley.model': modelFromEnv ? { value: modelFromEnv, fromEnv: true } : { value: undefined, fromEnv: false } }
    : { 'parley.baseUrl': { value: demoUrl, fromEnv: false }, 'parley.model': { value: DEMO_MODEL, fromEnv: false } };
  const current = readUserSettings(userDataDir);
  const decision = decideSettings(current, wanted, readRecord(recordFile));
  writeUserSettings(userDataDir, decision.set);
  mkdirSync(dirname(recordFile), { recursive: true });
  writeFileSync(recordFile, `${JSON.stringify({ note: 'What npm start last wrote into this profile; npm start replaces only these values (scripts/start.mjs).', written: decision.written }, null, 2)}\n`);
  for (const [key, value] of Object.entries(decision.kept)) {
    say(`keeping your ${key} = ${JSON.stringify(value)}: it was changed in VS Code, so npm start leaves it alone (remove it from the settings, and npm start sets it again)`);
  }
  return decision.effective;
}

// ── Bringing it up ───────────────────────────────────────────────────────────────────────────────────────────────

async function bringUp({ profile, workspace, port, demoPort, useEnv }) {
  const userDataDir = join(profile, 'user-data');
  const extensionsDir = join(profile, 'extensions');
  const logFile = join(profile, 'code-server.log');

  ensureProjectDependencies();
  // The browser is the person's own: Chromium is only needed by the tests.
  ensureHost({ chromium: false });
  const vsix = await packageVsix({ reuseFresh: true, say });
  await installExtension({ vsix, userDataDir, extensionsDir });
  makeDemoWorkspace(workspace);

  const baseUrlFromEnv = useEnv ? process.env.PARLEY_BASE_URL : undefined;
  const modelFromEnv = baseUrlFromEnv ? process.env.PARLEY_MODEL : undefined;
  if (useEnv && process.env.PARLEY_MODEL && !baseUrlFromEnv) say(`PARLEY_MODEL is ignored without PARLEY_BASE_URL: the demo endpoint has one model, ${DEMO_MODEL}`);
  if (!useEnv && (process.env.PARLEY_BASE_URL || process.env.PARLEY_MODEL)) say('PARLEY_BASE_URL and PARLEY_MODEL are ignored: the check uses the demo endpoint');
  if (!baseUrlFromEnv) endpoint = await startDemo(demoPort);
  const settings = configureProfile({ userDataDir, recordFile: join(profile, 'npm-start.json'), demoUrl: endpoint?.url, baseUrlFromEnv, modelFromEnv });

  let server;
  try {
    server = await startCodeServer({ port, userDataDir, extensionsDir, workspace, trust: true, logFile });
  } catch (e) {
    if (/EADDRINUSE|address already in use/i.test(e.message)) throw new SetupError(`port ${port} is in use: stop what uses it, or run PORT=<another port> npm start`);
    throw e;
  }
  return { server, settings, userDataDir, extensionsDir, logFile, openUrl: `${server.url}/?folder=${encodeURIComponent(workspace).replace(/%2F/g, '/')}` };
}

async function start() {
  const t0 = Date.now();
  const profile = join(CACHE_DIR, 'profile');
  const workspace = join(CACHE_DIR, 'demo-workspace');
  const { server, settings, logFile, openUrl } = await bringUp({
    profile,
    workspace,
    port: Number(process.env.PORT || 8080),
    demoPort: Number(process.env.PARLEY_DEMO_PORT || DEFAULT_DEMO_PORT),
    useEnv: true,
  });
  server.process.on('exit', (code, signal) => void shutdownOnce(`code-server exited (${code ?? signal}); its log: ${logFile}`, 1));

  const baseUrl = settings['parley.baseUrl'];
  const model = settings['parley.model'];
  let endpointLine;
  if (endpoint && baseUrl === endpoint.url) endpointLine = `${endpoint.url} (the demo endpoint: canned answers, model ${model ?? DEMO_MODEL})`;
  else if (endpoint) endpointLine = `${baseUrl}${model ? `, model ${model}` : ''} (your setting in the profile)\n    Demo:      ${endpoint.url} (the demo endpoint runs too: point parley.baseUrl there to use it)`;
  else endpointLine = `${baseUrl}${model ? `, model ${model}` : ''}`;
  const v = codeServerVersion();
  console.log(`
  Parley is running in VS Code ${v.vscode} (code-server ${v.codeServer}), ready in ${((Date.now() - t0) / 1000).toFixed(0)} s.

    Open:      ${openUrl}
    Endpoint:  ${endpointLine}
    Profile:   ${profile}
    Log:       ${logFile}

  Press Ctrl+C to stop.
`);
}

// ── --check ──────────────────────────────────────────────────────────────────────────────────────────────────────

/** Reads an SSE chat-completion stream (eventsource-parser, as Parley does): the text, the usage chunk, whether [DONE] came. */
async function readStream(res) {
  // Required here, not imported at the top: this module also runs before `npm ci` on a fresh clone.
  const { createParser } = createRequire(import.meta.url)('eventsource-parser');
  let text = '';
  let usage;
  let done = false;
  const parser = createParser({
    onEvent({ data }) {
      if (data === '[DONE]') {
        done = true;
        return;
      }
      const json = JSON.parse(data);
      text += json.choices?.[0]?.delta?.content ?? '';
      if (json.usage) usage = json.usage;
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
  return { text, usage, done };
}

async function check() {
  const t0 = Date.now();
  tempDir = mkdtempSync(join(tmpdir(), 'parley-start-check-'));
  const timer = setTimeout(() => void shutdownOnce(`timed out after ${CHECK_TIMEOUT_MS / 1000} s`, 1), CHECK_TIMEOUT_MS);
  timer.unref();

  const { server, settings, userDataDir, extensionsDir, openUrl } = await bringUp({ profile: join(tempDir, 'profile'), workspace: join(tempDir, 'demo-workspace'), port: 0, demoPort: 0, useEnv: false });
  say(`up in ${((Date.now() - t0) / 1000).toFixed(1)} s: code-server on ${server.url}, demo endpoint on ${endpoint.url}`);

  const failures = [];
  const step = async (what, fn) => {
    try {
      const detail = await fn();
      say(`✔ ${what}${detail ? `: ${detail}` : ''}`);
    } catch (e) {
      failures.push(what);
      say(`✗ ${what}: ${e.message}`);
    }
  };
  const fetchOk = async (url, init) => {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(20_000) });
    if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res;
  };

  await step('the workbench page loads', async () => {
    const html = await (await fetchOk(openUrl)).text();
    const script = /<script[^>]+src="([^"]*\/workbench\/workbench\.js)"/.exec(html)?.[1];
    if (!script || !html.includes('vscode-workbench-web-configuration')) throw new Error(`${openUrl} is not VS Code's workbench page: ${html.slice(0, 300)}`);
    // The page's own script comes from code-server's static files: fetch it too.
    const js = await (await fetchOk(new URL(script, openUrl))).text();
    return `${openUrl} (${(html.length / 1024).toFixed(0)} KB, workbench.js ${(js.length / 1024).toFixed(0)} KB)`;
  });
  await step('the demo endpoint lists its model', async () => {
    const body = await (await fetchOk(`${endpoint.url}/models`)).json();
    const model = body.data?.find((m) => m.id === DEMO_MODEL);
    if (!model) throw new Error(`GET ${endpoint.url}/models has no ${DEMO_MODEL}: ${JSON.stringify(body)}`);
    return DEMO_MODEL;
  });
  await step('the demo endpoint streams an answer with usage', async () => {
    const res = await fetchOk(`${endpoint.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: DEMO_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    if (!/text\/event-stream/.test(res.headers.get('content-type') ?? '')) throw new Error(`content-type ${res.headers.get('content-type')}, not text/event-stream`);
    const { text, usage, done } = await readStream(res);
    if (!text.includes('```')) throw new Error(`the answer has no code block: ${JSON.stringify(text.slice(0, 200))}`);
    if (!(usage?.total_tokens > 0)) throw new Error(`no usage chunk (${JSON.stringify(usage)})`);
    if (!done) throw new Error('the stream did not end with data: [DONE]');
    return `${text.length} characters, ${usage.total_tokens} tokens`;
  });
  await step('Parley is installed in the profile', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const id = `${pkg.publisher}.${pkg.name}`;
    const list = JSON.parse(readFileSync(join(extensionsDir, 'extensions.json'), 'utf8'));
    const entry = list.find((e) => e.identifier?.id?.toLowerCase() === id.toLowerCase());
    if (!entry) throw new Error(`${join(extensionsDir, 'extensions.json')} does not list ${id}`);
    if (entry.version !== pkg.version) throw new Error(`${id} ${entry.version} is installed, package.json says ${pkg.version}`);
    const dir = join(extensionsDir, entry.relativeLocation ?? `${id}-${pkg.version}`);
    const installed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (installed.version !== pkg.version) throw new Error(`${dir}/package.json has version ${installed.version}`);
    if (!existsSync(join(dir, installed.main ?? 'dist/extension.js'))) throw new Error(`${dir} has no ${installed.main}`);
    return `${id} ${entry.version} in ${dir}`;
  });
  await step('the profile points Parley at the demo endpoint', async () => {
    const effective = readUserSettings(userDataDir);
    if (effective['parley.baseUrl'] !== endpoint.url || effective['parley.model'] !== DEMO_MODEL) throw new Error(`parley.baseUrl ${effective['parley.baseUrl']}, parley.model ${effective['parley.model']}`);
    if (settings['parley.baseUrl'] !== endpoint.url) throw new Error(`start.mjs reports ${settings['parley.baseUrl']}`);
    return `${endpoint.url}, ${DEMO_MODEL}`;
  });

  // Interrupted or timed out meanwhile: that shutdown exits.
  const ok = !failures.length;
  await shutdownOnce(ok ? `all checks passed in ${((Date.now() - t0) / 1000).toFixed(1)} s` : `${failures.length} check(s) failed`, ok ? 0 : 1);
}

(CHECK ? check() : start()).catch(async (e) => {
  // A Ctrl+C that also stopped a child (npm run package) can surface here first, as that child's failure: give the
  // signal handler its turn, and let it finish.
  await new Promise((r) => setTimeout(r, 200));
  if (shuttingDown) return;
  console.error(`${PREFIX} ${e instanceof SetupError ? e.message : e.stack}`);
  await shutdownOnce('failed', 1);
});
