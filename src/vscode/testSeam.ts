// The one test-only seam: what the chat view posted and how it set up its webview, kept only when VS Code runs tests.
import type * as vscode from 'vscode';
import type { HostMessage } from '../shared/protocol';

/** Records the chat view's webview set-up and its latest 200 posted messages; extension.ts makes one only in tests. */
export class ViewRecorder {
  /** The latest messages posted to the webview (tests scan them, and may empty the array). */
  readonly posted: HostMessage[] = [];
  html?: string;
  options?: vscode.WebviewOptions;
  cspSource?: string;

  webviewSet(webview: vscode.Webview): void {
    this.options = webview.options;
    this.html = webview.html;
    this.cspSource = webview.cspSource;
  }

  post(m: HostMessage): void {
    this.posted.push(m);
    if (this.posted.length > 200) this.posted.splice(0, this.posted.length - 200);
  }
}
