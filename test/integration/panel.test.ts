// The panel's host actions, driven through the view's own message routing inside a real VS Code: code blocks into
// editors, links, the history list, restore after a reload, the model picker, presets, keys, and how replies end.
import * as assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import * as vscode from 'vscode';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';
import { chunk, memoryMemento, parley, usageChunk, userSettings, waitFor, windowLogs, writeJson, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import { ChatController } from '../../src/vscode/chatController';
import { statusOf } from '../../src/vscode/turn';
import { vscodeChatUi } from '../../src/vscode/chatUi';
import { HistoryStore } from '../../src/vscode/history';
import type { ChatResult, EndState } from '../../src/core/types';
import type { HostMessage } from '../../src/shared/protocol';

type Script = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}


suite('Panel: code blocks, links, history, models, presets and keys', function () {
  this.timeout(30_000);
  let api: TestApi;
  let server: TestServer;
  let script: Script;
  let saved: { baseUrl: unknown; model: unknown };

  const config = () => vscode.workspace.getConfiguration('parley');
  const conversationsDir = () => vscode.Uri.joinPath(api.context.globalStorageUri, 'conversations');
  const fileOf = (id: string) => vscode.Uri.joinPath(conversationsDir(), `${id}.json`);
  const posted = () => api.recorded.posted;
  /** The last message of `type` posted to the view (that also passes `where`). */
  const lastOf = <T extends HostMessage['type']>(type: T, where: (m: Extract<HostMessage, { type: T }>) => boolean = () => true) =>
    [...posted()].reverse().find((m): m is Extract<HostMessage, { type: T }> => m.type === type && where(m as Extract<HostMessage, { type: T }>));

  /** Delivers a message as if the webview had sent it: validated and routed by the real ChatViewProvider. */
  function route(message: Record<string, unknown>): Promise<void> {
    const view = api.view as unknown as { receive?: (raw: unknown) => Promise<void> };
    assert.equal(typeof view.receive, 'function', 'ChatViewProvider routes webview messages through receive()');
    return view.receive!.call(api.view, message);
  }

  /** Closes an editor's document without a save prompt. */
  async function discard(doc: vscode.TextDocument): Promise<void> {
    if (doc.isClosed) return;
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }

  suiteSetup(async () => {
    api = await parley();
    saved = { baseUrl: config().inspect('baseUrl')?.globalValue, model: config().inspect('model')?.globalValue };
    server = await startTestServer((req, res) => {
      // This server lists no models: its header offers none, and the user types the name.
      if (req.method === 'GET') return writeJson(res, 404, { error: { message: 'no models here' } });
      return script(req, res);
    });
    await userSettings({ baseUrl: server.url, model: 'panel-model' });
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be resolved', () => api.recorded.html, 20_000);
    // What the webview sends when it loads: the view attaches and posts a snapshot.
    await route({ type: 'ready' });
    await waitFor('a snapshot', () => posted().some((m) => m.type === 'snapshot'));
  });

  suiteTeardown(async () => {
    await userSettings({ baseUrl: saved?.baseUrl, model: saved?.model });
    await server?.close();
  });

  setup(async () => {
    await api.chat.newChat();
    server.requests.length = 0;
    posted().length = 0;
    script = (_req, res) => writeSse(res, [chunk('ok'), chunk('', 'stop')]);
  });

  // ---- code blocks ----------------------------------------------------------------------------

  test('Insert at Cursor puts the code at the cursor of the last active text editor, even when a non-text editor has focus', async () => {
    const left = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ content: 'left editor\n' }), vscode.ViewColumn.One);
    const target = await vscode.workspace.openTextDocument({ content: 'let x = ;\nlet y = OLD;\n' });
    const editor = await vscode.window.showTextDocument(target, vscode.ViewColumn.Two);
    editor.selections = [new vscode.Selection(0, 8, 0, 8)];
    // A webview editor takes the focus: activeTextEditor is undefined, as when the user clicks into the chat.
    const panel = vscode.window.createWebviewPanel('parleyTest.blank', 'Not a text editor', { viewColumn: vscode.ViewColumn.Three, preserveFocus: false }, {});
    try {
      await waitFor('no active text editor', () => vscode.window.activeTextEditor === undefined);
      await route({ type: 'insertCode', code: '42' });
      assert.equal(target.getText(), 'let x = 42;\nlet y = OLD;\n', 'inserted at the cursor of the last active editor');
      assert.equal(left.document.getText(), 'left editor\n', 'the other visible editor is untouched');
      assert.equal(vscode.window.activeTextEditor?.document, target, 'the editor it went into is shown');

      // Every cursor gets the code; a selection is replaced.
      const active = vscode.window.activeTextEditor!;
      active.selections = [new vscode.Selection(0, 0, 0, 0), new vscode.Selection(1, 8, 1, 11)];
      await route({ type: 'insertCode', code: 'Z' });
      assert.equal(target.getText(), 'Zlet x = 42;\nlet y = Z;\n');
    } finally {
      panel.dispose();
      await discard(target);
      await discard(left.document);
      await vscode.commands.executeCommand('workbench.action.editorLayoutSingle');
    }
  });

  test('Open in New Editor opens a new untitled document with the block\'s language (plain text when unknown)', async () => {
    const opened: vscode.TextDocument[] = [];
    try {
      // An editor an earlier test left active is not the one this opens: wait for the new one.
      const earlier = vscode.window.activeTextEditor?.document;
      await route({ type: 'openCode', code: 'def f():\n    return 1\n', language: 'python' });
      const py = await waitFor('the python editor', () => (vscode.window.activeTextEditor?.document !== earlier ? vscode.window.activeTextEditor?.document : undefined));
      opened.push(py);
      assert.equal(py.isUntitled, true);
      assert.equal(py.languageId, 'python');
      assert.equal(py.getText(), 'def f():\n    return 1\n');

      await route({ type: 'openCode', code: 'def f():\n    return 1\n', language: 'python' });
      const second = await waitFor('a second editor', () => (vscode.window.activeTextEditor?.document !== py ? vscode.window.activeTextEditor?.document : undefined));
      opened.push(second);
      assert.equal(second.getText(), 'def f():\n    return 1\n', 'a new document each time, not appended to the last');
      assert.equal(py.getText(), 'def f():\n    return 1\n');

      for (const language of ['no-such-language', 'bad language!']) {
        const before = vscode.window.activeTextEditor?.document;
        await route({ type: 'openCode', code: `code in ${language}`, language });
        const doc = await waitFor(`the editor for ${language}`, () => (vscode.window.activeTextEditor?.document !== before ? vscode.window.activeTextEditor?.document : undefined));
        opened.push(doc);
        assert.equal(doc.isUntitled, true);
        assert.equal(doc.languageId, 'plaintext', language);
        assert.equal(doc.getText(), `code in ${language}`);
      }
    } finally {
      for (const d of opened) await discard(d);
    }
  });

  // ---- links ----------------------------------------------------------------------------------

  test('a command:, vscode:, file:, javascript: or data: link from the chat opens nothing and is logged as refused', async () => {
    let probes = 0;
    const probe = vscode.commands.registerCommand('parleyTest.linkProbe', () => {
      probes++;
    });
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    assert.ok(folder, 'the test workspace has a folder');
    const file = vscode.Uri.joinPath(folder, 'link-target.txt');
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode('must not open\n'));
    const editorsBefore = vscode.window.visibleTextEditors.length;
    try {
      const links: Array<[string, string]> = [
        ['command:parleyTest.linkProbe', 'command:'],
        ['vscode://parley.parley/probe', 'vscode:'],
        [file.toString(), 'file:'],
        ['javascript:alert(1)', 'javascript:'],
        ['data:text/html,<script>alert(1)</script>', 'data:'],
      ];
      for (const [url] of links) await route({ type: 'openLink', url });
      assert.equal(probes, 0, 'the command link did not run its command');
      assert.equal(vscode.workspace.textDocuments.some((d) => d.uri.toString() === file.toString()), false, 'the file link opened no document');
      assert.equal(vscode.window.visibleTextEditors.length, editorsBefore, 'no editor opened');

      // Each link reached the filter and was refused by it (not lost on the way): the log says so, per scheme.
      await waitFor('the refusals in the Parley log', async () => {
        const text = (await windowLogs(api)).map((l) => l.text).join('');
        return links.every(([, scheme]) => text.includes(`Refused to open a ${scheme} link from the chat.`));
      }, 15_000);
      assert.equal(probes, 0);
    } finally {
      probe.dispose();
      await vscode.workspace.fs.delete(file);
    }
  });

  // ---- history --------------------------------------------------------------------------------

  test('the history list opens a conversation, deletes one (the open one starts a new chat) and clears all', async () => {
    script = (req, res) => writeSse(res, [chunk(`Reply to ${String(req.json?.messages?.at(-1)?.content)}`), chunk('', 'stop')]);
    await api.chat.send('First topic', []);
    const first = api.chat.current.id;
    await api.chat.newChat();
    await api.chat.send('Second topic', []);
    const second = api.chat.current.id;
    assert.ok(await exists(fileOf(first)), 'the first conversation is stored');
    assert.ok(await exists(fileOf(second)), 'the second conversation is stored');

    posted().length = 0;
    await route({ type: 'requestHistory' });
    const listed = lastOf('history');
    assert.ok(listed, 'the history list was posted');
    const item = (id: string) => listed.items.find((i) => i.id === id);
    assert.deepEqual([item(first)?.title, item(first)?.turnCount], ['First topic', 2]);
    assert.deepEqual([item(second)?.title, item(second)?.turnCount], ['Second topic', 2]);
    assert.ok(listed.items.findIndex((i) => i.id === second) < listed.items.findIndex((i) => i.id === first), 'newest first');

    posted().length = 0;
    await route({ type: 'openConversation', id: first });
    assert.equal(api.chat.current.id, first);
    assert.deepEqual(api.chat.current.turns.map((t) => t.text), ['First topic', 'Reply to First topic']);
    assert.equal(api.history.openId(), first, 'remembered as open for the next reload');
    const snap = lastOf('snapshot');
    assert.equal(snap?.conversation.id, first, 'the view is redrawn with it');
    assert.deepEqual(snap?.conversation.turns.map((t) => t.text), ['First topic', 'Reply to First topic']);

    await route({ type: 'openConversation', id: 'no-such-conversation' });
    assert.equal(api.chat.current.id, first, 'an unknown id changes nothing');

    posted().length = 0;
    await route({ type: 'deleteConversation', id: second });
    assert.equal(await exists(fileOf(second)), false, 'its file is deleted');
    assert.equal((await api.history.list()).some((i) => i.id === second), false, 'and it left the list');
    assert.equal(lastOf('history')?.items.some((i) => i.id === second), false, 'and the list posted to the view');
    assert.equal(api.chat.current.id, first, 'the open conversation stays open');

    await route({ type: 'deleteConversation', id: first });
    assert.notEqual(api.chat.current.id, first, 'deleting the open conversation starts a new chat');
    assert.equal(api.chat.current.turns.length, 0);
    assert.equal(api.history.openId(), undefined);
    assert.equal(await exists(fileOf(first)), false);

    await api.chat.send('Third topic', []);
    const third = api.chat.current.id;
    assert.ok((await api.history.list()).length > 0);
    posted().length = 0;
    await route({ type: 'clearHistory' });
    assert.deepEqual(await api.history.list(), [], 'the list is empty');
    assert.equal(await exists(conversationsDir()), false, 'no conversation file is left');
    assert.notEqual(api.chat.current.id, third);
    assert.equal(api.chat.current.turns.length, 0);
    assert.equal(api.history.openId(), undefined);
    assert.deepEqual(lastOf('history')?.items, []);
    assert.equal(lastOf('snapshot')?.conversation.turns.length, 0, 'the view shows the new, empty chat');

    // A reload after Clear restores nothing.
    const reloaded = new ChatController({ requester: api.requester, history: new HistoryStore(api.context.globalStorageUri, api.context.globalState), log: api.log, settings: api.settings, ui: vscodeChatUi });
    try {
      await reloaded.restore();
      assert.equal(reloaded.current.turns.length, 0);
    } finally {
      reloaded.dispose();
    }
  });

  test('restore() after a reload reads only the open conversation and marks a reply that was streaming as interrupted', async () => {
    script = (_req, res) => writeSse(res, [chunk('Older reply'), chunk('', 'stop')]);
    await api.chat.send('An older conversation', []);
    const other = api.chat.current.id;
    await api.chat.newChat();

    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    script = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('Half an'))}\n\n`);
      await hold;
      res.end(`data: ${JSON.stringify(chunk(' answer', 'stop'))}\n\ndata: [DONE]\n\n`);
    };
    const asking = api.chat.send('Interrupted question', []);
    try {
      await waitFor('the first delta', () => api.chat.current.turns.at(-1)?.text === 'Half an');
      const open = api.chat.current.id;
      assert.equal(api.history.openId(), open);
      // Another conversation's file is corrupt: a restore that read it would fail or show it.
      await vscode.workspace.fs.writeFile(fileOf(other), new TextEncoder().encode('{ this is not JSON'));

      // What a window reload builds: a new store and controller over the same global storage and state.
      const store = new HistoryStore(api.context.globalStorageUri, api.context.globalState);
      const read: string[] = [];
      const load = store.read.bind(store);
      store.read = async (id: string) => {
        read.push(id);
        return load(id);
      };
      const reloaded = new ChatController({ requester: api.requester, history: store, log: api.log, settings: api.settings, ui: vscodeChatUi });
      try {
        await reloaded.restore();
        assert.deepEqual(read, [open], 'only the open conversation was read');
        assert.equal(reloaded.current.id, open);
        assert.equal(reloaded.current.title, 'Interrupted question');
        const turns = reloaded.current.turns;
        // Its owner is this extension host's session, which a reload ends (test/integration/durability.test.ts has the rest).
        assert.deepEqual(turns.map((t) => [t.role, t.status]), [['user', 'done'], ['assistant', 'interrupted']], 'the streaming reply is marked interrupted');
        assert.equal(turns[0].text, 'Interrupted question');
        assert.ok('Half an'.startsWith(turns[1].text), 'the reply keeps what was stored of it');
        assert.equal(reloaded.generating, false);
        assert.ok((await store.list()).some((i) => i.id === other && i.damaged), 'the other conversation is still listed, as damaged');
      } finally {
        reloaded.dispose();
      }
    } finally {
      release();
      await asking;
    }
    assert.equal(api.chat.current.turns.at(-1)?.text, 'Half an answer', 'the running reply was not disturbed');

    // An open conversation whose file is corrupt or gone: restore starts empty instead of failing.
    for (const open of [other, 'gone0000', undefined]) {
      const store = new HistoryStore(api.context.globalStorageUri, memoryMemento());
      await store.setOpen(open);
      const reloaded = new ChatController({ requester: api.requester, history: store, log: api.log, settings: api.settings, ui: vscodeChatUi });
      try {
        await reloaded.restore();
        assert.equal(reloaded.current.turns.length, 0, `open conversation ${String(open)}`);
        assert.notEqual(reloaded.current.id, other);
      } finally {
        reloaded.dispose();
      }
    }
    await api.chat.deleteConversation(other);
  });

  // ---- model, presets, keys ---------------------------------------------------------------------

  test('the header offers the models GET /v1/models returned; picking one writes parley.model to user settings', async () => {
    const models = await startTestServer((req, res) => {
      if (req.method === 'GET' && req.path === '/v1/models') {
        return writeJson(res, 200, { object: 'list', data: [{ id: 'alpha-7b', object: 'model' }, { id: 'beta-13b', object: 'model' }] });
      }
      return writeSse(res, [chunk(`model was ${String(req.json?.model)}`), chunk('', 'stop')]);
    });
    const host = new URL(models.url).host;
    try {
      await userSettings({ baseUrl: models.url, model: 'alpha-7b' });
      const header = await waitFor('a header listing the server\'s models', () =>
        lastOf('header', (m) => m.header.endpoint === host && m.header.model === 'alpha-7b' && m.header.models.length > 0));
      assert.ok(header.type === 'header');
      assert.deepEqual(header.header.models, ['alpha-7b', 'beta-13b']);
      assert.equal(header.header.model, 'alpha-7b');
      assert.ok(models.requests.some((r) => r.method === 'GET' && r.path === '/v1/models'));

      posted().length = 0;
      await route({ type: 'setModel', model: 'beta-13b' });
      const model = config().inspect('model');
      assert.equal(model?.globalValue, 'beta-13b', 'written to user settings');
      assert.equal(model?.workspaceValue, undefined, 'not to the workspace');
      await waitFor('the header to show the picked model', () =>
        posted().some((m) => m.type === 'header' && m.header.model === 'beta-13b' && m.header.models.length === 2));
      await api.chat.send('which model?', []);
      assert.equal(api.chat.current.turns.at(-1)?.text, 'model was beta-13b', 'the next request uses it');

      await route({ type: 'setModel', model: 'two words' });
      await route({ type: 'setModel', model: '   ' });
      assert.equal(config().inspect('model')?.globalValue, 'beta-13b', 'an empty name or one with spaces is not written');
    } finally {
      await userSettings({ baseUrl: server.url, model: 'panel-model' });
      await models.close();
    }
    // A server that lists no models: the header offers no picker, so the user types the name. (The conversation
    // above keeps the model it used: a new one starts with the settings' model.)
    await api.chat.newChat();
    posted().length = 0;
    await api.chat.views.endpointChanged();
    const plain = await waitFor('a header for the test server', () =>
      lastOf('header', (m) => m.header.endpoint === new URL(server.url).host));
    assert.ok(plain.type === 'header');
    assert.deepEqual(plain.header.models, []);
    assert.equal(plain.header.model, 'panel-model');
  });

  test('a setup-card preset becomes a profile in user settings and the one in use; one that needs a key asks for it', async () => {
    const profile = (name: string) => (config().inspect<Array<{ name: string; baseUrl: string; model: string }>>('endpoints')?.globalValue ?? []).find((p) => p.name === name);
    try {
      await route({ type: 'applyPreset', id: 'ollama' });
      assert.deepEqual(profile('Ollama (local)'), { name: 'Ollama (local)', baseUrl: 'http://localhost:11434', model: 'llama3.2' });
      assert.equal(config().inspect('endpoint')?.globalValue, 'Ollama (local)', 'the new profile is the one in use');
      let t = await api.requester.target(undefined, false, api.chat.selection());
      assert.ok(t.kind === 'ready' && t.endpoint.origin === 'http://localhost:11434' && t.settings.model === 'llama3.2');

      await route({ type: 'applyPreset', id: 'lmstudio' });
      assert.deepEqual(profile('LM Studio (local)'), { name: 'LM Studio (local)', baseUrl: 'http://localhost:1234', model: 'local-model' });
      assert.ok(profile('Ollama (local)'), 'the earlier profile stays');
      assert.equal(config().inspect('baseUrl')?.globalValue, server.url, 'the Default profile (parley.baseUrl) is left as it was');

      await route({ type: 'applyPreset', id: 'no-such-preset' });
      assert.equal(config().inspect('endpoint')?.globalValue, 'LM Studio (local)', 'an unknown preset changes nothing');

      // OpenAI needs a key and none is stored: the profile is written, then the key is asked for. Dismissed, nothing is stored.
      const applying = route({ type: 'applyPreset', id: 'openai' });
      await waitFor('the preset to be written', () => profile('OpenAI')?.baseUrl === 'https://api.openai.com' && config().inspect('endpoint')?.globalValue === 'OpenAI');
      await driveQuickInput('the key prompt to be dismissed', applying, ['workbench.action.closeQuickOpen']);
      assert.equal(api.keys.origins().includes('https://api.openai.com'), false, 'no key stored');
      t = await api.requester.target(undefined, false, api.chat.selection());
      assert.ok(t.kind === 'no-key' && t.origin === 'https://api.openai.com');
      assert.equal(config().inspect('endpoints')?.workspaceValue, undefined, 'nothing written to the workspace');
    } finally {
      await userSettings({ baseUrl: server.url, model: 'panel-model', endpoints: undefined, endpoint: undefined });
      await api.chat.newChat();
    }
    assert.equal(config().inspect('baseUrl')?.globalValue, server.url, 'settings restored');
  });

  /** Runs quick-input `commands`, again and again, until `running` (what opened the quick input) settles; awaits it. */
  async function driveQuickInput(what: string, running: Thenable<unknown>, commands: string[]): Promise<void> {
    let settled = false;
    const done = Promise.resolve(running).finally(() => (settled = true));
    await waitFor(what, async () => {
      for (const c of commands) if (!settled) await vscode.commands.executeCommand(c);
      return settled;
    });
    await done;
  }

  /** Runs Parley: Clear API Key and accepts the first entry or the last ("All stored keys") of its pick. */
  async function clearApiKeyPicking(which: 'first' | 'last'): Promise<void> {
    // The first entry is active when the pick opens. The last is chosen in a step of its own (twice: a pick that is
    // still receiving its items focuses the first entry again), then accepted.
    const commands = which === 'first' ? ['quickInput.accept'] : ['quickInput.last', 'quickInput.last', 'quickInput.accept'];
    await driveQuickInput(`the Clear API Key pick (${which} entry)`, vscode.commands.executeCommand('parley.clearApiKey'), commands);
  }

  test('Clear API Key removes only the picked origin\'s key, or every key with "All stored keys"', async () => {
    const origins = ['https://k1.parley.invalid', 'https://k2.parley.invalid', 'https://k3.parley.invalid'];
    const keyOf = (o: string) => `sk-panel-${o.slice(8, 10)}-0123456789abcdef`;
    try {
      for (const o of origins) await api.keys.set(o, keyOf(o));
      const listed = api.keys.origins();
      assert.deepEqual(listed.slice(-3), origins);

      await clearApiKeyPicking('first');
      assert.equal((await api.keys.get(listed[0])).kind, 'missing', `the key for ${listed[0]} is gone`);
      for (const o of listed.slice(1)) assert.deepEqual(await api.keys.get(o), { kind: 'key', key: keyOf(o) }, `${o} keeps its key`);
      assert.deepEqual(api.keys.origins(), listed.slice(1));

      // "All stored keys" is the last entry. Should the pick still be filling when the last entry is chosen,
      // the first entry is taken instead: that outcome alone is put back and tried again.
      for (let attempt = 1; ; attempt++) {
        const remaining = api.keys.origins();
        await clearApiKeyPicking('last');
        const left = api.keys.origins();
        if (attempt < 3 && left.length === remaining.length - 1 && left.join() === remaining.slice(1).join()) {
          await api.keys.set(remaining[0], keyOf(remaining[0]));
          continue;
        }
        assert.deepEqual(left, [], 'every origin left the list');
        for (const o of listed) assert.equal((await api.keys.get(o)).kind, 'missing', o);
        break;
      }

      // With no key stored, the command says so and asks nothing (a pick would never settle here).
      await vscode.commands.executeCommand('parley.clearApiKey');
    } finally {
      for (const o of origins) await api.keys.delete(o);
    }
  });

  test('"This endpoint needs no key" marks the origin keyless: the setup card goes and requests carry no key', async () => {
    const remote = 'https://parley-panel-no-key.invalid';
    try {
      await userSettings({ baseUrl: remote });
      const card = await waitFor('the no-key setup card', () =>
        lastOf('setup', (m) => m.setup?.origin === remote));
      assert.ok(card.type === 'setup' && card.setup?.actions.includes('markNoKey'));

      posted().length = 0;
      await route({ type: 'action', action: 'markNoKey' });
      assert.deepEqual(await api.keys.get(remote), { kind: 'none-needed' });
      assert.equal(api.keys.origins().includes(remote), false, 'no key was stored');
      const t = await api.requester.target();
      assert.ok(t.kind === 'ready', 'the endpoint is usable');
      assert.equal(t.endpoint.origin, remote);
      assert.equal(t.apiKey, undefined);
      await waitFor('the setup card to go', () => posted().some((m) => m.type === 'setup' && m.setup === undefined));
    } finally {
      await api.keys.delete(remote);
      await userSettings({ baseUrl: server.url });
    }
    const t = await api.requester.target();
    assert.ok(t.kind === 'ready' && t.endpoint.origin === server.origin);
  });

  test('Retry and Continue reach the chat by one route, the action: Continue asks on, Retry asks again in place', async () => {
    script = (_req, res) => writeSse(res, [chunk('Cut sh'), chunk('', 'length')]);
    await api.chat.send('A long answer, please', []);
    assert.equal(api.chat.current.turns.at(-1)?.status, 'truncated');
    script = (_req, res) => writeSse(res, [chunk('ort. The end.'), chunk('', 'stop')]);
    await route({ type: 'action', action: 'continue' });
    const turns = api.chat.current.turns;
    assert.deepEqual(turns.map((t) => [t.role, t.note ?? t.status]), [['user', 'done'], ['assistant', 'truncated'], ['user', 'Continue'], ['assistant', 'done']]);
    assert.equal(turns.at(-1)?.text, 'ort. The end.');

    script = (_req, res) => writeSse(res, [chunk('Asked again.'), chunk('', 'stop')]);
    await route({ type: 'action', action: 'retry' });
    assert.equal(api.chat.current.turns.length, 4, 'the last reply was replaced, not added to');
    assert.equal(api.chat.current.turns.at(-1)?.text, 'Asked again.');
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 3);
  });

  // ---- how a reply ended ------------------------------------------------------------------------

  test('statusOf: cancelled → stopped, error, incomplete, length → truncated, content_filter → filtered, else done', () => {
    const result = (ended: EndState, finishReason: string | null): ChatResult => ({
      text: '', reasoning: '', refusal: '', toolCalls: [], finishReason, choices: [],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, ended, sawDone: ended === 'done',
    });
    const cases: Array<[EndState, string | null, string]> = [
      ['cancelled', null, 'stopped'],
      ['cancelled', 'length', 'stopped'],
      ['error', null, 'error'],
      ['error', 'content_filter', 'error'],
      ['incomplete', null, 'incomplete'],
      ['done', 'length', 'truncated'],
      ['done', 'content_filter', 'filtered'],
      ['done', 'stop', 'done'],
      ['done', 'tool_calls', 'done'],
      ['done', null, 'done'],
    ];
    for (const [ended, finish, want] of cases) assert.equal(statusOf(result(ended, finish)), want, `${ended} / ${finish}`);
  });

  test('a stream that ends with finish_reason content_filter gives a turn marked filtered, its text kept; one with no end is incomplete', async () => {
    script = (_req, res) => writeSse(res, [chunk('Part of an'), chunk(' answer'), chunk('', 'content_filter'), usageChunk(5, 4)]);
    await api.chat.send('Something the provider filters', []);
    const reply = api.chat.current.turns.at(-1)!;
    assert.equal(reply.role, 'assistant');
    assert.equal(reply.status, 'filtered');
    assert.equal(reply.text, 'Part of an answer');
    assert.equal(reply.error, undefined);
    const end = lastOf('turnEnd', (m) => m.turn.id === reply.id);
    assert.ok(end && end.type === 'turnEnd');
    assert.equal(end.turn.status, 'filtered', 'the view is told');
    const stored = await api.history.load(api.chat.current.id);
    assert.equal(stored?.turns.at(-1)?.status, 'filtered', 'and it is stored so');

    script = (_req, res) => writeSse(res, [chunk('Cut off mid')], false);
    await api.chat.send('And this one?', []);
    assert.equal(api.chat.current.turns.at(-1)?.status, 'incomplete');
    assert.equal(api.chat.current.turns.at(-1)?.text, 'Cut off mid');
  });
});
