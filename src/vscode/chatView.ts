// The chat WebviewView: HTML with a strict CSP, and routing of validated webview messages to the controller.
import * as vscode from 'vscode';
import { externalLink } from '../core/links';
import { webviewCsp } from '../shared/csp';
import { parseWebviewMessage, type HostMessage, type WebviewMessage } from '../shared/protocol';
import type { ChatController } from './chatController';
import type { Log } from './log';

export const VIEW_ID = 'parley.chatView';

/** Host actions the webview may ask for, beyond the chat itself. Implemented in commands.ts. */
export interface ViewActions {
  run(action: 'setApiKey' | 'markNoKey' | 'openSettings' | 'testConnection' | 'showLog' | 'pickModel' | 'pickImage'): Promise<void>;
  applyPreset(id: string): Promise<void>;
  setModel(model: string): Promise<void>;
  insertCode(code: string): Promise<void>;
  openCode(code: string, language: string): Promise<void>;
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  /** Only when VS Code runs the extension's tests: the last messages posted, the HTML and options set. */
  readonly recorded: { posted: HostMessage[]; html?: string; options?: vscode.WebviewOptions; cspSource?: string } | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
    private readonly actions: ViewActions,
    private readonly log: Log,
    record = false,
  ) {
    this.recorded = record ? { posted: [] } : undefined;
  }

  /** The messages posted to the webview lately (tests scan them); empty outside tests. */
  get lastPosted(): HostMessage[] {
    return this.recorded?.posted ?? [];
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist, media] };
    view.webview.html = this.html(view.webview);
    if (this.recorded) {
      this.recorded.options = view.webview.options;
      this.recorded.html = view.webview.html;
      this.recorded.cspSource = view.webview.cspSource;
    }
    // Nothing is posted until the webview says it is ready; then it gets a full snapshot.
    const sub = view.webview.onDidReceiveMessage((raw) => void this.receive(raw));
    view.onDidDispose(() => {
      sub.dispose();
      if (this.view === view) {
        this.view = undefined;
        this.chat.attach(undefined);
      }
    });
  }

  private html(webview: vscode.Webview): string {
    const nonce = nonceOf();
    const js = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const css = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.css'));
    const csp = webviewCsp(webview.cspSource, nonce);
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Parley</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
  }

  /** Posts to the webview, if there is one. */
  private post(m: HostMessage): void {
    const view = this.view;
    if (!view) return;
    if (this.recorded) {
      this.recorded.posted.push(m);
      if (this.recorded.posted.length > 200) this.recorded.posted.splice(0, this.recorded.posted.length - 200);
    }
    void view.webview.postMessage(m);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    if (!parsed.ok) {
      this.log.warn(`Ignored a webview message: ${parsed.reason}`);
      if (typeof raw === 'object' && raw !== null && (raw as { type?: unknown }).type === 'send') {
        // The reader must learn why nothing happened.
        this.chat.composerError(`Not sent: ${parsed.reason}.`);
      }
      return;
    }
    try {
      await this.route(parsed.message);
    } catch (e) {
      this.log.error(`Handling ${parsed.message.type} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async route(m: WebviewMessage): Promise<void> {
    const chat = this.chat;
    switch (m.type) {
      case 'ready':
        chat.attach((msg) => this.post(msg));
        await chat.snapshot();
        return;
      case 'send':
        return chat.send(m.text, m.images);
      case 'cancel':
        return chat.stop();
      case 'regenerate':
      case 'retry':
        return chat.regenerate();
      case 'editLast':
        return chat.editLast();
      case 'continue':
        return chat.continueReply();
      case 'copy':
        await vscode.env.clipboard.writeText(m.text);
        return;
      case 'insertCode':
        return this.actions.insertCode(m.code);
      case 'openCode':
        return this.actions.openCode(m.code, m.language);
      case 'openLink':
        return openLink(m.url, this.log);
      case 'newChat':
        return chat.newChat();
      case 'requestHistory':
        return chat.postHistory();
      case 'openConversation':
        await chat.openConversation(m.id);
        return;
      case 'deleteConversation':
        return chat.deleteConversation(m.id);
      case 'clearHistory':
        return chat.clearHistory();
      case 'action':
        if (m.action === 'retry') return chat.regenerate();
        if (m.action === 'continue') return chat.continueReply();
        return this.actions.run(m.action);
      case 'applyPreset':
        return this.actions.applyPreset(m.id);
      case 'pickModel':
        return this.actions.run('pickModel');
      case 'setModel':
        return this.actions.setModel(m.model);
      case 'pickImage':
        return this.actions.run('pickImage');
      case 'removeContext':
        chat.removeContext(m.id);
        return;
    }
  }

  /** Reveals the view (opening the side bar if needed). */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }

  dispose(): void {
    this.chat.attach(undefined);
    this.view = undefined;
  }
}

/** Only http and https go out, through VS Code's own link protection (openExternal asks for unknown hosts). */
export async function openLink(url: string, log: Log): Promise<void> {
  const link = externalLink(url);
  if (!link.ok) {
    log.warn(link.reason);
    return;
  }
  await vscode.env.openExternal(vscode.Uri.parse(link.href, true));
}

function nonceOf(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Buffer.from(b).toString('base64').replace(/[^A-Za-z0-9]/g, '');
}
