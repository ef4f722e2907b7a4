// search_text on a generated 20,000-file workspace (issue 33): every file is searched, in path order, so a match in
// the last file by path is found; Stop ends a running search without reading the rest.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Tool } from '../../src/core/tool';
import { DEFAULT_TOOL_EXCLUDE } from '../../src/core/toolPaths';
import { builtinTools } from '../../src/vscode/tools/builtinTools';
import { SEARCH_READ_AHEAD } from '../../src/vscode/tools/searchTools';
import { toolReadSeam } from '../../src/vscode/workspaceGate';
import { waitFor } from './helpers';

const FILES = 20_000;
const DIR = 'big20k';
const NEEDLE = 'last-file-needle-5e1b';

/** The i-th generated file, relative to the folder: 200 folders of 100, so that sorting by path is sorting by i. */
function fileName(i: number): string {
  return `${DIR}/d${String(Math.floor(i / 100)).padStart(3, '0')}/f${String(i).padStart(5, '0')}.txt`;
}

function searchTool(): Tool {
  const t = builtinTools({ exclude: DEFAULT_TOOL_EXCLUDE, maxResultChars: 20_000 }).find((x) => x.definition.function.name === 'search_text');
  assert.ok(t);
  return t;
}

suite('search_text on a 20,000-file workspace', function () {
  this.timeout(180_000);
  let root: string;

  suiteSetup(async function () {
    this.timeout(300_000);
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the large run opens a folder');
    root = folder.uri.fsPath;
    for (let d = 0; d < FILES / 100; d++) await fs.mkdir(path.join(root, path.dirname(fileName(d * 100))), { recursive: true });
    for (let i = 0; i < FILES; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, FILES - i) }, (_, k) => {
        const n = i + k;
        return fs.writeFile(path.join(root, fileName(n)), `generated file ${n}\n${n === FILES - 1 ? `the ${NEEDLE} is here\n` : 'nothing to find\n'}`);
      }));
    }
    // VS Code's file search sees them all before the tests start.
    await waitFor('VS Code lists the generated files', async () => (await vscode.workspace.findFiles(`${DIR}/**`)).length === FILES, 120_000);
  });

  suiteTeardown(async () => {
    toolReadSeam.afterCheck = undefined;
    if (root) await fs.rm(path.join(root, DIR), { recursive: true, force: true });
  });

  test('search_text finds a match in the last file by path, over the whole workspace, and searches every file', async () => {
    const r = await searchTool().run({ query: NEEDLE }, new AbortController().signal);
    assert.equal(r, `1 match for text "${NEEDLE}" in 1 file:\n${fileName(FILES - 1)}:2: the ${NEEDLE} is here`);
    // Every generated file was searched, none left out by a cap.
    const none = await searchTool().run({ query: 'no such text in any generated file', glob: `${DIR}/**` }, new AbortController().signal);
    assert.equal(none, `No matches for text "no such text in any generated file" in ${DIR}/** in ${FILES} files.`);
  });

  test('search_text stops when Stop is pressed mid-search: it ends with AbortError, reading no new file after Stop', async function () {
    const stop = new AbortController();
    let read = 0;
    let readAtStop = 0;
    let stoppedAt = 0;
    toolReadSeam.afterCheck = async (p) => {
      if (!p.includes(`${path.sep}${DIR}${path.sep}`)) return;
      if (++read === 2000) {
        readAtStop = read;
        stoppedAt = performance.now();
        stop.abort();
      }
    };
    try {
      await assert.rejects(searchTool().run({ query: 'no such text in any generated file', glob: `${DIR}/**` }, stop.signal), (e: Error) => e.name === 'AbortError');
    } finally {
      toolReadSeam.afterCheck = undefined;
    }
    const endedAfterMs = performance.now() - stoppedAt;
    // Reported in the test's title, not asserted (no timing thresholds in tests): the issue asks for under 100 ms.
    if (this.test) this.test.title += ` [ended ${endedAfterMs.toFixed(1)} ms after Stop; ${read} of ${FILES} files reached]`;
    assert.equal(readAtStop, 2000, 'Stop was pressed while the search ran');
    // Only reads already under way when Stop came may reach a file after it.
    assert.ok(read <= readAtStop + SEARCH_READ_AHEAD, `${read} files reached, ${readAtStop} at Stop`);
    assert.ok(read < FILES);
  });
});
