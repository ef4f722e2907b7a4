// Integration suite entry: VS Code's extension host calls run(), which runs one integration run's test files with mocha.
//
// Adding a test file: create test/integration/<name>.test.ts with mocha's TDD interface (suite, test, suiteSetup,
// setup…; see smoke.test.ts). esbuild.mjs bundles every *.test.ts into this entry by itself. Which runs execute it is
// decided by the `tests` patterns in runs.mjs: "main" takes every file not excluded there, so a new file needs no
// other change. Adding a run (another workspace, settings or trust): add an entry to runs.mjs and a fixture folder
// under workspaces/. scripts/run-integration.mjs starts a VS Code per run and passes the run's name to this
// entry as PARLEY_TEST_SUITE; PARLEY_TEST_GREP narrows to tests whose full title matches. Workspace trust is on in
// code-server: the runner trusts the folder of a `trust: true` run in the Workspace Trust editor before the suite
// starts, and run() stops before any test when vscode.workspace.isTrusted does not match the run's `trust`.
import Mocha from 'mocha';
import { promises as fs } from 'node:fs';
import { format } from 'node:util';
import * as vscode from 'vscode';
import testFiles from 'parley:integration-tests';
import { runs, selectTests } from './runs.mjs';

/** Runs the test files of the run named by PARLEY_TEST_SUITE ("main" when unset, e.g. under F5 debugging). */
export async function run(): Promise<void> {
  const report = reportLine(process.env.PARLEY_TEST_CONSOLE_MARK);
  // Mocha's reporters print through Base.consoleLog.
  Mocha.reporters.Base.consoleLog = report;
  const suiteName = process.env.PARLEY_TEST_SUITE || 'main';
  const testRun = runs.find((r) => r.name === suiteName);
  if (!testRun) throw new Error(`PARLEY_TEST_SUITE=${suiteName} names no run in test/integration/runs.mjs (known: ${runs.map((r) => r.name).join(', ')})`);
  const names = selectTests(testRun, Object.keys(testFiles));
  if (names.length === 0) throw new Error(`run "${suiteName}" selects no test files: check its tests patterns in runs.mjs`);

  const where = [vscode.env.appName, vscode.env.appHost, vscode.env.remoteName && `remote ${vscode.env.remoteName}`].filter(Boolean).join(', ');
  const trustOn = vscode.workspace.getConfiguration('security.workspace.trust').get('enabled') !== false;
  const trusted = vscode.workspace.isTrusted;
  report(`VS Code ${vscode.version} (${where}); run "${suiteName}", workspace trust ${trustOn ? 'on' : 'off'}, workspace ${trusted ? 'trusted' : 'untrusted'}; files: ${names.join(', ')}`);
  // A run whose trust set-up did not take would test the wrong thing: stop before any test.
  if (trusted !== testRun.trust) throw new Error(`run "${suiteName}" needs a${testRun.trust ? ' trusted' : 'n untrusted'} workspace (trust: ${testRun.trust} in runs.mjs), but vscode.workspace.isTrusted is ${trusted}`);
  if (testRun.workspaceFile) await workspaceFolders(suiteName, report);

  // Colours off: the output travels through the workbench console to the runner's stdout.
  const mocha = new Mocha({ ui: 'tdd', color: false, reporter: 'spec', timeout: 20_000, grep: process.env.PARLEY_TEST_GREP || undefined });
  for (const name of names) {
    const file = `${name}.test.ts`;
    // What mocha.loadFiles() does, with a bundled module instead of a path: the TDD globals exist while it loads.
    mocha.suite.emit('pre-require', globalThis, file, mocha);
    let exports: unknown;
    try {
      exports = testFiles[name]();
    } catch (e) {
      throw new Error(`loading ${file} failed: ${e instanceof Error ? e.stack : String(e)}`);
    }
    mocha.suite.emit('require', exports, file, mocha);
    mocha.suite.emit('post-require', globalThis, file, mocha);
  }
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} integration test${failures === 1 ? '' : 's'} failed in run "${suiteName}"`);
}

/**
 * In code-server the workbench forwards this host's console to the runner together with its own log, unformatted.
 * With a mark from the runner, mocha's report is formatted here and each line starts with the mark, so the runner
 * prints it and keeps the workbench's chatter for failures. (The host's console methods cannot be wrapped: VS Code
 * defines them with a setter that ignores assignments.)
 */
function reportLine(mark: string | undefined): (...args: unknown[]) => void {
  return mark ? (...args) => console.log(mark + format(...args)) : (...args) => console.log(...args);
}

/**
 * A multi-root run needs the folders of its .code-workspace. code-server's workbench now and then (about one start in
 * four here) opens the workspace file with no folders and never reads it again; a write of the same text makes it
 * read the file (its watcher), and the folders come. Writes it until they do, a few times; else stops the run.
 */
async function workspaceFolders(suiteName: string, report: (...args: unknown[]) => void): Promise<void> {
  const file = vscode.workspace.workspaceFile;
  if (!file || file.scheme !== 'file') throw new Error(`run "${suiteName}" opens a .code-workspace, but vscode.workspace.workspaceFile is ${String(file)}`);
  for (let attempt = 1; !vscode.workspace.workspaceFolders?.length; attempt++) {
    if (attempt > 4) throw new Error(`run "${suiteName}": VS Code opened ${file.fsPath} with no folders, and writing it again ${attempt - 1} times did not make it read them`);
    report(`VS Code opened ${file.fsPath} with no folders: writing it again (attempt ${attempt}) so that it reads them`);
    await fs.writeFile(file.fsPath, await fs.readFile(file.fsPath));
    const folders = new Promise<boolean>((resolve) => {
      const listener = vscode.workspace.onDidChangeWorkspaceFolders(() => vscode.workspace.workspaceFolders?.length && (listener.dispose(), resolve(true)));
      setTimeout(() => (listener.dispose(), resolve(false)), 5000);
    });
    await folders;
  }
}
