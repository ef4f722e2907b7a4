// Text from a code block, a server or the workspace in VS Code's notifications, quick picks, input boxes and progress:
// each path that can carry it is driven with a `command:` link (and an icon) and shows it as text (issue 32, item 3).
// What VS Code draws from that text is the UI test's (test/e2e/notices.e2e.mjs); here, what Parley hands to VS Code.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import type { ShownText } from '../../src/vscode/notices';
import { startTestServer, type TestServer } from '../support/server';
import { parley, revertAndCloseEditors, userSettings, waitFor, writeJson } from './helpers';

/** Issue 32's payload: one click on it types `echo pwned` into the terminal. */
const PAYLOAD = '[Open the workspace settings](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22echo%20pwned%5Cn%22%7D)';
/** A shorter one, for text Parley quotes cut to 60 characters, and for file names. */
const SHORT = '[Open settings](command:workbench.action.quit)';

/** How VS Code finds links in a notification or a quick input's prompt (src/vs/base/common/linkedText.ts). */
const LINKED_TEXT = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
/** How VS Code finds icons in a label, a prompt or status bar text (renderLabelWithIcons); `\$(…)` is the escape. */
const ICON = /(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;

/** What VS Code would make live in a string handed to it: links where it draws links, icons where it draws icons. */
function live(t: ShownText): string[] {
  const links = t.surface === 'notice' || t.surface === 'prompt' ? [...t.text.replace(/(\r\n|\n|\r)/gm, ' ').matchAll(LINKED_TEXT)].map((m) => m[0]) : [];
  const icons = t.surface === 'label' || t.surface === 'prompt' ? [...t.text.matchAll(ICON)].filter((m) => !m[1]).map((m) => m[0]) : [];
  return [...links, ...icons];
}

suite('Notices: block, server and workspace text shows as text', function () {
  this.timeout(40_000);
  let api: TestApi;
  let server: TestServer;
  let models: string[] = [];
  let root: string;
  const area = () => path.join(root, 'notice-area');

  const apply = (code: string, info = '', before = '') => (api.view as unknown as { receive(raw: unknown): Promise<void> }).receive({ type: 'applyCode', code, info, before });

  /** The strings handed to VS Code that contain `marker`, once there is one; none of them may hold a live link or icon. */
  async function shownWith(marker: string, surface?: ShownText['surface']): Promise<ShownText[]> {
    const found = await waitFor(`a ${surface ?? 'text'} with ${marker}`, () => {
      const all = api.recorded.shown.filter((t) => t.text.includes(marker) && (!surface || t.surface === surface));
      return all.length > 0 && all;
    }, 15_000);
    assert.deepEqual(found.flatMap(live), [], JSON.stringify(found));
    return found;
  }

  suiteSetup(async () => {
    api = await parley();
    root = vscode.workspace.workspaceFolders![0].uri.fsPath;
    server = await startTestServer((req, res) => {
      if (req.method === 'GET') return writeJson(res, 200, { data: models.map((id) => ({ id })) });
      // Generate Code: a reply that is not the JSON asked for (the test only needs the request to end).
      return writeJson(res, 200, { id: 'g', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'no JSON' }, finish_reason: 'stop' }] });
    });
    await userSettings({ baseUrl: server.url, model: 'test-model' });
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be resolved', () => api.recorded.html, 20_000);
    await fs.mkdir(area(), { recursive: true });
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await userSettings({ model: undefined });
    await server?.close();
    await fs.rm(area(), { recursive: true, force: true });
  });

  setup(() => {
    api.recorded.shown.length = 0;
  });

  teardown(revertAndCloseEditors);

  test('Apply: a diff line jsdiff quotes, and a search text Parley quotes, are text in the refusal', async () => {
    await fs.writeFile(path.join(area(), 'a.md'), 'one\ntwo\nthree\n');
    await apply(`--- a/notice-area/a.md\n+++ b/notice-area/a.md\n@@ -1,3 +1,3 @@\n${PAYLOAD}\n one\n`, 'diff');
    const [diff] = await shownWith('contained invalid line', 'notice');
    assert.ok(diff.text.includes('[Open the workspace settings] (command:workbench.action.terminal.sendSequence?'), diff.text);

    await apply(`<<<<<<< SEARCH\n${SHORT}\n=======\nx\n>>>>>>> REPLACE\n`, 'md path=notice-area/a.md');
    const [hunk] = await shownWith('the search text is not in', 'notice');
    assert.ok(hunk.text.includes('Hunk 1 ("[Open settings] (command:workbench.action.quit)")'), hunk.text);
  });

  test('a review: a workspace path in its notices is text', async () => {
    const name = `${SHORT}.md`;
    const file = path.join(area(), name);
    await fs.writeFile(file, 'a\n');
    await vscode.window.showTextDocument(vscode.Uri.file(file));
    await apply('<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n', 'md');
    await waitFor('the review', () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'parley-proposed'));
    await fs.rm(file);
    await vscode.commands.executeCommand('parley.acceptProposal');
    const [gone] = await shownWith('is gone', 'notice');
    assert.ok(gone.text.includes('notice-area/[Open settings] (command:workbench.action.quit).md is gone'), gone.text);
    await vscode.commands.executeCommand('parley.rejectProposal');
  });

  test('Add File to Chat: a refused file\'s name is text', async () => {
    await vscode.commands.executeCommand('parley.addFileToChat', vscode.Uri.file(path.join(root, 'tools', `.env${SHORT}`)));
    const [refused] = await shownWith('Not attached', 'notice');
    assert.ok(refused.text.includes('tools/.env[Open settings] (command:workbench.action.quit)'), refused.text);
  });

  test('Select Model: model ids from the server are labels without icons or links', async () => {
    models = [`m-$(zap)-${SHORT}`, 'test-model'];
    const picking = vscode.commands.executeCommand('parley.selectModel');
    try {
      const [label] = await shownWith('m-', 'label');
      assert.equal(label.text, `m-\\$(zap)-${SHORT}`);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await picking;
    }
  });

  test('Generate Code: a file name in the input box\'s prompt, and a model name in the progress title, are text', async () => {
    const file = path.join(area(), `${SHORT}$(zap).ts`);
    await fs.writeFile(file, 'const a = 1;\n');
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(file));
    editor.selection = new vscode.Selection(0, 0, 0, 12);
    const asking = vscode.commands.executeCommand('parley.generateCode');
    try {
      const [prompt] = await shownWith('goes along as context', 'prompt');
      assert.ok(prompt.text.includes('[Open settings] (command:workbench.action.quit)\\$(zap).ts'), prompt.text);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await asking;
    }

    await userSettings({ model: `m${SHORT}` });
    let ended = false;
    const generating = vscode.commands.executeCommand('parley.generateCode', 'a constant').then(() => (ended = true));
    try {
      const [title] = await shownWith('generating code with', 'notice');
      assert.ok(title.text.includes('generating code with m[Open settings] (command:workbench.action.quit)'), title.text);
    } finally {
      // The outcome's notification may be waited for: dismissed until the command ends.
      await waitFor('Generate Code to end', async () => {
        await vscode.commands.executeCommand('notifications.clearAll');
        return ended;
      }, 20_000);
      await generating;
      await userSettings({ model: 'test-model' });
    }
  });
});
