// Prompt files inside a real VS Code: `.github/prompts/*.prompt.md` listed for the `/` picker and run as the webview
// sends them; the request bodies are the real server's.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startTestServer, type TestServer } from '../support/server';
import { chats, chunk, lastPosted, parley, userSettings, viewReceive, waitFor, writeJson, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import type { HostMessage } from '../../src/shared/protocol';

const WRITE_TEST = [
  '---',
  "description: 'Write a unit test'",
  'model: prompt-model',
  "tools: ['read_file', 'no_such_tool']",
  'mode: agent',
  '---',
  'Write a unit test for ${input:fn:the function name}, in the style of #file:../../tools/notes.md.',
  '',
].join('\n');

const READ_SECRETS = [
  '---',
  'description: Names an excluded file',
  '---',
  'Compare #file:tools/.env with @tools/notes.md please.',
].join('\n');

suite('Prompt files (/name)', function () {
  this.timeout(30_000);
  let api: TestApi;
  let server: TestServer;
  let prompts: vscode.Uri;

  const posted = () => api.recorded.posted;
  const lastOf = <T extends HostMessage['type']>(type: T) => lastPosted(api, type);
  const route = (message: Record<string, unknown>) => viewReceive(api, message);
  type Message = { role: string; content: string | Array<{ text?: string }> };
  const textOf = (m: Message) => (typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join(''));

  suiteSetup(async () => {
    api = await parley();
    server = await startTestServer((req, res) => {
      if (req.method === 'GET') return writeJson(res, 200, { data: [] });
      return writeSse(res, [chunk('Done.'), chunk('', 'stop')]);
    });
    await userSettings({ baseUrl: server.url, model: 'test-model', systemPrompt: 'You are a test assistant.', 'tools.askBeforeReading': false });
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    assert.ok(folder, 'the test workspace has a folder');
    prompts = vscode.Uri.joinPath(folder, '.github', 'prompts');
    const enc = new TextEncoder();
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(prompts, 'write-test.prompt.md'), enc.encode(WRITE_TEST));
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(prompts, 'read-secrets.prompt.md'), enc.encode(READ_SECRETS));
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be ready', () => api.chat.channel.attached, 20_000);
  });

  suiteTeardown(async () => {
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(prompts, '..'), { recursive: true }).then(undefined, () => undefined);
    await userSettings({ 'tools.askBeforeReading': undefined });
    await server?.close();
  });

  setup(async () => {
    await api.chat.newChat();
    for (const c of api.chat.context.chips()) api.chat.context.remove(c.id);
    server.requests.length = 0;
    posted().length = 0;
  });

  test('the / picker lists the workspace\'s prompt files with their description and arguments', async () => {
    await route({ type: 'promptQuery' });
    const m = await waitFor('prompt candidates', () => lastOf('promptCandidates'));
    assert.deepEqual(m.items, [
      { name: 'read-secrets', description: 'Names an excluded file', source: '.github/prompts/read-secrets.prompt.md', hint: '' },
      { name: 'write-test', description: 'Write a unit test', source: '.github/prompts/write-test.prompt.md', hint: 'fn: the function name' },
    ]);
  });

  test('a prompt file run with an argument is sent as the user\'s message, with its model, tools and mention', async () => {
    await route({ type: 'runPrompt', name: 'write-test', args: 'parseDate' });
    const body = chats(server).at(-1)?.json as { model: string; messages: Message[]; tools?: Array<{ function: { name: string } }> };
    assert.ok(body, 'a request reached the server');
    assert.equal(body.model, 'prompt-model');
    const [system, user] = [body.messages[0], body.messages.at(-1) as Message];
    assert.equal(system.role, 'system');
    assert.ok(!textOf(system).includes('Write a unit test'), 'the body is not system text');
    assert.equal(user.role, 'user');
    assert.match(textOf(user), /^`tools\/notes\.md`, lines 1-2:\n```markdown\nNotes for the tools' integration tests\.\n[\s\S]*```\n\nWrite a unit test for parseDate, in the style of #file:\.\.\/\.\.\/tools\/notes\.md\.\n$/);
    assert.deepEqual((body.tools ?? []).map((t) => t.function.name), ['read_file'], 'only the tools the prompt file names');
    assert.match(String(lastOf('notice')?.text), /^Prompt file \/write-test: ignored mode \(Parley has nothing for it\); the tools no_such_tool \(Parley has no tool of that name\)\.$/);
    // The next question is the reader's own again: every tool is offered.
    await api.chat.send('And now?', []);
    const next = chats(server).at(-1)?.json as { model: string; tools?: unknown[] };
    assert.equal(next.model, 'prompt-model', 'the conversation goes on with the prompt file\'s model');
    assert.ok((next.tools ?? []).length > 1);
  });

  test('an argument left out sends nothing and asks for it in the composer', async () => {
    await route({ type: 'runPrompt', name: 'write-test', args: '' });
    assert.equal(lastOf('composerError')?.text, '/write-test needs fn (the function name): type /write-test <fn> and send again.');
    assert.equal(chats(server).length, 0);
  });

  test('an excluded file named by a prompt file is not read, and the user is told', async () => {
    await route({ type: 'runPrompt', name: 'read-secrets', args: '' });
    const body = chats(server).at(-1)?.json as { messages: Message[] };
    const sent = JSON.stringify(body);
    assert.ok(!sent.includes('sk-fake-fixture'), 'nothing of tools/.env is sent');
    assert.match(textOf(body.messages.at(-1) as Message), /^`tools\/notes\.md`, lines 1-2:[\s\S]*Compare #file:tools\/\.env with @tools\/notes\.md please\.$/);
    assert.match(String(lastOf('notice')?.text), /^Prompt file \/read-secrets: not attached: "tools\/\.env" is excluded by parley\.tools\.exclude/);
  });

  test('${selection} and ${file} come from the active editor; an excluded file\'s are not sent', async () => {
    const folder = vscode.workspace.workspaceFolders![0].uri;
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(prompts, 'explain.prompt.md'), new TextEncoder().encode('Explain ${selection} from ${file}.'));
    const editor = await vscode.window.showTextDocument(vscode.Uri.joinPath(folder, 'tools', 'notes.md'));
    editor.selection = new vscode.Selection(1, 4, 1, 15);
    await route({ type: 'runPrompt', name: 'explain', args: '' });
    const user = (chats(server).at(-1)?.json as { messages: Message[] }).messages.at(-1) as Message;
    assert.equal(textOf(user), 'Explain word needle from tools/notes.md.');
    server.requests.length = 0;
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder, 'tools', '.env'));
    await route({ type: 'runPrompt', name: 'explain', args: '' });
    assert.match(String(lastOf('composerError')?.text), /^\/explain was not sent: it uses \$\{selection\} or \$\{file\}, and "tools\/\.env" is outside the workspace or excluded by parley\.tools\.exclude\.$/);
    assert.equal(chats(server).length, 0);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(prompts, 'explain.prompt.md'));
  });

  test('the user\'s prompts folder (parley.prompts.userFolder) is listed first: a workspace cannot take one of its names', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-prompts-'));
    try {
      await fs.writeFile(path.join(dir, 'mine.prompt.md'), '---\ndescription: My own\n---\nHello from my folder.');
      await fs.writeFile(path.join(dir, 'write-test.prompt.md'), '---\ndescription: My own write-test\n---\nMine: ${input:fn}');
      await userSettings({ 'prompts.userFolder': dir });
      await route({ type: 'promptQuery' });
      const m = await waitFor('prompt candidates', () => lastOf('promptCandidates'));
      assert.deepEqual(m.items.map((i) => [i.name, i.description, i.source]), [
        ['mine', 'My own', 'user'],
        ['write-test', 'My own write-test', 'user'],
        ['read-secrets', 'Names an excluded file', '.github/prompts/read-secrets.prompt.md'],
      ]);
      // Run, it is the user's text; a file named in the argument is not attached (only the prompt file's own mentions).
      await route({ type: 'runPrompt', name: 'write-test', args: '@tools/notes.md' });
      assert.equal(textOf((chats(server).at(-1)?.json as { messages: Message[] }).messages.at(-1) as Message), 'Mine: @tools/notes.md');
      await route({ type: 'runPrompt', name: 'mine', args: '' });
      assert.equal(textOf((chats(server).at(-1)?.json as { messages: Message[] }).messages.at(-1) as Message), 'Hello from my folder.');
    } finally {
      await userSettings({ 'prompts.userFolder': undefined });
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
