// Registers every command: each id (written once here and once in package.json) to the function in the file of its job.
import * as vscode from 'vscode';
import { exportChat, newChat, showHistory, stop } from './chatCommands';
import { revealChatView } from './chatView';
import { resetAdaptations, resetWorkspaceOrigins, selectModel, switchEndpoint } from './endpointCommands';
import { clearApiKey, setApiKey } from './keyCommands';
import type { Services } from './services';
import { resetUsage } from './statusBar';
import type * as Mentions from './mentions';
import type * as TestConnection from './testConnection';
import type * as HeaderSecretCommand from './headerSecretCommand';
import type * as Apply from './apply/apply';
import type * as EditorCommands from './editorCommands';
import { PROPOSAL_SCHEME } from './apply/scheme';

/** Test Connection and its report, loaded on first use: dist/testConnection.js (see LAZY in esbuild.mjs). */
export function testConnectionModule(): typeof TestConnection {
  return require('./testConnection.js') as typeof TestConnection;
}

/** Whether applyModule() was called (nothing to close otherwise, and no reason to load it). */
let applyLoaded = false;

/** Apply and its reviews, loaded on first use: dist/apply.js (see LAZY in esbuild.mjs). */
export function applyModule(): typeof Apply {
  applyLoaded = true;
  return require('./apply.js') as typeof Apply;
}

/** `@` mentions and Add File to Chat, loaded on first use: dist/mentions.js (see LAZY in esbuild.mjs). */
export function mentionsModule(): typeof Mentions {
  return require('./mentions.js') as typeof Mentions;
}

/** Explain Selection, Add Selection to Chat and Generate Code, loaded on first use: dist/editorCommands.js (see LAZY in esbuild.mjs). */
function editorCommandsModule(): typeof EditorCommands {
  return require('./editorCommands.js') as typeof EditorCommands;
}

/**
 * Closes the review tabs a reload restored: their reviews ended with the window that opened them, so nothing could be
 * accepted there and nothing provides their content. Call before any review opens (at activation).
 */
export async function closeStaleReviews(): Promise<void> {
  const stale = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PROPOSAL_SCHEME);
  if (stale.length) await vscode.window.tabGroups.close(stale);
}

/** Registers every command; the caller disposes them. */
export function registerCommands(s: Services): vscode.Disposable[] {
  const commands: Record<string, (...args: unknown[]) => unknown> = {
    'parley.openChat': revealChatView,
    'parley.newChat': () => newChat(s),
    // The id is public (keybindings, other extensions); the command is Parley: Stop.
    'parley.cancel': () => stop(s),
    'parley.exportChat': () => exportChat(s),
    'parley.showHistory': () => showHistory(s),
    'parley.setApiKey': () => setApiKey(s),
    'parley.clearApiKey': () => clearApiKey(s),
    'parley.addSelectionToChat': () => editorCommandsModule().addSelectionToChat(s),
    // The explorer gives the clicked file and, with several selected, all of them.
    'parley.addFileToChat': (uri, uris) => mentionsModule().addFilesToChat(s, uri, uris),
    'parley.explainSelection': () => editorCommandsModule().explainSelection(s),
    'parley.generateCode': (description) => editorCommandsModule().generateCode(s, description),
    'parley.showUsage': () => s.usage.showReport(s.reports),
    'parley.resetUsage': () => resetUsage(s.usage),
    'parley.testConnection': () => testConnectionModule().testConnection(s),
    'parley.resetAdaptations': () => resetAdaptations(s),
    'parley.resetWorkspaceOrigins': () => resetWorkspaceOrigins(s),
    'parley.selectModel': () => selectModel(s),
    'parley.showLog': () => s.log.show(),
    'parley.chooseTools': () => s.externalTools.choose(),
    'parley.switchEndpoint': () => switchEndpoint(s),
    'parley.setHeaderSecret': (name, value, origins) => (require('./headerSecretCommand.js') as typeof HeaderSecretCommand).setHeaderSecret(s, name, value, origins),
    'parley.testAllEndpoints': () => testConnectionModule().testAllEndpoints(s),
    'parley.compact': () => s.chat.compact(),
    // The editor title passes the diff's URI: the review to decide.
    'parley.acceptProposal': (uri) => applyModule().acceptProposal(uri),
    'parley.rejectProposal': (uri) => applyModule().rejectProposal(uri),
    'parley.completionMenu': () => s.completions.engine.menu(),
    'parley.selectCompletionModel': () => s.completions.engine.switchModel(),
  };
  // Not awaited: activation does not wait for tabs to close, and a failure leaves only an inert tab.
  closeStaleReviews().catch(() => undefined);
  return [
    ...Object.entries(commands).map(([id, fn]) => vscode.commands.registerCommand(id, fn)),
    // Open reviews close with the window's commands (each counts as closed without Accept).
    { dispose: () => { if (applyLoaded) applyModule().disposeReviews(); } },
  ];
}
