// Read-only Markdown documents for Parley's reports (usage, Test Connection): no "Untitled" tab to save or discard.
import * as vscode from 'vscode';
import { Disposable } from './disposable';

export const REPORT_SCHEME = 'parley-report';

/**
 * Serves each report under a fixed URI, so showing a report again refreshes it in place. A report with a renderer is
 * made afresh whenever VS Code asks, also when it reopens a report's editor after a reload (package.json activates
 * Parley on `onFileSystem:parley-report` for that); one that was only shown with fixed text says how to make it
 * again. A Markdown *preview* of a report that a reload restores can still fail to load (a known gap).
 */
export class ReportDocuments extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly renderers = new Map<string, () => string | Promise<string>>();
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;

  constructor() {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, this));
    // A report with a renderer may be drawn for the theme (the usage report's chart): made again when it changes.
    this._register(vscode.window.onDidChangeActiveColorTheme(() => {
      for (const path of this.renderers.keys()) this.changed.fire(vscode.Uri.from({ scheme: REPORT_SCHEME, path }));
      // A report shown only in its Markdown preview may have no open document left for the change to reach (VS Code
      // lets go of one no editor shows): the previews read theirs again.
      void Promise.resolve(vscode.commands.executeCommand('markdown.preview.refresh')).catch(() => undefined);
    }));
  }

  provideTextDocumentContent(uri: vscode.Uri): string | Promise<string> {
    const render = this.renderers.get(uri.path);
    if (render) return render();
    const name = uri.path.slice(1).replace(/\.md$/, '');
    return this.texts.get(uri.path) ?? `# ${name}\n\nThis report was made in an earlier window. Run the command that made it again.\n`;
  }

  /** A report made by `render` each time it is shown, e.g. the usage report. */
  register(name: string, render: () => string | Promise<string>): void {
    this.renderers.set(`/${name}`, render);
  }

  /** Shows a report: `name` registered with a renderer, or fixed `markdown` (e.g. a Test Connection result). */
  async show(name: string, markdown?: string): Promise<vscode.TextDocument> {
    const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${name}` });
    if (markdown !== undefined) this.texts.set(uri.path, markdown);
    // Always: the document may be open from before, e.g. restored after a reload with the text it had then.
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    return vscode.languages.setTextDocumentLanguage(doc, 'markdown');
  }

  /** Shows a report with fixed `markdown` in an editor of its own, and its Markdown preview beside it. */
  async open(name: string, markdown: string): Promise<void> {
    const doc = await this.show(name, markdown);
    await vscode.window.showTextDocument(doc, { preview: false });
    try {
      await vscode.commands.executeCommand('markdown.showPreview', doc.uri);
    } catch {
      // The built-in Markdown extension can be disabled; the document itself is the report.
    }
  }
}
