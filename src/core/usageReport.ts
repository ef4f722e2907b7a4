// The usage report, as Markdown: by model, source, endpoint and day. Its own bundle (dist/usageReport.js), loaded
// when the report is first shown.
import type { BudgetLimit } from './budgetSettings';
import { codeCell } from './markdownText';
import { priceSourcesMarkdown, type ReportPrices } from './priceSources';
import { chartData, chartMarkdown, themeOfKind } from './usageChart';
import { costOf, emptyTotals, formatCost, formatTokens, group, plural, type Ledger, type Totals, type UsageRecord } from './usageLedger';

/** How the report names each source. */
const SOURCE_NAMES: Record<UsageRecord['source'], string> = {
  chat: "Parley's chat panel",
  explain: 'Explain Selection',
  generate: 'Generate Code',
  test: 'Test Connection',
  'vscode-chat': "VS Code's chat (vscode.lm)",
  compact: 'Compaction (summaries of older turns)',
  complete: 'Completions',
};

function share(t: Totals): string {
  return t.total > 0 ? `${Math.round((t.estimatedTokens / t.total) * 100)}%` : '0%';
}

/** What the report's chart needs besides the ledger: the kind of theme it is drawn for, and the limits to draw. */
export interface ReportChart {
  /** VS Code's ColorThemeKind: 1 light, 2 dark, 3 high contrast, 4 high contrast light. */
  themeKind: number;
  limits: readonly BudgetLimit[];
}

/**
 * The full usage report, as Markdown: the chart of the last 30 days (when `chart` is given and there were requests),
 * then by model, source, endpoint and day; estimated share; cost when priced (each ledger row at its endpoint's price
 * for its model, found by `prices` in the budget's order); and where each price came from.
 */
export function reportMarkdown(ledger: Ledger, windowTotals: Totals, prices: ReportPrices, now: number, bySource: Record<string, Totals> = {}, chart?: ReportChart): string {
  const price = (host: string, model: string) => prices.find(host, model).price;
  // A group's cost is known only when every ledger row in it has a price.
  const cost = (f: (key: string) => boolean): number | undefined => {
    let sum = 0;
    for (const [k, row] of Object.entries(ledger)) {
      const [, host, ...model] = k.split('|');
      const c = f(k) ? costOf(row, price(host, model.join('|'))) : 0;
      if (c === undefined) return undefined;
      sum += c;
    }
    return sum;
  };
  const all = group(ledger, () => 'all')[0]?.[1] ?? emptyTotals();
  const out = [
    '# Parley usage',
    '',
    `Report made ${new Date(now).toLocaleString('en-US')}. Counts are the tokens the servers reported; ` +
      'where a server reported none (a cancelled or failed stream, or a server that never sends usage), Parley estimated them.',
    '',
    `- This window: ${formatTokens(windowTotals.total)} tokens in ${plural(windowTotals.requests, 'request')}`,
    `- All time: ${formatTokens(all.total)} tokens in ${plural(all.requests, 'request')}, of which ${share(all)} estimated`,
    '',
  ];
  if (chart && all.requests > 0) out.push(chartMarkdown(chartData(ledger, now, price, chart.limits), themeOfKind(chart.themeKind)), '');
  out.push(
    '## By model',
    '',
    '| Model | Requests | Prompt | Completion | Total | Estimated | Cost |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  const byModel = group(ledger, (_d, _h, m) => m);
  for (const [model, t] of byModel) {
    out.push(`| ${codeCell(model)} | ${t.requests} | ${formatTokens(t.prompt)} | ${formatTokens(t.completion)} | ${formatTokens(t.total)} | ${share(t)} | ${formatCost(cost((k) => k.split('|').slice(2).join('|') === model))} |`);
  }
  const sources = Object.entries(bySource).sort((a, b) => b[1].requests - a[1].requests);
  if (sources.length > 0) {
    out.push('', '## By source', '', '| Source | Requests | Total | Estimated |', '|---|---:|---:|---:|');
    for (const [src, t] of sources) {
      const name = Object.prototype.hasOwnProperty.call(SOURCE_NAMES, src) ? SOURCE_NAMES[src as UsageRecord['source']] : codeCell(src);
      out.push(`| ${name} | ${t.requests} | ${formatTokens(t.total)} | ${share(t)} |`);
    }
  }
  out.push('', '## By endpoint', '', '| Endpoint | Requests | Total | Estimated |', '|---|---:|---:|---:|');
  for (const [host, t] of group(ledger, (_d, h) => h)) {
    out.push(`| ${codeCell(host)} | ${t.requests} | ${formatTokens(t.total)} | ${share(t)} |`);
  }
  out.push('', '## By day', '', '| Day | Requests | Total | Estimated | Cost |', '|---|---:|---:|---:|---:|');
  const days = group(ledger, (d) => d).reverse();
  for (const [day, t] of days) out.push(`| ${day} | ${t.requests} | ${formatTokens(t.total)} | ${share(t)} | ${formatCost(cost((k) => k.startsWith(day + '|')))} |`);
  if (byModel.length === 0) out.push('', '_No requests yet._');
  else out.push('', priceSourcesMarkdown(ledger, prices.find, prices.answers));
  // The hint only while some model used has no price (an empty ledger has none to show either).
  if (byModel.length === 0 || cost(() => true) === undefined) out.push('', 'Set prices per million tokens in the `parley.pricing` setting to see costs.');
  return out.join('\n');
}
