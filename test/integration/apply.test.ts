// Apply and propose_edit in the real VS Code: the review is a diff editor with the file left and the proposal right;
// Accept edits the document (one undo, unsaved), Reject changes nothing, excluded files are refused, and the model's
// propose_edit waits for the user's decision, which is all its result says.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import type { ChatMessage } from '../../src/core/types';
import { closeStaleReviews } from '../../src/vscode/commands';
import { startTestServer, type TestServer } from '../support/server';
import { callReply, chats, parley, revertAndCloseEditors, textReply, type Reply, userSettings, waitFor, windowLogs, writeJson } from './helpers';

const SR = (search: string, replace: string) => `<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n`;

/** The open review tabs (diffs whose right side is a Parley proposal). */
function reviewTabs(): vscode.TabInputTextDiff[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => t.input).filter((i): i is vscode.TabInputTextDiff => i instanceof vscode.TabInputTextDiff && i.modified.scheme === 'parley-proposed');
}

suite('Apply: review, Accept, Reject, propose_edit', function () {
  this.timeout(40_000);
  let api: TestApi;
  let server: TestServer;
  let replies: Reply[] = [];
  let n = 0;
  let root: string;
  const dir = () => path.join(root, 'apply-area');

  /** What the panel sends for a code block's Apply button, through the view's own validation and routing. */
  const apply = (code: string, info = '', before = '') => (api.view as unknown as { receive(raw: unknown): Promise<void> }).receive({ type: 'applyCode', code, info, before });

  async function write(name: string, text: string): Promise<vscode.Uri> {
    await fs.mkdir(dir(), { recursive: true });
    await fs.writeFile(path.join(dir(), name), text);
    return vscode.Uri.file(path.join(dir(), name));
  }

  async function review(): Promise<{ input: vscode.TabInputTextDiff; left: string; right: string }> {
    const input = await waitFor('a review to open', () => reviewTabs()[0]);
    const left = (await vscode.workspace.openTextDocument(input.original)).getText();
    const right = (await vscode.workspace.openTextDocument(input.modified)).getText();
    return { input, left, right };
  }

  suiteSetup(async () => {
    api = await parley();
    root = vscode.workspace.workspaceFolders![0].uri.fsPath;
    server = await startTestServer(async (req, res) => {
      if (req.method === 'GET') return writeJson(res, 200, { data: [{ id: 'test-model' }] });
      await replies[Math.min(n++, replies.length - 1)](req, res);
    });
    await userSettings({ baseUrl: server.url, model: 'test-model', 'tools.askBeforeReading': false });
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be resolved', () => api.recorded.html, 20_000);
    await (api.view as unknown as { receive(raw: unknown): Promise<void> }).receive({ type: 'ready' });
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await userSettings({ 'tools.askBeforeReading': undefined });
    await server?.close();
    await fs.rm(dir(), { recursive: true, force: true });
  });

  setup(async () => {
    await api.chat.newChat();
    n = 0;
    server.requests.length = 0;
  });

  teardown(revertAndCloseEditors);

  test('Apply opens a diff of the file and the proposal; Accept edits the document, unsaved, and one undo reverts it', async () => {
    const original = 'export function greet() {\n  return "hi";\n}\n';
    const uri = await write('greet.ts', original);
    await apply(SR('  return "hi";', '  return "hello";'), 'ts', 'In `apply-area/greet.ts`:');
    const { input, left, right } = await review();
    assert.equal(input.original.toString(), uri.toString(), 'the real file is on the left');
    assert.equal(left, original);
    assert.equal(right, 'export function greet() {\n  return "hello";\n}\n');
    assert.equal(await fs.readFile(uri.fsPath, 'utf8'), original, 'nothing is written before Accept');

    await vscode.commands.executeCommand('parley.acceptProposal');
    const doc = await vscode.workspace.openTextDocument(uri);
    assert.equal(doc.getText(), right);
    assert.equal(doc.isDirty, true, 'the document is left unsaved');
    assert.equal(await fs.readFile(uri.fsPath, 'utf8'), original, 'Accept does not save');
    assert.equal(reviewTabs().length, 0, 'the review closed');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), uri.toString(), 'the document is shown');

    await vscode.commands.executeCommand('undo');
    assert.equal(doc.getText(), original, 'one undo reverts the whole change');
  });

  test('Reject leaves a CRLF file without a final newline byte for byte', async () => {
    const bytes = 'line one\r\nline two\r\nlast';
    const uri = await write('crlf.txt', bytes);
    await apply('first\nsecond\n', 'text path=apply-area/crlf.txt');
    const { right } = await review();
    assert.equal(right, 'first\r\nsecond', 'the proposal keeps CRLF and the missing final newline');
    await vscode.commands.executeCommand('parley.rejectProposal');
    assert.equal(reviewTabs().length, 0);
    const doc = await vscode.workspace.openTextDocument(uri);
    assert.equal(doc.getText(), bytes);
    assert.equal(doc.isDirty, false);
    assert.deepEqual(await fs.readFile(uri.fsPath), Buffer.from(bytes));
  });

  test('the file changed after the review opened: Accept recomputes the proposal and asks for another look instead of clobbering', async () => {
    const uri = await write('moved.ts', 'a();\nb();\n');
    await apply(SR('b();', 'B();'), 'ts path=apply-area/moved.ts');
    const { input } = await review();
    const doc = await vscode.workspace.openTextDocument(uri);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, new vscode.Position(0, 0), 'user();\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    await vscode.commands.executeCommand('parley.acceptProposal', input.modified);
    assert.equal(doc.getText(), 'user();\na();\nb();\n', 'the first Accept changed nothing');
    await waitFor('the proposal to follow the current text', async () => (await vscode.workspace.openTextDocument(input.modified)).getText() === 'user();\na();\nB();\n');
    await vscode.commands.executeCommand('parley.acceptProposal', input.modified);
    assert.equal(doc.getText(), 'user();\na();\nB();\n', "the user's edit is kept");
  });

  test("plain code replaces the selection the conversation attached, in the selection's file", async () => {
    const uri = await write('sel.ts', 'function a() {\n  return 1;\n}\nfunction b() {}\n');
    const editor = await vscode.window.showTextDocument(uri);
    editor.selection = new vscode.Selection(0, 0, 2, 1);
    await vscode.commands.executeCommand('parley.addSelectionToChat');
    replies = [textReply('Here it is.')];
    await api.chat.send('Make it return 2', []);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await apply('function a() {\n  return 2;\n}\n', 'ts', 'Here it is:');
    const { input, right } = await review();
    assert.equal(input.original.toString(), uri.toString());
    assert.equal(right, 'function a() {\n  return 2;\n}\nfunction b() {}\n');
    await vscode.commands.executeCommand('parley.rejectProposal');
  });

  test('a part of a longer file, named by path: never proposed as the whole file; it replaces a selection from that file', async () => {
    const body = Array.from({ length: 12 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';
    const uri = await write('long.ts', body);
    // No selection: nothing opens, and Parley says it cannot tell where the part goes.
    await apply('export const v5 = 50;\n', 'ts path=apply-area/long.ts');
    await waitFor('the message in the log', async () => (await windowLogs(api)).some(({ text }) => text.includes('looks like part of apply-area/long.ts')), 15_000);
    assert.equal(reviewTabs().length, 0, 'no review of the file cut to one line');
    assert.equal(await fs.readFile(uri.fsPath, 'utf8'), body);
    // With the line attached as the selection, the same block replaces it.
    const editor = await vscode.window.showTextDocument(uri);
    editor.selection = new vscode.Selection(5, 0, 5, 'export const v5 = 5;'.length);
    await vscode.commands.executeCommand('parley.addSelectionToChat');
    replies = [textReply('Here.')];
    await api.chat.send('Make v5 fifty', []);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await apply('export const v5 = 50;\n', 'ts path=apply-area/long.ts');
    const { right } = await review();
    assert.equal(right, body.replace('v5 = 5;', 'v5 = 50;'));
    await vscode.commands.executeCommand('parley.rejectProposal');
    assert.equal(await fs.readFile(uri.fsPath, 'utf8'), body);
  });

  test('a bare file name that is not at the top is the workspace file of that name', async () => {
    const uri = await write('deeper-named.ts', 'let x = 1;\n');
    await fs.mkdir(path.join(dir(), 'deep'), { recursive: true });
    await fs.rename(uri.fsPath, path.join(dir(), 'deep', 'deeper-named.ts'));
    await apply(SR('let x = 1;', 'let x = 2;'), 'ts', '**deeper-named.ts**');
    const { input, right } = await review();
    assert.equal(input.original.fsPath, path.join(dir(), 'deep', 'deeper-named.ts'));
    assert.equal(right, 'let x = 2;\n');
    await vscode.commands.executeCommand('parley.rejectProposal');
  });

  test('a new file is a diff against empty, and is created only on Accept', async () => {
    const target = path.join(dir(), 'fresh', 'new.ts');
    await fs.rm(path.join(dir(), 'fresh'), { recursive: true, force: true });
    await apply('export const fresh = true;\n', 'ts path=apply-area/fresh/new.ts');
    const { input, left, right } = await review();
    assert.equal(left, '');
    assert.equal(right, 'export const fresh = true;\n');
    const label = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input === input)?.label;
    assert.match(String(label), /^apply-area\/fresh\/new\.ts \(new file\)/, 'the title names the workspace-relative path, not just new.ts');
    await assert.rejects(fs.stat(target), 'not created before Accept');
    await vscode.commands.executeCommand('parley.acceptProposal');
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(target));
    assert.equal(doc.getText(), right);
  });

  test('an excluded file is refused with the reason, and no review opens', async () => {
    const uri = await write('.env', 'SECRET=1\n');
    await apply('SECRET=2\n', 'text path=apply-area/.env');
    assert.equal(reviewTabs().length, 0);
    assert.equal(await fs.readFile(uri.fsPath, 'utf8'), 'SECRET=1\n');
    await waitFor('the refusal in the log', async () => (await windowLogs(api)).some(({ text }) => text.includes('Parley will not apply this block') && text.includes('excluded by parley.tools.exclude')), 15_000);
  });

  test('propose_edit waits for the user: Accept tells the model it was accepted, and the document has the edit', async () => {
    const uri = await write('tool.ts', 'const x = 1;\n');
    replies = [callReply(['e1', 'propose_edit', { path: 'apply-area/tool.ts', edits: [{ search: 'const x = 1;', replace: 'const x = 2;' }] }]), textReply('Done.')];
    const turn = api.chat.send('Make x 2', []);
    const { right } = await review();
    assert.equal(right, 'const x = 2;\n');
    assert.equal(chats(server).length, 1, 'the loop waits for the review');
    await vscode.commands.executeCommand('parley.acceptProposal');
    await turn;
    const result = (chats(server)[1].json as { messages: ChatMessage[] }).messages.find((m) => m.role === 'tool');
    assert.match(String(result?.content), /^The user accepted the edit/);
    assert.equal((await vscode.workspace.openTextDocument(uri)).getText(), 'const x = 2;\n');
    assert.equal(await fs.readFile(uri.fsPath, 'utf8'), 'const x = 1;\n', 'unsaved');
  });

  test('propose_edit: Reject tells the model it was rejected, and the file is unchanged', async () => {
    const uri = await write('tool2.ts', 'const y = 1;\n');
    replies = [callReply(['e2', 'propose_edit', { path: 'apply-area/tool2.ts', edits: [{ search: 'const y = 1;', replace: 'const y = 3;' }] }]), textReply('OK.')];
    const turn = api.chat.send('Make y 3', []);
    await review();
    await vscode.commands.executeCommand('parley.rejectProposal');
    await turn;
    const result = (chats(server)[1].json as { messages: ChatMessage[] }).messages.find((m) => m.role === 'tool');
    assert.match(String(result?.content), /^The user rejected the edit/);
    const doc = await vscode.workspace.openTextDocument(uri);
    assert.equal(doc.getText(), 'const y = 1;\n');
    assert.equal(doc.isDirty, false);
  });

  test('propose_edit: closing the review without choosing counts as a Reject', async () => {
    const uri = await write('tool5.ts', 'const v = 1;\n');
    replies = [callReply(['e5', 'propose_edit', { path: 'apply-area/tool5.ts', edits: [{ search: 'const v = 1;', replace: 'const v = 5;' }] }]), textReply('OK.')];
    const turn = api.chat.send('Change v', []);
    await review();
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await turn;
    const result = (chats(server)[1].json as { messages: ChatMessage[] }).messages.find((m) => m.role === 'tool');
    assert.match(String(result?.content), /^The user closed the review without accepting; apply-area\/tool5\.ts is unchanged\./);
    assert.equal((await vscode.workspace.openTextDocument(uri)).getText(), 'const v = 1;\n');
  });

  test('propose_edit: Stop while the review waits closes it, changes nothing, and answers the call as stopped', async () => {
    const uri = await write('tool4.ts', 'const w = 1;\n');
    replies = [callReply(['e4', 'propose_edit', { path: 'apply-area/tool4.ts', edits: [{ search: 'const w = 1;', replace: 'const w = 4;' }] }]), textReply('never sent')];
    const turn = api.chat.send('Change w', []);
    await review();
    await (api.view as unknown as { receive(raw: unknown): Promise<void> }).receive({ type: 'stop' });
    await turn;
    await waitFor('the review to close', () => reviewTabs().length === 0);
    const last = api.chat.current.turns[api.chat.current.turns.length - 1];
    assert.equal(last.status, 'stopped');
    assert.equal(chats(server).length, 1, 'no request after the stop');
    assert.equal((await vscode.workspace.openTextDocument(uri)).getText(), 'const w = 1;\n');
    // Accept after the stop has nothing to accept.
    await vscode.commands.executeCommand('parley.acceptProposal');
    assert.equal((await vscode.workspace.openTextDocument(uri)).getText(), 'const w = 1;\n');
  });

  test('propose_edit: a hunk that is not found is the result, and no review opens', async () => {
    await write('tool3.ts', 'const z = 1;\n');
    replies = [callReply(['e3', 'propose_edit', { path: 'apply-area/tool3.ts', edits: [{ search: 'nowhere', replace: 'x' }] }]), textReply('Sorry.')];
    await api.chat.send('Change z', []);
    const result = (chats(server)[1].json as { messages: ChatMessage[] }).messages.find((m) => m.role === 'tool');
    assert.match(String(result?.content), /Hunk 1 \("nowhere"\): the search text is not in apply-area\/tool3\.ts/);
    assert.equal(reviewTabs().length, 0);
  });

  /** Makes a symbolic link; skips the test where the OS refuses (EPERM: Windows without Developer Mode). */
  async function symlink(ctx: Mocha.Context, target: string, at: string, type: 'dir' | 'file'): Promise<void> {
    await fs.rm(at, { recursive: true, force: true });
    try {
      await fs.symlink(target, at, type);
    } catch (e) {
      // Skipped only where the OS refuses to make symbolic links (EPERM: Windows without Developer Mode or admin rights):
      // there is no link to test. Linux and macOS, CI included, always make them.
      if ((e as NodeJS.ErrnoException).code === 'EPERM') ctx.skip();
      throw e;
    }
  }

  test('a new file through a symbolic link that leads outside is refused, for Apply and propose_edit, and nothing is written', async function () {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-outside-'));
    try {
      await fs.mkdir(dir(), { recursive: true });
      await symlink(this, outside, path.join(dir(), 'out'), 'dir');
      await apply('[Desktop Entry]\n', 'ini path=apply-area/out/autostart/x.desktop');
      await waitFor('the refusal in the log', async () => (await windowLogs(api)).some(({ text }) => text.includes('Parley will not apply this block') && text.includes('apply-area/out/autostart/x.desktop') && text.includes('leads outside')), 15_000);
      replies = [callReply(['s1', 'propose_edit', { path: 'apply-area/out/autostart/x.desktop', edits: [{ search: '', replace: '[Desktop Entry]\n' }] }]), textReply('OK.')];
      await api.chat.send('Add an autostart entry', []);
      const result = (chats(server)[1].json as { messages: ChatMessage[] }).messages.find((m) => m.role === 'tool');
      assert.match(String(result?.content), /leads outside the workspace folder/);
      assert.equal(reviewTabs().length, 0, 'no review opened');
      assert.deepEqual(await fs.readdir(outside), [], 'nothing was written outside');

      // A dangling link: writing through it would create its target, outside.
      await symlink(this, path.join(outside, 'missing.txt'), path.join(dir(), 'dangle.txt'), 'file');
      await apply('boo\n', 'text path=apply-area/dangle.txt');
      await waitFor('the dangling refusal in the log', async () => (await windowLogs(api)).some(({ text }) => text.includes('apply-area/dangle.txt') && text.includes('symbolic link whose target does not exist')), 15_000);
      assert.equal(reviewTabs().length, 0);
      assert.deepEqual(await fs.readdir(outside), []);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  test('a link made after a new file\'s review opened is checked again on Accept: nothing is created outside', async function () {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-outside-'));
    try {
      await fs.rm(path.join(dir(), 'later'), { recursive: true, force: true });
      await apply('late\n', 'text path=apply-area/later/new.txt');
      await review();
      await symlink(this, outside, path.join(dir(), 'later'), 'dir');
      await vscode.commands.executeCommand('parley.acceptProposal');
      assert.deepEqual(await fs.readdir(outside), [], 'nothing was created outside');
      assert.equal(reviewTabs().length, 1, 'the review stays open to be rejected');
      await vscode.commands.executeCommand('parley.rejectProposal');
    } finally {
      await fs.rm(path.join(dir(), 'later'), { force: true });
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  /** The label of the open review's tab. */
  const reviewLabel = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'parley-proposed')?.label;

  test('a file that runs code (a folder-open task, a link to the workspace settings) says so in the review title and a warning', async function () {
    api.recorded.shown.length = 0;
    await fs.rm(path.join(dir(), '.vscode'), { recursive: true, force: true });
    const task = '{ "version": "2.0.0", "tasks": [{ "label": "x", "type": "shell", "command": "echo pwned", "runOptions": { "runOn": "folderOpen" } }] }\n';
    await apply(task, 'json path=apply-area/.vscode/tasks.json');
    await review();
    assert.match(String(reviewLabel()), /^⚠ Runs code: apply-area\/\.vscode\/tasks\.json \(new file\) ↔ Parley's proposal$/);
    const warning = await waitFor('the warning', () => api.recorded.shown.find((t) => t.text.startsWith('Parley: review this change with care.')));
    assert.match(warning.text, /apply-area\/\.vscode\/tasks\.json can run code: VS Code reads it: tasks \(some run as soon as the folder opens\)/);
    await vscode.commands.executeCommand('parley.rejectProposal');

    await fs.mkdir(path.join(dir(), '.vscode'), { recursive: true });
    await fs.writeFile(path.join(dir(), '.vscode', 'settings.json'), '{}\n');
    await symlink(this, path.join(dir(), '.vscode', 'settings.json'), path.join(dir(), 'notes.json'), 'file');
    api.recorded.shown.length = 0;
    await apply('{ "terminal.integrated.shellIntegration.enabled": false }\n', 'json path=apply-area/notes.json');
    await review();
    assert.match(String(reviewLabel()), /^⚠ Runs code: apply-area\/notes\.json ↔/);
    const linked = await waitFor('the warning for the link', () => api.recorded.shown.find((t) => t.text.startsWith('Parley: review this change with care.')));
    assert.ok(linked.text.includes('apply-area/notes.json (a symbolic link to apply-area/.vscode/settings.json) can run code'), linked.text);
    await vscode.commands.executeCommand('parley.rejectProposal');

    // An ordinary file: no warning.
    api.recorded.shown.length = 0;
    await write('plain.txt', 'a\n');
    await apply('b\n', 'text path=apply-area/plain.txt');
    await review();
    assert.match(String(reviewLabel()), /^apply-area\/plain\.txt ↔ Parley's proposal$/);
    assert.equal(api.recorded.shown.some((t) => t.text.includes('can run code')), false);
    await vscode.commands.executeCommand('parley.rejectProposal');
    await fs.rm(path.join(dir(), 'notes.json'), { force: true });
  });

  test('a path with a bidi or control character is refused, for Apply and propose_edit, and no review opens', async () => {
    api.recorded.shown.length = 0;
    // A block's own path names only plain characters (core/apply.ts): such a name comes from the workspace, here the
    // active editor's file.
    await vscode.window.showTextDocument(await write('invoice\u202Etxt.exe', 'hello\n'));
    await apply(SR('hello', 'bye'), 'text');
    const refusal = await waitFor('the refusal', () => api.recorded.shown.find((t) => t.text.startsWith('Parley will not apply this block')));
    assert.match(refusal.text, /apply-area\/invoice<U\+202E>txt\.exe" holds a bidirectional text control/);
    assert.equal(reviewTabs().length, 0);
    replies = [callReply(['b1', 'propose_edit', { path: 'apply-area/a\u0007b.txt', edits: [{ search: '', replace: 'x\n' }] }]), textReply('OK.')];
    await api.chat.send('Make a file', []);
    const result = (chats(server)[1].json as { messages: ChatMessage[] }).messages.find((m) => m.role === 'tool');
    assert.match(String(result?.content), /"apply-area\/a<U\+0007>b\.txt" holds a control character/);
    assert.equal(reviewTabs().length, 0, 'no review opened');
    await assert.rejects(fs.stat(path.join(dir(), 'a\u0007b.txt')));
  });

  test('Accept twice at once (a double click) applies the change once', async () => {
    const uri = await write('twice.ts', 'a();\nc();\n');
    await apply(SR('a();', 'a();\nb();'), 'ts path=apply-area/twice.ts');
    const { input } = await review();
    await Promise.all([
      vscode.commands.executeCommand('parley.acceptProposal', input.modified),
      vscode.commands.executeCommand('parley.acceptProposal', input.modified),
    ]);
    assert.equal((await vscode.workspace.openTextDocument(uri)).getText(), 'a();\nb();\nc();\n');
  });

  test('Accept after the file was deleted says it is gone and does not bring it back', async () => {
    const uri = await write('gone.ts', 'a();\n');
    await apply(SR('a();', 'A();'), 'ts path=apply-area/gone.ts');
    await review();
    await fs.rm(uri.fsPath);
    await vscode.commands.executeCommand('parley.acceptProposal');
    await assert.rejects(fs.stat(uri.fsPath), 'the file was not written again');
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    assert.notEqual(doc?.getText(), 'A();\n', 'the edit was not applied to a document of a deleted file');
    await vscode.commands.executeCommand('parley.rejectProposal');
  });

  test('an @file mention after the selection is not taken for the selection: plain code still replaces the selection', async () => {
    const selUri = await write('sel2.ts', 'function keep() {}\nfunction a() {\n  return 1;\n}\n');
    await write('other2.ts', 'export const other = 1;\n');
    const editor = await vscode.window.showTextDocument(selUri);
    editor.selection = new vscode.Selection(1, 0, 3, 1);
    await vscode.commands.executeCommand('parley.addSelectionToChat');
    await (api.view as unknown as { receive(raw: unknown): Promise<void> }).receive({ type: 'addMention', kind: 'file', path: 'apply-area/other2.ts' });
    replies = [textReply('Here it is.')];
    await api.chat.send('Make it return 2', []);
    const items = api.chat.current.turns.flatMap((t) => t.contextItems ?? []);
    assert.equal(items[items.length - 1]?.mention, 'file', 'the mention is the last context item');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await apply('function a() {\n  return 2;\n}\n', 'ts', 'Here it is:');
    const { input, right } = await review();
    assert.equal(input.original.toString(), selUri.toString());
    assert.equal(right, 'function keep() {}\nfunction a() {\n  return 2;\n}\n');
    await vscode.commands.executeCommand('parley.rejectProposal');
  });

  test('a review tab left from an earlier window (a reload) is closed at activation', async () => {
    const uri = await write('stale.ts', 'a();\n');
    // What a reload restores: a diff whose right side is a proposal no review of this window knows.
    await vscode.commands.executeCommand('vscode.diff', uri, uri.with({ scheme: 'parley-proposed', query: 'id=from-an-earlier-window' }), 'stale.ts ↔ Parley\'s proposal');
    await waitFor('the stale tab', () => reviewTabs().length === 1);
    await closeStaleReviews();
    assert.equal(reviewTabs().length, 0);
  });
});
