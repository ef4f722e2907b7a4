// `npm start`: builds and packages Parley, and serves a real VS Code (code-server) with it installed on 127.0.0.1.
//
// Parley talks to PARLEY_BASE_URL (and PARLEY_MODEL) when set, else to a local demo endpoint started here
// (scripts/demo-endpoint.mjs). The profile persists in .vscode-test/profile; the workspace is
// .vscode-test/demo-workspace. PORT picks the port (default 8080). Ctrl+C stops everything started here.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEMO_MODEL, startDemoEndpoint } from './demo-endpoint.mjs';
import { CACHE_DIR, ROOT, SetupError, codeServerVersion, ensureHost, ensureProjectDependencies, installExtension, startCodeServer, writeUserSettings } from './vscode-host.mjs';

const PROFILE = join(CACHE_DIR, 'profile');
const USER_DATA = join(PROFILE, 'user-data');
const EXTENSIONS = join(PROFILE, 'extensions');
const WORKSPACE = join(CACHE_DIR, 'demo-workspace');
const LOG_FILE = join(PROFILE, 'code-server.log');

const say = (...a) => console.log('[start]', ...a);

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

function makeDemoWorkspace() {
  for (const [rel, text] of Object.entries(DEMO_FILES)) {
    const file = join(WORKSPACE, rel);
    if (existsSync(file)) continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

function packageParley() {
  say('building and packaging Parley (npm run package)');
  const r = spawnSync('npm', ['run', 'package'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`${r.stdout}\n${r.stderr}\n`);
    throw new SetupError('npm run package failed (output above)');
  }
  const { name, version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const vsix = join(ROOT, `${name}-${version}.vsix`);
  say(`packaged ${name}-${version}.vsix (${(statSync(vsix).size / 1024).toFixed(0)} KB)`);
  return vsix;
}

async function main() {
  const t0 = Date.now();
  ensureProjectDependencies();
  // The browser is the person's own: Chromium is only needed by the tests.
  ensureHost({ chromium: false });
  const vsix = packageParley();
  installExtension({ vsix, userDataDir: USER_DATA, extensionsDir: EXTENSIONS });
  makeDemoWorkspace();

  let endpoint;
  let settings;
  if (process.env.PARLEY_BASE_URL) {
    // An undefined model removes a value left by an earlier demo run, so Parley's default applies.
    settings = { 'parley.baseUrl': process.env.PARLEY_BASE_URL, 'parley.model': process.env.PARLEY_MODEL || undefined };
  } else {
    endpoint = await startDemoEndpoint({ port: Number(process.env.PARLEY_DEMO_PORT || 0) });
    settings = { 'parley.baseUrl': endpoint.url, 'parley.model': process.env.PARLEY_MODEL || DEMO_MODEL };
  }
  writeUserSettings(USER_DATA, settings);

  const port = Number(process.env.PORT || 8080);
  let server;
  try {
    server = await startCodeServer({ port, userDataDir: USER_DATA, extensionsDir: EXTENSIONS, workspace: WORKSPACE, trust: true, logFile: LOG_FILE });
  } catch (e) {
    await endpoint?.close();
    if (/EADDRINUSE|address already in use/i.test(e.message)) throw new SetupError(`port ${port} is in use: stop what uses it, or run PORT=<another port> npm start`);
    throw e;
  }

  let stopping = false;
  const stop = async (why, code) => {
    if (stopping) return;
    stopping = true;
    say(`${why}: stopping code-server${endpoint ? ' and the demo endpoint' : ''}`);
    await server.stop();
    await endpoint?.close();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop('Ctrl+C', 0));
  process.on('SIGTERM', () => void stop('SIGTERM', 0));
  server.process.on('exit', (code, signal) => void stop(`code-server exited (${code ?? signal}); its log: ${LOG_FILE}`, 1));

  const v = codeServerVersion();
  console.log(`
  Parley is running in VS Code ${v.vscode} (code-server ${v.codeServer}), ready in ${((Date.now() - t0) / 1000).toFixed(0)} s.

    Open:      ${server.url}/?folder=${encodeURIComponent(WORKSPACE).replace(/%2F/g, '/')}
    Endpoint:  ${endpoint ? `${endpoint.url} (the demo endpoint: canned answers, model ${settings['parley.model']})` : `${settings['parley.baseUrl']}${settings['parley.model'] ? `, model ${settings['parley.model']}` : ''}`}
    Profile:   ${PROFILE}
    Log:       ${LOG_FILE}

  Press Ctrl+C to stop.
`);
}

main().catch((e) => {
  console.error(`[start] ${e instanceof SetupError ? e.message : e.stack}`);
  process.exit(1);
});
