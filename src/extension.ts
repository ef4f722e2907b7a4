// Parley's entry point: build the objects in order, register them, push their disposables. Nothing else.
import * as vscode from 'vscode';
import type { ContextItem } from './core/conversation';
import { ChatController } from './vscode/chatController';
import { vscodeChatUi } from './vscode/chatUi';
import { LazyChatProvider, VENDOR } from './vscode/lazyChatProvider';
import { ChatViewProvider, VIEW_ID } from './vscode/chatView';
import { registerCommands } from './vscode/commands';
import { balances } from './vscode/lazy/balance';
import { budget } from './vscode/lazy/budget';
import { mentions } from './vscode/lazy/mentions';
import { Completions } from './vscode/completions';
import { openBudgetSettings, SettingsSnapshot } from './vscode/config';
import { EditorTracker } from './vscode/editors';
import { ExternalTools } from './vscode/externalTools';
import { HistoryStore } from './vscode/history';
import { Log } from './vscode/log';
import { recordShownTexts, showWarning } from './vscode/notices';
import { ReportDocuments } from './vscode/reports';
import { Requester } from './vscode/requester';
import { ApiKeyStore } from './vscode/secrets';
import { USAGE_REPORT, UsageStatusBar, usageReportRenderer } from './vscode/statusBar';
import { ViewRecorder } from './vscode/testSeam';
import { workspaceToolbox } from './vscode/toolbox';
import { UsageStore } from './vscode/usageStore';
import { routeWebviewMessage } from './vscode/webviewRoutes';

/** Returned from activate() only when VS Code runs extension tests (other extensions get nothing): the objects it built. */
export interface TestApi {
  settings: SettingsSnapshot;
  log: Log;
  keys: ApiKeyStore;
  usage: UsageStore;
  usageBar: UsageStatusBar;
  requester: Requester;
  history: HistoryStore;
  chat: ChatController;
  reports: ReportDocuments;
  editors: EditorTracker;
  externalTools: ExternalTools;
  completions: Completions;
  context: vscode.ExtensionContext;
  view: ChatViewProvider;
  recorded: ViewRecorder;
}

export async function activate(context: vscode.ExtensionContext): Promise<TestApi | undefined> {
  const started = performance.now();
  const settings = new SettingsSnapshot();
  const log = new Log(() => settings.current.logLevel, vscode.window.createOutputChannel('Parley', { log: true }));
  const keys = new ApiKeyStore(context.secrets, context.globalState);
  const usage = new UsageStore(context.globalStorageUri, context.globalState);
  const usageBar = new UsageStatusBar(usage, settings, keys, context.globalState);
  const requester = new Requester(context.globalState, keys, log, usage, settings);
  const history = new HistoryStore(context.globalStorageUri, context.globalState, log);
  const externalTools = new ExternalTools(context.globalState);
  const editors = new EditorTracker();
  // Chips with `@` mentions are read when their question is sent, by dist/mentions.js, loaded then.
  const expandContext = async (items: readonly ContextItem[]) =>
    items.some((i) => i.mention) ? mentions().expandMentions(items, settings.current, editors.current) : { items: [...items], notes: [] };
  const chat = new ChatController({ requester, history, log, settings, ui: vscodeChatUi, toolbox: workspaceToolbox(settings, externalTools), expandContext });
  const reports = new ReportDocuments();
  const usageReportText = usageReportRenderer(usage, settings, context.globalState);
  reports.register(USAGE_REPORT, async () => (await usageReportText()) + balances(settings.current, keys, () => reports.show(USAGE_REPORT), true));
  const completions = new Completions({ settings, log, keys, usage, requester }, context.globalState);
  // The commands and the chat's routes reach most of these; each of their modules takes only the ones it uses.
  const built = { settings, log, keys, usage, usageBar, requester, history, chat, reports, editors, externalTools, completions };
  const recorded = context.extensionMode === vscode.ExtensionMode.Test ? new ViewRecorder() : undefined;
  if (recorded) recordShownTexts(recorded.shown);
  const view = new ChatViewProvider(context.extensionUri, chat.channel, (m) => routeWebviewMessage(built, m), log, recorded, () => chat.views.prefetch());
  await chat.restore();
  // Replies other conversations were streaming when their window went away are counted and marked Interrupted, once
  // the window has settled (a reload opens the conversation last opened in any window, which may not be its own).
  const recovery = setTimeout(() => void chat.files.recoverOthers().catch((e) => log.warn(`Recovering interrupted replies failed: ${e instanceof Error ? e.message : String(e)}`)), 2_000);
  context.subscriptions.push({ dispose: () => clearTimeout(recovery) });

  const lmProvider = new LazyChatProvider(requester, settings, keys, log);
  const endpointChanged = () => void chat.endpointChanged();
  // A spend limit that cannot be read is said now and after each settings change (dist/budget.js), never per request.
  const badLimits = () => void (settings.current.budgetMistakes.length && budget().sayBudgetMistakes(settings.current.budgetMistakes, log, showWarning, openBudgetSettings));
  badLimits();
  context.subscriptions.push(
    settings,
    log,
    reports,
    keys,
    usage,
    usageBar,
    chat,
    view,
    editors,
    vscode.window.registerWebviewViewProvider(VIEW_ID, view),
    lmProvider,
    vscode.lm.registerLanguageModelChatProvider(VENDOR, lmProvider),
    completions,
    ...registerCommands(built),
    // The snapshot is fresh when it fires; it also fires when the workspace becomes trusted.
    settings.onDidChange(endpointChanged),
    settings.onDidChange(badLimits),
    keys.onDidChange(endpointChanged),
  );
  // For bench/latency.mjs, which reads it from the log file at `debug`; one clock read, nothing else.
  log.debug(`activate() took ${(performance.now() - started).toFixed(1)} ms`);
  return recorded ? { ...built, context, view, recorded } : undefined;
}

export function deactivate(): void {}
