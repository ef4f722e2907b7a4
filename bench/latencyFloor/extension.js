// The floor of bench/latency.mjs: the least an extension can do for each leg. A webview view (in the bottom panel, so
// that it shows beside Parley's) posts Enter to its host, which does a bare fetch and posts each SSE event's text
// back as it comes; the webview appends it. Stop is a bare AbortController.abort(). Packaged by the benchmark.
const vscode = require('vscode');

/** A webview as bare as Parley's is not: a textarea, a Stop button, a line per reply, no CSP, no markdown. */
const HTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><title>Floor</title></head>
<body>
<div id="ready"></div>
<div id="out"></div>
<textarea id="box" aria-label="Message Floor"></textarea>
<button id="stop" type="button">Stop</button>
<script>
const vscode = acquireVsCodeApi();
const box = document.getElementById('box');
const out = document.getElementById('out');
let line;
box.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' || e.shiftKey) return;
  e.preventDefault();
  line = document.createElement('p');
  out.append(line);
  document.body.dataset.generating = 'true';
  vscode.postMessage({ type: 'send', text: box.value });
  box.value = '';
});
document.getElementById('stop').addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
window.addEventListener('message', (e) => {
  const m = e.data;
  if (m.type === 'snapshot') document.getElementById('ready').textContent = 'ready';
  else if (m.type === 'delta') line.append(m.text);
  else if (m.type === 'end') delete document.body.dataset.generating;
});
vscode.postMessage({ type: 'ready' });
</script>
</body></html>`;

/** Reads a stream of SSE events and yields each `data:` line's delta text. */
async function* deltas(body) {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const bytes of body) {
    buffered += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const text = JSON.parse(event.slice(6)).choices?.[0]?.delta?.content;
      if (text) yield text;
    }
  }
}

exports.activate = (context) => {
  let controller;
  async function send(webview, text) {
    controller?.abort();
    controller = new AbortController();
    try {
      const res = await fetch(vscode.workspace.getConfiguration('latencyFloor').get('url'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'floor', stream: true, messages: [{ role: 'user', content: text }] }),
        signal: controller.signal,
      });
      for await (const t of deltas(res.body)) void webview.postMessage({ type: 'delta', text: t });
    } catch {
      // Stopped, or the bench's server went away: the webview only needs to know the reply ended.
    }
    void webview.postMessage({ type: 'end' });
  }
  const provider = {
    resolveWebviewView(view) {
      view.webview.options = { enableScripts: true };
      view.webview.html = HTML;
      view.webview.onDidReceiveMessage((m) => {
        if (m.type === 'ready') void view.webview.postMessage({ type: 'snapshot' });
        else if (m.type === 'send') void send(view.webview, m.text);
        else if (m.type === 'stop') controller?.abort();
      });
    },
  };
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider('latencyFloor.view', provider),
    vscode.commands.registerCommand('latencyFloor.open', () => vscode.commands.executeCommand('latencyFloor.view.focus')),
  );
};
