// Smoke: Parley is installed in this VS Code, activates through its command and registers what it contributes.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'parley.parley';

interface Manifest {
  contributes: { commands: { command: string }[] };
}

suite('Smoke: Parley in a real VS Code', function () {
  this.timeout(30_000);

  test('the extension is present', () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not known to this extension host`);
    assert.equal((ext.packageJSON as { name: string }).name, 'parley');
  });

  test('running parley.openChat activates it without an error', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    // A command contributed in package.json activates its extension; a throwing activate() rejects this call.
    await vscode.commands.executeCommand('parley.openChat');
    assert.equal(ext.isActive, true, 'the extension is active after parley.openChat');
  });

  test('every command contributed in package.json is registered', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    await ext.activate();
    const contributed = (ext.packageJSON as Manifest).contributes.commands.map((c) => c.command);
    assert.ok(contributed.length > 0, 'package.json contributes commands');
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(contributed.filter((c) => !registered.has(c)), [], 'contributed but not registered');
  });
});
