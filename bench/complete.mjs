// Inline completions (issue 36) in the real VS Code (code-server in Chromium, driven by Playwright), against a
// loopback llama.cpp /infill that answers at once:
// 1. keystroke -> ghost text painted: Parley's time over the server's own and over its debounce (p50, p95), beside a
//    floor extension (bench/completeFloor/: a provider with a bare fetch to the same server, no debounce), whose
//    time is VS Code's own share;
// 2. requests per 100 characters typed at a person's pace (120-280 ms between keys, seeded);
// 3. the cache's hit rate when a shown suggestion is typed out (goal: no request at all).
// A report, never a check. `node bench/complete.mjs [--tries N] [--no-package]` (N = 30 by default; the set-up of
// `npm test`: code-server from npm, Debian's Chromium, `npm run package`; PARLEY_VSIX=path measures that .vsix).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { ROOT, SetupError, codeServerVersion, ensureHost, installExtension, launchChromium, packageVsix, vsixPath, writeUserSettings } from '../scripts/vscode-host.mjs';
import { startWorkbench, step, visible, waitFor } from '../test/e2e/harness.mjs';

const argv = process.argv.slice(2);
const TRIES = Number(argv[argv.indexOf('--tries') + 1] || 0) || 30;
const MODEL = 'qwen2.5-coder:1.5b-base';
const now = () => performance.timeOrigin + performance.now();
const say = (...a) => console.log('[complete]', ...a);

/** The loopback /infill: answers `content` at once, and records each request's arrival, answer and close. */
async function startInfillServer() {
  const state = { content: 'a', records: [] };
  const server = createServer((req, res) => {
    const at = now();
    let body = '';
    req.on('data', (b) => (body += b));
    req.on('end', () => {
      if (req.url !== '/infill') {
        res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
        res.end('{"error":{"message":"File Not Found","type":"not_found_error","code":404}}');
        return;
      }
      const rec = { at, bodyAt: now(), endAt: 0, closedEarly: false, prefix: JSON.parse(body).input_prefix };
      state.records.push(rec);
      res.on('close', () => (rec.closedEarly = !res.writableFinished));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ index: 0, content: state.content, tokens: [], id_slot: 0, stop: true, model: MODEL, tokens_predicted: 2, tokens_evaluated: 20, stop_type: 'word', stopping_word: '\n' }));
      rec.endAt = now();
    });
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return { state, url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => (server.closeAllConnections(), server.close(ok))) };
}

/** Packages bench/completeFloor/ as a .vsix in a temp dir. */
function packageFloor(dir) {
  const src = join(dir, 'floor');
  cpSync(join(ROOT, 'bench', 'completeFloor'), src, { recursive: true });
  const vsix = join(dir, 'complete-floor.vsix');
  const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'vsce'), ['package', '--no-dependencies', '--skip-license', '--allow-missing-repository', '--out', vsix], { cwd: src, encoding: 'utf8' });
  if (r.status !== 0 || !existsSync(vsix)) throw new SetupError(`packaging the floor extension failed:\n${r.stdout}${r.stderr}`);
  return vsix;
}

/**
 * In the workbench page: the time of each keydown (capture listener), and watch(marker), which records the animation
 * frame in which ghost text holding the marker is painted.
 */
function instrumentPage() {
  if (window.__cmp) return;
  const t = () => performance.timeOrigin + performance.now();
  // Ghost text is drawn in several elements (one per highlighted token): their text, joined.
  const ghost = () => [...document.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text')].map((e) => e.textContent ?? '').join('').replace(/\u00a0/g, ' ');
  const cmp = (window.__cmp = { key: 0, ghost: 0, text: ghost });
  window.addEventListener('keydown', () => (cmp.key = t()), true);
  cmp.watch = (marker) => {
    cmp.ghost = 0;
    const shown = () => ghost().includes(marker);
    const obs = new MutationObserver(() => {
      if (!shown()) return;
      obs.disconnect();
      requestAnimationFrame(() => (cmp.ghost = t()));
    });
    obs.observe(document.body, { childList: true, subtree: true, characterData: true });
  };
}

/** Parley's `completion: debounce D ms, request R ms, provide P ms` lines (parley.logLevel debug), in order. */
function completionLines(userDataDir) {
  const out = [];
  const visit = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) visit(join(d, e.name));
      else if (e.name === 'Parley.log') for (const m of readFileSync(join(d, e.name), 'utf8').matchAll(/completion: debounce (\d+) ms, request ([\d.]+) ms, provide ([\d.]+) ms/g)) out.push({ debounce: Number(m[1]), request: Number(m[2]), provide: Number(m[3]) });
    }
  };
  if (existsSync(join(userDataDir, 'logs'))) visit(join(userDataDir, 'logs'));
  return out;
}

/** A new file in the workspace, opened through Quick Open, the cursor at its end. */
async function openNew(wb, name) {
  // Parley starts when a person first uses it (here its view), and its completions with it: the status item says so.
  await wb.openParleyView();
  await visible(wb.statusBarItem('Parley completions'), 'the completions status item', 30_000);
  writeFileSync(join(wb.folder, 'src', name), '');
  await wb.openFile(`src/${name}`);
  await step('clicking into the editor', () => wb.activeEditor().locator('.view-lines').click());
}

/**
 * One keystroke -> ghost text try: a key after a pause, the ghost text with this try's marker, then Escape. The key is
 * `=`, which opens no suggest widget (VS Code does not show ghost text beside one that conflicts with it).
 */
async function ghostTry(wb, server, marker) {
  server.state.content = marker;
  const before = server.state.records.length;
  await wb.page.evaluate((m) => window.__cmp.watch(m), marker);
  await wb.page.keyboard.press('Equal');
  try {
    await waitFor(`the ghost text ${marker}`, () => wb.page.evaluate(() => window.__cmp.ghost > 0), 10_000);
  } catch (e) {
    const shot = await wb.screenshot('complete-bench-failure').catch(() => undefined);
    throw new Error(`${e.message}; ${server.state.records.length - before} request(s) since the key, the editor holds ${JSON.stringify(await wb.activeEditorText())}, ghost ${JSON.stringify(await wb.page.evaluate(() => window.__cmp.text()))}; screenshot ${shot}`);
  }
  const { key, ghost } = await wb.page.evaluate(() => ({ key: window.__cmp.key, ghost: window.__cmp.ghost }));
  const rec = server.state.records.at(-1);
  await wb.page.keyboard.press('Escape');
  // Past the debounce's idea of a pace: each try starts after a pause, as a person's next thought does.
  await new Promise((r) => setTimeout(r, 1600));
  return { total: ghost - key, server: rec.endAt - rec.at, requests: server.state.records.length - before };
}

/** bench/stats.ts (the benchmarks' shared helpers), compiled for this script by esbuild. */
async function loadStats() {
  const outfile = join(ROOT, 'out', 'bench', 'stats.mjs');
  await esbuild.build({ entryPoints: [join(ROOT, 'bench', 'stats.ts')], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

const ms = (n) => `${n.toFixed(1)} ms`;

async function main() {
  const load = loadavg()[0];
  const { machineLine, quantile, random, warnIfBusy, row, writeResults } = await loadStats();
  ensureHost();
  const v = codeServerVersion();
  const vsix = process.env.PARLEY_VSIX || (argv.includes('--no-package') ? vsixPath() : await packageVsix({ reuseFresh: true, say }));
  const dir = mkdtempSync(join(tmpdir(), 'parley-complete-'));
  const server = await startInfillServer();
  const browser = await launchChromium();
  let wb;
  try {
    const extensionsDir = join(dir, 'extensions');
    await installExtension({ vsix, userDataDir: join(dir, 'install-profile'), extensionsDir });
    await installExtension({ vsix: packageFloor(dir), userDataDir: join(dir, 'install-profile'), extensionsDir });
    const parleyOn = { 'parley.endpoints': [{ name: 'Local llama', baseUrl: server.url, model: MODEL }], 'parley.completion.endpoint': 'Local llama', 'parley.completion.model': MODEL, 'parley.completion.enabled': true, 'parley.logLevel': 'debug', 'completeFloor.url': '', 'editor.acceptSuggestionOnEnter': 'off' };
    wb = await startWorkbench({ browser, extensionsDir, name: 'complete', settings: parleyOn });
    const userDataDir = join(dirname(wb.folder), 'user');
    await wb.page.evaluate(instrumentPage);
    say(`code-server ${v.codeServer} (VS Code ${v.vscode}); ${TRIES} tries per provider`);

    // 1. Keystroke -> ghost text, Parley then the floor (one warm-up try each).
    await openNew(wb, 'parley.ts');
    const parley = [];
    for (let i = -1; i < TRIES; i++) {
      const r = await ghostTry(wb, server, `P${i + 1}Q`);
      if (i >= 0) parley.push(r);
    }
    const lines = completionLines(userDataDir).slice(-TRIES);
    writeUserSettings(userDataDir, { ...parleyOn, 'parley.completion.enabled': false, 'completeFloor.url': `${server.url}/infill` });
    await openNew(wb, 'floor.ts');
    const floor = [];
    for (let i = -1; i < TRIES; i++) {
      const r = await ghostTry(wb, server, `F${i + 1}Q`);
      if (i >= 0) floor.push(r);
    }

    // 2. Requests per 100 characters typed at a person's pace, and 3. the cache when a suggestion is typed out.
    writeUserSettings(userDataDir, parleyOn);
    await openNew(wb, 'pace.ts');
    const rnd = random(36);
    server.state.content = '';
    const typed = 'const total = items.reduce((sum, item) => sum + item.price * item.count, 0);\nexport default total;\n'.slice(0, 100);
    const paceStart = server.state.records.length;
    for (const ch of typed) {
      await wb.page.keyboard.type(ch);
      await new Promise((r) => setTimeout(r, 120 + rnd() * 160));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const pace = server.state.records.slice(paceStart);
    const suggestion = 'items.filter((item) => item.count > 0).length;';
    server.state.content = suggestion;
    await wb.page.keyboard.type('const inStock = ');
    await waitFor('the suggestion to type out', () => wb.page.evaluate((s) => window.__cmp.text().includes(s.slice(0, 10)), suggestion), 10_000);
    const typeOutStart = server.state.records.length;
    for (const ch of suggestion) {
      await wb.page.keyboard.type(ch);
      await new Promise((r) => setTimeout(r, 120 + rnd() * 160));
    }
    const typeOut = server.state.records.length - typeOutStart;

    // Parley's own time: from VS Code's call into the provider to its answer, less the debounce and the server's time.
    const own = parley.map((r, i) => (lines[i]?.provide ?? NaN) - (lines[i]?.debounce ?? NaN) - r.server);
    const floorOver = floor.map((r) => r.total - r.server);
    console.log(`\nInline completions in VS Code ${v.vscode} (code-server ${v.codeServer}, headless Chromium), ${TRIES} tries each; ${machineLine()}`);
    warnIfBusy(load, 'every figure is noisier than usual');
    const widths = [60, 11, 11];
    console.log(row(['', 'median', 'p95'], widths));
    const show = (name, xs) => console.log(row([name, ms(quantile(xs, 0.5)), ms(quantile(xs, 0.95))], widths));
    show("Parley's own time: call -> answer, over the server's and the debounce", own);
    show('  the debounce Parley waited (its log)', lines.map((l) => l.debounce));
    show("  the server's own time (request in -> answer out)", parley.map((r) => r.server));
    show('Parley: keystroke -> ghost text painted', parley.map((r) => r.total));
    show('Floor (bare fetch, no debounce): keystroke -> ghost text painted', floor.map((r) => r.total));
    show("Parley over the floor, keystroke -> ghost text", parley.map((r) => r.total).map((t, i) => t - (floor[i]?.total ?? NaN)));
    const perHundred = (pace.length / typed.length) * 100;
    console.log(`\nRequests per 100 characters typed at a person's pace (120-280 ms between keys): ${perHundred.toFixed(1)} (${pace.filter((r) => r.closedEarly).length} of them closed by the client before their answer)`);
    console.log(`Typing out a shown suggestion of ${suggestion.length} characters: ${typeOut} request(s); cache hit rate ${(((suggestion.length - typeOut) / suggestion.length) * 100).toFixed(0)}%`);
    console.log("\nGoals (issue 36): Parley's time over the server's own at most 20 ms p50 over the debounce; no request while a suggestion is typed out.");
    writeResults('complete', load, {
      vscode: v.vscode,
      tries: TRIES,
      keystrokeToGhost: { median: quantile(parley.map((r) => r.total), 0.5), p95: quantile(parley.map((r) => r.total), 0.95) },
      debounce: { median: quantile(lines.map((l) => l.debounce), 0.5) },
      ownOverServerAndDebounce: { median: quantile(own, 0.5), p95: quantile(own, 0.95), goal: 'at most 20 ms p50' },
      floorKeystrokeToGhost: { median: quantile(floor.map((r) => r.total), 0.5), p95: quantile(floor.map((r) => r.total), 0.95) },
      floorOverServer: { median: quantile(floorOver, 0.5), p95: quantile(floorOver, 0.95) },
      requestsPer100Chars: perHundred,
      typeOut: { chars: suggestion.length, requests: typeOut },
    });
  } finally {
    await wb?.close();
    await browser.close().catch(() => {});
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`[complete] ${e instanceof SetupError ? e.message : e.stack}`);
    process.exit(1);
  },
);
