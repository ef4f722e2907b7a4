// The chat WebviewView: HTML with a strict CSP; validated webview messages go to webviewRoutes.ts.
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { externalLink } from '../core/links';
import { webviewCsp } from '../shared/csp';
import { parseWebviewMessage, type HostMessage, type WebviewMessage } from '../shared/protocol';
import { Disposable } from './disposable';
import type { Log } from './log';
import type { ViewRecorder } from './testSeam';
import type { ViewChannel } from './viewChannel';

export const VIEW_ID = 'parley.chatView';

/** The chat view: the webview, its HTML and CSP, and validated messages handed to `route` (webviewRoutes.ts). */
export class ChatViewProvider extends Disposable implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly channel: ViewChannel,
    private readonly route: (m: WebviewMessage) => Promise<void>,
    private readonly log: Log,
    /** Only when VS Code runs the extension's tests. */
    private readonly recorder?: ViewRecorder,
    /** Called as the view is made: work its first snapshot needs can start while the webview loads. */
    private readonly prepare?: () => void,
  ) {
    super();
    this._register({ dispose: () => this.detach() });
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    // For bench/latency.mjs's stages (BENCH_STAGES=1), at `debug` only, like the lines at ready and at the first snapshot.
    this.log.debug('stage: view resolved');
    this.prepare?.();
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist, media] };
    view.webview.html = this.html(view.webview);
    this.recorder?.webviewSet(view.webview);
    // Nothing is posted until the webview says it is ready; then it gets a full snapshot.
    const sub = view.webview.onDidReceiveMessage((raw) => void this.receive(raw));
    view.onDidDispose(() => {
      sub.dispose();
      if (this.view === view) this.detach();
    });
  }

  private html(webview: vscode.Webview): string {
    const nonce = nonceOf();
    // Loaded by the page when it first highlights code, not before it is ready (src/webview/highlight.ts).
    const worker = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'highlightWorker.js'));
    const csp = webviewCsp(webview.cspSource, nonce);
    const inline = inlineBundle(this.extensionUri.fsPath);
    if (inline) {
      return page(csp, `<style nonce="${nonce}">${inline.css}</style>`, `<script nonce="${nonce}" data-highlight-worker="${worker}">${inline.js}</script>`);
    }
    const js = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const css = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.css'));
    return page(csp, `<link rel="stylesheet" href="${css}">`, `<script nonce="${nonce}" src="${js}" data-highlight-worker="${worker}"></script>`);
  }


  /** Posts to the webview, if there is one. */
  private post(m: HostMessage): void {
    const view = this.view;
    if (!view) return;
    this.recorder?.post(m);
    void view.webview.postMessage(m);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    if (!parsed.ok) {
      this.log.warn(`Ignored a webview message: ${parsed.reason}`);
      if (typeof raw === 'object' && raw !== null && (raw as { type?: unknown }).type === 'send') {
        // The reader must learn why nothing happened.
        this.channel.post({ type: 'composerError', text: `Not sent: ${parsed.reason}.` });
      }
      return;
    }
    try {
      // The view attaches when its webview is ready; nothing is posted before (the ready handshake).
      if (parsed.message.type === 'ready') {
        this.log.debug('stage: webview ready');
        this.channel.attach((msg) => this.post(msg));
      }
      await this.route(parsed.message);
    } catch (e) {
      this.log.error(`Handling ${parsed.message.type} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private detach(): void {
    this.view = undefined;
    this.channel.attach(undefined);
  }
}

/** Reveals the chat view (opening the side bar if needed). */
export async function revealChatView(): Promise<void> {
  await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
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

function page(csp: string, style: string, script: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${style}
<title>Parley</title>
</head>
<body>
<div id="app"></div>
${script}
</body>
</html>`;
}

let bundle: { js: string; css: string } | null | undefined;

/**
 * The panel's script and stylesheet, to put in its page: fetched as files, they go through the webview's service
 * worker (in a remote window, over the network), which took more time than anything else in opening the panel
 * (bench/latency.mjs). Read once per window. In the script, `<!--`, `<script` and `</script` are written `\x3C…`
 * (the same text in a string or regular expression), so the page's parser never ends or nests it early. Null when
 * the files cannot be read or that rewrite might not be safe: then the page links them as before.
 */
export function inlineBundle(root: string): { js: string; css: string } | null {
  if (bundle !== undefined) return bundle;
  try {
    const raw = readFileSync(`${root}/dist/webview.js`, 'utf8');
    const css = readFileSync(`${root}/dist/webview.css`, 'utf8');
    // Where the rewrite could change what the code means (`\<script` in a regular expression, raw template text),
    // or the stylesheet could end early or name files beside it, the page links the files instead.
    const unsafe = /\\<(?:!--|\/?script)/i.test(raw) || raw.includes('String.raw') || /<\/style|url\(/i.test(css);
    bundle = unsafe ? null : { js: raw.replace(/<(!--|\/?script)/gi, '\\x3C$1'), css };
  } catch {
    bundle = null;
  }
  return bundle;
}

function nonceOf(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Buffer.from(b).toString('base64').replace(/[^A-Za-z0-9]/g, '');
}
