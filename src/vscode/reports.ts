// Read-only Markdown documents for Parley's reports (usage, Test Connection): no "Untitled" tab to save or discard.
import * as vscode from 'vscode';

export const REPORT_SCHEME = 'parley-report';

/** Serves each report's latest text under a fixed URI, so showing a report again refreshes it in place. */
export class ReportDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, this);

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  /** Sets a report's text and returns its document, e.g. `put('Parley Usage.md', md)`. */
  async put(name: string, markdown: string): Promise<vscode.TextDocument> {
    const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${name}` });
    const had = this.texts.has(uri.path);
    this.texts.set(uri.path, markdown);
    if (had) this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    return vscode.languages.setTextDocumentLanguage(doc, 'markdown');
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
