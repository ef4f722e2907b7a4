// Parley's entry point: build the objects, register them, push their disposables. Nothing else.
import * as vscode from 'vscode';

export function activate(_context: vscode.ExtensionContext): void {
  // Filled in by the extension glue (src/vscode).
}

export function deactivate(): void {}
