// Serves the real webview bundle on 127.0.0.1 under the host's CSP, with a stand-in acquireVsCodeApi.
// Used by the Chromium webview tests and by the render benchmark.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Chromium as installed by Debian, with flags that keep it quiet and off the network. */
export const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--headless'],
};

const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };

/**
 * The stand-in for VS Code's webview API: posted messages land in window.__posted, CSP violations in
 * window.__violations. Registered before the bundle runs, like VS Code's own preload.
 */
const STAND_IN = `
window.__posted = [];
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
});
(() => {
  let state = window.__initialState;
  let acquired = false;
  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error('acquireVsCodeApi may be called once');
    acquired = true;
    return {
      postMessage: (m) => window.__posted.push(JSON.parse(JSON.stringify(m))),
      getState: () => state,
      setState: (s) => { state = s; window.__state = s; },
    };
  };
})();
/** Delivers a HostMessage the way VS Code does: a message event on window. */
window.__host = (msg) => window.postMessage(msg, '*');
`;

/** The host's own policy (src/shared/csp.ts), compiled for this process: every page here renders under it. */
async function hostCsp() {
  const { transform } = await import('esbuild');
  const { code } = await transform(readFileSync(resolve(here, '../../src/shared/csp.ts'), 'utf8'), { loader: 'ts', format: 'esm' });
  return (await import(`data:text/javascript,${encodeURIComponent(code)}`)).webviewCsp;
}

function page(nonce, cspSource, theme, script, cspFor) {
  const csp = cspFor(cspSource, nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${cspSource}/theme-${theme}.css">
<link rel="stylesheet" href="${cspSource}/webview.css">
<title>Parley</title>
</head>
<body class="vscode-${theme}">
<script nonce="${nonce}">${STAND_IN}</script>
<script nonce="${nonce}" src="${cspSource}/${script}" data-highlight-worker="${cspSource}/highlightWorker.js"></script>
</body>
</html>`;
}

/**
 * Starts the harness server. `distDir` holds webview.js and webview.css; `extraFiles` maps more names
 * (e.g. a benchmark's baseline bundle) to paths. Open `${url}?theme=light&script=name.js` for variants.
 * Every path the server was asked for is kept in `served`.
 */
export async function startHarness({ distDir = resolve(here, '../../dist'), extraFiles = {}, csp } = {}) {
  csp ??= await hostCsp();
  const files = {
    'webview.js': join(distDir, 'webview.js'),
    'highlightWorker.js': join(distDir, 'highlightWorker.js'),
    'webview.css': join(distDir, 'webview.css'),
    'theme-dark.css': join(here, 'theme-dark.css'),
    'theme-light.css': join(here, 'theme-light.css'),
    ...extraFiles,
  };
  const served = [];
  let origin = '';
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    served.push(url.pathname);
    if (url.pathname === '/' || url.pathname === '/index.html') {
      const nonce = randomBytes(16).toString('base64');
      const theme = url.searchParams.get('theme') === 'light' ? 'light' : 'dark';
      const script = url.searchParams.get('script') ?? 'webview.js';
      if (!(script in files)) { res.writeHead(404).end(); return; }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page(nonce, origin, theme, script, csp));
      return;
    }
    const name = url.pathname.slice(1);
    const file = files[name];
    if (!file) { res.writeHead(404).end(); return; }
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/`,
    origin,
    served,
    close: () => new Promise((ok) => { server.closeAllConnections?.(); server.close(() => ok()); }),
  };
}
