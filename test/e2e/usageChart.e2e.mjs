// The usage report's chart (issue 37) as a person sees it in VS Code's own Markdown preview: 30 days of spend by seven
// models (five named, two as "other") read from a usage log on disk, a daily limit drawn across; the image loads and
// is drawn in the theme's palette, its numbers are in the table, and a change of theme draws it again. Takes the
// README's screenshot of the chart (docs/screenshots/usage-chart.png; usage-chart-dark.png to look at).
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { step, visible, waitFor } from './harness.mjs';

export const title = "The usage report's chart";

/** Prices per million tokens, as parley.pricing; the chart is in dollars. */
const PRICES = {
  'anthropic/claude-sonnet-4': { input: 3, output: 15 },
  'openai/gpt-4.1': { input: 2, output: 8 },
  'google/gemini-2.5-pro': { input: 1.25, output: 10 },
  'deepseek/deepseek-chat': { input: 0.27, output: 1.1 },
  'qwen/qwen3-coder': { input: 0.2, output: 0.8 },
  'mistralai/codestral': { input: 0.3, output: 0.9 },
  'openai/gpt-4.1-mini': { input: 0.4, output: 1.6 },
};
/** How busy each model is, relative: the last two end up lumped as "other". */
const WEIGHT = [1.6, 1.4, 1, 2.2, 1.2, 0.5, 0.6];

/** Light Modern's and Dark Modern's palettes in src/core/usageChart.ts: background, first series colour. */
const LIGHT = { background: [0xff, 0xff, 0xff], first: [0x00, 0x72, 0xb2] };
const DARK = { background: [0x1f, 0x1f, 0x1f], first: [0x56, 0xb4, 0xe9] };

export const workbench = {
  workspace: 'basic',
  settings: {
    'workbench.colorTheme': 'Default Light Modern',
    'parley.pricing': PRICES,
    'parley.budget': [{ period: 'day', dollars: 5, action: 'block' }, { period: 'week', dollars: 25, action: 'warn' }],
  },
};

export const timeoutMs = 90_000;

/** A small seeded generator (mulberry32): the same 30 days every run. */
function random(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A day as the chart's table names it (local time; same machine): "Nov 3", with a no-break space. */
const dayOf = (at) => new Date(at).toLocaleDateString('en-US', { month: 'short', day: 'numeric' }).replace(' ', '\u00a0');

/**
 * Writes another window's usage log with requests over the last 30 days (none 30 days ago or earlier is drawn; one
 * 31 days ago is written to show it), and returns the spend per day in dollars, as the chart should count it.
 */
function seedUsage(wb) {
  const rnd = random(37);
  const now = new Date();
  const spend = new Map();
  const lines = [];
  const models = Object.keys(PRICES);
  for (let back = 31; back >= 0; back--) {
    const day = new Date(now.getFullYear(), now.getMonth(), now.getDate() - back, 11, 30);
    const weekend = day.getDay() === 0 || day.getDay() === 6;
    models.forEach((model, k) => {
      const requests = Math.floor(rnd() * WEIGHT[k] * (weekend ? 1.2 : 4));
      for (let i = 0; i < requests; i++) {
        const prompt = 40_000 + Math.floor(rnd() * 160_000);
        const completion = 2_000 + Math.floor(rnd() * 22_000);
        lines.push(JSON.stringify({ at: day.getTime() + i * 60_000, model, host: 'OpenRouter (openrouter.ai)', prompt, completion, total: prompt + completion, estimated: false, durationMs: 9000, source: 'chat' }));
        const cost = (prompt * PRICES[model].input + completion * PRICES[model].output) / 1_000_000;
        if (back < 30) spend.set(dayOf(day.getTime()), (spend.get(dayOf(day.getTime())) ?? 0) + cost);
      }
    });
  }
  const dir = join(wb.parleyStorage(), 'usage');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${randomUUID()}.jsonl`), lines.join('\n') + '\n');
  return spend;
}

/** The chart section of the open report: the image's state and the table under it (rows keyed by column heading). */
async function readChart(wb) {
  const body = await waitFor('a Markdown preview showing the usage report with its chart', async () => {
    for (let i = 0; i < (await wb.markdownPreviews().count()); i++) {
      const b = wb.markdownPreviewFrame(i).locator('.markdown-body');
      if (/Spend per day, last 30 days/.test(await b.innerText({ timeout: 500 }).catch(() => ''))) return b;
    }
    return undefined;
  });
  return step('reading the chart section', () =>
    body.evaluate((el) => {
      const h2 = [...el.querySelectorAll('h2')].find((h) => h.textContent.trim() === 'Spend per day, last 30 days');
      const after = [];
      for (let n = h2?.nextElementSibling; n && n.tagName !== 'H2'; n = n.nextElementSibling) after.push(n);
      const img = after.map((n) => n.querySelector('img')).find(Boolean);
      const table = after.find((n) => n.tagName === 'TABLE');
      const heads = table ? [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim()) : [];
      const rows = table ? [...table.querySelectorAll('tbody tr')].map((tr) => Object.fromEntries([...tr.cells].map((td, i) => [heads[i], td.textContent.trim()]))) : [];
      let pixels;
      if (img?.complete && img.naturalWidth > 0) {
        // The image as drawn: the share of its pixels in each colour, to see which palette it was drawn in.
        const c = document.createElement('canvas');
        [c.width, c.height] = [img.naturalWidth, img.naturalHeight];
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const data = g.getImageData(0, 0, c.width, c.height).data;
        pixels = {};
        for (let i = 0; i < data.length; i += 4) {
          const key = `${data[i]},${data[i + 1]},${data[i + 2]}`;
          pixels[key] = (pixels[key] ?? 0) + 1;
        }
      }
      return {
        img: img && { src: img.getAttribute('src'), alt: img.getAttribute('alt'), complete: img.complete, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight },
        words: after.filter((n) => n.tagName === 'P').map((p) => p.textContent.trim()),
        heads,
        rows,
        pixels,
      };
    }));
}

/** Fails unless the image is loaded and drawn on `palette`'s background with its first series colour. */
function expectDrawnIn(chart, palette, name) {
  if (!chart.img) throw new Error(`no image in the chart section: ${JSON.stringify(chart.words)}`);
  if (!chart.img.src.startsWith('data:image/svg+xml;base64,')) throw new Error(`the chart's image is not a local SVG: ${chart.img.src.slice(0, 60)}`);
  if (!chart.img.complete || chart.img.naturalWidth !== 720) throw new Error(`the chart's image did not load: ${JSON.stringify({ ...chart.img, src: undefined })}`);
  const total = Object.values(chart.pixels).reduce((a, b) => a + b, 0);
  const share = (rgb) => (chart.pixels[rgb.join(',')] ?? 0) / total;
  if (share(palette.background) < 0.5) throw new Error(`the chart is not on the ${name} background: ${(share(palette.background) * 100).toFixed(1)} % of its pixels`);
  if (share(palette.first) < 0.002) throw new Error(`the chart's first series is not drawn in the ${name} palette: ${(share(palette.first) * 100).toFixed(2)} %`);
}

/** The image's src, to see it change. */
let lightSrc = '';

export const tests = {
  async 'Show Usage draws 30 days of spend by model, with the daily limit, and the same numbers in a table'(wb) {
    const spend = seedUsage(wb);
    await wb.runCommand('Parley: Show Usage');
    const chart = await waitFor('the chart image to load', async () => {
      const c = await readChart(wb);
      return c.img?.complete && c.img.naturalWidth > 0 && c;
    });
    expectDrawnIn(chart, LIGHT, 'light');
    lightSrc = chart.img.src;
    if (!/^Bar chart of spend per day in dollars, \w+ \d+ to \w+ \d+, stacked by model; the dashed line is the daily spend limit \$5\.00\. The numbers are in the table below\.$/.test(chart.img.alt)) {
      throw new Error(`the image's alt text: "${chart.img.alt}"`);
    }
    // Five models by their spend in the window (which five depends on today's 30 days), then the other two.
    const named = chart.heads.slice(1, -2);
    if (chart.heads[0] !== 'Day' || chart.heads.at(-1) !== 'Total' || chart.heads.at(-2) !== 'other (2 models)' || named.length !== 5 || new Set(named).size !== 5 || !named.every((m) => m in PRICES)) {
      throw new Error(`the table's columns: ${JSON.stringify(chart.heads)}`);
    }
    const days = [...spend].filter(([, v]) => v > 0);
    if (chart.rows.length !== days.length) throw new Error(`the table has ${chart.rows.length} days, the log ${days.length} with spend: ${JSON.stringify(chart.rows.map((r) => r.Day))}`);
    for (const [day, dollars] of days) {
      const row = chart.rows.find((r) => r.Day === day);
      const shown = Number(row?.Total.replace(/^\$/, ''));
      if (!row || !(Math.abs(shown - dollars) < 0.006)) throw new Error(`${day}: the table says ${row?.Total}, the log holds $${dollars.toFixed(4)}`);
    }
    if (!chart.words.some((w) => w.startsWith('Not drawn: weekly spend limit $25.00 (warn).'))) throw new Error(`the weekly limit is not named: ${JSON.stringify(chart.words)}`);
    await wb.runCommand('View: Close Primary Side Bar');
    await wb.screenshot('usage-chart');
  },

  async 'a change of theme draws the chart again in the dark palette'(wb) {
    if (!lightSrc) throw new Error('the chart was not shown in the light theme');
    // The palette's first guess for the title is "Browse Color Themes in Marketplace": the entry is clicked instead.
    const palette = wb.page.locator('.quick-input-widget');
    await wb.page.keyboard.press('Escape');
    await wb.page.keyboard.press('F1');
    await step('typing "Preferences: Color Theme" into the command palette', () => palette.locator('.quick-input-box input').fill('>Preferences: Color Theme'));
    await step('clicking "Preferences: Color Theme"', () => palette.locator('.monaco-list-row[aria-label^="Preferences: Color Theme"]').first().click());
    const widget = wb.page.locator('.quick-input-widget');
    await waitFor('the theme list', async () => (await widget.isVisible()) && !(await widget.locator('.quick-input-box input').inputValue({ timeout: 500 })).startsWith('>'));
    await step('typing "Dark Modern" into the theme list', () => widget.locator('.quick-input-box input').fill('Dark Modern'));
    await visible(widget.locator('.monaco-list-row.focused', { hasText: 'Dark Modern' }), 'Dark Modern selected in the theme list');
    await wb.page.keyboard.press('Enter');
    const chart = await waitFor('the chart drawn again for the dark theme', async () => {
      const c = await readChart(wb);
      return c.img?.src !== lightSrc && c.img?.complete && c.img.naturalWidth > 0 && c;
      // A theme change reloads every webview of the window, the preview's among them: slow on a loaded machine.
    }, 45_000);
    expectDrawnIn(chart, DARK, 'dark');
    await wb.screenshot('usage-chart-dark');
  },
};
