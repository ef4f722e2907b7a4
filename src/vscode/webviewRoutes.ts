// Where each validated message from the chat webview goes: the chat, or the command function of its job. One route per
// message type of the protocol's table (shared/protocol.ts): a type without its route does not compile.
import * as vscode from 'vscode';
import { routeMessage, type Routes } from '../shared/messageTable';
import type { ActionId, WebviewMessage } from '../shared/protocol';
import type { ApplyDeps } from './apply/apply';
import { sendOnceAnyway } from './budgetGuard';
import { pickImage, stop } from './chatCommands';
import { openLink } from './chatView';
import { openBudgetSettings, openSettings } from './config';
import { insertCode, openCode } from './editors';
import type { EndpointCommandDeps } from './endpointCommands';
import { endpointCommands } from './lazy/endpointCommands';
import type { MentionDeps } from './mentions';
import type { TestConnectionDeps } from './testConnection';
import { apply } from './lazy/apply';
import { mentions } from './lazy/mentions';
import { promptFiles } from './lazy/promptFiles';
import { reasoningEffort } from './lazy/reasoningEffort';
import { testConnection } from './lazy/testConnection';

/** What the routes hand on: the objects of each command module a message reaches. */
export type RouteDeps = EndpointCommandDeps & TestConnectionDeps & MentionDeps & ApplyDeps;

/** The buttons of error cards, the setup card and notices. Retry and Continue reach the chat only this way. */
export const ACTION_ROUTES: { readonly [A in ActionId]: (s: RouteDeps) => unknown } = {
  retry: (s) => s.chat.regenerate(),
  continue: (s) => s.chat.continueReply(),
  setApiKey: (s) => endpointCommands().setApiKey(s),
  markNoKey: (s) => endpointCommands().markNoKey(s),
  openSettings: () => openSettings(),
  testConnection: (s) => testConnection().testConnection(s),
  showLog: (s) => s.log.show(),
  switchEndpoint: (s) => endpointCommands().switchEndpoint(s),
  compact: (s) => s.chat.compact(),
  compactRetry: (s) => s.chat.compactAndRetry(),
  // Only this button gives a pass: nothing a model writes reaches it.
  sendOnceAnyway: (s) => sendOnceAnyway(s.chat, s.requester.budget),
  openBudgetSettings: () => openBudgetSettings(),
  rules: (s) => s.chat.room.chooseRules(),
};

/** The route of each message the webview sends, given it already checked (parseWebviewMessage). */
export const WEBVIEW_ROUTES: Routes<WebviewMessage, RouteDeps, unknown> = {
  ready: (_, s) => s.chat.snapshot(true),
  drawn: (_, s) => s.chat.drawn(),
  send: (m, s) => s.chat.send(m.text, m.images),
  stop: (_, s) => stop(s.chat),
  regenerate: (_, s) => s.chat.regenerate(),
  editLast: (_, s) => s.chat.editLast(),
  copy: (m) => vscode.env.clipboard.writeText(m.text),
  insertCode: (m, s) => insertCode(s.editors, m.code),
  openCode: (m) => openCode(m.code, m.language),
  // The path is never trusted: Apply resolves and checks it, and writes nothing without the reader's Accept.
  applyCode: (m, s) => apply().applyCodeBlock(s, { code: m.code, info: m.info, before: m.before }),
  openLink: (m, s) => openLink(m.url, s.log),
  newChat: (_, s) => s.chat.newChat(),
  requestHistory: (_, s) => s.chat.files.postHistory(),
  openConversation: (m, s) => s.chat.openConversation(m.id),
  deleteConversation: (m, s) => s.chat.deleteConversation(m.id),
  openRaw: (m, s) => s.chat.files.openRaw(m.id),
  deleteDamaged: (m, s) => s.chat.files.deleteDamaged(m.id),
  clearHistory: (_, s) => s.chat.clearHistory(),
  action: (m, s) => ACTION_ROUTES[m.action](s),
  applyPreset: (m, s) => endpointCommands().applyPreset(s, m.id),
  pickModel: (_, s) => endpointCommands().selectModel(s),
  setModel: (m, s) => endpointCommands().setModel(s, m.model),
  setProfile: (m, s) => s.chat.setProfile(m.name),
  setEffort: (m, s) => reasoningEffort().chooseEffort(s, m.effort),
  pickImage: (_, s) => pickImage(s.chat),
  removeContext: (m, s) => s.chat.context.remove(m.id),
  toolApproval: (m, s) => {
    // Only the panel's own buttons send this: a tool result or model text cannot approve anything.
    // It counts only for the call the question showed: same id, same tool, same arguments.
    if (!s.chat.tools.answer({ id: m.callId, name: m.name, arguments: m.arguments }, m.decision)) {
      s.log.debug(`tool approval for ${m.callId}: no call waits for it, or not the one the question showed`);
    }
  },
  setTools: (m, s) => s.chat.setToolsEnabled(m.enabled),
  mentionQuery: (m, s) => mentions().searchMentions(s, m.query),
  addMention: (m, s) => mentions().addMention(s, m.kind, m.path),
  promptQuery: (_, s) => promptFiles().listPrompts(s),
  runPrompt: (m, s) => promptFiles().runPrompt(s, m.name, m.args),
};

/** Handles one message the webview sent (already validated by parseWebviewMessage). */
export async function routeWebviewMessage(s: RouteDeps, m: WebviewMessage): Promise<void> {
  await routeMessage(WEBVIEW_ROUTES, m, s);
}
