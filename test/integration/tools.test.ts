// The built-in read-only tools in the real VS Code, on the run's workspace copy: results, refusals, caps, cancellation.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Tool } from '../../src/core/tool';
import { DEFAULT_TOOL_EXCLUDE } from '../../src/core/toolPaths';
import { ToolError, builtinTools } from '../../src/vscode/tools/builtinTools';
import { toolReadSeam } from '../../src/vscode/workspaceGate';
import { parley, waitFor } from './helpers';

const FAKE_KEY = 'sk-fake-fixture-7c1e0d9b2a';
const HELLO = 'tools/nested/deep/hello.ts';

/** The tool named `name`, made with the default excludes and `maxResultChars`. */
function tool(name: string, maxResultChars = 20_000): Tool {
  const t = builtinTools({ exclude: DEFAULT_TOOL_EXCLUDE, maxResultChars }).find((x) => x.definition.function.name === name);
  assert.ok(t, name);
  return t;
}

function call(name: string, args: Record<string, unknown>, maxResultChars?: number): Promise<string> {
  return tool(name, maxResultChars).run(args, new AbortController().signal);
}

/** The ToolError message a call rejects with (any other rejection fails the test). */
async function refusal(name: string, args: Record<string, unknown>): Promise<string> {
  try {
    const r = await call(name, args);
    assert.fail(`${name}(${JSON.stringify(args)}) returned instead of refusing: ${r.slice(0, 200)}`);
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    return e.message;
  }
}

suite('Tools: built-in read-only workspace tools', function () {
  this.timeout(30_000);
  let root: string;
  let outside: string;
  const made: string[] = [];

  suiteSetup(async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the main run opens a folder');
    root = folder.uri.fsPath;
    outside = await fs.mkdtemp(path.join(os.tmpdir(), 'parley-outside-'));
    await fs.writeFile(path.join(outside, 'secret.txt'), 'outside-secret-text\n');
    const lines = Array.from({ length: 400 }, (_, i) => `row ${i + 1}: ${'lorem ipsum '.repeat(4)}`);
    await write('tools/long.txt', lines.join('\n') + '\n');
    await write('tools/image.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x1a, 0x0a]));
    for (let i = 0; i < 60; i++) await write(`tools/many/file${String(i).padStart(2, '0')}.txt`, `needle number ${i}\n`.repeat(3));
    await write('tools/node_modules/dep/index.js', 'needle in a dependency\n');
  });

  suiteTeardown(async () => {
    for (const p of made) await fs.rm(path.join(root, p), { recursive: true, force: true });
    await fs.rm(outside, { recursive: true, force: true });
  });

  test('an exclude glob that cannot be read excludes every path, and the user is told once', async () => {
    const api = await parley();
    api.recorded.shown.length = 0;
    const broken = builtinTools({ exclude: [...DEFAULT_TOOL_EXCLUDE, '[z-a]'], maxResultChars: 20_000 }).find((x) => x.definition.function.name === 'read_file');
    assert.ok(broken);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(broken.run({ path: 'tools/long.txt' }, new AbortController().signal), (e: unknown) => e instanceof ToolError && /\(\[z-a\]\): that glob cannot be read/.test(e.message));
    }
    const told = api.recorded.shown.filter((t) => t.text.includes('glob "[z-a]" cannot be read'));
    assert.equal(told.length, 1, 'said once in this window');
    assert.match(told[0].text, /excludes every path and the tools read nothing/);
  });

  async function write(rel: string, data: string | Buffer): Promise<void> {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), data);
    made.push(rel.split('/').slice(0, 2).join('/'));
  }

  test('read_file reads a nested file by relative and by absolute path, and a range', async () => {
    const r = await call('read_file', { path: HELLO });
    assert.equal(r, `${HELLO}: lines 1–2 of 2\n// A fixture for the tools' integration tests.\nexport const greeting = 'hello from the fixture';`);
    assert.equal(await call('read_file', { path: path.join(root, 'tools', 'nested', 'deep', 'hello.ts') }), r);
    assert.equal(await call('read_file', { path: HELLO, startLine: 2, endLine: 2 }), `${HELLO}: lines 2–2 of 2\nexport const greeting = 'hello from the fixture';`);
  });

  test('read_file cuts a long file within maxResultChars and says which startLine reads on', async () => {
    const r = await call('read_file', { path: 'tools/long.txt' }, 2000);
    assert.ok(r.length <= 2000, `${r.length} characters`);
    const m = /\[Cut at line (\d+) to stay within 2000 characters \(parley\.tools\.maxResultChars\)\. Read the rest with startLine (\d+)\.\]$/.exec(r);
    assert.ok(m, r.slice(-200));
    assert.equal(Number(m[2]), Number(m[1]) + 1);
    const next = await call('read_file', { path: 'tools/long.txt', startLine: Number(m[2]) }, 2000);
    assert.ok(next.startsWith(`tools/long.txt: lines ${m[2]}–`), next.slice(0, 80));
    assert.ok(next.includes(`\nrow ${m[2]}: lorem`));
  });

  test('read_file refuses .., absolute paths outside, the excluded .env, binaries, folders, missing files and bad arguments', async () => {
    assert.match(await refusal('read_file', { path: '../x' }), /leaves the workspace folder ".*" through "\.\."/);
    assert.match(await refusal('read_file', { path: 'tools/../../README.md' }), /through "\.\."/);
    assert.match(await refusal('read_file', { path: path.join(outside, 'secret.txt') }), /is outside the workspace folder/);
    const env = await refusal('read_file', { path: 'tools/.env' });
    assert.equal(env, '"tools/.env" is excluded by parley.tools.exclude (**/.env*): secrets and dependencies are not read.');
    assert.ok(!env.includes(FAKE_KEY));
    assert.match(await refusal('read_file', { path: 'tools/node_modules/dep/index.js' }), /excluded by parley\.tools\.exclude \(\*\*\/node_modules\/\*\*\)/);
    assert.match(await refusal('read_file', { path: 'tools/image.bin' }), /"tools\/image\.bin" is a binary file \(8 bytes\); read_file reads text files only/);
    assert.match(await refusal('read_file', { path: 'tools/nested' }), /is a folder: use list_directory/);
    assert.equal(await refusal('read_file', { path: 'tools/nope.txt' }), '"tools/nope.txt" does not exist.');
    assert.match(await refusal('read_file', { path: 42 }), /read_file: "path" is required/);
    assert.match(await refusal('read_file', { path: HELLO, startLine: 'first' }), /"startLine" must be an integer/);
  });

  test('symbolic links that leave the folder are refused; links inside it are read', async function () {
    try {
      await fs.symlink(outside, path.join(root, 'tools', 'escape'), 'dir');
      await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'tools', 'escape.txt'));
      await fs.symlink(path.join(root, 'tools', 'notes.md'), path.join(root, 'tools', 'inside.md'));
      await fs.symlink(path.join(root, 'tools', '.env'), path.join(root, 'tools', 'env-link.txt'));
    } catch (e) {
      // Skipped only where the OS refuses to make symbolic links (EPERM: Windows without Developer Mode or admin rights),
      // so there is no link to refuse. Linux and macOS, CI included, always make them and run this test.
      if ((e as NodeJS.ErrnoException).code === 'EPERM') this.skip();
      throw e;
    }
    try {
      await linkChecks();
    } finally {
      for (const l of ['escape', 'escape.txt', 'inside.md', 'env-link.txt']) await fs.rm(path.join(root, 'tools', l), { force: true });
    }
  });

  async function linkChecks(): Promise<void> {
    assert.match(await refusal('read_file', { path: 'tools/escape/secret.txt' }), /symbolic link \(or inside one\) that leads outside the workspace folder/);
    assert.match(await refusal('read_file', { path: 'tools/escape.txt' }), /symbolic link/);
    assert.match(await refusal('list_directory', { path: 'tools/escape' }), /symbolic link/);
    assert.match(await refusal('read_file', { path: 'tools/env-link.txt' }), /symbolic link to "tools\/\.env", which is excluded by parley\.tools\.exclude/);
    assert.match(await call('read_file', { path: 'tools/inside.md' }), /The word needle appears on this line/);
    const search = await call('search_text', { query: 'outside-secret-text' });
    assert.match(search, /^No matches/, search);
    const found = await call('find_files', { glob: 'tools/escape*/**' });
    assert.ok(!found.includes('secret.txt'), found);
  }

  test('read_file and search_text read what they checked: a path swapped for a link to outside after the check gives nothing from outside', async function () {
    const secret = path.join(outside, 'secret.txt');
    const flip = path.join(root, 'tools', 'flip.txt');
    const flipDir = path.join(root, 'tools', 'flipdir');
    const answer = async (name: string, args: Record<string, unknown>) => call(name, args).catch((e: unknown) => {
      if (e instanceof ToolError) return `refused: ${e.message}`;
      throw e;
    });
    try {
      // The file is checked as an ordinary file inside; at the seam, between the check and the read, it becomes a link
      // to a file outside (the race the review won 9 times in 400, made certain).
      await fs.writeFile(flip, 'inside-flip-text\n');
      await fs.symlink(secret, `${flip}.probe`).catch((e: NodeJS.ErrnoException) => {
        // As above: only where the OS refuses to make symbolic links (EPERM) is there no link to swap in.
        if (e.code === 'EPERM') this.skip();
        throw e;
      });
      await fs.rm(`${flip}.probe`);
      let swaps = 0;
      const results: string[] = [];
      // An ordinary file inside at the check, a link to the secret outside at the read.
      const swapAtSeam = async () => {
        await fs.rm(flip, { force: true });
        await fs.writeFile(flip, 'inside-flip-text\n');
        toolReadSeam.afterCheck = async (p) => {
          if (p !== flip) return;
          await fs.rm(flip);
          await fs.symlink(secret, flip);
          swaps++;
        };
      };
      for (let i = 0; i < 20; i++) {
        await swapAtSeam();
        results.push(await answer('read_file', { path: 'tools/flip.txt' }));
        toolReadSeam.afterCheck = undefined;
      }
      assert.equal(swaps, 20, 'the path was swapped after every check');
      for (const r of results) assert.ok(!r.includes('outside-secret-text'), r);
      assert.match(results[0], /^refused: "tools\/flip\.txt" changed while it was being read/);

      // A folder on the way swapped for a link to a folder outside that holds a file of the same name.
      await fs.mkdir(flipDir, { recursive: true });
      await fs.writeFile(path.join(flipDir, 'secret.txt'), 'inside-dir-text\n');
      toolReadSeam.afterCheck = async (p) => {
        if (!p.startsWith(flipDir)) return;
        await fs.rm(flipDir, { recursive: true });
        await fs.symlink(outside, flipDir, 'dir');
      };
      const viaDir = await answer('read_file', { path: 'tools/flipdir/secret.txt' });
      toolReadSeam.afterCheck = undefined;
      assert.ok(!viaDir.includes('outside-secret-text'), viaDir);
      assert.match(viaDir, /^refused: "tools\/flipdir\/secret\.txt" changed while it was being read/);
      await fs.rm(flipDir, { force: true });

      // search_text reads each file the same way.
      await swapAtSeam();
      const search = await answer('search_text', { query: 'outside-secret-text', glob: 'tools/flip.txt' });
      toolReadSeam.afterCheck = undefined;
      assert.match(search, /^No matches/, search);
    } finally {
      toolReadSeam.afterCheck = undefined;
      await fs.rm(flip, { force: true });
      await fs.rm(flipDir, { recursive: true, force: true });
    }
  });

  test('read_file never returns the outside file while a path flips between a file inside and a link to outside', async function () {
    const secret = path.join(outside, 'secret.txt');
    const race = path.join(root, 'tools', 'race.txt');
    await fs.writeFile(race, 'inside-race-text\n');
    try {
      await fs.symlink(secret, `${race}.link`);
    } catch (e) {
      // Skipped only where the OS refuses to make symbolic links (EPERM: Windows without Developer Mode or admin rights):
      // there is no link to test. Linux and macOS, CI included, always make them.
      if ((e as NodeJS.ErrnoException).code === 'EPERM') this.skip();
      throw e;
    }
    let flipping = true;
    let flips = 0;
    // Each flip is one rename over the path, so that the path always exists: a file inside, then a link to outside.
    const flipper = (async () => {
      while (flipping) {
        await fs.symlink(secret, `${race}.link`).catch(() => {});
        await fs.rename(`${race}.link`, race);
        await fs.writeFile(`${race}.file`, 'inside-race-text\n');
        await fs.rename(`${race}.file`, race);
        flips++;
      }
    })();
    const seen = new Map<string, number>();
    try {
      for (let i = 0; i < 200; i++) {
        const r = await call('read_file', { path: 'tools/race.txt' }).catch((e: unknown) => {
          if (e instanceof ToolError) return 'refused';
          throw e;
        });
        const kind = r.includes('outside-secret-text') ? 'OUTSIDE' : r.includes('inside-race-text') ? 'inside' : 'refused';
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
      }
      flipping = false;
      await flipper;
      // The flipper's last step leaves a file inside: read as usual once nothing swaps it.
      assert.match(await call('read_file', { path: 'tools/race.txt' }), /inside-race-text/);
    } finally {
      flipping = false;
      await flipper;
      for (const f of [race, `${race}.link`, `${race}.file`]) await fs.rm(f, { force: true });
    }
    assert.ok(flips > 0, 'the path flipped while it was read');
    assert.equal(seen.get('OUTSIDE'), undefined, `read 200 times: ${JSON.stringify(Object.fromEntries(seen))}`);
  });

  test('list_directory lists folders first with a trailing /, hiding excluded entries and saying so', async () => {
    const r = await call('list_directory', { path: 'tools' });
    const lines = r.split('\n');
    assert.match(lines[0], /^tools\/: \d+ entries$/);
    assert.ok(lines.includes('nested/') && lines.includes('many/') && lines.includes('notes.md') && lines.includes('long.txt'), r);
    assert.ok(lines.indexOf('nested/') < lines.indexOf('notes.md'), 'folders first');
    assert.ok(!r.includes('.env') && !r.includes('node_modules'), r);
    assert.match(r, /\[2 entries hidden by parley\.tools\.exclude\.\]/);
    assert.ok((await call('list_directory', {})).split('\n').includes('tools/'));
    assert.match(await refusal('list_directory', { path: HELLO }), /is a file, not a folder: use read_file/);
  });

  test('find_files finds by glob, never excluded files, and caps the results', async () => {
    const ts = await call('find_files', { glob: '**/*.ts' });
    assert.ok(ts.split('\n').includes(HELLO), ts);
    assert.match(await call('find_files', { glob: '**/.env*' }), /^No files match/);
    assert.match(await call('find_files', { glob: '**/node_modules/**' }), /^No files match/);
    const capped = await call('find_files', { glob: 'tools/many/*.txt', maxResults: 5 });
    const lines = capped.split('\n');
    assert.match(lines[0], /^5 files match "tools\/many\/\*\.txt" \(more exist: only the first 5 are listed; narrow the glob\):$/);
    assert.deepEqual(lines.slice(1), ['tools/many/file00.txt', 'tools/many/file01.txt', 'tools/many/file02.txt', 'tools/many/file03.txt', 'tools/many/file04.txt']);
    assert.match(await refusal('find_files', { glob: '../**' }), /must be relative to the workspace folders/);
    assert.match(await refusal('find_files', {}), /find_files: "glob" is required/);
  });

  test('search_text finds literal and regex matches, skips excluded and binary files, caps, and reports a bad regex', async () => {
    const literal = await call('search_text', { query: 'HELLO FROM THE FIXTURE' });
    const binary = '[1 binary, unreadable or larger than 1 MB file was skipped.]';
    assert.equal(literal, `1 match for text "HELLO FROM THE FIXTURE" in 1 file:\n${HELLO}:2: export const greeting = 'hello from the fixture';\n${binary}`);
    const regex = await call('search_text', { query: 'needle (appears|in a dep)', isRegex: true });
    assert.equal(regex, `1 match for regex "needle (appears|in a dep)" in 1 file:\ntools/notes.md:2: The word needle appears on this line.\n${binary}`);
    assert.match(await call('search_text', { query: FAKE_KEY }), /^No matches/);
    const capped = await call('search_text', { query: 'needle number', glob: 'tools/many/**', maxResults: 7 });
    const lines = capped.split('\n');
    assert.match(lines[0], /^7 matches for text "needle number" in tools\/many\/\*\* in 3 files:$/);
    assert.equal(lines[1], 'tools/many/file00.txt:1: needle number 0');
    assert.match(capped, /\[Stopped at maxResults \(7\) after 3 files: there may be more matches\./);
    const bad = await refusal('search_text', { query: 'needle(', isRegex: true });
    assert.match(bad, /^search_text: the query is not a valid regular expression \(.*\)\. Fix it, or set isRegex to false/);
  });

  test('search_text stops a catastrophic regex as too slow, and the extension host keeps running meanwhile', async function () {
    this.timeout(60_000);
    // (.*.*)*X backtracks for about 40 s on each of these lines when run on the extension host's thread (issue 32).
    await write('tools/slow/lines.txt', ['fine', 'a'.repeat(16), 'a'.repeat(16), 'also fine', ''].join('\n'));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    let r: string;
    try {
      r = await refusal('search_text', { query: '(.*.*)*X', isRegex: true, glob: 'tools/slow/**' });
    } finally {
      clearInterval(timer);
    }
    assert.match(r, /^search_text stopped: matching the regex "\(\.\*\.\*\)\*X" in tools\/slow\/\*\* took more than 5 s \(at tools\/slow\/lines\.txt, after 0 files\), so the pattern is too slow\./);
    assert.match(r, /use a simpler pattern/);
    assert.ok(ticks > 0, 'a timer of the extension host ticked while the search ran');
    // The next search runs as usual.
    assert.match(await call('search_text', { query: 'also fine', glob: 'tools/slow/**' }), /^1 match for text "also fine" in tools\/slow\/\*\* in 1 file:\ntools\/slow\/lines\.txt:4: also fine$/);
  });

  test('search_text stops when its signal aborts', async () => {
    const search = tool('search_text');
    const now = new AbortController();
    now.abort();
    await assert.rejects(search.run({ query: 'needle' }, now.signal), (e: Error) => e.name === 'AbortError');
    // Aborted while it runs: it rejects instead of returning a result.
    const later = new AbortController();
    const running = search.run({ query: 'no such text anywhere', glob: 'tools/**' }, later.signal);
    setTimeout(() => later.abort(), 1);
    await assert.rejects(running, (e: Error) => e.name === 'AbortError');
  });

  test("get_diagnostics lists a file's or the workspace's problems, not excluded files", async () => {
    const collection = vscode.languages.createDiagnosticCollection('parley-tools-test');
    try {
      const hello = vscode.Uri.file(path.join(root, HELLO));
      const problem = new vscode.Diagnostic(new vscode.Range(1, 13, 1, 21), 'Fixture problem\nsecond line', vscode.DiagnosticSeverity.Error);
      problem.source = 'parley-test';
      problem.code = 'X1';
      collection.set(hello, [problem, new vscode.Diagnostic(new vscode.Range(0, 0, 0, 2), 'A hint', vscode.DiagnosticSeverity.Warning)]);
      collection.set(vscode.Uri.file(path.join(root, 'tools', '.env')), [new vscode.Diagnostic(new vscode.Range(1, 0, 1, 5), 'env problem', vscode.DiagnosticSeverity.Error)]);
      const expected = `${HELLO}:2:14 error Fixture problem second line (parley-test X1)`;
      const one = await call('get_diagnostics', { path: HELLO });
      assert.equal(one, `2 diagnostics for "${HELLO}" (1 error, 1 warning):\n${expected}\n${HELLO}:1:1 warning A hint`);
      const all = await call('get_diagnostics', {});
      assert.ok(all.includes(expected), all);
      assert.ok(!all.includes('env problem') && !all.includes('.env'), all);
      assert.match(await refusal('get_diagnostics', { path: 'tools/.env' }), /excluded/);
      assert.match(await call('get_diagnostics', { path: 'tools/notes.md' }), /^No diagnostics for "tools\/notes\.md"/);
    } finally {
      collection.dispose();
    }
  });

  test('get_open_editors lists the open editors, the active one with its selection', async () => {
    // An unsaved editor an earlier suite left (an untitled one asks before closing) is reverted and closed, again
    // until none is left.
    await waitFor('no editor open', async () => {
      await closeEverything();
      return vscode.window.tabGroups.all.every((g) => g.tabs.length === 0);
    }, 15_000);
    const notes = await vscode.window.showTextDocument(vscode.Uri.file(path.join(root, 'tools', 'notes.md')), { preview: false });
    assert.ok(notes);
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(path.join(root, HELLO)), { preview: false });
    editor.selection = new vscode.Selection(1, 13, 1, 21);
    const r = await call('get_open_editors', {});
    const lines = r.split('\n');
    assert.equal(lines[0], '2 open editors:', r);
    assert.ok(lines.includes('tools/notes.md'), r);
    assert.ok(lines.includes(`${HELLO} (active, selection 2:14–2:22)`), r);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    assert.equal(await call('get_open_editors', {}), 'No editors are open.');
  });

  test('every tool has a definition the API accepts, and a summary that never throws', () => {
    const tools = builtinTools({ exclude: DEFAULT_TOOL_EXCLUDE, maxResultChars: 20_000 });
    assert.deepEqual(tools.map((t) => t.definition.function.name), ['read_file', 'list_directory', 'find_files', 'search_text', 'get_diagnostics', 'get_open_editors']);
    for (const t of tools) {
      assert.equal(t.definition.type, 'function');
      assert.equal((t.definition.function.parameters as { type: string }).type, 'object');
      assert.equal(typeof t.summary({ path: 3, glob: null, query: {} }), 'string');
    }
    assert.equal(tools[0].summary({ path: 'a.ts', startLine: 3, endLine: 9 }), 'a.ts:3-9');
    assert.equal(tools[3].summary({ query: 'foo', glob: 'src/**' }), 'foo in src/**');
  });
});

/** Closes every editor, reverting unsaved ones first (an unsaved editor left by an earlier suite would stay open, asking). */
async function closeEverything(): Promise<void> {
  const unsaved = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
    .filter((t) => t.isDirty || (t.input instanceof vscode.TabInputText && t.input.uri.scheme === 'untitled'))
    .flatMap((t) => (t.input instanceof vscode.TabInputText ? [t.input.uri] : []));
  for (const uri of unsaved) {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}
