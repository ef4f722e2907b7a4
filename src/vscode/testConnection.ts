// "Parley: Test Connection": placeholder until the diagnosis lands (issue 7).
import * as vscode from 'vscode';
import type { Log } from './log';
import type { Requester } from './requester';

export async function testConnection(_requester: Requester, _log: Log): Promise<void> {
  void vscode.window.showInformationMessage('Parley: Test Connection is not built yet.');
}
