// Chat panel, editor commands and usage, inside a real VS Code against a local server that records what it receives.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';
import { chats, chunk, parley, usageChunk, userSettings, waitFor, writeJson, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import { HistoryStore } from '../../src/vscode/history';
import { statusLabel, statusText } from '../../src/vscode/statusBar';
import { UsageStore } from '../../src/vscode/usageStore';
import { recordFrom } from '../../src/core/usageLedger';
import { pricingOnly } from '../support/pricing';

type Script = (req: RecordedRequest, res: import('node:http').ServerResponse) => void | Promise<void>;

suite('Chat, editor commands and usage', function () {
  this.timeout(30_000);
  let api: TestApi;
  let server: TestServer;
  let script: Script;

  suiteSetup(async () => {
    api = await parley();
    server = await startTestServer((req, res) => {
      // GET /models also comes from VS Code asking Parley's language model provider when the endpoint changes; these
      // tests count chat requests only, so model lists are answered and left out of `requests`.
      if (req.method === 'GET') {
        server.requests.splice(server.requests.indexOf(req), 1);
        return writeJson(res, 200, { data: [] });
      }
      return script(req, res);
    });
    await userSettings({ baseUrl: server.url, model: 'test-model', systemPrompt: 'You are a test assistant.' });
  });

  suiteTeardown(async () => {
    await server?.close();
  });

  setup(async () => {
    await api.chat.newChat();
    server.requests.length = 0;
  });

  function lastAssistant() {
    const t = api.chat.current.turns;
    return t[t.length - 1];
  }

  test('the status bar text shows the server total, and marks estimates with ≈', () => {
    const at = new Date(2026, 10, 22, 10).getTime();
    const server = recordFrom(
      { prompt_tokens: 1000, completion_tokens: 234, total_tokens: 1234, completion_tokens_details: { reasoning_tokens: 100 }, prompt_tokens_details: { cached_tokens: 0 } },
      { model: 'gpt-x', host: 'api.example.com', durationMs: 2000, source: 'chat', at },
    );
    const estimate = recordFrom({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, estimated: true }, { model: 'llama', host: '127.0.0.1:11434', durationMs: 500, source: 'explain', at });
    assert.equal(statusText(server), '1,234');
    assert.equal(statusLabel(server), 'Parley usage: last request 1,234 tokens');
    assert.equal(statusText(estimate), '≈15');
    assert.match(statusLabel(estimate), /^Parley usage: last request ≈15 tokens/);
  });

  test('a prompt streams its reply into the conversation, and the status bar shows the server total', async () => {
    script = (_req, res) => writeSse(res, [chunk('Hello'), chunk(', '), chunk('world'), chunk('', 'stop'), usageChunk(11, 3)]);
    await api.chat.send('Say hello', []);
    const reply = lastAssistant();
    assert.equal(reply.role, 'assistant');
    assert.equal(reply.text, 'Hello, world');
    assert.equal(reply.status, 'done');
    assert.deepEqual(reply.usage, { prompt: 11, completion: 3, total: 14, estimated: false });
    const body = server.requests[0].json;
    assert.equal(body.model, 'test-model');
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'You are a test assistant.' },
      { role: 'user', content: 'Say hello' },
    ]);
    assert.equal(api.usageBar.item.text, '$(pulse) 14');
    assert.equal(api.usageBar.item.accessibilityInformation?.label, 'Parley usage: last request 14 tokens');
  });

  test('Stop aborts the request: the server sees the close, the partial reply stays, usage is an estimate marked ≈', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    script = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('Partial answer'))}\n\n`);
      await hold; // never finishes on its own
    };
    const asking = api.chat.send('Tell me a long story', []);
    await waitFor('the first delta', () => lastAssistant()?.text === 'Partial answer');
    assert.equal(api.chat.generating, true);
    await vscode.commands.executeCommand('parley.cancel');
    const closed = await server.waitForClose(5_000);
    assert.equal(closed.clientClosedEarly, true);
    await asking;
    release();
    const reply = lastAssistant();
    assert.equal(reply.status, 'stopped');
    assert.equal(reply.text, 'Partial answer');
    assert.equal(reply.usage?.estimated, true);
    assert.ok((reply.usage?.completion ?? 0) > 0);
    assert.match(String(api.usageBar.item.text), /^\$\(pulse\) ≈\d/);
    assert.match(String(api.usageBar.item.accessibilityInformation?.label), /≈/);
  });

  test('a 401 becomes an error card with Set API Key; a stream with no usage chunk is estimated', async () => {
    script = (_req, res) =>
      writeJson(res, 401, { error: { message: 'Incorrect API key provided: sk-te****1234.', type: 'invalid_request_error', code: 'invalid_api_key', param: null } });
    await api.chat.send('hi', []);
    const reply = lastAssistant();
    assert.equal(reply.status, 'error');
    assert.equal(reply.error?.kind, 'auth');
    assert.ok(reply.error?.actions.includes('setApiKey'));
    assert.equal(String(reply.error?.detail ?? '').includes('sk-te****1234'), false, 'masked key echo is redacted');

    script = (_req, res) => writeSse(res, [chunk('no usage here'), chunk('', 'stop')]);
    await api.chat.send('again', []);
    assert.equal(lastAssistant().usage?.estimated, true);
    assert.match(String(api.usageBar.item.text), /≈/);
  });

  test('usage repeated on every chunk counts once, by the last value; totals persist in global storage', async () => {
    const before = await api.usage.ledger();
    const sum = (l: Record<string, { total: number }>) => Object.values(l).reduce((a, t) => a + t.total, 0);
    script = (_req, res) =>
      writeSse(res, [
        { ...chunk('a'), usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
        { ...chunk('b'), usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } },
        { ...chunk('', 'stop'), usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } },
      ]);
    await api.chat.send('count', []);
    assert.equal(api.usageBar.item.text, '$(pulse) 8');
    assert.equal(sum(await api.usage.ledger()) - sum(before), 8);
    // A new tracker over the same global storage (what a window reload, or another window, builds) sees the same totals.
    const reloaded = new UsageStore(api.context.globalStorageUri, api.context.globalState);
    assert.equal(sum(await reloaded.ledger()), sum(await api.usage.ledger()));
    reloaded.dispose();
  });

  test('two trackers over one global storage (two windows): every record counts, the global-state ledger moves once, Reset clears both', async () => {
    const storage = vscode.Uri.joinPath(api.context.globalStorageUri, `two-windows-${Date.now()}`);
    const kept = new Map<string, unknown>([['parley.usageLedger', { '2025-01-01|api.example.com|old-model': { requests: 3, prompt: 900, completion: 100, total: 1000, estimatedTokens: 0 } }]]);
    const state = {
      keys: () => [...kept.keys()],
      get: (key: string, fallback?: unknown) => (kept.has(key) ? kept.get(key) : fallback),
      update: async (key: string, value: unknown) => void (value === undefined ? kept.delete(key) : kept.set(key, value)),
    } as vscode.Memento;
    const a = new UsageStore(storage, state);
    const b = new UsageStore(storage, state);
    const sum = (l: Record<string, { total: number; requests: number }>) => Object.values(l).reduce((x, t) => [x[0] + t.total, x[1] + t.requests], [0, 0]);
    const rec = (at: number) => ({ at, model: 'm', host: '127.0.0.1:1', prompt: 300, completion: 33, total: 333, estimated: false, durationMs: 1, source: 'chat' as const });
    try {
      // Both start at once: the old ledger is moved into a file created exclusively, so it counts once.
      const now = Date.now();
      await Promise.all([a.ledger(), b.ledger(), ...[0, 1, 2, 3, 4, 5, 6].map((i) => (i % 2 ? a : b).record(rec(now + i)))]);
      assert.deepEqual(sum(await a.ledger()), [1000 + 7 * 333, 10]);
      assert.deepEqual(sum(await b.ledger()), [1000 + 7 * 333, 10]);
      assert.equal(kept.has('parley.usageLedger'), false, 'the global-state ledger was moved');
      assert.match(await a.reportText(pricingOnly(api.settings.current.pricing)), /This window: 999 tokens in 3 requests/);
      assert.equal(await a.reset(async () => true), true);
      assert.deepEqual(await b.ledger(), {}, 'a reset in one window clears the other window\'s totals too');
      await b.record(rec(Date.now() + 1));
      assert.deepEqual(sum(await a.ledger()), [333, 1], 'requests after the reset count');
    } finally {
      a.dispose();
      b.dispose();
      await vscode.workspace.fs.delete(storage, { recursive: true });
    }
  });

  test('Show Usage opens a read-only report (no Untitled document), refreshed in place; Reset Usage clears only when confirmed', async () => {
    script = (_req, res) => writeSse(res, [chunk('counted'), chunk('', 'stop'), usageChunk(40, 2)]);
    await api.chat.send('count me', []);
    const reports = () => vscode.workspace.textDocuments.filter((d) => d.uri.scheme === 'parley-report' && d.getText().startsWith('# Parley usage'));
    const untitled = () => vscode.workspace.textDocuments.filter((d) => d.isUntitled && d.getText().startsWith('# Parley usage')).length;
    await vscode.commands.executeCommand('parley.showUsage');
    const first = await waitFor('the usage report', () => reports()[0]);
    assert.equal(first.languageId, 'markdown');
    assert.match(first.getText(), /## By model[\s\S]*\| `test-model` \|/);
    assert.match(first.getText(), /## By endpoint[\s\S]*127\.0\.0\.1/);
    assert.match(first.getText(), /## By day/);
    const before = first.getText();
    await api.chat.send('count me again', []);
    await vscode.commands.executeCommand('parley.showUsage');
    await waitFor('the report to refresh', () => reports()[0]?.getText() !== before);
    assert.equal(reports().length, 1, 'one report document, refreshed');
    assert.equal(untitled(), 0, 'no Untitled document left to save');
    // What a window reload asks for when it restores an open report: the usage report made afresh, without Show Usage.
    const restored = await api.reports.provideTextDocumentContent(vscode.Uri.from({ scheme: 'parley-report', path: '/Parley Usage.md' }));
    assert.match(restored, /^# Parley usage[\s\S]*All time: /);
    assert.match(await api.reports.provideTextDocumentContent(vscode.Uri.from({ scheme: 'parley-report', path: '/Old Report.md' })), /earlier window/);
    const manifest = vscode.extensions.getExtension('parley.parley')?.packageJSON as { activationEvents?: string[] };
    assert.deepEqual(manifest.activationEvents, ['onFileSystem:parley-report', 'onFileSystem:parley-proposed'], 'restoring a report (or a stale review tab) activates Parley, and nothing else does eagerly');

    assert.equal(await api.usage.reset(async () => false), false);
    assert.ok(Object.keys(await api.usage.ledger()).length > 0, 'declined: totals kept');
    assert.equal(await api.usage.reset(async () => true), true);
    assert.deepEqual(await api.usage.ledger(), {}, 'confirmed: all-time totals cleared');
  });

  test('the conversation survives the view being closed and rebuilt, and reloads from storage', async () => {
    script = (_req, res) => writeSse(res, [chunk('Persisted reply'), chunk('', 'stop'), usageChunk(3, 2)]);
    await vscode.commands.executeCommand('parley.openChat');
    await api.chat.send('Remember me', []);
    const id = api.chat.current.id;
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    api.recorded.posted.length = 0;
    await vscode.commands.executeCommand('parley.openChat');
    const snap = await waitFor('a snapshot from the rebuilt view', () =>
      api.recorded.posted.find((m) => m.type === 'snapshot' && m.conversation.id === id), 20_000);
    assert.ok(snap.type === 'snapshot');
    assert.deepEqual(snap.conversation.turns.map((t) => t.text), ['Remember me', 'Persisted reply']);
    // What a window reload does: read only the open conversation from storage.
    const store = new HistoryStore(api.context.globalStorageUri, api.context.globalState);
    assert.equal(store.openId(), id);
    const loaded = await store.load(id);
    assert.deepEqual(loaded?.turns.map((t) => t.text), ['Remember me', 'Persisted reply']);
    assert.equal((await store.list())[0].title, 'Remember me');
  });

  test('the view closed and rebuilt mid-stream: its snapshot plus the later deltas give exactly the final text and reasoning', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const event = (delta: object) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'test-model', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    let turnId = '';
    const rebuilt = () => api.recorded.posted.some((m) => m.type === 'snapshot' && m.conversation.turns.some((t) => t.id === turnId));
    let last = 0;
    script = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Paced, so that deltas keep arriving while the rebuilt view asks for and receives its snapshot, and for a
      // while after it (the server runs in this extension host, so it can see the snapshot go out).
      for (let i = 0, after = 0; i < 5000 && after < 40; i++) {
        res.write(event(i % 3 === 0 ? { reasoning_content: `r${i} ` } : { content: `w${i} ` }));
        last = i;
        if (i === 20) await hold;
        else await new Promise((r) => setTimeout(r, 4));
        if (i > 20 && rebuilt()) after++;
      }
      res.write(`data: ${JSON.stringify(chunk('', 'stop'))}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    await vscode.commands.executeCommand('parley.openChat');
    const asking = api.chat.send('Stream while I close the panel', []);
    await waitFor('the held part of the stream', () => lastAssistant()?.text.includes('w20 '));
    turnId = lastAssistant().id;
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    api.recorded.posted.length = 0;
    await vscode.commands.executeCommand('parley.openChat');
    release();
    await asking;
    const reply = lastAssistant();
    assert.equal(reply.status, 'done');
    const posted = [...api.recorded.posted];
    const at = posted.map((m) => m.type === 'snapshot' && m.conversation.turns.some((t) => t.id === turnId)).lastIndexOf(true);
    assert.ok(at >= 0, 'the rebuilt view got a snapshot holding the streaming turn');
    const snap = posted[at];
    assert.ok(snap.type === 'snapshot');
    const seen = snap.conversation.turns.find((t) => t.id === turnId)!;
    let text = seen.text;
    let reasoning = seen.reasoning ?? '';
    for (const m of posted.slice(at + 1)) {
      if (m.type !== 'delta' || m.turnId !== turnId) continue;
      text += m.text ?? '';
      reasoning += m.reasoning ?? '';
    }
    assert.ok(text.length > seen.text.length, 'deltas followed the snapshot (the stream was still going)');
    assert.equal(text, reply.text, 'no delta lost or applied twice');
    assert.equal(reasoning, reply.reasoning);
    assert.ok(seen.status === 'streaming', 'the snapshot was taken mid-stream');
    assert.match(reply.text, new RegExp(`^w1 w2 w4 .* w${last % 3 === 0 ? last - 1 : last} $`));
  });

  test('Regenerate replaces the last reply, Edit puts the last question back, Continue follows a truncated reply', async () => {
    let n = 0;
    script = (_req, res) => {
      n++;
      writeSse(res, n === 1 ? [chunk('cut'), chunk('', 'length')] : [chunk(`reply ${n}`), chunk('', 'stop')]);
    };
    await api.chat.send('Question one', []);
    assert.equal(lastAssistant().status, 'truncated');
    await api.chat.continueReply();
    assert.equal(lastAssistant().text, 'reply 2');
    const sent = server.requests[1].json.messages;
    assert.deepEqual(sent.at(-2), { role: 'assistant', content: 'cut' });
    assert.match(sent.at(-1).content, /Continue/);
    await api.chat.regenerate();
    assert.equal(lastAssistant().text, 'reply 3');
    assert.equal(api.chat.current.turns.filter((t) => t.role === 'assistant').length, 2, 'the regenerated reply replaced the old one');
    api.recorded.posted.length = 0;
    await vscode.commands.executeCommand('parley.openChat');
    await api.chat.editLast();
    assert.equal(api.chat.current.turns.at(-1)?.text, 'cut', 'the last question and its reply were taken out');
    const back = api.recorded.posted.find((m) => m.type === 'composerText');
    assert.ok(back && back.type === 'composerText');
    assert.match(back.text, /Continue/);
  });

  test('Add Selection to Chat attaches a chip that is sent as a fenced block with path and language', async () => {
    script = (_req, res) => writeSse(res, [chunk('Seen.'), chunk('', 'stop')]);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    assert.ok(folder);
    const file = vscode.Uri.joinPath(folder, 'chip.py');
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode('x = 1\ny = 2\n'));
    const editor = await vscode.window.showTextDocument(file);
    editor.selection = new vscode.Selection(1, 0, 1, 5);
    await vscode.commands.executeCommand('parley.addSelectionToChat');
    await api.chat.send('What is y?', []);
    const user = String(server.requests[0].json.messages.at(-1).content);
    assert.match(user, /^`chip\.py`, line 2:\n```python\ny = 2\n```\n\nWhat is y\?$/);
    assert.deepEqual(api.chat.current.turns.at(-2)?.contextItems?.map((c) => c.path), ['chip.py']);
  });

  test('Explain Selection sends the system prompt and the fenced selection with language and path', async () => {
    script = (_req, res) => writeSse(res, [chunk('It adds two numbers.'), chunk('', 'stop'), usageChunk(40, 6)]);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    assert.ok(folder, 'the test workspace has a folder');
    const file = vscode.Uri.joinPath(folder, 'explain-me.ts');
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode('// header\nexport function add(a: number, b: number) {\n  return a + b;\n}\n'));
    const editor = await vscode.window.showTextDocument(file);
    editor.selection = new vscode.Selection(1, 0, 3, 1);
    await vscode.commands.executeCommand('parley.explainSelection');
    await waitFor('the explain request to finish', () => !api.chat.generating && lastAssistant()?.status === 'done');
    const body = server.requests[0].json;
    assert.equal(body.messages[0].role, 'system');
    assert.equal(body.messages[0].content, 'You are a test assistant.');
    const user = String(body.messages[1].content);
    assert.match(user, /`explain-me\.ts`, lines 2-4:\n```typescript\nexport function add\(a: number, b: number\) \{\n  return a \+ b;\n\}\n```/);
    assert.match(user, /Explain/);
    assert.equal(lastAssistant().text, 'It adds two numbers.');
    assert.equal(api.usageBar.item.text, '$(pulse) 46');
  });

  test('Explain Selection with no selection explains the enclosing block and says so; long selections are cut', async () => {
    script = (_req, res) => writeSse(res, [chunk('ok'), chunk('', 'stop')]);
    const doc = await vscode.workspace.openTextDocument({ language: 'python', content: 'def f(x):\n    y = x\n    return y\n\nz = 1\n' });
    const editor = await vscode.window.showTextDocument(doc);
    editor.selection = new vscode.Selection(2, 4, 2, 4);
    await vscode.commands.executeCommand('parley.explainSelection');
    await waitFor('the explain request', () => server.requests.length === 1 && !api.chat.generating);
    const user = api.chat.current.turns.filter((t) => t.role === 'user').pop();
    assert.match(String(user?.note), /enclosing block/);
    assert.match(String(server.requests[0].json.messages[1].content), /```python\ndef f\(x\):\n    y = x\n    return y\n```/);

    // Outside any block: the line itself, and the panel opens when it was closed. On an empty line: nothing is sent.
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await waitFor('the panel to close', () => !api.view.visible);
    editor.selection = new vscode.Selection(4, 2, 4, 2);
    await vscode.commands.executeCommand('parley.explainSelection');
    await waitFor('the line explain request', () => server.requests.length === 2 && !api.chat.generating);
    assert.match(String(api.chat.current.turns.filter((t) => t.role === 'user').pop()?.note), /current line: .*line 5/);
    assert.match(String(server.requests[1].json.messages.at(-1).content), /```python\nz = 1\n```/);
    await waitFor('the chat panel to open', () => api.view.visible);
    const flat = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'python', content: 'x = 1\n\ny = 2\n' }));
    flat.selection = new vscode.Selection(1, 0, 1, 0);
    await vscode.commands.executeCommand('parley.explainSelection');
    assert.equal(server.requests.length, 2, 'an empty line outside any block sends nothing');
    server.requests.length = 1;

    await userSettings({ maxContextChars: 100 });
    try {
      const big = await vscode.workspace.openTextDocument({ language: 'plaintext', content: 'line of text\n'.repeat(50) });
      const e2 = await vscode.window.showTextDocument(big);
      e2.selection = new vscode.Selection(0, 0, 50, 0);
      await vscode.commands.executeCommand('parley.explainSelection');
      await waitFor('the second explain request', () => server.requests.length === 2 && !api.chat.generating);
      const u2 = api.chat.current.turns.filter((t) => t.role === 'user').pop();
      assert.match(String(u2?.note), /cut to 100 characters/);
      const sent = String(server.requests[1].json.messages.at(-1).content);
      assert.ok(sent.split('line of text').length - 1 <= 8, 'at most 100 characters of the selection went out');
    } finally {
      await userSettings({ maxContextChars: undefined });
    }
  });
});

suite('Generate Code (JSON mode)', function () {
  this.timeout(30_000);
  let api: TestApi;
  let server: TestServer;
  let script: Script;

  suiteSetup(async () => {
    api = await parley();
    server = await startTestServer((req, res) => script(req, res));
    await userSettings({ baseUrl: server.url, model: 'gen-model' });
    await api.requester.resetAdaptations();
  });

  suiteTeardown(async () => {
    await server?.close();
  });

  setup(() => {
    server.requests.length = 0;
  });

  /** Runs the command with its description as an argument (the UI test types it into the input box). */
  async function generate(description: string): Promise<void> {
    await vscode.commands.executeCommand('parley.generateCode', description);
  }

  function completion(content: string, usage = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 }) {
    return { id: 'g', object: 'chat.completion', created: 1, model: 'gen-model', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage };
  }

  test('sends response_format json_object and opens an untitled editor with the language and code', async () => {
    script = (_req, res) => writeJson(res, 200, completion(JSON.stringify({ language: 'python', filename: 'add.py', code: 'def add(a, b):\n    return a + b\n' })));
    await generate('a python add function');
    const body = chats(server)[0].json;
    assert.deepEqual(body.response_format, { type: 'json_object' });
    assert.match(JSON.stringify(body.messages[0]), /JSON/);
    const doc = vscode.window.activeTextEditor?.document;
    assert.ok(doc?.isUntitled);
    assert.equal(doc?.languageId, 'python');
    assert.equal(doc?.getText(), 'def add(a, b):\n    return a + b\n');
    assert.match(doc?.uri.path ?? '', /add\.py$/);
    assert.equal(api.usageBar.item.text, '$(pulse) 30');
  });

  test('a second generation with the same suggested file name gets its own editor, holding only its own code', async () => {
    let n = 0;
    script = (_req, res) => writeJson(res, 200, completion(JSON.stringify({ language: 'python', filename: 'same.py', code: `print(${++n})\n` })));
    await generate('print one');
    const first = vscode.window.activeTextEditor?.document;
    await generate('print two');
    const second = vscode.window.activeTextEditor?.document;
    assert.ok(first && second);
    assert.notEqual(first.uri.toString(), second.uri.toString());
    assert.equal(first.getText(), 'print(1)\n');
    assert.equal(second.getText(), 'print(2)\n');
    assert.match(second.uri.path, /same-2\.py$/);
  });

  test('an invalid JSON reply opens the raw reply so nothing is lost', async () => {
    script = (_req, res) => writeJson(res, 200, completion('Here is code: def broken('));
    await generate('something');
    const doc = vscode.window.activeTextEditor?.document;
    assert.ok(doc?.isUntitled);
    assert.equal(doc?.getText(), 'Here is code: def broken(');
  });

  test('a 400 naming response_format retries without it, and the next call skips it', async () => {
    script = (req, res) => {
      if (req.json?.response_format) {
        writeJson(res, 400, { error: "'response_format.type' must be 'json_schema' or 'text'" });
      } else {
        writeJson(res, 200, completion('Sure:\n```json\n{"language":"javascript","filename":"x.js","code":"let x = 1;"}\n```'));
      }
    };
    await generate('x');
    assert.equal(chats(server).length, 2);
    assert.ok(chats(server)[0].json.response_format);
    assert.equal(chats(server)[1].json.response_format, undefined);
    assert.equal(vscode.window.activeTextEditor?.document.getText(), 'let x = 1;');
    server.requests.length = 0;
    await generate('y');
    assert.equal(chats(server).length, 1);
    assert.equal(chats(server)[0].json.response_format, undefined);
  });
});
