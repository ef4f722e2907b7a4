// The usage report's chart: spend (or tokens, when no model used has a price) per day for the last 30 days, stacked by
// model, with the daily limit drawn across, as an SVG image made here (no remote resource, nothing from the network),
// and the same numbers as a Markdown table. An image cannot read the theme's colours, so it is drawn in a palette per
// theme kind (the report is made again when the theme changes). Part of dist/usageReport.js.
import { amountWords, type BudgetLimit } from './budgetSettings';
import { codeCell, codeSpan, markdownProse } from './markdownText';
import { costOf, dayOf, formatCost, formatTokens, plural, type Ledger, type Price } from './usageLedger';

/** The theme kinds VS Code tells an extension (ColorThemeKind), each with its own palette. */
export type ChartTheme = 'light' | 'dark' | 'hcDark' | 'hcLight';

/** The palette for VS Code's ColorThemeKind (1 light, 2 dark, 3 high contrast, 4 high contrast light); dark otherwise. */
export function themeOfKind(kind: number): ChartTheme {
  return kind === 1 ? 'light' : kind === 3 ? 'hcDark' : kind === 4 ? 'hcLight' : 'dark';
}

/** One theme's colours: the image's background, its words and axes, its grid, and one colour per series. */
export interface ChartPalette {
  background: string;
  text: string;
  grid: string;
  /** NAMED_SERIES colours, then the colour of "other". */
  series: readonly string[];
}

/**
 * The palettes. Backgrounds are the default themes' editor backgrounds (Light/Dark Modern, the high-contrast ones);
 * every series colour has a contrast of at least 3:1 against the background (4.5:1 in high contrast), and the words
 * at least 4.5:1. The series colours follow Okabe and Ito's colour-blind-safe set, darkened or lightened to get there.
 */
export const PALETTES: Record<ChartTheme, ChartPalette> = {
  light: { background: '#ffffff', text: '#1f1f1f', grid: '#d4d4d4', series: ['#0072b2', '#c75000', '#00805e', '#b8478f', '#7a5c00', '#6e6e6e'] },
  dark: { background: '#1f1f1f', text: '#cccccc', grid: '#3c3c3c', series: ['#56b4e9', '#e69f00', '#2fbf8f', '#e08cc0', '#f0e442', '#9e9e9e'] },
  hcDark: { background: '#000000', text: '#ffffff', grid: '#4d4d4d', series: ['#4fc3f7', '#ffb000', '#3ddc84', '#ff80c0', '#ffff00', '#c0c0c0'] },
  hcLight: { background: '#ffffff', text: '#000000', grid: '#b3b3b3', series: ['#0046b8', '#b02e00', '#006b3c', '#8a2bb5', '#7a5200', '#595959'] },
};

/** Days the chart shows, ending today. */
export const CHART_DAYS = 30;
/** Models drawn under their own name; the rest are lumped together as "other". */
const NAMED_SERIES = 5;

/** One stacked series: a model (or "other", `lumped` models), its value per day, oldest day first. */
export interface ChartSeries {
  name: string;
  /** How many models "other" holds; undefined for a model of its own. */
  lumped?: number;
  values: number[];
}

/** What the chart shows. */
export interface UsageChart {
  unit: 'dollars' | 'tokens';
  /** CHART_DAYS local days, YYYY-MM-DD, oldest first, today last. */
  days: string[];
  /** Bottom of the stack first: the models with the most in the window first. */
  series: ChartSeries[];
  /** The daily limits in the chart's unit for every request, drawn across, lowest first. */
  lines: BudgetLimit[];
  /** The limits that are not drawn (another period, another unit, a profile's own), said in words. */
  notDrawn: BudgetLimit[];
  /** In dollars: the models used in the window that have no price (counted as nothing in the chart). */
  unpriced: string[];
}

/** The local days from `now` back, oldest first. */
export function chartDays(now: number, count = CHART_DAYS): string[] {
  const d = new Date(now);
  return Array.from({ length: count }, (_, i) => dayOf(new Date(d.getFullYear(), d.getMonth(), d.getDate() - (count - 1 - i)).getTime()));
}

/**
 * The chart's numbers from the ledger: in dollars when some model used in the window has a price above 0 (at
 * `price`, by the row's host and model), else in tokens; the models with the most first, the ones past NAMED_SERIES
 * lumped as "other"; the daily limits of `limits` in that unit that apply to every request as lines.
 */
export function chartData(ledger: Ledger, now: number, price: (host: string, model: string) => Price | undefined, limits: readonly BudgetLimit[]): UsageChart {
  const days = chartDays(now);
  const index = new Map(days.map((d, i) => [d, i]));
  const rows = Object.entries(ledger).flatMap(([key, t]) => {
    const [day, host, ...rest] = key.split('|');
    const i = index.get(day);
    return i === undefined ? [] : [{ i, host, model: rest.join('|'), t, price: price(host, rest.join('|')) }];
  });
  const unit = rows.some((r) => r.price && (r.price.input > 0 || r.price.output > 0)) ? 'dollars' : 'tokens';
  const byModel = new Map<string, number[]>();
  const unpriced = new Set<string>();
  for (const r of rows) {
    const values = byModel.get(r.model) ?? new Array<number>(days.length).fill(0);
    byModel.set(r.model, values);
    const cost = costOf(r.t, r.price);
    if (unit === 'dollars' && cost === undefined && r.t.total > 0) unpriced.add(r.model);
    values[r.i] += unit === 'tokens' ? r.t.total : cost ?? 0;
  }
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  const ranked = [...byModel].filter(([, v]) => sum(v) > 0).sort((a, b) => sum(b[1]) - sum(a[1]) || a[0].localeCompare(b[0]));
  const named = ranked.length > NAMED_SERIES ? ranked.slice(0, NAMED_SERIES) : ranked;
  const series: ChartSeries[] = named.map(([name, values]) => ({ name, values }));
  const rest = ranked.slice(named.length);
  if (rest.length > 0) series.push({ name: 'other', lumped: rest.length, values: days.map((_, i) => sum(rest.map(([, v]) => v[i]))) });
  const drawn = (l: BudgetLimit) => l.period === 'day' && l.unit === unit && l.profile === undefined;
  const lines = limits.filter(drawn).sort((a, b) => a.amount - b.amount);
  return { unit, days, series, lines, notDrawn: limits.filter((l) => !drawn(l)), unpriced: [...unpriced].sort() };
}

/** Each day's stacked total. */
function dayTotals(chart: UsageChart): number[] {
  return chart.days.map((_, i) => chart.series.reduce((a, s) => a + s.values[i], 0));
}

/** Text for an SVG (XML) text node or attribute: markup characters as entities, characters XML forbids dropped. */
export function xmlText(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A round step for about four grid lines up to `max`: 1, 2, 2.5 or 5 times a power of ten. */
function niceStep(max: number): number {
  const raw = max / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 2.5, 5, 10].find((m) => m * p >= raw) ?? 10) * p;
}

/** An axis label: `$0.50`, `$12`, `1.5k`, `2M`. */
function axisLabel(v: number, unit: UsageChart['unit'], step: number): string {
  if (unit === 'dollars') return `$${v.toFixed(step >= 1 ? 0 : Math.min(6, Math.max(2, Math.ceil(-Math.log10(step)))))}`;
  const [d, suffix] = v >= 1e6 ? [1e6, 'M'] : v >= 1e3 ? [1e3, 'k'] : [1, ''];
  return `${+(v / d).toFixed(2)}${suffix}`;
}

/** A day as the axis and the alt text say it: "Nov 3". */
function shortDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y, m - 1, d).toLocaleDateString('en-US', { month: 'short', day: 'numeric' });
}

/** A limit in words: "daily spend limit $5.00 (block)", with its profile's name as plain text. */
function limitWords(l: BudgetLimit): string {
  const period = { day: 'daily', week: 'weekly', month: 'monthly' }[l.period];
  return `${period} ${l.unit === 'dollars' ? 'spend' : 'token'} limit ${amountWords(l.unit, l.amount)} (${l.action})${l.profile === undefined ? '' : ` of the profile "${l.profile.slice(0, 60)}"`}`;
}

/** The image's size and its plot area. */
const W = 720;
const PLOT = { left: 64, right: 704, top: 28, bottom: 228 };
const LEGEND_COLUMNS = 3;
/** How far above the highest day a daily limit may be and still be drawn at its height (the bars' scale follows it). */
const ABOVE = 4;

const r1 = (n: number) => Math.round(n * 10) / 10;

/** The chart as an SVG document in the theme's palette (series' names, from servers and users, escaped). */
export function chartSvg(chart: UsageChart, theme: ChartTheme): string {
  const p = PALETTES[theme];
  const barTop = Math.max(...dayTotals(chart));
  // A limit far above the bars would flatten them: such a line is only named at the top.
  const within = (l: BudgetLimit) => barTop === 0 || l.amount <= ABOVE * barTop;
  const top = Math.max(barTop, ...chart.lines.filter(within).map((l) => l.amount));
  const step = niceStep(top > 0 ? top : 1);
  const max = Math.max(step, Math.ceil(top / step) * step);
  const y = (v: number) => r1(PLOT.bottom - (v / max) * (PLOT.bottom - PLOT.top));
  const height = PLOT.bottom + 46 + Math.ceil(chart.series.length / LEGEND_COLUMNS) * 20;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="system-ui,sans-serif" font-size="12">`,
    `<rect width="${W}" height="${height}" fill="${p.background}"/>`,
  ];
  const ticks = Array.from({ length: Math.round(max / step) + 1 }, (_, i) => i * step);
  out.push(`<path stroke="${p.grid}" d="${ticks.slice(1).map((t) => `M${PLOT.left} ${y(t)}H${PLOT.right}`).join('')}"/>`);
  out.push(`<g fill="${p.text}" text-anchor="end">${ticks.map((t) => `<text x="${PLOT.left - 6}" y="${y(t) + 4}">${xmlText(axisLabel(t, chart.unit, step))}</text>`).join('')}</g>`);
  out.push(...bars(chart, p, y), axisAndDays(chart, p));
  for (const l of chart.lines.filter(within)) out.push(limitLine(y(l.amount), p));
  out.push(limitLabel(chart.lines, within, p));
  out.push(legend(chart, p), '</svg>');
  return out.join('');
}

/** One path per series: a rectangle per day with a value, stacked on the series below. */
function bars(chart: UsageChart, p: ChartPalette, y: (v: number) => number): string[] {
  const slot = (PLOT.right - PLOT.left) / chart.days.length;
  const width = r1(slot * 0.7);
  const base = chart.days.map(() => 0);
  return chart.series.map((s, k) => {
    const d = s.values.map((v, i) => {
      if (v <= 0) return '';
      const from = base[i];
      base[i] += v;
      return `M${r1(PLOT.left + i * slot + (slot - width) / 2)} ${y(base[i])}h${width}V${y(from)}h${-width}z`;
    });
    return `<path fill="${colourOf(s, k, p)}" stroke="${p.background}" stroke-width="0.8" d="${d.join('')}"/>`;
  });
}

function colourOf(s: ChartSeries, k: number, p: ChartPalette): string {
  return s.lumped === undefined ? p.series[k] : p.series[NAMED_SERIES];
}

/** The base line, and a day's date under every seventh bar, counted back from today. */
function axisAndDays(chart: UsageChart, p: ChartPalette): string {
  const slot = (PLOT.right - PLOT.left) / chart.days.length;
  const labels = chart.days
    .map((day, i) => ((chart.days.length - 1 - i) % 7 === 0 ? `<text x="${r1(PLOT.left + (i + 0.5) * slot)}" y="${PLOT.bottom + 18}">${xmlText(shortDay(day))}</text>` : ''))
    .join('');
  return `<path stroke="${p.text}" d="M${PLOT.left} ${PLOT.bottom}H${PLOT.right}"/><g fill="${p.text}" text-anchor="middle">${labels}</g>`;
}

/** A daily limit: a dashed line in the words' colour, on a halo of the background so it shows over the bars. */
function limitLine(at: number, p: ChartPalette): string {
  const d = `M${PLOT.left} ${at}H${PLOT.right}`;
  return `<path stroke="${p.background}" stroke-width="5" d="${d}"/><path stroke="${p.text}" stroke-width="2" stroke-dasharray="7 4" d="${d}"/>`;
}

/**
 * The daily limits' words, above the plot where they cover no bar: "daily limit $5.00 (block)" and a dashed sample,
 * or for one too far above the bars to draw at its height, ", above the chart ↑".
 */
function limitLabel(lines: readonly BudgetLimit[], within: (l: BudgetLimit) => boolean, p: ChartPalette): string {
  if (lines.length === 0) return '';
  const each = lines.map((l) => `${amountWords(l.unit, l.amount)} (${l.action})${within(l) ? '' : ', above the chart ↑'}`);
  const sample = lines.some(within) ? `<path stroke="${p.text}" stroke-width="2" stroke-dasharray="7 4" d="M${PLOT.right - 24} 12h24"/>` : '';
  return `${sample}<text x="${PLOT.right - (sample ? 30 : 0)}" y="16" text-anchor="end" fill="${p.text}">${xmlText(`daily limit${lines.length > 1 ? 's' : ''} ${each.join('; ')}`)}</text>`;
}

/** A swatch and a name per series, three to a row; long names cut. */
function legend(chart: UsageChart, p: ChartPalette): string {
  const column = (PLOT.right - PLOT.left) / LEGEND_COLUMNS;
  return chart.series
    .map((s, k) => {
      const x = r1(PLOT.left + (k % LEGEND_COLUMNS) * column);
      const y = PLOT.bottom + 34 + Math.floor(k / LEGEND_COLUMNS) * 20;
      const name = s.lumped === undefined ? cut(s.name, 28) : otherName(s.lumped);
      return `<rect x="${x}" y="${y}" width="12" height="12" fill="${colourOf(s, k, p)}"/><text x="${r1(x + 18)}" y="${y + 10}" fill="${p.text}">${xmlText(name)}</text>`;
    })
    .join('');
}

function otherName(lumped: number): string {
  return `other (${plural(lumped, 'model')})`;
}

function cut(s: string, max: number): string {
  const chars = [...s];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : s;
}

/** The SVG as a data: URI, which VS Code's Markdown preview shows as an image (its CSP allows data: images). */
export function svgDataUri(svg: string): string {
  const bytes = new TextEncoder().encode(svg);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return `data:image/svg+xml;base64,${btoa(s)}`;
}

/** A value in the chart's unit for a table cell or a sentence (a `$` escaped: the preview reads `$…$` as math). */
function amountCell(unit: UsageChart['unit'], v: number): string {
  return unit === 'dollars' ? formatCost(v).replace('$', '\\$') : formatTokens(v);
}

/**
 * The report's chart section: a heading, the image with an alt text saying what it shows, what is not drawn, and
 * the numbers as a table (every day with any value, oldest first, named as on the axis) for screen readers.
 */
export function chartMarkdown(chart: UsageChart, theme: ChartTheme): string {
  const what = chart.unit === 'dollars' ? 'Spend' : 'Tokens';
  const out = [`## ${what} per day, last ${chart.days.length} days`, ''];
  const totals = dayTotals(chart);
  if (totals.every((t) => t === 0)) return [...out, `_No ${chart.unit === 'dollars' ? 'spend' : 'requests'} in the last ${chart.days.length} days._`].join('\n');
  const span = `${shortDay(chart.days[0])} to ${shortDay(chart.days[chart.days.length - 1])}`;
  const limit = chart.lines.length > 0 ? `; the dashed line is the ${limitWords(chart.lines[0]).replace(/ \(\w+\)$/, '')}` : '';
  const alt = `Bar chart of ${what.toLowerCase()} per day${chart.unit === 'dollars' ? ' in dollars' : ''}, ${span}, stacked by model${limit}. The numbers are in the table below.`;
  // The alt text as it is: markdown-it drops a backslash escape from an image's alt, and with at most one `$` in it
  // no math can start there; its words are ours (no profile or model name).
  out.push(`![${alt}](${svgDataUri(chartSvg(chart, theme))})`, '');
  if (chart.unpriced.length > 0) out.push(`Not in the chart, as they have no price set: ${chart.unpriced.map(codeSpan).join(', ')}. Their tokens are in the tables below.`, '');
  if (chart.notDrawn.length > 0) out.push(`Not drawn: ${markdownProse(chart.notDrawn.map(limitWords).join('; '))}. The chart adds up every profile's requests per day, in ${chart.unit}.`, '');
  out.push(`| Day | ${chart.series.map((s) => (s.lumped === undefined ? codeCell(s.name) : otherName(s.lumped))).join(' | ')} | Total |`);
  out.push(`|---|${chart.series.map(() => '---:|').join('')}---:|`);
  chart.days.forEach((day, i) => {
    if (totals[i] > 0) out.push(`| ${shortDay(day).replace(' ', '\u00a0')} | ${chart.series.map((s) => amountCell(chart.unit, s.values[i])).join(' | ')} | ${amountCell(chart.unit, totals[i])} |`);
  });
  out.push('', 'Days not listed had none.');
  return out.join('\n');
}
