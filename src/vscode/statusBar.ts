// Usage in the status bar: the last request's tokens, and in the tooltip the totals for the window and, merged from
// every window's log, for all time (the log is usageStore.ts). With the usage report and Reset Usage it opens.
import * as vscode from 'vscode';
import { formatTokens, tooltipMarkdown, type UsageRecord } from '../core/usageLedger';
import { balances } from './lazy/balance';
import { budget as budgetModule } from './lazy/budget';
import type { SettingsSnapshot } from './config';
import { Disposable } from './disposable';
import { showWarning, StatusEntry } from './notices';
import type { ReportDocuments } from './reports';
import type { ApiKeyStore } from './secrets';
import type { UsageStore, UsageView } from './usageStore';

/** Status bar words for the last request, after its icon: e.g. `1,234` or `≈1,234`. */
export function statusText(r: UsageRecord): string {
  return `${r.estimated ? '≈' : ''}${formatTokens(r.total)}`;
}

/** Screen-reader label for the status bar item. */
export function statusLabel(r: UsageRecord): string {
  return `Parley usage: last request ${statusText(r)} tokens${r.estimated ? ' (estimated)' : ''}`;
}

/** The usage report's document name. */
export const USAGE_REPORT = 'Parley Usage.md';

/**
 * The usage item: hidden until the window's first request, then its tokens; drawn again each time the store reads the
 * logs afresh, and the logs read again when the window gets focus (another window may have recorded meanwhile).
 */
export class UsageStatusBar extends Disposable {
  /** The status bar item; public so tests read what a person sees. */
  readonly item = this._register(new StatusEntry('parley.usage', vscode.StatusBarAlignment.Right, 100, 'Parley Usage', 'parley.showUsage'));

  /** What was drawn last: drawn again when the settings change (a limit set, raised or mended shows at once). */
  private shown: UsageView | undefined;

  /** `settings`: the budgets and the balances shown in the tooltip; `keys`: what the balances are asked with; `state`: global state, with the prices model lists gave. */
  constructor(store: UsageStore, private readonly settings: Pick<SettingsSnapshot, 'current' | 'onDidChange'>, private readonly keys: ApiKeyStore, private readonly state?: vscode.Memento) {
    super();
    this._register(store.onDidChange((v) => this.render(v)));
    this._register(settings.onDidChange(() => this.shown && this.render(this.shown)));
    this._register(vscode.window.onDidChangeWindowState((s) => {
      if (s.focused && store.lastRecord) void store.reread();
    }));
  }

  private render(v: UsageView): void {
    this.shown = v;
    const { last: r, windowTotals, ledger } = v;
    if (!r) {
      this.item.hide();
      return;
    }
    const s = this.settings.current;
    const now = Date.now();
    const budget = s && (s.budget.length > 0 || s.budgetMistakes.length > 0) ? budgetModule().budgetTooltip(s, ledger, now, this.state) : { markdown: '', reached: false };
    const tooltip = tooltipMarkdown(r, windowTotals, ledger) + (budget.markdown ? `\n\n${budget.markdown}` : '') + balances(s, this.keys, () => this.render(v));
    const label = statusLabel(r) + (budget.reached ? '; a spend limit is reached' : '');
    this.item.show('pulse', statusText(r), tooltip, label, budget.reached);
  }
}

/**
 * The usage report's renderer (ReportDocuments calls it again when the theme changes): priced by dist/budget.js (the
 * settings' prices, then what model lists gave, learnt into global `state`), with its chart drawn for the theme's kind
 * (an image cannot read the theme's colours).
 */
export function usageReportRenderer(usage: UsageStore, settings: Pick<SettingsSnapshot, 'current'>, state: vscode.Memento): () => Promise<string> {
  return () => usage.reportText(budgetModule().reportPricing(settings.current, state), { themeKind: vscode.window.activeColorTheme.kind, limits: settings.current.budget });
}

/** Parley: Show Usage (the item's click): the report as a Markdown preview of a read-only document (nothing to save). */
export async function showUsageReport(reports: ReportDocuments): Promise<vscode.TextDocument> {
  const doc = await reports.show(USAGE_REPORT);
  try {
    await vscode.commands.executeCommand('markdown.showPreview', doc.uri);
  } catch {
    // The built-in Markdown extension can be disabled: show the text itself.
    await vscode.window.showTextDocument(doc, { preview: true });
  }
  return doc;
}

/** Parley: Reset Usage, after the user confirms. */
export function resetUsage(usage: UsageStore): Promise<boolean> {
  return usage.reset(async () => {
    const yes = 'Reset';
    return (await showWarning('Reset all Parley usage totals?', { modal: true }, yes)) === yes;
  });
}
