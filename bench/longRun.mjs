// Long-run benchmark: how long the webview takes to show a reply holding one long unbroken run of "A"s (Markdown
// text, inline code, a code block), from a snapshot and streamed in 8 deltas, with Parley's stylesheet and with the
// old rule (kerning on for long runs too: before issue 21, defect 11, a 1 MB run froze the panel for over a minute).
// Prints each time and the ratio old/new, measured in one run; no limits are asserted.
// Usage: node bench/longRun.mjs [--sizes 32000,1048576] [--modes snapshot,stream] [--kinds text,inline,code] [--no-old]
// (the old rule's 1 MB text takes minutes: --sizes 32000 for a quick look).
import { chromium } from 'playwright-core';
import { buildWebview } from '../test/webview-harness/build.mjs';
import { CHROMIUM, startHarness } from '../test/webview-harness/harness.mjs';

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return (i > 0 ? process.argv[i + 1] : fallback).split(',');
};
const SIZES = option('sizes', '32000,1048576').map(Number);
const MODES = option('modes', 'snapshot,stream');
const KINDS = option('kinds', 'text,inline,code');
/** The rule before the fix, put back through the CSSOM (the page's CSP refuses inline styles). */
const OLD_RULE = '.long-run { font-kerning: auto !important; font-variant-ligatures: normal !important; }';
const RULES = process.argv.includes('--no-old') ? ['new'] : ['old', 'new'];

await buildWebview();
const harness = await startHarness();
const browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: CHROMIUM.args });
const header = { model: 'm', endpoint: 'e', demo: false, models: [], profile: 'Default', profiles: [] };

/** Milliseconds from the host's first message to the reply shown (rendered, laid out and painted). */
async function measure(rule, mode, kind, size) {
  const page = await browser.newPage({ viewport: { width: 420, height: 700 } });
  try {
    await page.goto(harness.url);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'));
    if (rule === 'old') await page.evaluate((r) => { const sheet = Array.from(document.styleSheets).pop(); sheet.insertRule(r, sheet.cssRules.length); }, OLD_RULE);
    // Past the renderer's warm-up (markdownStream.ts warmUp), which runs in the first idle moments after the host's
    // first snapshot (the host sends one on ready).
    await page.evaluate((header) => window.__host({ type: 'snapshot', conversation: { id: 'c0', title: 'T', turns: [] }, generating: false, header, pendingContext: [] }), header);
    await page.waitForTimeout(500);
    const run = 'A'.repeat(size);
    const text = kind === 'text' ? `Before.\n\n${run}\n\nAfter.` : kind === 'inline' ? `Before \`${run}\` after.` : `Before.\n\n\`\`\`\n${run}\n\`\`\`\n\nAfter.`;
    return await page.evaluate(async ({ text, mode, header }) => {
      const snapshot = (turns, generating) => ({ type: 'snapshot', conversation: { id: 'c1', title: 'T', turns }, generating, header, pendingContext: [] });
      const question = { id: 'u', role: 'user', text: 'q', status: 'done' };
      const frame = () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok())));
      const t0 = performance.now();
      if (mode === 'snapshot') {
        window.__host(snapshot([question, { id: 'a', role: 'assistant', text, status: 'done' }], false));
      } else {
        window.__host(snapshot([question], true));
        window.__host({ type: 'turnStart', turn: { id: 'a', role: 'assistant', text: '', status: 'streaming' } });
        const size = Math.ceil(text.length / 8);
        for (let i = 0; i < text.length; i += size) {
          window.__host({ type: 'delta', turnId: 'a', text: text.slice(i, i + size) });
          await frame();
        }
        window.__host({ type: 'turnEnd', turn: { id: 'a', role: 'assistant', text, status: 'done' } });
      }
      await frame();
      return performance.now() - t0;
    }, { text, mode, header });
  } finally {
    await page.close();
  }
}

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
console.log('mode      kind    size       ' + RULES.map((r) => `${r} rule`.padEnd(10)).join('  ') + (RULES.length > 1 ? '  old/new' : ''));
for (const size of SIZES) {
  for (const mode of MODES) {
    for (const kind of KINDS) {
      const times = [];
      for (const rule of RULES) times.push(await measure(rule, mode, kind, size));
      console.log(`${mode.padEnd(9)} ${kind.padEnd(7)} ${String(size).padEnd(10)} ${times.map((t) => fmt(t).padEnd(10)).join('  ')}` +
        (times.length > 1 ? `  ${(times[0] / times[1]).toFixed(1)}x` : ''));
    }
  }
}
await browser.close();
await harness.close();
