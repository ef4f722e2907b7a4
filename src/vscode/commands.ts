// Registers every command: each id (written once here and once in package.json) to the function in the file of its job.
import * as vscode from 'vscode';
import { PROPOSAL_SCHEME } from './apply/scheme';
import { exportChat, newChat, showHistory, stop } from './chatCommands';
import { revealChatView } from './chatView';
import type * as EditorCommands from './editorCommands';
import type { EndpointCommandDeps } from './endpointCommands';
import type { ExternalTools } from './externalTools';
import type * as HeaderSecretCommand from './headerSecretCommand';
import type { HistoryStore } from './history';
import type * as Mentions from './mentions';
import { resetUsage, showUsageReport } from './statusBar';
import type * as TestConnection from './testConnection';
import type { UsageStore } from './usageStore';
import { apply, disposeReviews } from './lazy/apply';
import { editorCommands } from './lazy/editorCommands';
import { endpointCommands } from './lazy/endpointCommands';
import { headerSecretCommand } from './lazy/headerSecretCommand';
import { mentions } from './lazy/mentions';
import { testConnection } from './lazy/testConnection';

/** What the commands use, together: each command module's own objects, and the history, usage and tool lists. */
export type CommandDeps = EndpointCommandDeps & EditorCommands.EditorCommandDeps & TestConnection.TestConnectionDeps & Mentions.MentionDeps &
  HeaderSecretCommand.HeaderSecretDeps & {
  history: HistoryStore;
  usage: UsageStore;
  externalTools: ExternalTools;
};

/**
 * Closes the review tabs a reload restored: their reviews ended with the window that opened them, so nothing could be
 * accepted there and nothing provides their content. Call before any review opens (at activation).
 */
export async function closeStaleReviews(): Promise<void> {
  const stale = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PROPOSAL_SCHEME);
  if (stale.length) await vscode.window.tabGroups.close(stale);
}

/** Registers every command; the caller disposes them. */
export function registerCommands(s: CommandDeps): vscode.Disposable[] {
  const commands: Record<string, (...args: unknown[]) => unknown> = {
    'parley.openChat': revealChatView,
    'parley.newChat': () => newChat(s.chat),
    // The id is public (keybindings, other extensions); the command is Parley: Stop.
    'parley.cancel': () => stop(s.chat),
    'parley.exportChat': () => exportChat(s.chat, s.keys, s.log),
    'parley.showHistory': () => showHistory(s.history, s.chat),
    'parley.setApiKey': () => endpointCommands().setApiKey(s),
    'parley.clearApiKey': () => endpointCommands().clearApiKey(s),
    'parley.addSelectionToChat': () => editorCommands().addSelectionToChat(s),
    // The explorer gives the clicked file and, with several selected, all of them.
    'parley.addFileToChat': (uri, uris) => mentions().addFilesToChat(s, uri, uris),
    'parley.explainSelection': () => editorCommands().explainSelection(s),
    'parley.generateCode': (description) => editorCommands().generateCode(s, description),
    'parley.showUsage': () => showUsageReport(s.reports),
    'parley.resetUsage': () => resetUsage(s.usage),
    'parley.testConnection': () => testConnection().testConnection(s),
    'parley.resetAdaptations': () => endpointCommands().resetAdaptations(s),
    'parley.resetWorkspaceOrigins': () => endpointCommands().resetWorkspaceOrigins(s),
    'parley.selectModel': () => endpointCommands().selectModel(s),
    'parley.showLog': () => s.log.show(),
    'parley.chooseTools': () => s.externalTools.choose(),
    'parley.switchEndpoint': () => endpointCommands().switchEndpoint(s),
    'parley.setHeaderSecret': (name, value, origins) => headerSecretCommand().setHeaderSecret(s, name, value, origins),
    'parley.testAllEndpoints': () => testConnection().testAllEndpoints(s),
    'parley.compact': () => s.chat.compact(),
    // The editor title passes the diff's URI: the review to decide.
    'parley.acceptProposal': (uri) => apply().acceptProposal(uri),
    'parley.rejectProposal': (uri) => apply().rejectProposal(uri),
    'parley.completionMenu': () => s.completions.engine.menu(),
    'parley.selectCompletionModel': () => s.completions.engine.switchModel(),
  };
  // Not awaited: activation does not wait for tabs to close, and a failure leaves only an inert tab.
  closeStaleReviews().catch(() => undefined);
  return [
    ...Object.entries(commands).map(([id, fn]) => vscode.commands.registerCommand(id, fn)),
    // Open reviews close with the window's commands (each counts as closed without Accept).
    { dispose: disposeReviews },
  ];
}
