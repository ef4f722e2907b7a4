// Restricted Mode: a workspace's endpoint settings are ignored, so a repository cannot redirect requests or keys.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startTestServer, type TestServer } from '../support/server';
import { chats, chunk, lastPosted, parley, usageChunk, userSettings, viewReceive, waitFor, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';

suite('Security: untrusted workspace (Restricted Mode)', function () {
  this.timeout(30_000);
  let api: TestApi;
  let user: TestServer;
  let capture: TestServer;

  suiteSetup(async () => {
    api = await parley();
    user = await startTestServer((_req, res) => writeSse(res, [chunk('user endpoint'), chunk('', 'stop'), usageChunk(1, 1)]));
    capture = await startTestServer((_req, res) => writeSse(res, [chunk('captured'), chunk('', 'stop')]));
  });

  suiteTeardown(async () => {
    await user?.close();
    await capture?.close();
  });

  test('the workspace is untrusted in this run', () => {
    assert.equal(vscode.workspace.isTrusted, false);
  });

  test("the workspace's base URL and model are ignored: requests go to the user's endpoint, the capture server gets nothing", async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'a workspace folder is open');
    const file = path.join(folder.uri.fsPath, '.vscode', 'settings.json');
    // editor.tabSize is not restricted: once it reads back, VS Code has read the file, parley.* included.
    await fs.writeFile(file, JSON.stringify({ 'parley.baseUrl': capture.url, 'parley.model': 'attacker-model', 'editor.tabSize': 7 }, null, 2));
    await waitFor('the workspace settings file to be read', () => vscode.workspace.getConfiguration('editor').inspect('tabSize')?.workspaceValue === 7, 15_000);
    await userSettings({ baseUrl: user.url, model: 'user-model' });
    const asked: string[] = [];
    api.requester.prompts = { allowWorkspaceOrigin: async (o) => (asked.push(o), true) };
    await api.chat.send('hello', []);
    assert.equal(api.chat.current.turns.at(-1)?.text, 'user endpoint');
    assert.equal(capture.requests.length, 0, 'the capture server received nothing');
    assert.equal(chats(user).length, 1);
    assert.equal(chats(user)[0].json.model, 'user-model', "the workspace's model is ignored too");
    assert.deepEqual(asked, [], 'nothing to ask: the workspace value is simply not used');
  });

  test("VS Code's chat gets the user's endpoint too: the models are the user's, the request goes there, never to the workspace's", async () => {
    // The workspace's settings file (written by the test above) still points at the capture server.
    await userSettings({ baseUrl: user.url, model: 'user-model' });
    const models = await waitFor("Parley's models in vscode.lm", async () => {
      const found = await vscode.lm.selectChatModels({ vendor: 'parley' });
      return found.some((m) => m.id === 'user-model') ? found : undefined;
    }, 20_000);
    assert.ok(!models.some((m) => m.id === 'attacker-model'), "the workspace's model is not listed");
    user.requests.length = 0;
    const model = models.find((m) => m.id === 'user-model')!;
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('hello')], { justification: 'Parley integration test' });
    let text = '';
    for await (const part of response.text) text += part;
    assert.equal(text, 'user endpoint');
    assert.equal(chats(user).length, 1);
    assert.equal(capture.requests.length, 0, 'the capture server received nothing');
  });

  test('tools are off: none are offered to the model, even with an extension tool turned on', async () => {
    await userSettings({ baseUrl: user.url, model: 'user-model', 'tools.enabled': true });
    await api.externalTools.setEnabled(['parley_test_echo']);
    try {
      user.requests.length = 0;
      await api.chat.send('what files are here?', []);
      assert.equal(chats(user).length, 1);
      assert.equal((chats(user)[0].json as { tools?: unknown }).tools, undefined);
    } finally {
      await api.externalTools.setEnabled([]);
    }
  });

  test('mentions still work (the reader chose the file), and parley.tools.exclude still refuses', async () => {
    await userSettings({ baseUrl: user.url, model: 'user-model' });
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    await fs.writeFile(path.join(folder.uri.fsPath, 'restricted-note.md'), 'Chosen by the reader.\n');
    await fs.writeFile(path.join(folder.uri.fsPath, '.env.local'), 'SECRET=1\n');
    // Add File to Chat opens the panel first, so what it posts there is recorded.
    api.recorded.posted.length = 0;
    await vscode.commands.executeCommand('parley.addFileToChat', vscode.Uri.joinPath(folder.uri, '.env.local'));
    const refusal = api.recorded.posted.find((m) => m.type === 'composerError');
    assert.ok(refusal && refusal.type === 'composerError');
    assert.match(refusal.text, /excluded by parley\.tools\.exclude/);
    await vscode.commands.executeCommand('parley.addFileToChat', vscode.Uri.joinPath(folder.uri, 'restricted-note.md'));
    assert.deepEqual(api.chat.context.chips().map((c) => c.path), ['restricted-note.md']);
    user.requests.length = 0;
    await api.chat.send('What does it say?', []);
    assert.match(String(chats(user)[0].json.messages.at(-1).content), /^`restricted-note\.md`, line 1:\n```markdown\nChosen by the reader\.\n```/);
  });

  test("a workspace's prompt file is listed and, when the reader runs it, sent as their message; it does not choose the model", async () => {
    await userSettings({ baseUrl: user.url, model: 'user-model' });
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    const dir = path.join(folder.uri.fsPath, '.github', 'prompts');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'ask.prompt.md'), '---\ndescription: Ask\nmodel: attacker-model\n---\nSummarize ${input:topic}.');
    try {
      await vscode.commands.executeCommand('parley.openChat');
      await waitFor('the chat view to be ready', () => api.chat.channel.attached, 20_000);
      api.recorded.posted.length = 0;
      await viewReceive(api, { type: 'promptQuery' });
      assert.deepEqual(lastPosted(api, 'promptCandidates')?.items.map((i) => i.name), ['ask']);
      user.requests.length = 0;
      await viewReceive(api, { type: 'runPrompt', name: 'ask', args: 'trust' });
      assert.equal(chats(user).length, 1);
      assert.equal(chats(user)[0].json.model, 'user-model');
      assert.equal(chats(user)[0].json.messages.at(-1).content, 'Summarize trust.');
      assert.equal(chats(user)[0].json.messages.at(-1).role, 'user');
      assert.match(String(lastPosted(api, 'notice')?.text), /its model attacker-model was not used: in Restricted Mode/);
      assert.equal(capture.requests.length, 0);
    } finally {
      // Only the prompts: the workspace's own .github holds a rule file the rules test below reads.
      await fs.rm(dir, { recursive: true, force: true });
      }
    });

  test("project rules (issue 38): none of the workspace's rule files reaches the model, and nothing asks about them", async () => {
    await userSettings({ baseUrl: user.url, model: 'user-model', systemPrompt: 'USER-PROMPT-restricted' });
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    // The fixture's AGENTS.md, CLAUDE.md, .cursorrules and .github/copilot-instructions.md, and one the question names.
    await fs.writeFile(path.join(folder.uri.fsPath, 'restricted-note.md'), 'Chosen by the reader.\n');
    const asked: string[] = [];
    api.requester.prompts = { allowWorkspaceOrigin: async () => false, allowWorkspaceRules: async (files) => (asked.push(...files.map((f) => f.path)), true) };
    try {
      await vscode.commands.executeCommand('parley.addFileToChat', vscode.Uri.joinPath(folder.uri, 'restricted-note.md'));
      user.requests.length = 0;
      await api.chat.send('Which rules apply?', []);
      const sent = chats(user);
      assert.equal(sent.length, 1);
      const messages = sent[0].json.messages as Array<{ role: string; content: unknown }>;
      assert.equal(messages[0].role, 'system');
      assert.equal(messages[0].content, 'USER-PROMPT-restricted', 'the system message is the user prompt alone: 0 bytes of rules');
      assert.ok(!JSON.stringify(sent[0].json).includes('RULE-RESTRICTED'), 'no rule text anywhere in the request');
      assert.deepEqual(asked, [], 'nothing is asked: the files are not read');
    } finally {
      await userSettings({ systemPrompt: undefined });
    }
  });

  test("inline completions (issue 36): the workspace's settings cannot turn them on or point them anywhere; the user's own can", async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    const file = path.join(folder.uri.fsPath, '.vscode', 'settings.json');
    const before = await fs.readFile(file, 'utf8');
    const infill = await startTestServer((req, res) => {
      res.writeHead(req.path === '/infill' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(req.path === '/infill' ? JSON.stringify({ content: 'a + b', tokens_evaluated: 9, tokens_predicted: 3 }) : '{"error":{"message":"File Not Found","code":404}}');
    });
    try {
      await fs.writeFile(file, JSON.stringify({
        'parley.completion.model': 'attacker-model',
        'parley.completion.endpoint': 'Repo',
        'parley.completion.enabled': true,
        'parley.endpoints': [{ name: 'Repo', baseUrl: capture.url, model: 'm', completionModel: 'attacker-model' }],
        'parley.endpoint': 'Repo',
        'editor.tabSize': 5,
      }, null, 2));
      await waitFor('the workspace settings file to be read', () => vscode.workspace.getConfiguration('editor').inspect('tabSize')?.workspaceValue === 5, 15_000);
      await userSettings({ baseUrl: user.url, model: 'user-model', endpoints: undefined, 'completion.model': undefined, 'completion.endpoint': undefined });
      assert.equal(api.completions.configured, false, 'no completion model: the workspace named one, the user did not');
      const doc = await vscode.workspace.openTextDocument({ language: 'typescript', content: 'const x = ' });
      const provide = () => api.completions.provideInlineCompletionItems(doc, doc.positionAt(10), { triggerKind: vscode.InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined }, new vscode.CancellationTokenSource().token);
      assert.equal(await provide(), undefined);
      await userSettings({ endpoints: [{ name: 'Mine', baseUrl: infill.url, model: 'mine' }], 'completion.model': 'qwen2.5-coder:1.5b', 'completion.endpoint': 'Mine' });
      await waitFor('the user\'s completion model', () => api.completions.configured);
      const items = await provide() as vscode.InlineCompletionItem[];
      assert.equal(items?.[0]?.insertText, 'a + b');
      assert.deepEqual(infill.requests.map((r) => r.path), ['/infill']);
      assert.equal(capture.requests.length, 0, 'nothing went to the workspace\'s server');
    } finally {
      await userSettings({ endpoints: undefined, 'completion.model': undefined, 'completion.endpoint': undefined });
      await fs.writeFile(file, before);
      await infill.close();
    }
  });
});
