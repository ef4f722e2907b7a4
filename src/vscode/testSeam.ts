// The test-only seams: what the chat view posted and how it set up its webview, and the text notifications, quick
// picks and the status bar were given, kept only when VS Code runs tests; and faults a test sets in a HistoryStore of
// its own (a save stopped half-way, as by a crash).
import { basename } from 'node:path';
import type * as vscode from 'vscode';
import type { HostMessage } from '../shared/protocol';
import type { ShownText } from './notices';

/** Records the chat view's webview set-up and its latest 200 posted messages; extension.ts makes one only in tests. */
export class ViewRecorder {
  /** The latest messages posted to the webview (tests scan them, and may empty the array). */
  readonly posted: HostMessage[] = [];
  /** The latest 200 strings handed to VS Code by notices.ts, as handed (tests may empty the array). */
  readonly shown: ShownText[] = [];
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

/** Faults for a HistoryStore a test makes itself (`new HistoryStore(…, faults)`); the extension never makes one. */
export class StorageFaults {
  private readonly cuts = new Set<string>();

  /** The next write of the file named `fileName` (a conversation's `<id>.json`) stops with half its bytes written. */
  cutNextWrite(fileName: string): void {
    this.cuts.add(fileName);
  }

  /** Called by the write once half of the data is in its temporary file: throws, once, for a file a cut was set for. */
  readonly halfWritten = (target: string): void => {
    const name = basename(target);
    if (this.cuts.delete(name)) throw new Error(`test fault: the write of ${name} stopped half-way`);
  };
}
