// `@` mentions inside a real VS Code: picks routed as the webview sends them, read when the question is sent, checked
// by the tools' path rules, cut to one budget; Add File to Chat; images. The request bodies are the real server's.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startTestServer, type TestServer } from '../support/server';
import { chats, chunk, lastPosted, memoryMemento, parley, userSettings, viewReceive, waitFor, writeJson, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import type { HostMessage } from '../../src/shared/protocol';
import { ChatController } from '../../src/vscode/chatController';
import { vscodeChatUi } from '../../src/vscode/chatUi';
import { HistoryStore } from '../../src/vscode/history';
import { addMention, expandMentions } from '../../src/vscode/mentions';
import { ViewChannel } from '../../src/vscode/viewChannel';
import { WorkspaceGate, toolReadSeam } from '../../src/vscode/workspaceGate';

/** A 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');


suite('Mentions (@) and Add File to Chat', function () {
  this.timeout(30_000);
  let api: TestApi;
  let server: TestServer;
  let folder: vscode.Uri;
  const diagnostics = vscode.languages.createDiagnosticCollection('mention-test');

  const posted = () => api.recorded.posted;
  const lastOf = <T extends HostMessage['type']>(type: T) => lastPosted(api, type);
  const route = (message: Record<string, unknown>) => viewReceive(api, message);

  /** The last chat request's last user message, as text. */
  function sentText(): string {
    const body = chats(server).at(-1)?.json;
    const content = body?.messages.at(-1).content;
    return typeof content === 'string' ? content : content.map((p: { text?: string }) => p.text ?? '').join('');
  }

  /** Files this suite wrote, deleted at its end: the suites after it share the workspace (search_text counts binaries). */
  const written = new Set<string>();

  async function write(name: string, text: string | Uint8Array): Promise<vscode.Uri> {
    const uri = vscode.Uri.joinPath(folder, name);
    written.add(uri.toString());
    await vscode.workspace.fs.writeFile(uri, typeof text === 'string' ? new TextEncoder().encode(text) : text);
    return uri;
  }

  suiteSetup(async () => {
    api = await parley();
    server = await startTestServer((req, res) => {
      if (req.method === 'GET') return writeJson(res, 200, { data: [] });
      return writeSse(res, [chunk('Seen.'), chunk('', 'stop')]);
    });
    await userSettings({ baseUrl: server.url, model: 'test-model', systemPrompt: 'You are a test assistant.' });
    const f = vscode.workspace.workspaceFolders?.[0]?.uri;
    assert.ok(f, 'the test workspace has a folder');
    folder = f;
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be ready', () => api.chat.channel.attached, 20_000);
  });

  suiteTeardown(async () => {
    diagnostics.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const u of written) await vscode.workspace.fs.delete(vscode.Uri.parse(u)).then(undefined, () => undefined);
    await fs.rm(vscode.Uri.joinPath(folder, 'env-link').fsPath, { force: true });
    await server?.close();
  });

  setup(async () => {
    await api.chat.newChat();
    for (const c of api.chat.context.chips()) api.chat.context.remove(c.id);
    server.requests.length = 0;
    posted().length = 0;
  });

  test('the picker lists workspace files and the special mentions, never an excluded file', async () => {
    await write('picker-target.ts', 'export const x = 1;\n');
    await route({ type: 'mentionQuery', query: 'pickertarg' });
    const m = await waitFor('candidates', () => lastOf('mentionCandidates'));
    assert.equal(m.query, 'pickertarg');
    assert.deepEqual(m.items.map((i) => i.path), ['picker-target.ts']);
    await route({ type: 'mentionQuery', query: '' });
    const all = await waitFor('candidates for an empty query', () => posted().filter((p) => p.type === 'mentionCandidates').length === 2 && lastOf('mentionCandidates'));
    assert.deepEqual(all.items.slice(0, 3).map((i) => i.label), ['@selection', '@problems', '@open']);
    assert.ok(all.items.some((i) => i.path === 'tools/notes.md'), 'workspace files are listed');
    await route({ type: 'mentionQuery', query: 'env' });
    const env = await waitFor('candidates for env', () => posted().filter((p) => p.type === 'mentionCandidates').length === 3 && lastOf('mentionCandidates'));
    assert.ok(!env.items.some((i) => i.path?.endsWith('.env')), 'tools/.env is excluded by parley.tools.exclude');
  });

  test('a mentioned file is read when the question is sent: an edit made after the pick is what the server gets', async () => {
    const uri = await write('mention-me.py', 'value = "old"\n');
    await route({ type: 'addMention', kind: 'file', path: 'mention-me.py' });
    assert.deepEqual(api.chat.context.chips().map((c) => [c.path, c.mention]), [['mention-me.py', 'file']]);
    const editor = await vscode.window.showTextDocument(uri);
    await editor.edit((e) => e.replace(new vscode.Range(0, 0, 1, 0), 'value = "new, unsaved"\n'));
    await api.chat.send('What is value?', []);
    const text = sentText();
    assert.match(text, /^`mention-me\.py`, line 1:\n```python\nvalue = "new, unsaved"\n```\n\nWhat is value\?$/);
    assert.ok(!text.includes('old'));
    assert.deepEqual(api.chat.context.chips(), [], 'the chip went with the question');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  test('an excluded file is refused with the reason, in the composer and for Add File to Chat; nothing is attached', async () => {
    await route({ type: 'addMention', kind: 'file', path: 'tools/.env' });
    const err = lastOf('composerError');
    assert.ok(err, 'the composer shows why');
    assert.match(err.text, /^Not attached: "tools\/\.env" is excluded by parley\.tools\.exclude \(\*\*\/\.env\*\)/);
    assert.deepEqual(api.chat.context.chips(), []);
    await route({ type: 'addMention', kind: 'file', path: '../outside.txt' });
    assert.match(String(lastOf('composerError')?.text), /leaves the workspace folder/);
    posted().length = 0;
    await vscode.commands.executeCommand('parley.addFileToChat', vscode.Uri.joinPath(folder, 'tools', '.env'));
    assert.match(String(lastOf('composerError')?.text), /excluded by parley\.tools\.exclude/);
    assert.deepEqual(api.chat.context.chips(), []);
  });

  test('@problems sends the current file\'s diagnostics; @open the open editors\' files', async () => {
    const a = await write('open-a.ts', 'const a = 1;\n');
    const b = await write('open-b.ts', 'const b = 2;\n');
    await vscode.window.showTextDocument(b, { preview: false });
    await vscode.window.showTextDocument(a, { preview: false });
    const warning = new vscode.Diagnostic(new vscode.Range(0, 6, 0, 7), 'a is never read', vscode.DiagnosticSeverity.Warning);
    warning.source = 'mention-test';
    diagnostics.set(a, [warning]);
    await route({ type: 'addMention', kind: 'problems' });
    await route({ type: 'addMention', kind: 'open' });
    assert.deepEqual(api.chat.context.chips().map((c) => c.path), ['@problems', '@open']);
    await api.chat.send('Look', []);
    const text = sentText();
    assert.match(text, /Problems in `open-a\.ts`:\n```text\n1 diagnostic for open-a\.ts \(1 warning\):\nopen-a\.ts:1:7 warning a is never read \(mention-test\)\n```/);
    assert.match(text, /`open-a\.ts`, line 1:\n```typescript\nconst a = 1;\n```/);
    assert.match(text, /`open-b\.ts`, line 1:\n```typescript\nconst b = 2;\n```\n\nLook$/);
    const turn = api.chat.current.turns.at(-2);
    assert.deepEqual(turn?.contextItems?.map((c) => c.path), ['open-a.ts', 'open-a.ts', 'open-b.ts']);
    diagnostics.clear();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('@selection is the selection when sending; with none, nothing is sent and the chip and text stay', async () => {
    const uri = await write('select-me.ts', 'one\ntwo\nthree\n');
    const editor = await vscode.window.showTextDocument(uri);
    editor.selection = new vscode.Selection(0, 0, 0, 3);
    await route({ type: 'addMention', kind: 'selection' });
    editor.selection = new vscode.Selection(2, 0, 2, 5);
    await api.chat.send('Which word?', []);
    assert.match(sentText(), /^`select-me\.ts`, line 3:\n```typescript\nthree\n```\n\nWhich word\?$/);

    editor.selection = new vscode.Selection(1, 0, 1, 0);
    await route({ type: 'addMention', kind: 'selection' });
    const before = chats(server).length;
    await api.chat.send('Again?', []);
    assert.equal(chats(server).length, before, 'nothing was sent');
    assert.match(String(lastOf('composerError')?.text), /^@selection: nothing is selected in the editor\. .*Nothing was sent\.$/);
    assert.deepEqual(api.chat.context.chips().map((c) => c.path), ['@selection'], 'the chip is still there');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  /** A symbolic link at the workspace's top to tools/.env (excluded); skips where the OS refuses links. Each test removes it, and the suite's end too. */
  async function envLink(ctx: Mocha.Context): Promise<vscode.Uri> {
    const link = vscode.Uri.joinPath(folder, 'env-link');
    await fs.rm(link.fsPath, { force: true });
    try {
      await fs.symlink(vscode.Uri.joinPath(folder, 'tools', '.env').fsPath, link.fsPath, 'file');
    } catch (e) {
      // Skipped only where the OS refuses to make symbolic links (EPERM: Windows without Developer Mode or admin rights):
      // there is no link to test. Linux and macOS, CI included, always make them.
      if ((e as NodeJS.ErrnoException).code === 'EPERM') ctx.skip();
      throw e;
    }
    return link;
  }

  const SECRET = 'sk-fake-fixture-7c1e0d9b2a';

  test('@selection and @problems refuse an editor opened on a symbolic link to an excluded file; nothing is sent', async function () {
    const link = await envLink(this);
    const editor = await vscode.window.showTextDocument(link);
    assert.equal(editor.document.uri.fsPath, link.fsPath, 'the editor shows the link (else this test proves nothing)');
    assert.ok(editor.document.getText().includes(SECRET));
    editor.selection = new vscode.Selection(0, 0, editor.document.lineCount, 0);
    for (const kind of ['selection', 'problems']) {
      posted().length = 0;
      await route({ type: 'addMention', kind });
      await api.chat.send('What is in it?', []);
      assert.equal(chats(server).length, 0, `nothing was sent for @${kind}`);
      assert.match(String(lastOf('composerError')?.text), new RegExp(`^@${kind}: "env-link" leads through a symbolic link to "tools/\\.env", which is excluded by parley\\.tools\\.exclude.*Nothing was sent\\.$`));
      for (const c of api.chat.context.chips()) api.chat.context.remove(c.id);
    }
    assert.ok(!server.requests.some((r) => r.body.includes(SECRET)), 'the key went nowhere');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await fs.rm(link.fsPath, { force: true });
  });

  test('@open leaves out a file opened through a link to an excluded file, names it on the turn, and sends the others', async function () {
    const link = await envLink(this);
    const other = await write('open-ok.ts', 'const ok = 1;\n');
    await vscode.window.showTextDocument(link, { preview: false });
    await vscode.window.showTextDocument(other, { preview: false });
    await route({ type: 'addMention', kind: 'open' });
    await api.chat.send('Look', []);
    assert.equal(chats(server).length, 1, 'the question was sent');
    const text = sentText();
    assert.match(text, /^`open-ok\.ts`, line 1:\n```typescript\nconst ok = 1;\n```\n\nLook$/);
    assert.ok(!server.requests.some((r) => r.body.includes(SECRET)), 'the key went nowhere');
    const user = api.chat.current.turns.at(-2);
    assert.match(String(user?.note), /^Left out of @open: "env-link" leads through a symbolic link to "tools\/\.env", which is excluded/);
    assert.deepEqual(user?.contextItems?.map((c) => c.path), ['open-ok.ts']);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await fs.rm(link.fsPath, { force: true });
  });

  test('a mention sends what it checked: a path swapped for a link to outside after the check sends nothing from outside (@file, @open, an image)', async function () {
    const OUTSIDE = 'outside-mention-secret-3f9a';
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-mention-outside-'));
    const storage = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-mention-history-'));
    await fs.writeFile(path.join(outside, 'secret.txt'), `${OUTSIDE}\n`);
    // A PNG too (its signature is all a sniff reads), with the secret in its bytes.
    const outsidePng = Buffer.concat([PNG, Buffer.from(OUTSIDE)]);
    await fs.writeFile(path.join(outside, 'secret.png'), outsidePng);
    const flip = vscode.Uri.joinPath(folder, 'flip-mention.txt').fsPath;
    const flipPng = vscode.Uri.joinPath(folder, 'flip-mention.png').fsPath;
    const other = await write('flip-other.ts', 'const other = 1;\n');
    try {
      await fs.symlink(path.join(outside, 'secret.txt'), `${flip}.probe`);
    } catch (e) {
      // Only where the OS refuses to make symbolic links (EPERM) is there no link to swap in.
      if ((e as NodeJS.ErrnoException).code === 'EPERM') this.skip();
      throw e;
    }
    await fs.rm(`${flip}.probe`);
    const realStat = WorkspaceGate.prototype.stat;
    const seen: string[] = [];
    // This test's own controller runs the mentions of this test bundle, whose seams the test sets.
    const channel = new ViewChannel();
    channel.attach((m) => {
      if (m.type === 'composerError') seen.push(m.text);
    });
    const chat = new ChatController({
      requester: api.requester, history: new HistoryStore(vscode.Uri.file(storage), memoryMemento()), log: api.log, settings: api.settings, ui: vscodeChatUi, channel,
      expandContext: (items) => expandMentions(items, api.settings.current, undefined),
    });
    let swaps = 0;
    const swap = async (p: string, to: string) => {
      await fs.rm(p, { force: true });
      await fs.symlink(to, p);
      swaps++;
    };
    /** The file (or image) an ordinary file inside again, and the swap to a link to `to` armed at one of two moments. */
    const arm = async (p: string, inside: string | Uint8Array, to: string, at: 'after the mention\'s check' | 'after the read\'s check') => {
      await fs.rm(p, { force: true });
      await fs.writeFile(p, inside);
      WorkspaceGate.prototype.stat = realStat;
      toolReadSeam.afterCheck = undefined;
      // After checkedFile's link check, before anything is read: the window the mentions read in by path.
      if (at === 'after the mention\'s check') {
        WorkspaceGate.prototype.stat = async function (this: WorkspaceGate, t) {
          if (t.uri.fsPath === p) await swap(p, to);
          return realStat.call(this, t);
        };
      } else {
        toolReadSeam.afterCheck = async (f) => {
          if (f === p) await swap(p, to);
        };
      }
    };
    const chip = (mention: 'file' | 'open', shown: string) =>
      chat.context.add({ id: `chip-${shown}`, path: mention === 'open' ? '@open' : shown, startLine: 0, endLine: 0, language: '', truncated: false, mention, code: '' });
    try {
      for (const at of ['after the mention\'s check', 'after the read\'s check'] as const) {
        // @file
        await arm(flip, 'inside-mention-text\n', path.join(outside, 'secret.txt'), at);
        chip('file', 'flip-mention.txt');
        seen.length = 0;
        await chat.send('What is in it?', []);
        assert.equal(chats(server).length, 0, `@file, swapped ${at}: nothing was sent`);
        assert.match(String(seen.at(-1)), /^flip-mention\.txt: "flip-mention\.txt" (is a symbolic link \(or inside one\) that leads outside|changed while it was being read)/);
        for (const c of chat.context.chips()) chat.context.remove(c.id);

        // @open: the open editor on that file is left out (it is not dirty: its file is read, as checked); the other is sent.
        await arm(flip, 'inside-mention-text\n', path.join(outside, 'secret.txt'), 'after the read\'s check');
        await vscode.window.showTextDocument(vscode.Uri.file(flip), { preview: false });
        await vscode.window.showTextDocument(other, { preview: false });
        await arm(flip, 'inside-mention-text\n', path.join(outside, 'secret.txt'), at);
        chip('open', '');
        await chat.send('Look', []);
        assert.equal(chats(server).length, 1, `@open, swapped ${at}: the question went, without that file`);
        const sent = JSON.stringify(chats(server)[0].json.messages);
        assert.ok(sent.includes('const other = 1;'), sent);
        assert.ok(!sent.includes('inside-mention-text'), 'the swapped file was left out');
        assert.match(String(chat.current.turns.at(-2)?.note), /^Left out of @open: "flip-mention\.txt" /);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        server.requests.length = 0;

        // An image mentioned: refused, nothing attached.
        await arm(flipPng, PNG, path.join(outside, 'secret.png'), at);
        posted().length = 0;
        const why = await addMention(api, 'file', 'flip-mention.png');
        assert.equal(lastOf('imageAttached'), undefined, `image, swapped ${at}: nothing was attached`);
        assert.match(String(why), /^Not attached: "flip-mention\.png" (is a symbolic link \(or inside one\) that leads outside|changed while it was being read)/);
      }
      assert.equal(swaps, 6, 'each path was swapped after its check');
      const b64 = outsidePng.toString('base64');
      assert.ok(!posted().some((m) => JSON.stringify(m).includes(b64)), 'the outside image reached no webview');
      assert.ok(!server.requests.some((r) => r.body.includes(OUTSIDE) || r.body.includes(b64)), 'the outside file reached no server');
    } finally {
      WorkspaceGate.prototype.stat = realStat;
      toolReadSeam.afterCheck = undefined;
      chat.dispose();
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      for (const p of [flip, flipPng]) await fs.rm(p, { force: true });
      await fs.rm(outside, { recursive: true, force: true });
      await fs.rm(storage, { recursive: true, force: true });
    }
  });

  test('all attached context shares parley.maxContextChars: what crosses it is cut, and the turn says so', async () => {
    await write('big.txt', 'line of text\n'.repeat(40));
    await write('small.txt', 'tiny\n');
    await route({ type: 'addMention', kind: 'file', path: 'big.txt' });
    await route({ type: 'addMention', kind: 'file', path: 'small.txt' });
    await userSettings({ maxContextChars: 100 });
    try {
      await api.chat.send('Summarize', []);
      const text = sentText();
      assert.ok(text.split('line of text').length - 1 <= 8, 'at most 100 characters of big.txt went out');
      assert.match(text, /`big\.txt`, lines 1-40 \(cut to fit; the rest is not shown\):/);
      assert.match(text, /`small\.txt`, line 1 \(cut to fit; the rest is not shown\):\n```plaintext\n\n```/);
      const user = api.chat.current.turns.at(-2);
      assert.equal(user?.note, 'Attached context cut to 100 characters (parley.maxContextChars): big.txt, small.txt');
      assert.deepEqual(user?.contextItems?.map((c) => c.truncated), [true, true]);
    } finally {
      await userSettings({ maxContextChars: undefined });
    }
  });

  test('Add File to Chat (explorer, several files) opens the panel and adds each as a chip read when sent', async () => {
    const one = await write('explorer-one.md', '# One\n');
    const two = await write('explorer-two.md', '# Two\n');
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await waitFor('the panel to close', () => !api.view.visible);
    await vscode.commands.executeCommand('parley.addFileToChat', one, [one, two]);
    await waitFor('the panel to open', () => api.view.visible);
    assert.deepEqual(api.chat.context.chips().map((c) => c.path), ['explorer-one.md', 'explorer-two.md']);
    await write('explorer-two.md', '# Two, rewritten\n');
    await api.chat.send('Compare', []);
    assert.match(sentText(), /`explorer-one\.md`, line 1:\n```markdown\n# One\n```\n\n`explorer-two\.md`, line 1:\n```markdown\n# Two, rewritten\n```\n\nCompare$/);
  });

  test('a mentioned image is attached as an image, and refused when the model takes none', async () => {
    await write('pixel.png', PNG);
    await route({ type: 'addMention', kind: 'file', path: 'pixel.png' });
    const img = lastOf('imageAttached');
    assert.ok(img, 'the image went to the composer');
    assert.equal(img.image.name, 'pixel.png');
    assert.equal(img.image.dataUrl, `data:image/png;base64,${PNG.toString('base64')}`);
    assert.deepEqual(api.chat.context.chips(), [], 'an image is not a text chip');
    await api.chat.send('What colour?', [img.image]);
    const parts = chats(server).at(-1)?.json.messages.at(-1).content;
    assert.deepEqual(parts[1], { type: 'image_url', image_url: { url: img.image.dataUrl } });

    await userSettings({ endpoints: [{ name: 'Blind', baseUrl: server.url, model: 'test-model', models: { 'test-model': { vision: false } } }], endpoint: 'Blind' });
    try {
      posted().length = 0;
      await api.chat.newChat();
      await route({ type: 'addMention', kind: 'file', path: 'pixel.png' });
      assert.equal(lastOf('imageAttached'), undefined);
      assert.match(String(lastOf('composerError')?.text), /^Not attached: test-model does not take images \(vision is off for it in the profile "Blind"\)/);
    } finally {
      await userSettings({ endpoints: undefined, endpoint: undefined });
    }
  });
});
