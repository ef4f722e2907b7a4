// A multi-root window (a .code-workspace with the folders alpha/ and beta/): project rules by the folder of the
// question's files, `@` mentions, the tools' paths and prompt files across folders, against the real server's bodies.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import type { ChatMessage } from '../../src/core/types';
import type { ToolCallView } from '../../src/shared/protocol';
import { routeWebviewMessage } from '../../src/vscode/webviewRoutes';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';
import { callReply, chats, lastPosted, parley, textReply, type Reply, userSettings, viewReceive, waitFor, writeJson } from './helpers';

const USER_PROMPT = 'USER-PROMPT-multiroot: answer briefly.';
const messagesOf = (r: RecordedRequest) => (r.json as { messages: ChatMessage[] }).messages;
const textOf = (m: ChatMessage | undefined) => (typeof m?.content === 'string' ? m.content : (m?.content ?? []).map((p) => ('text' in p ? p.text : '')).join(''));
const systemOf = (r: RecordedRequest) => textOf(messagesOf(r).find((m) => m.role === 'system'));
const markers = (system: string) => ['RULE-ALPHA-WORDS', 'RULE-BETA-WORDS'].filter((m) => system.includes(m));
const headings = (system: string) => [...system.matchAll(/^## Rules from (.+)$/gm)].map((m) => m[1]);

suite('Multi-root workspace: rules, mentions, tools and prompt files across two folders', function () {
  this.timeout(60_000);
  let api: TestApi;
  let server: TestServer;
  let replies: Reply[] = [];
  let n = 0;
  /** The rule files the consent question named, each time it was asked. */
  const asked: string[][] = [];
  const folder = (name: string) => vscode.workspace.workspaceFolders!.find((f) => f.name === name)!.uri;
  const route = (message: Record<string, unknown>) => viewReceive(api, message);
  const lastMeter = () => api.recorded.posted.flatMap((m) => (m.type === 'meter' && m.meter ? [m.meter] : [])).at(-1);

  /** Sends a question with `files` (shown paths, e.g. beta/src/two.ts) added as chips; the request the server got. */
  async function ask(files: string[], q = 'Go on.'): Promise<RecordedRequest> {
    for (const f of files) {
      const [name, ...rest] = f.split('/');
      await vscode.commands.executeCommand('parley.addFileToChat', vscode.Uri.joinPath(folder(name), ...rest));
    }
    assert.deepEqual(api.chat.context.chips().map((c) => c.path), files, 'each chip is shown with its folder');
    const before = chats(server).length;
    await api.chat.send(q, []);
    assert.equal(chats(server).length, before + 1, 'one request was sent');
    return chats(server).at(-1)!;
  }

  suiteSetup(async () => {
    api = await parley();
    assert.deepEqual(vscode.workspace.workspaceFolders?.map((f) => f.name), ['alpha', 'beta'], 'the window opened the .code-workspace with its two folders');
    assert.ok(vscode.workspace.workspaceFile?.path.endsWith('/multiroot.code-workspace'));
    assert.equal(vscode.workspace.isTrusted, true);
    server = await startTestServer(async (req, res) => {
      if (req.method === 'GET') return writeJson(res, 200, { data: [{ id: 'test-model' }] });
      await replies[Math.min(n++, replies.length - 1)](req, res);
    });
    await userSettings({ baseUrl: server.url, model: 'test-model', systemPrompt: USER_PROMPT });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be resolved', () => api.recorded.html, 20_000);
    await viewReceive(api, { type: 'ready' });
    api.requester.prompts = { allowWorkspaceOrigin: async () => false, allowWorkspaceRules: async (files) => (asked.push(files.map((f) => f.path)), true) };
  });

  suiteTeardown(async () => {
    await userSettings({ systemPrompt: undefined, 'tools.askBeforeReading': undefined });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await server?.close();
  });

  setup(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await api.chat.newChat();
    for (const c of api.chat.context.chips()) api.chat.context.remove(c.id);
    replies = [textReply('ok')];
    n = 0;
    server.requests.length = 0;
    api.recorded.posted.length = 0;
  });

  test("a question about a file of beta sends beta's AGENTS.md only; one about no file sends both; the meter names them with their folder", async () => {
    const beta = systemOf(await ask(['beta/src/two.ts']));
    assert.deepEqual(markers(beta), ['RULE-BETA-WORDS']);
    assert.deepEqual(headings(beta), ['beta/AGENTS.md']);
    assert.deepEqual(lastMeter()?.rules?.map((r) => r.path), ['beta/AGENTS.md']);
    assert.deepEqual(asked, [['beta/AGENTS.md']], 'the consent question names the file with its folder');
    const none = systemOf(await ask([]));
    assert.deepEqual(markers(none), ['RULE-ALPHA-WORDS', 'RULE-BETA-WORDS']);
    assert.deepEqual(headings(none), ['alpha/AGENTS.md', 'beta/AGENTS.md']);
    assert.deepEqual(lastMeter()?.rules?.map((r) => r.path), ['alpha/AGENTS.md', 'beta/AGENTS.md']);
    assert.deepEqual(asked, [['beta/AGENTS.md'], ['alpha/AGENTS.md']], "then only alpha's, not yet answered");
    for (const r of lastMeter()?.rules ?? []) assert.ok(r.tokens > 0, `${r.path} is counted`);
  });

  test("the active editor's file picks its folder's rules: alpha's file, alpha's AGENTS.md", async () => {
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder('alpha'), 'src', 'one.ts'));
    const system = systemOf(await ask([]));
    assert.deepEqual(headings(system), ['alpha/AGENTS.md']);
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder('beta'), 'src', 'two.ts'));
    assert.deepEqual(headings(systemOf(await ask([]))), ['beta/AGENTS.md']);
  });

  test("a selection of beta's file (Add Selection to Chat, @selection) is named with its folder and brings beta's rules with alpha's file active", async () => {
    const beta = await vscode.window.showTextDocument(vscode.Uri.joinPath(folder('beta'), 'src', 'two.ts'));
    beta.selection = new vscode.Selection(1, 0, 1, 12);
    await vscode.commands.executeCommand('parley.addSelectionToChat');
    assert.deepEqual(api.chat.context.chips().map((c) => c.path), ['beta/src/two.ts']);
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder('alpha'), 'src', 'one.ts'));
    await api.chat.send('What is it?', []);
    const sent = chats(server).at(-1);
    assert.ok(sent, 'a request was sent');
    assert.match(textOf(messagesOf(sent).at(-1)), /^`beta\/src\/two\.ts`, line 2:\n```typescript\nexport const\n```\n\nWhat is it\?$/);
    assert.deepEqual(headings(systemOf(sent)), ['alpha/AGENTS.md', 'beta/AGENTS.md'], "the selection's folder and the active file's");
    // @selection: the same, read when the question is sent; an excluded file's selection is refused by its full path.
    const key = await vscode.window.showTextDocument(vscode.Uri.joinPath(folder('beta'), 'private', 'key.txt'));
    key.selection = new vscode.Selection(0, 0, 1, 0);
    await route({ type: 'addMention', kind: 'selection' });
    const before = chats(server).length;
    await api.chat.send('What is in it?', []);
    assert.equal(chats(server).length, before, 'nothing was sent');
    assert.match(String(lastPosted(api, 'composerError')?.text), /^@selection: "beta\/private\/key\.txt" is excluded by parley\.tools\.exclude/);
  });

  test('the @ picker finds the files of both folders; a picked file of beta reaches the request; a path out of a folder is refused', async () => {
    const candidates = async (query: string) => {
      const before = api.recorded.posted.filter((m) => m.type === 'mentionCandidates').length;
      await route({ type: 'mentionQuery', query });
      return (await waitFor(`candidates for "${query}"`, () => api.recorded.posted.filter((m) => m.type === 'mentionCandidates').length > before && lastPosted(api, 'mentionCandidates'))).items.map((i) => i.path);
    };
    assert.deepEqual(await candidates('two.ts'), ['beta/src/two.ts']);
    assert.deepEqual(await candidates('one.ts'), ['alpha/src/one.ts']);
    assert.deepEqual(await candidates('key.txt'), [], "beta/private/ is excluded by the .code-workspace's parley.tools.exclude");
    const both = await candidates('src');
    assert.ok(both.includes('alpha/src/one.ts') && both.includes('beta/src/two.ts'), both.join(', '));
    await route({ type: 'addMention', kind: 'file', path: 'beta/src/two.ts' });
    assert.deepEqual(api.chat.context.chips().map((c) => [c.path, c.mention]), [['beta/src/two.ts', 'file']]);
    await api.chat.send('What is betaValue?', []);
    const user = textOf(messagesOf(chats(server).at(-1)!).at(-1));
    assert.match(user, /^`beta\/src\/two\.ts`, lines 1-2:\n```typescript\n[^`]*BETA-SOURCE-TEXT[^`]*```\n\nWhat is betaValue\?$/);
    for (const escape of ['beta/../alpha/src/one.ts', '../beta/src/two.ts']) {
      await route({ type: 'addMention', kind: 'file', path: escape });
      assert.match(String(lastPosted(api, 'composerError')?.text), /^Not attached: .*leaves the workspace folders .* through "\.\."/, escape);
      assert.deepEqual(api.chat.context.chips(), [], `${escape} is not attached`);
    }
  });

  test("read_file and list_directory, approved on their cards, reach the second folder by its name; '..' out of a folder and the .code-workspace's exclude are refused", async () => {
    await userSettings({ 'tools.askBeforeReading': true });
    await waitFor('the settings snapshot', () => api.settings.current.tools.askBeforeReading === true);
    try {
      await toolCalls();
    } finally {
      await userSettings({ 'tools.askBeforeReading': undefined });
    }
  });

  async function toolCalls(): Promise<void> {
    replies = [
      callReply(
        ['t1', 'read_file', { path: 'beta/src/two.ts' }],
        ['t2', 'list_directory', { path: 'beta/src' }],
        ['t3', 'list_directory', { path: '.' }],
        ['t4', 'read_file', { path: 'beta/../alpha/src/one.ts' }],
        ['t5', 'read_file', { path: '../beta/src/two.ts' }],
        ['t6', 'read_file', { path: 'beta/private/key.txt' }],
      ),
      textReply('done'),
    ];
    const calls = (): ToolCallView[] => (api.chat.current.turns.at(-1)?.steps ?? []).flatMap((s) => s.calls);
    let settled = false;
    const sent = api.chat.send('Look at beta', []).finally(() => (settled = true));
    // Approves each call that waits, once, as the reader does on its card.
    await waitFor('the turn to end, each waiting call approved once', async () => {
      for (const c of calls().filter((x) => x.status === 'waiting')) await routeWebviewMessage(api, { type: 'toolApproval', callId: c.id, decision: 'once', name: c.name, arguments: c.arguments });
      return settled;
    }, 30_000);
    await sent;
    const byId = Object.fromEntries(calls().map((c) => [c.wireId, c]));
    assert.equal(byId.t1.status, 'done');
    assert.equal(byId.t1.result, "beta/src/two.ts: lines 1–2 of 2\n// A fixture of the multi-root run: the second folder's source file.\nexport const betaValue = 'BETA-SOURCE-TEXT';");
    assert.equal(byId.t2.status, 'done');
    assert.equal(byId.t2.result, 'beta/src/: 1 entry\ntwo.ts');
    assert.equal(byId.t3.result, "The workspace has 2 folders; start a path with a folder's name:\nalpha/\nbeta/");
    for (const id of ['t4', 't5']) {
      assert.equal(byId[id].status, 'failed', id);
      assert.match(byId[id].result ?? '', /leaves the workspace folders \("alpha", "beta"; .*\) through "\.\."/, id);
    }
    assert.equal(byId.t6.status, 'failed');
    assert.equal(byId.t6.result, '"beta/private/key.txt" is excluded by parley.tools.exclude (**/private/**): secrets and dependencies are not read.');
    const tools = messagesOf(chats(server)[1]).filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => m.tool_call_id), ['t1', 't2', 't3', 't4', 't5', 't6']);
    assert.ok(!JSON.stringify(chats(server).map((r) => r.json)).includes('PRIVATE-BETA-KEY'), 'nothing of the excluded file reached the server');
    assert.match(textOf(tools[0]), /BETA-SOURCE-TEXT/);
    assert.ok(!textOf(tools[3]).includes('ALPHA-SOURCE-TEXT'));
  }

  test("the / picker offers beta's prompt file; run, its #file mention is read from beta", async () => {
    await route({ type: 'promptQuery' });
    const m = await waitFor('prompt candidates', () => lastPosted(api, 'promptCandidates'));
    assert.deepEqual(m.items, [
      { name: 'beta-review', description: 'Review a file of beta', source: 'beta/.github/prompts/beta-review.prompt.md', hint: '' },
      { name: 'which-file', description: 'Names the active file', source: 'beta/.github/prompts/which-file.prompt.md', hint: '' },
    ]);
    await route({ type: 'runPrompt', name: 'beta-review', args: '' });
    const user = textOf(messagesOf(chats(server).at(-1)!).at(-1));
    assert.match(user, /^`beta\/src\/two\.ts`, lines 1-2:\n```typescript\n[^`]*BETA-SOURCE-TEXT[^`]*```\n\nReview #file:\.\.\/\.\.\/src\/two\.ts for BETA-PROMPT-WORDS\.\n?$/);
    // ${file} is the active file with its folder; an excluded one is named by its full path and nothing is sent.
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder('alpha'), 'src', 'one.ts'));
    await route({ type: 'runPrompt', name: 'which-file', args: '' });
    assert.equal(textOf(messagesOf(chats(server).at(-1)!).at(-1)).trim(), 'Which file is alpha/src/one.ts?');
    const before = chats(server).length;
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder('beta'), 'private', 'key.txt'));
    await route({ type: 'runPrompt', name: 'which-file', args: '' });
    assert.equal(chats(server).length, before, 'nothing was sent');
    assert.match(String(lastPosted(api, 'composerError')?.text), /and "beta\/private\/key\.txt" is outside the workspace or excluded by parley\.tools\.exclude\.$/);
  });
});
