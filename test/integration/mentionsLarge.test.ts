// The `@` picker on a generated 20,000-file workspace (issue 33): the whole workspace is ranked for each query, so the
// last file is found by its exact name and by a fuzzy query, and any other by its name.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { lastPosted, parley, viewReceive, waitFor } from './helpers';
import type { TestApi } from '../../src/extension';
import type { HostMessage } from '../../src/shared/protocol';

suite('The @ picker on a 20,000-file workspace', function () {
  let api: TestApi;
  let folder: vscode.Uri;

  const posted = () => api.recorded.posted;
  const lastOf = <T extends HostMessage['type']>(type: T) => lastPosted(api, type);
  const route = (message: Record<string, unknown>) => viewReceive(api, message);

  suiteSetup(async () => {
    api = await parley();
    const f = vscode.workspace.workspaceFolders?.[0]?.uri;
    assert.ok(f, 'the large run opens a folder');
    folder = f;
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be ready', () => api.chat.channel.attached, 20_000);
  });

  test('in a workspace of 20,000 files the picker finds the last one by its exact name and by a fuzzy query, and any other by its name', async function () {
    this.timeout(300_000);
    const root = path.join(folder.fsPath, 'big-tree');
    const count = 20_000;
    const name = (i: number) => (i === count - 1 ? 'zz-last-of-twenty-thousand.txt' : `f${i}.txt`);
    const at = (i: number) => `big-tree/d${i % 100}/${name(i)}`;
    /** The picker's answer to `query`, as the webview gets it. */
    const ask = async (query: string) => {
      posted().length = 0;
      await route({ type: 'mentionQuery', query });
      const m = await waitFor(`an answer to @${query}`, () => lastOf('mentionCandidates'), 60_000);
      assert.equal(m.query, query);
      return m.items.map((c) => c.path);
    };
    try {
      // Made with plain fs, the last file last: a listing that holds it holds every other one.
      for (let d = 0; d < 100; d++) await fs.mkdir(path.join(root, `d${d}`), { recursive: true });
      for (let i = 0; i < count - 1; i += 500) {
        await Promise.all(Array.from({ length: Math.min(500, count - 1 - i) }, (_, k) => fs.writeFile(path.join(folder.fsPath, at(i + k)), `${i + k}\n`)));
      }
      await fs.writeFile(path.join(folder.fsPath, at(count - 1)), 'last\n');
      // The file watcher tells the picker of the new files a moment after they are made: ask until it has.
      await waitFor('the picker to find the last file by its exact name', async () => (await ask(name(count - 1)))[0] === at(count - 1), 120_000);
      assert.equal((await ask('zzlasttwenty'))[0], at(count - 1), 'a fuzzy query finds it');
      assert.equal((await ask('D99/ZZ-LAST'))[0], at(count - 1), 'so does its folder and name, in any case');
      // Twenty files spread over the tree, each asked once: a capped listing would miss most of them.
      const missed: string[] = [];
      for (let i = 0; i < count - 1; i += 1013) if (!(await ask(name(i))).includes(at(i))) missed.push(at(i));
      assert.deepEqual(missed, [], 'every file is found by its name');
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});
