// Where each validated message from the chat webview goes: the chat, or the command function of its job.
import * as vscode from 'vscode';
import type { ActionId, WebviewMessage } from '../shared/protocol';
import { pickImage, stop } from './chatCommands';
import { openLink } from './chatView';
import { openSettings } from './config';
import { insertCode, openCode } from './editors';
import { applyPreset, selectModel, setModel, switchEndpoint } from './endpointCommands';
import { markNoKey, setApiKey } from './keyCommands';
import { applyModule, mentionsModule, testConnectionModule } from './commands';
import type { Services } from './services';

/** Handles one message the webview sent (already validated by parseWebviewMessage). */
export async function routeWebviewMessage(s: Services, m: WebviewMessage): Promise<void> {
  const chat = s.chat;
  switch (m.type) {
    case 'ready':
      return chat.snapshot(true);
    case 'drawn':
      return chat.drawn();
    case 'send':
      return chat.send(m.text, m.images);
    case 'stop':
      return stop(s);
    case 'regenerate':
      return chat.regenerate();
    case 'editLast':
      return chat.editLast();
    case 'copy':
      return vscode.env.clipboard.writeText(m.text);
    case 'insertCode':
      return insertCode(s.editors, m.code);
    case 'openCode':
      return openCode(m.code, m.language);
    case 'applyCode':
      // The path is never trusted: Apply resolves and checks it, and writes nothing without the reader's Accept.
      return applyModule().applyCodeBlock(s, { code: m.code, info: m.info, before: m.before });
    case 'openLink':
      return openLink(m.url, s.log);
    case 'newChat':
      return chat.newChat();
    case 'requestHistory':
      return chat.files.postHistory();
    case 'openConversation':
      await chat.openConversation(m.id);
      return;
    case 'deleteConversation':
      return chat.deleteConversation(m.id);
    case 'openRaw':
      return chat.files.openRaw(m.id);
    case 'deleteDamaged':
      return chat.files.deleteDamaged(m.id);
    case 'clearHistory':
      return chat.clearHistory();
    case 'action':
      return runAction(s, m.action);
    case 'applyPreset':
      return applyPreset(s, m.id);
    case 'pickModel':
      return selectModel(s);
    case 'setModel':
      return setModel(s, m.model);
    case 'setProfile':
      await chat.setProfile(m.name);
      return;
    case 'pickImage':
      return pickImage(s);
    case 'removeContext':
      return chat.context.remove(m.id);
    case 'toolApproval':
      // Only the panel's own buttons send this: a tool result or model text cannot approve anything.
      // It counts only for the call the question showed: same id, same tool, same arguments.
      if (!chat.tools.answer({ id: m.callId, name: m.name, arguments: m.arguments }, m.decision)) {
        s.log.debug(`tool approval for ${m.callId}: no call waits for it, or not the one the question showed`);
      }
      return;
    case 'setTools':
      return chat.setToolsEnabled(m.enabled);
    case 'mentionQuery':
      return mentionsModule().searchMentions(s, m.query);
    case 'addMention':
      await mentionsModule().addMention(s, m.kind, m.path);
      return;
  }
}

/** The buttons of error cards, the setup card and notices. Retry and Continue reach the chat only this way. */
async function runAction(s: Services, action: ActionId): Promise<void> {
  switch (action) {
    case 'retry':
      return s.chat.regenerate();
    case 'continue':
      return s.chat.continueReply();
    case 'setApiKey':
      return setApiKey(s);
    case 'markNoKey':
      return markNoKey(s);
    case 'openSettings':
      await openSettings();
      return;
    case 'testConnection':
      return testConnectionModule().testConnection(s);
    case 'showLog':
      return s.log.show();
    case 'switchEndpoint':
      return switchEndpoint(s);
    case 'compact':
      return s.chat.compact();
    case 'compactRetry':
      return s.chat.compactAndRetry();
  }
}
