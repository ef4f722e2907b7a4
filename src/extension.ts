// Parley's entry point: build the objects, register them, push their disposables. Nothing else.
import * as vscode from 'vscode';
import { ChatController } from './vscode/chatController';
import { ChatViewProvider, VIEW_ID } from './vscode/chatView';
import { registerCommands, viewActions, type Services } from './vscode/commands';
import { readSettings } from './vscode/config';
import { HistoryStore } from './vscode/history';
import { Log } from './vscode/log';
import { ReportDocuments } from './vscode/reports';
import { Requester } from './vscode/requester';
import { ApiKeyStore } from './vscode/secrets';
import { USAGE_REPORT, UsageTracker } from './vscode/usage';

/** Returned from activate() only when VS Code runs extension tests: other extensions get nothing. */
export type TestApi = Services & { context: vscode.ExtensionContext; history: HistoryStore };

export async function activate(context: vscode.ExtensionContext): Promise<TestApi | undefined> {
  const log = new Log(() => readSettings().logLevel);
  const keys = new ApiKeyStore(context.secrets, context.globalState);
  const usage = new UsageTracker(context.globalStorageUri, context.globalState);
  const requester = new Requester(context.globalState, keys, log, usage);
  const history = new HistoryStore(context.globalStorageUri, context.globalState);
  const chat = new ChatController(requester, history, log);
  const services = {} as Services;
  const testing = context.extensionMode === vscode.ExtensionMode.Test;
  const view = new ChatViewProvider(context.extensionUri, chat, viewActions(services), log, testing);
  const reports = new ReportDocuments();
  reports.register(USAGE_REPORT, () => usage.reportText());
  Object.assign(services, { chat, view, requester, keys, usage, log, reports } satisfies Services);
  await chat.restore();

  context.subscriptions.push(
    log,
    reports,
    keys,
    usage,
    chat,
    view,
    vscode.window.registerWebviewViewProvider(VIEW_ID, view),
    ...registerCommands(services),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('parley')) void chat.endpointChanged();
    }),
    keys.onDidChange(() => void chat.endpointChanged()),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void chat.endpointChanged()),
  );
  return testing ? { ...services, context, history } : undefined;
}

export function deactivate(): void {}
