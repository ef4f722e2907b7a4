// Usage in the status bar: every request counts; totals for the window and, in global state, for all time.
import * as vscode from 'vscode';
import {
  addTo, addToLedger, emptyTotals, reportMarkdown, statusLabel, statusText, tooltipMarkdown,
  type Ledger, type Totals, type UsageRecord,
} from '../core/usageLedger';
import { readSettings } from './config';
import type { ReportDocuments } from './reports';

/** The usage report's document name. */
export const USAGE_REPORT = 'Parley Usage.md';

const LEDGER_STATE = 'parley.usageLedger';

export class UsageTracker implements vscode.Disposable {
  /** The status bar item; public so tests read what a person sees. */
  readonly item = vscode.window.createStatusBarItem('parley.usage', vscode.StatusBarAlignment.Right, 100);
  private windowTotals: Totals = emptyTotals();
  private last: UsageRecord | undefined;
  private readonly changed = new vscode.EventEmitter<UsageRecord>();
  /** Fires after each recorded request. */
  readonly onDidRecord = this.changed.event;

  constructor(private readonly state: vscode.Memento) {
    this.item.name = 'Parley Usage';
    this.item.command = 'parley.showUsage';
    // Hidden until the first request of the window.
  }

  get lastRecord(): UsageRecord | undefined {
    return this.last;
  }

  ledger(): Ledger {
    return this.state.get<Ledger>(LEDGER_STATE, {});
  }

  async record(r: UsageRecord): Promise<void> {
    this.last = r;
    this.windowTotals = addTo(this.windowTotals, r);
    await this.state.update(LEDGER_STATE, addToLedger(this.ledger(), r));
    this.render();
    this.changed.fire(r);
  }

  private render(): void {
    const r = this.last;
    if (!r) {
      this.item.hide();
      return;
    }
    this.item.text = statusText(r);
    this.item.accessibilityInformation = { label: statusLabel(r), role: 'button' };
    const md = new vscode.MarkdownString(tooltipMarkdown(r, this.windowTotals, this.ledger()));
    md.isTrusted = false;
    md.supportHtml = false;
    this.item.tooltip = md;
    this.item.show();
  }

  /** Opens the usage report as a Markdown preview of a read-only document (nothing to save afterwards). */
  async showReport(reports: ReportDocuments): Promise<vscode.TextDocument> {
    const doc = await reports.show(USAGE_REPORT);
    try {
      await vscode.commands.executeCommand('markdown.showPreview', doc.uri);
    } catch {
      // The built-in Markdown extension can be disabled: show the text itself.
      await vscode.window.showTextDocument(doc, { preview: true });
    }
    return doc;
  }

  /** The usage report, made afresh each time VS Code reads it. */
  reportText(): string {
    return reportMarkdown(this.ledger(), this.windowTotals, readSettings().pricing, Date.now());
  }

  async reset(confirm: () => Thenable<boolean>): Promise<boolean> {
    if (!(await confirm())) return false;
    await this.state.update(LEDGER_STATE, undefined);
    this.windowTotals = emptyTotals();
    this.last = undefined;
    this.render();
    return true;
  }

  dispose(): void {
    this.item.dispose();
    this.changed.dispose();
  }
}
