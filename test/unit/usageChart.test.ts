// The usage report's chart (issue 37, "a picture"): the last 30 days stacked by model, "other", the daily limit's
// line, the tokens fallback, names escaped in the SVG and the Markdown, a palette per theme kind, and the table.
import * as assert from 'node:assert/strict';
import MarkdownIt from 'markdown-it';
import type { BudgetLimit } from '../../src/core/budgetSettings';
import {
  CHART_DAYS, PALETTES, chartData, chartDays, chartMarkdown, chartSvg, svgDataUri, themeOfKind, xmlText, type ChartTheme, type UsageChart,
} from '../../src/core/usageChart';
import { dayOf, emptyTotals, type Ledger, type Price, type Totals } from '../../src/core/usageLedger';
import { reportMarkdown } from '../../src/core/usageReport';
import { pricingOnly } from '../support/pricing';

/** Noon, November 27th 2026, local time: the report's "now". */
const NOW = new Date(2026, 10, 27, 12).getTime();
/** The local day `back` days before NOW. */
const daysBack = (back: number) => dayOf(new Date(2026, 10, 27 - back, 12).getTime());

function totals(prompt: number, completion: number): Totals {
  return { ...emptyTotals(), requests: 1, prompt, completion, total: prompt + completion };
}

const PRICES: Record<string, Price> = { big: { input: 10, output: 30 }, small: { input: 1, output: 2 } };
const priceOf = (_host: string, model: string) => (Object.prototype.hasOwnProperty.call(PRICES, model) ? PRICES[model] : undefined);
const noPrice = () => undefined;
const dailyDollars = (amount: number, extra: Partial<BudgetLimit> = {}): BudgetLimit => ({ period: 'day', unit: 'dollars', amount, action: 'block', source: 'user', ...extra });

/** VS Code's Markdown preview: raw HTML on, and data: image links allowed (markdown-language-features' validateLink). */
function preview(): MarkdownIt {
  const md = new MarkdownIt({ html: true, linkify: true });
  const validate = md.validateLink.bind(md);
  md.validateLink = (link) => validate(link) || /^data:image\/.*?;/.test(link);
  return md;
}

/** The SVG inside a data: URI. */
function decode(uri: string): string {
  const m = /^data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)$/.exec(uri);
  assert.ok(m, `a base64 SVG data URI: ${uri.slice(0, 60)}`);
  return new TextDecoder().decode(Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0)));
}

/** Every element the SVG has: only the few it is drawn with (a model name never adds one). */
function elements(svg: string): string[] {
  return [...svg.matchAll(/<\/?([^\s/>]+)/g)].map((m) => m[1]);
}

/** Each series' rectangles, as drawn: [x, top, bottom] per day with a value. */
function rects(svg: string): Array<{ fill: string; boxes: Array<[number, number, number]> }> {
  return [...svg.matchAll(/<path fill="(#\w+)"[^>]* d="([^"]*)"/g)].map((m) => ({
    fill: m[1],
    boxes: [...m[2].matchAll(/M([\d.]+) ([\d.]+)h[\d.]+V([\d.]+)/g)].map((b) => [Number(b[1]), Number(b[2]), Number(b[3])] as [number, number, number]),
  }));
}

/** The dashed line's height in the SVG (the daily limit). */
function limitY(svg: string): number | undefined {
  const m = /stroke-dasharray="[^"]*" d="M[\d.]+ ([\d.]+)H/.exec(svg);
  return m ? Number(m[1]) : undefined;
}

/** WCAG's contrast ratio of two #rrggbb colours. */
function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe('usage chart: the numbers (issue 37)', () => {
  it('covers the last 30 local days, oldest first, today last, empty days included', () => {
    const days = chartDays(NOW);
    assert.equal(days.length, CHART_DAYS);
    assert.equal(days[CHART_DAYS - 1], '2026-11-27');
    assert.equal(days[0], '2026-10-29');
    // Across the month's end and the end of summer time (where a clock has one), one day apart each.
    assert.deepEqual(days.slice(1, 5), ['2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02']);
    const ledger: Ledger = {
      [`${daysBack(0)}|h|small`]: totals(1000, 500),
      [`${daysBack(29)}|h|small`]: totals(100, 0),
      [`${daysBack(30)}|h|small`]: totals(7777, 0),
      [`${daysBack(400)}|h|small`]: totals(8888, 0),
    };
    const chart = chartData(ledger, NOW, noPrice, []);
    assert.equal(chart.unit, 'tokens');
    assert.deepEqual(chart.series.map((s) => s.name), ['small']);
    const values = chart.series[0].values;
    assert.equal(values.length, CHART_DAYS);
    assert.equal(values[CHART_DAYS - 1], 1500, 'today');
    assert.equal(values[0], 100, '29 days ago: the first day shown');
    assert.equal(values.reduce((a, b) => a + b, 0), 1600, 'nothing from 30 or more days ago; the days between are 0');
  });

  it('stacks each day by model, the model with the most at the bottom, across hosts', () => {
    const ledger: Ledger = {
      [`${daysBack(1)}|a.example|big`]: totals(100_000, 10_000), // $1.30
      [`${daysBack(1)}|b.example|big`]: totals(100_000, 0), // $1.00: the same model at another host adds to it
      [`${daysBack(1)}|a.example|small`]: totals(500_000, 250_000), // $1.00
      [`${daysBack(0)}|a.example|small`]: totals(1_000_000, 0), // $1.00
    };
    const chart = chartData(ledger, NOW, priceOf, []);
    assert.equal(chart.unit, 'dollars');
    assert.deepEqual(chart.series.map((s) => [s.name, +s.values[CHART_DAYS - 2].toFixed(4), +s.values[CHART_DAYS - 1].toFixed(4)]), [['big', 2.3, 0], ['small', 1, 1]]);
    const svg = chartSvg(chart, 'light');
    const [big, small] = rects(svg);
    assert.equal(big.boxes.length, 1, 'big: one bar, yesterday');
    assert.equal(small.boxes.length, 2, 'small: yesterday and today');
    const [bx, bTop, bBottom] = big.boxes[0];
    const [sx, sTop, sBottom] = small.boxes[0];
    assert.equal(sx, bx, 'the same day, one above the other');
    assert.equal(sBottom, bTop, "small's bar starts where big's ends");
    assert.ok(Math.abs((bBottom - bTop) / (sBottom - sTop) - 2.3) < 0.02, `heights in proportion: ${bBottom - bTop} vs ${sBottom - sTop}`);
    assert.equal(small.boxes[1][2], bBottom, "today's small stands on the axis");
    assert.deepEqual([big.fill, small.fill], PALETTES.light.series.slice(0, 2));
  });

  it('lumps the models past the fifth as "other", its values summed per day', () => {
    const ledger: Ledger = {};
    for (let k = 1; k <= 7; k++) ledger[`${daysBack(k % 2)}|h|m${k}`] = totals(k * 1000, 0);
    const chart = chartData(ledger, NOW, noPrice, []);
    assert.deepEqual(chart.series.map((s) => s.name), ['m7', 'm6', 'm5', 'm4', 'm3', 'other']);
    const other = chart.series[5];
    assert.equal(other.lumped, 2);
    assert.deepEqual([other.values[CHART_DAYS - 2], other.values[CHART_DAYS - 1]], [1000, 2000], 'm1 yesterday, m2 today');
    const svg = chartSvg(chart, 'dark');
    assert.match(svg, />other \(2 models\)</);
    assert.equal(rects(svg)[5].fill, PALETTES.dark.series[5], "other's own colour");
    const md = chartMarkdown(chart, 'dark');
    assert.match(md, /^\| Day \| `m7` \| `m6` \| `m5` \| `m4` \| `m3` \| other \(2 models\) \| Total \|$/m);
    assert.match(md, new RegExp(`^\\| Nov\u00a026 \\| 7,000 \\| 0 \\| 5,000 \\| 0 \\| 3,000 \\| 1,000 \\| 16,000 \\|\n\\| Nov\u00a027 \\| 0 \\| 6,000 \\| 0 \\| 4,000 \\| 0 \\| 2,000 \\| 12,000 \\|$`, 'm'));
  });

  it('draws the daily limit across at its height; other periods, units and profiles only in words', () => {
    // $10 on the highest day: the axis goes to $10 in steps of $2.50, so a $5 limit is halfway up.
    const ledger: Ledger = { [`${daysBack(3)}|h|big`]: totals(1_000_000, 0) };
    const limits = [dailyDollars(5), dailyDollars(1, { period: 'week', action: 'warn' }), dailyDollars(2, { profile: 'Work | "x"' }), { ...dailyDollars(9), unit: 'tokens' as const }];
    const chart = chartData(ledger, NOW, priceOf, limits);
    assert.deepEqual(chart.lines.map((l) => l.amount), [5]);
    assert.deepEqual(chart.notDrawn.map((l) => `${l.period} ${l.unit} ${l.amount}`), ['week dollars 1', 'day dollars 2', 'day tokens 9']);
    const svg = chartSvg(chart, 'light');
    const [[, top, bottom]] = rects(svg)[0].boxes;
    assert.equal(limitY(svg), (top + bottom) / 2, 'the $5 line at half the $10 bar');
    assert.match(svg, />daily limit \$5\.00 \(block\)</);
    const md = chartMarkdown(chart, 'light');
    assert.match(preview().render(md), /<img src="data:image\/svg\+xml;base64,[^"]+" alt="Bar chart of spend per day in dollars, Oct 29 to Nov 27, stacked by model; the dashed line is the daily spend limit \$5\.00\. The numbers are in the table below\.">/);
    assert.match(md, /^Not drawn: weekly spend limit \\\$1\.00 \(warn\); daily spend limit \\\$2\.00 \(block\) of the profile "Work \\\| "x""; daily token limit 9 tokens \(block\)\./m);
  });

  it('a daily limit far above the spend is named at the top rather than flattening the bars', () => {
    const chart = chartData({ [`${daysBack(0)}|h|small`]: totals(1_000_000, 0) }, NOW, priceOf, [dailyDollars(50)]);
    const svg = chartSvg(chart, 'light');
    assert.equal(limitY(svg), undefined, 'no line');
    assert.match(svg, />daily limit \$50\.00 \(block\), above the chart ↑</);
    const [[, top, bottom]] = rects(svg)[0].boxes;
    assert.ok(bottom - top > 100, `the $1 bar keeps its height: ${bottom - top}`);
  });

  it('falls back to tokens when no model used has a price (or only a price of 0); a dollar limit is then not drawn', () => {
    const ledger: Ledger = { [`${daysBack(2)}|h|local`]: totals(300, 200), [`${daysBack(2)}|h|free`]: totals(100, 0) };
    const free = (_h: string, m: string) => (m === 'free' ? { input: 0, output: 0 } : undefined);
    const chart = chartData(ledger, NOW, free, [dailyDollars(5), { ...dailyDollars(1000), unit: 'tokens' }]);
    assert.equal(chart.unit, 'tokens');
    assert.deepEqual(chart.series.map((s) => [s.name, s.values[CHART_DAYS - 3]]), [['local', 500], ['free', 100]]);
    assert.deepEqual(chart.lines.map((l) => l.amount), [1000]);
    assert.deepEqual(chart.notDrawn.map((l) => l.unit), ['dollars']);
    assert.deepEqual(chart.unpriced, [], 'nothing is missing from a chart of tokens');
    const md = chartMarkdown(chart, 'light');
    assert.match(md, /^## Tokens per day, last 30 days$/m);
    assert.match(md, /!\[Bar chart of tokens per day, Oct 29 to Nov 27, stacked by model; the dashed line is the daily token limit 1,000 tokens\./);
    assert.match(chartSvg(chart, 'light'), />daily limit 1,000 tokens \(block\)</);
  });

  it('in dollars, names the models with no price (left out of the chart)', () => {
    const ledger: Ledger = { [`${daysBack(0)}|h|big`]: totals(1000, 0), [`${daysBack(0)}|h|mystery`]: totals(5000, 0) };
    const chart = chartData(ledger, NOW, priceOf, []);
    assert.equal(chart.unit, 'dollars');
    assert.deepEqual(chart.unpriced, ['mystery']);
    assert.deepEqual(chart.series.map((s) => s.name), ['big']);
    assert.match(chartMarkdown(chart, 'light'), /^Not in the chart, as they have no price set: `mystery`\. Their tokens are in the tables below\.$/m);
  });

  it('says so when the last 30 days had no requests', () => {
    const chart = chartData({ [`${daysBack(45)}|h|small`]: totals(10, 0) }, NOW, noPrice, []);
    assert.equal(chartMarkdown(chart, 'light'), '## Tokens per day, last 30 days\n\n_No requests in the last 30 days._');
  });
});

describe('usage chart: server strings stay text (issue 37)', () => {
  const NAMES = ['<script>alert(1)</script>', '"&amp;\'', '](javascript:x) | `tick`', 'a\u0000b\u001bc', '模型-ü'];
  const ledger: Ledger = Object.fromEntries(NAMES.map((n, i) => [`${daysBack(i)}|h|${n}`, totals(1000 * (i + 1), 0)]));
  const chart = chartData(ledger, NOW, noPrice, [dailyDollars(1, { profile: '<b>x</b>' })]);

  it('escapes model names as XML text in the SVG: no element, entity or forbidden character comes from them', () => {
    const svg = decode(svgDataUri(chartSvg(chart, 'light')));
    assert.deepEqual([...new Set(elements(svg))].sort(), ['g', 'path', 'rect', 'svg', 'text']);
    assert.ok(svg.includes('>&#60;script&#62;alert(1)&#60;/script&#62;<'), 'the name as text');
    assert.ok(svg.includes('>&#34;&#38;amp;&#39;<'), 'quotes and an entity-looking name as text');
    assert.ok(svg.includes('>abc<'), 'control characters XML forbids are dropped');
    assert.ok(svg.includes('>模型-ü<'), 'UTF-8 kept through base64');
    assert.equal(xmlText('<a href="x">&</a>'), '&#60;a href=&#34;x&#34;&#62;&#38;&#60;/a&#62;');
  });

  it('keeps them literal in the Markdown: the one image is the chart, no HTML, no link', () => {
    const md = chartMarkdown(chart, 'light');
    const tokens = preview().parse(md, {});
    const active: string[] = [];
    for (const t of tokens) {
      if (t.type === 'html_block') active.push(t.type);
      for (const c of t.children ?? []) if (['image', 'link_open', 'html_inline'].includes(c.type)) active.push(`${c.type} ${(c.attrGet('src') ?? c.attrGet('href') ?? c.content).slice(0, 30)}`);
    }
    assert.deepEqual(active, ['image data:image/svg+xml;base64,PHN2']);
    const html = preview().render(md);
    assert.doesNotMatch(html, /<script|<b>/);
    const header = tokens.filter((t) => t.type === 'inline').map((t) => t.children?.map((c) => c.content).join('')).filter((x) => x && NAMES.some((n) => x.includes(n.slice(0, 6))));
    assert.ok(header.includes('<script>alert(1)</script>'), `the name as a cell: ${JSON.stringify(header)}`);
    assert.ok(header.includes('](javascript:x) | `tick`'), 'a pipe and backticks stay in their cell');
    assert.match(html, /<img src="data:image\/svg\+xml;base64,[^"]+" alt="Bar chart of tokens per day, Oct 29 to Nov 27, stacked by model\. The numbers are in the table below\.">/);
  });
});

describe('usage chart: a palette per theme kind (issue 37)', () => {
  const themes = Object.keys(PALETTES) as ChartTheme[];

  it('has four palettes, each different, drawn on its own background', () => {
    assert.deepEqual(themes.sort(), ['dark', 'hcDark', 'hcLight', 'light']);
    const chart: UsageChart = chartData({ [`${daysBack(0)}|h|m`]: totals(10, 0) }, NOW, noPrice, []);
    const drawn = new Set(themes.map((t) => chartSvg(chart, t)));
    assert.equal(drawn.size, 4, 'each theme draws its own image');
    assert.equal(new Set(themes.map((t) => PALETTES[t].series.join())).size, 4);
    for (const t of themes) assert.ok(chartSvg(chart, t).includes(`fill="${PALETTES[t].background}"/>`), `${t}: its background`);
    // vscode.ColorThemeKind: Light 1, Dark 2, HighContrast 3, HighContrastLight 4.
    assert.deepEqual([1, 2, 3, 4].map(themeOfKind), ['light', 'dark', 'hcDark', 'hcLight']);
  });

  for (const theme of ['light', 'dark', 'hcDark', 'hcLight'] as ChartTheme[]) {
    it(`${theme}: words at 4.5:1 or more, each series at 3:1 (4.5:1 in high contrast), six distinct series colours`, () => {
      const p = PALETTES[theme];
      assert.ok(contrast(p.text, p.background) >= 4.5, `text ${contrast(p.text, p.background).toFixed(2)}`);
      const min = theme.startsWith('hc') ? 4.5 : 3;
      for (const c of p.series) assert.ok(contrast(c, p.background) >= min, `${c} on ${p.background}: ${contrast(c, p.background).toFixed(2)}`);
      assert.equal(p.series.length, 6);
      assert.equal(new Set(p.series).size, 6);
    });
  }
});

describe('usage report: the chart in place (issue 37)', () => {
  const ledger: Ledger = { [`${daysBack(0)}|h|big`]: totals(100_000, 0), [`${daysBack(40)}|h|small`]: totals(10, 0) };

  it('comes after the totals and before the tables, in the theme asked for, when there were requests', () => {
    const md = reportMarkdown(ledger, emptyTotals(), pricingOnly(PRICES), NOW, {}, { themeKind: 3, limits: [dailyDollars(2)] });
    const at = (s: string) => md.indexOf(s);
    assert.ok(at('- All time:') < at('## Spend per day, last 30 days') && at('## Spend per day, last 30 days') < at('## By model'), md.slice(0, 600));
    const uri = /\]\((data:image\/svg\+xml;base64,[^)]+)\)/.exec(md)?.[1];
    assert.ok(uri);
    assert.ok(decode(uri).includes(PALETTES.hcDark.background));
    assert.match(md, new RegExp(`^\\| Nov\u00a027 \\| \\\\\\$1\\.00 \\| \\\\\\$1\\.00 \\|$`, 'm'), 'the day in the table');
    assert.doesNotMatch(reportMarkdown(ledger, emptyTotals(), pricingOnly(PRICES), NOW, {}), /per day/, 'no chart unless asked');
    assert.doesNotMatch(reportMarkdown({}, emptyTotals(), pricingOnly(PRICES), NOW, {}, { themeKind: 1, limits: [] }), /per day/, 'no chart before any request');
  });
});
