// The objects extension.ts builds, in order, and hands to the commands and the chat view's routes.
import type { ChatController } from './chatController';
import type { Completions } from './completions';
import type { SettingsSnapshot } from './config';
import type { EditorTracker } from './editors';
import type { ExternalTools } from './externalTools';
import type { HistoryStore } from './history';
import type { Log } from './log';
import type { ReportDocuments } from './reports';
import type { Requester } from './requester';
import type { ApiKeyStore } from './secrets';
import type { UsageTracker } from './statusBar';

/** Everything a command needs. Built before any command or route runs, so nothing here is filled in later. */
export interface Services {
  settings: SettingsSnapshot;
  log: Log;
  keys: ApiKeyStore;
  usage: UsageTracker;
  requester: Requester;
  history: HistoryStore;
  chat: ChatController;
  reports: ReportDocuments;
  editors: EditorTracker;
  externalTools: ExternalTools;
  completions: Completions;
}
