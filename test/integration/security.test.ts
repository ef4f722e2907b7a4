// Trust boundaries in a trusted workspace: workspace-set origins need consent, keys stay with their origin, no key leaks.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as vm from 'node:vm';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startTestServer, type TestServer } from '../support/server';
import { chats, chunk, containsSecret, headerNow, parley, usageChunk, userSettings, waitFor, windowLogs, writeJson, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import { webviewCsp } from '../../src/shared/csp';

const KEY_A = 'sk-test-A-0123456789abcdefSECRET';
const KEY_B = 'plainKey_B_for_another_origin_7f3a9c';
/** Text that only looks like keys, which an export keeps as written. */
const AS_WRITTEN = 'Make it ***bold italic***; curl -H "Authorization: Bearer $OPENAI_API_KEY" \'https://maps.example.com/api?key=YOUR_KEY\'';

suite('Security: origins, keys and redaction (trusted workspace)', function () {
  this.timeout(30_000);
  let api: TestApi;
  let a: TestServer;
  let b: TestServer;

  suiteSetup(async () => {
    api = await parley();
    a = await startTestServer((_req, res) => writeSse(res, [chunk('from A'), chunk('', 'stop'), usageChunk(2, 2)]));
    b = await startTestServer((_req, res) => writeSse(res, [chunk('from B'), chunk('', 'stop'), usageChunk(2, 2)]));
    assert.equal(vscode.workspace.isTrusted, true, 'this suite runs in a trusted workspace');
    assert.notEqual(vscode.workspace.getConfiguration('security.workspace.trust').get('enabled'), false, 'with workspace trust on');
  });

  suiteTeardown(async () => {
    await vscode.workspace.getConfiguration('parley').update('baseUrl', undefined, vscode.ConfigurationTarget.Workspace);
    await api.keys.delete(a.origin);
    await a?.close();
    await b?.close();
  });

  setup(async () => {
    await api.chat.newChat();
    a.requests.length = 0;
    b.requests.length = 0;
  });

  test('a workspace base URL to another origin is used only after consent; declining sends nothing there', async () => {
    await userSettings({ baseUrl: a.url, model: 'm' });
    await vscode.workspace.getConfiguration('parley').update('baseUrl', b.url, vscode.ConfigurationTarget.Workspace);
    await waitFor('the workspace value to apply', () => vscode.workspace.getConfiguration('parley').inspect('baseUrl')?.workspaceValue === b.url);
    const asked = await sendAnswering(false, 'hello', 'hello again');
    assert.deepEqual(asked, [b.origin], 'asked once, for the workspace origin, and remembered');
    assert.equal(b.requests.length, 0, 'the workspace origin received nothing');
    assert.equal(chats(a).length, 2, 'the user endpoint was used instead');
  });

  test('until a workspace origin is allowed, the header names the endpoint requests really go to; a dismissed question is asked again', async () => {
    await userSettings({ baseUrl: a.url, model: 'm' });
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be ready', () => api.recorded.posted.some((m) => m.type === 'snapshot'), 20_000);
    await vscode.workspace.getConfiguration('parley').update('baseUrl', b.url, vscode.ConfigurationTarget.Workspace);
    await waitFor('the workspace value to apply', () => vscode.workspace.getConfiguration('parley').inspect('baseUrl')?.workspaceValue === b.url);
    await api.requester.resetWorkspaceOrigins();
    try {
      await headerAndConsent();
    } finally {
      await api.requester.resetWorkspaceOrigins();
      await vscode.workspace.getConfiguration('parley').update('baseUrl', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  /** Sends `questions` while the workspace-origin question is answered with `answer`; returns the origins asked about. */
  async function sendAnswering(answer: boolean | undefined, ...questions: string[]): Promise<string[]> {
    const asked: string[] = [];
    const realPrompts = api.requester.prompts;
    api.requester.prompts = { allowWorkspaceOrigin: async (origin) => (asked.push(origin), answer) };
    try {
      for (const q of questions) await api.chat.send(q, []);
    } finally {
      api.requester.prompts = realPrompts;
    }
    return asked;
  }

  async function headerAndConsent(): Promise<void> {
    assert.equal((await headerNow(api)).endpoint, new URL(a.origin).host, 'the user endpoint, not the workspace one');

    const asked = await sendAnswering(undefined, 'first', 'second');
    assert.deepEqual(asked, [b.origin, b.origin], 'a dismissal is not remembered as an answer');
    assert.equal(b.requests.length, 0, 'nothing went to the workspace origin');
    assert.equal(chats(a).length, 2);

    await sendAnswering(true, 'third');
    assert.equal(chats(b).length, 1, 'allowed: the workspace origin is used');
    assert.equal((await headerNow(api)).endpoint, new URL(b.origin).host);

    await vscode.commands.executeCommand('parley.resetWorkspaceOrigins');
    const again = await sendAnswering(false, 'fourth');
    assert.deepEqual(again, [b.origin], 'Forget Workspace Endpoint Answers makes Parley ask again');
    assert.equal(chats(b).length, 1);
  }

  test('a new remote origin with no key gets the no-key card and nothing is sent; marking it keyless is remembered', async () => {
    const remote = 'https://parley-no-key.invalid';
    await userSettings({ baseUrl: remote, model: 'm' });
    try {
      const t = await api.requester.target();
      assert.ok(t.kind === 'no-key', 'no key for the new origin');
      await api.chat.send('hello?', []);
      const reply = api.chat.current.turns.at(-1);
      assert.equal(reply?.status, 'error');
      assert.deepEqual(reply?.error?.actions.slice(0, 2), ['setApiKey', 'markNoKey']);
      assert.match(String(reply?.error?.title), /parley-no-key\.invalid/);
      assert.equal(reply?.usage, undefined, 'nothing was sent, so nothing is counted');

      await api.keys.markNoKeyNeeded(remote);
      const keyless = await api.requester.target();
      assert.ok(keyless.kind === 'ready', 'marked as needing none');
      assert.equal(keyless.apiKey, undefined, 'and no other origin\'s key is borrowed');
    } finally {
      await api.keys.delete(remote);
      await userSettings({ baseUrl: a.url });
    }
  });

  test('the real webview gets the strict CSP, no command URIs and only the bundle and media folders', async () => {
    await vscode.commands.executeCommand('parley.openChat');
    const rec = await waitFor('the view to be resolved', () => (api.recorded.html ? api.recorded : undefined));
    const html = String(rec.html);
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html);
    const nonce = /<script nonce="([^"]+)"/.exec(html)?.[1];
    const source = String(rec.cspSource);
    assert.ok(meta && nonce && source, 'a CSP meta tag and a nonced script');
    assert.equal(meta[1], webviewCsp(source, nonce));
    assert.doesNotMatch(meta[1].split(source).join(''), /https?:|\*|unsafe|'self'/, 'no origin but the webview resources\'');
    assert.equal((html.match(/<script/gi) ?? []).length, 1, 'one script, the bundle (put in the page, its own "<script" text escaped)');
    assert.equal((html.match(/<\/script/gi) ?? []).length, 1, 'nothing in the bundle ends its script early');
    // The highlighting worker's script, which the bundle adds with the same nonce when it first highlights code.
    assert.match(html, new RegExp(`<script nonce="${nonce}" data-highlight-worker="[^"]+/dist/highlightWorker\\.js">`));
    // The bundle and its stylesheet are in the page itself (no fetch through the webview's service worker), each with the nonce.
    const bundle = await fs.readFile(path.join(api.context.extensionUri.fsPath, 'dist', 'webview.js'), 'utf8');
    assert.ok(html.includes(bundle.slice(0, 2000).replace(/<(!--|\/?script)/gi, '\\x3C$1')), 'the bundle is inline');
    assert.match(html, new RegExp(`<style nonce="${nonce}">`));
    // The script as the page has it still compiles (the escaping changed no syntax).
    const inline = html.slice(html.indexOf('>', html.indexOf('<script')) + 1, html.lastIndexOf('</script>'));
    assert.doesNotThrow(() => new vm.Script(inline), 'the inline bundle is valid JavaScript');
    assert.doesNotMatch(html, /<link /, 'no linked stylesheet');
    assert.equal(rec.options?.enableCommandUris, false);
    const roots = (rec.options?.localResourceRoots ?? []).map((u) => path.relative(api.context.extensionUri.fsPath, u.fsPath)).sort();
    assert.deepEqual(roots, ['dist', 'media']);
  });

  test('the log records each request (URL, model, status, timing, usage) and message content only at trace', async () => {
    const parleyLog = (needle: string) => waitFor(`a Parley log line with ${needle}`, async () => {
      for (const { text } of await windowLogs(api)) {
        if (text.includes(needle) && /tokens \(/.test(text.slice(text.indexOf(needle)))) return text;
      }
      return undefined;
    }, 15_000);
    try {
      await userSettings({ baseUrl: a.url, model: 'log-model-info', logLevel: 'info' });
      await api.chat.send('PROMPT-TEXT-at-info', []);
      const info = await parleyLog('model=log-model-info');
      const lines = info.slice(info.indexOf('model=log-model-info'));
      assert.match(info, new RegExp(`POST ${a.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/v1/chat/completions model=log-model-info`));
      assert.match(lines, /HTTP 200 text\/event-stream after \d+ ms/);
      assert.match(lines, /done \(stop\) in \d+ ms, 4 tokens \(2 prompt, 2 completion\)/);
      assert.equal(info.includes('PROMPT-TEXT-at-info'), false, 'no message content below trace');

      await userSettings({ model: 'log-model-trace', logLevel: 'trace' });
      await api.chat.send('PROMPT-TEXT-at-trace', []);
      const trace = await parleyLog('model=log-model-trace');
      assert.ok(trace.includes('PROMPT-TEXT-at-trace'), 'message content at trace');
    } finally {
      await userSettings({ logLevel: undefined, model: 'm' });
    }
  });

  test('the key for origin A is never sent to origin B', async () => {
    await vscode.workspace.getConfiguration('parley').update('baseUrl', undefined, vscode.ConfigurationTarget.Workspace);
    await api.keys.set(a.origin, KEY_A);
    await userSettings({ baseUrl: a.url, model: 'm' });
    await api.chat.send('to A', []);
    assert.equal(chats(a)[0].headers.authorization, `Bearer ${KEY_A}`);
    await userSettings({ baseUrl: b.url });
    await api.chat.send('to B', []);
    assert.equal(chats(b).length, 1);
    for (const r of b.requests) {
      assert.equal(r.headers.authorization, undefined);
      assert.equal(containsSecret(r, KEY_A), false);
    }
  });

  test('a redirect from A to B does not carry the key', async () => {
    await api.keys.set(a.origin, KEY_A);
    const redirector = await startTestServer((_req, res) => {
      res.writeHead(307, { location: `${b.url}/v1/chat/completions` });
      res.end();
    });
    try {
      await api.keys.set(redirector.origin, KEY_A);
      await userSettings({ baseUrl: redirector.url });
      await api.chat.send('follow me', []);
      assert.equal(chats(redirector).length, 1);
      assert.equal(chats(redirector)[0].headers.authorization, `Bearer ${KEY_A}`);
      assert.match(String(api.chat.current.turns.at(-1)?.error?.title), /another origin/);
      for (const r of b.requests) assert.equal(containsSecret(r.headers, KEY_A), false, 'B never sees the key');
    } finally {
      await api.keys.delete(redirector.origin);
      await redirector.close();
    }
  });

  test('after requests, an echoed key in an error, and an export, the key is nowhere', async () => {
    const echo = await startTestServer((req, res) => {
      // Like OpenAI's 401, but echoing the whole key, not just a masked one.
      const auth = String(req.headers.authorization ?? '');
      writeJson(res, 401, { error: { message: `Incorrect API key provided: ${auth.replace('Bearer ', '')}. Also masked: sk-te****CRET`, type: 'invalid_request_error', code: 'invalid_api_key', param: null } });
    });
    try {
      await api.keys.set(echo.origin, KEY_A);
      await api.keys.set(a.origin, KEY_A);
      await userSettings({ baseUrl: a.url, logLevel: 'trace' });
      await api.chat.send('a normal request', []);
      await userSettings({ baseUrl: echo.url });
      await api.chat.send('this one fails', []);
      const reply = api.chat.current.turns.at(-1);
      assert.equal(reply?.status, 'error');
      assert.equal(containsSecret(reply, KEY_A), false, 'the error card');
      assert.ok(echo.requests.length >= 1);

      // The user's own words mention another stored key (of no known shape, for an origin this session never
      // used) and text that only looks like keys: the export takes out the key and keeps the rest as written.
      await api.keys.set(b.origin, KEY_B);
      await userSettings({ baseUrl: a.url });
      await api.chat.send(`${AS_WRITTEN}\nand my other key ${KEY_B}`, []);

      await vscode.commands.executeCommand('parley.exportChat');
      const exported = await waitFor('the exported Markdown editor', () => {
        const d = vscode.window.activeTextEditor?.document;
        return d?.languageId === 'markdown' && d.getText().includes('this one fails') ? d.getText() : undefined;
      });
      assert.equal(exported.includes(KEY_A), false, 'the exported chat');
      assert.equal(exported.includes(KEY_B), false, 'a key stored for another origin');
      assert.ok(exported.includes(`${AS_WRITTEN}\nand my other key [redacted]`), `the user's words as written:\n${exported}`);

      await vscode.commands.executeCommand('parley.openChat');
      await waitFor('the webview to take a snapshot', () => api.recorded.posted.some((m) => m.type === 'snapshot'), 20_000);
      assert.equal(containsSecret(api.recorded.posted, KEY_A), false, 'messages posted to the webview');

      for (const [name, memento] of [['global', api.context.globalState], ['workspace', api.context.workspaceState]] as const) {
        for (const k of memento.keys()) assert.equal(containsSecret(memento.get(k), KEY_A), false, `${name} state ${k}`);
      }

      // Output channel log files live under the window's log folder. They are written with a delay: wait until the
      // failed request's lines are on disk, or the scan could pass by reading the log before the leak was written.
      const echoHost = new URL(echo.origin).host;
      await waitFor(`the Parley log to record the 401 from ${echoHost}`, async () =>
        (await windowLogs(api)).some(({ text }) => text.includes(echoHost) && /\b401\b/.test(text)), 15_000);
      let sawParleyLog = false;
      for (const { file, text } of await windowLogs(api)) {
        if (/POST .*chat\/completions/.test(text)) sawParleyLog = true;
        assert.equal(text.includes(KEY_A), false, `log file ${file}`);
      }
      assert.ok(sawParleyLog, 'the Parley log was found and scanned');
    } finally {
      await userSettings({ logLevel: undefined });
      await api.keys.delete(echo.origin);
      await api.keys.delete(b.origin);
      await echo.close();
    }
  });
});
