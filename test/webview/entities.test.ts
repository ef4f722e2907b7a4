// The webview's entity decoder (src/webview/entities.ts, markdown-it's `entities` in the webview bundle) in Chromium,
// held to the real `entities` package (imported here, in Node, never in the webview): every name of its table, in
// strict and legacy mode, with and without `;` and with text after it, and numeric references at their edges; then the
// real webview bundle rendering references in a reply.
import * as assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DecodingMode, EntityDecoder, decodeHTML, decodeHTMLStrict, htmlDecodeTree } from 'entities/lib/decode.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { HeaderView, HostMessage } from '../../src/shared/protocol';
import { chromiumHarness } from './panelPage';

declare global {
  interface Window {
    __decoder: { decodeHTML(s: string): string; decodeHTMLStrict(s: string): string };
    __host(msg: HostMessage): void;
  }
}

const root = resolve(__dirname, '../../..');
const WAIT = { timeout: 5000 };
const NAME_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Every name in the `entities` package's decode tree, with `;` where the name takes one: walked one character at a
 * time with its own strict decoder (-1: the walk is still inside the tree; more than 0: a whole name with its `;`).
 */
function allNames(): string[] {
  const names: string[] = [];
  const decoder = new EntityDecoder(htmlDecodeTree, () => undefined);
  const walk = (prefix: string): number => {
    decoder.startEntity(DecodingMode.Strict);
    return decoder.write(prefix, 0);
  };
  const queue = [''];
  while (queue.length) {
    const prefix = queue.shift() ?? '';
    if (prefix && walk(`${prefix};`) > 0) names.push(`${prefix};`);
    for (const c of NAME_CHARS) if (walk(prefix + c) === -1) queue.push(prefix + c);
  }
  return names;
}

/** Numeric references at their edges: NUL, C1, surrogates, the last code point and past it, no digits, no `;`. */
function numericCases(): string[] {
  const out: string[] = [];
  for (let cp = 0; cp <= 0xa0; cp++) out.push(`&#${cp};`, `&#x${cp.toString(16)};`);
  for (const cp of [0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfffe, 0xffff, 0x10000, 0x1f600, 0x10ffff, 0x110000, 0xffffffff]) {
    out.push(`&#${cp};`, `&#x${cp.toString(16)};`, `&#X${cp.toString(16).toUpperCase()};`, `&#${cp}`, `&#x${cp.toString(16)}`, `&#${cp}z`);
  }
  out.push(
    '&#;', '&#x;', '&#X;', '&#', '&#x', '&#xg;', '&#z;', '&# 65;', '&#65 ;', '&#65', '&#65x', '&#x41g', '&#0000000000000000000000000000000000000000000000000000000000000000000065;',
    `&#${'9'.repeat(40)};`, `&#x${'f'.repeat(40)};`, '&#x0000000000000000000000000000000000000000000000000000000000000000000041;', '&#65;&#66;&#x43;',
    '&#128;x', '&#x80', 'a&#x2764;&#xFE0F;b',
  );
  return out;
}

/** Other text around references: several, none, `&` alone, long runs of letters, names that are not names. */
const MIXED = [
  '', 'plain', '&', '&&', '&;', '& amp;', '&&amp;', 'a & b', 'AT&T', 'AT&T;', '&amp;amp;', '&amp;&lt;&gt;&quot;&apos;',
  'x &copy 2024', '&copyright;', '&notit;', '&notin;', '&notin', '&not;', '&noti', '&ampx;', '&amp1', '&Amp;', '&AMP', '&AMP;',
  '&bogus;', '&Bogus', `&${'a'.repeat(40)};`, `&amp${'x'.repeat(40)};`, `&${'Counter'.repeat(10)};`, '&CounterClockwiseContourIntegral;',
  '&CounterClockwiseContourIntegralx;', '&NewLine;&Tab;', '&lt;script&gt;', '&lt&gt', 'é&eacute;ü&uuml', '&nbsp;&nbsp', '&semi;', '&semi',
  '&fjlig;&NotEqualTilde;&acE;', '&1;', '&a1;', '&frac12&frac34;', '<b>&amp;</b>', '&#38;amp;', '&amp;#38;',
];

describe('the webview entity decoder against the entities package (Chromium)', function () {
  this.timeout(120000);
  let browser: Browser;
  let page: Page;

  before(async () => {
    const { bundleForPage } = (await import(pathToFileURL(resolve(root, 'test/webview-harness/build.mjs')).href)) as typeof import('../webview-harness/build.mjs');
    const { CHROMIUM } = (await import(pathToFileURL(resolve(root, 'test/webview-harness/harness.mjs')).href)) as typeof import('../webview-harness/harness.mjs');
    const script = await bundleForPage('src/webview/entities.ts', '__decoder');
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: CHROMIUM.args });
    page = await browser.newPage();
    page.on('pageerror', (e) => { throw e; });
    await page.setContent('<!doctype html><html><body></body></html>');
    await page.addScriptTag({ content: script });
  });

  after(async () => {
    await browser?.close();
  });

  /** Our decoder's answers for `inputs` in the page: [decodeHTML, decodeHTMLStrict] each. */
  function ours(inputs: string[]): Promise<[string, string][]> {
    return page.evaluate((xs) => xs.map((x) => [window.__decoder.decodeHTML(x), window.__decoder.decodeHTMLStrict(x)] as [string, string]), inputs);
  }

  /** The inputs where ours and the package's differ, with both answers (empty when they agree). */
  async function differences(inputs: string[]): Promise<string[]> {
    const got = await ours(inputs);
    return inputs.flatMap((x, i) => {
      const want = [decodeHTML(x), decodeHTMLStrict(x)];
      return want[0] === got[i][0] && want[1] === got[i][1] ? [] : [`${JSON.stringify(x)}: ours ${JSON.stringify(got[i])}, entities ${JSON.stringify(want)}`];
    });
  }

  it('decodes every name of the table as the package does, strict and legacy, with text after it', async () => {
    const names = allNames();
    // The HTML table: 2,125 names with `;` (the legacy ones also count without it; the walk finds those with `;`).
    assert.ok(names.length > 2000, `${names.length} names found in the decode tree`);
    const inputs = names.flatMap((n) => {
      const bare = n.slice(0, -1);
      return [`&${n}`, `&${bare}`, `x&${n}y`, `&${bare}x;`, `&${bare}1`, `&${bare} z`, `&${n}&${n}`];
    });
    assert.deepEqual(await differences(inputs), []);
    // And the decoder did decode: most names are not their own text.
    const decoded = (await ours(names.map((n) => `&${n}`))).filter(([legacy, strict]) => legacy === strict && !strict.startsWith('&')).length;
    assert.ok(decoded > 2000, `${decoded} names decoded`);
  });

  it('decodes numeric references as the package does: NUL, C1 (Windows-1252), surrogates, past U+10FFFF, no digits, no ;', async () => {
    assert.deepEqual(await differences(numericCases()), []);
    assert.deepEqual(await ours(['&#x80;', '&#0;', '&#xD800;', '&#x110000;', '&#x81;', '&#65', '&#x1F600;']), [
      ['€', '€'], ['\ufffd', '\ufffd'], ['\ufffd', '\ufffd'], ['\ufffd', '\ufffd'], ['\u0081', '\u0081'], ['A', '&#65'], ['😀', '😀'],
    ]);
  });

  it('decodes text around references, several references, and names that are none, as the package does', async () => {
    assert.deepEqual(await differences(MIXED), []);
    assert.deepEqual(await ours(['&notit;', 'x &copy 2024', '&lt;script&gt;']), [['¬it;', '&notit;'], ['x © 2024', 'x &copy 2024'], ['<script>', '<script>']]);
  });
});

describe('entities in a reply, through the real webview bundle (Chromium)', function () {
  this.timeout(60000);
  const chrome = chromiumHarness();
  let page: Page;

  it('renders named and numeric references as text, never as markup', async () => {
    page = await chrome.browser.newPage();
    page.on('pageerror', (e) => { throw e; });
    await page.goto(chrome.harness.url);
    const header: HeaderView = { model: 'm', endpoint: 'api.example.com', demo: false, models: [], profile: 'Default', profiles: [{ name: 'Default', endpoint: 'api.example.com' }] };
    const text = 'A &copy; B &notin; C &#x80; D &#xD800; E &lt;b&gt;bold?&lt;/b&gt; F &bogus; G [link](https://example.com/?a=1&amp;b=&quot;2&quot;)';
    await page.evaluate((m) => window.__host(m), {
      type: 'snapshot', generating: false, header, pendingContext: [],
      conversation: { id: 'c', title: 't', turns: [{ id: 'u', role: 'user', text: 'q', status: 'done' }, { id: 'a', role: 'assistant', text, status: 'done' }] },
    } satisfies HostMessage);
    await page.waitForSelector('.md p', WAIT);
    const shown = await page.evaluate(() => ({ text: document.querySelector('.md p')?.textContent, bold: document.querySelectorAll('.md b').length, href: document.querySelector('.md a')?.getAttribute('href') }));
    // markdown-it itself reads numeric references in text, and takes C1 controls (&#x80;) as invalid: U+FFFD.
    assert.deepEqual(shown, { text: 'A © B ∉ C \ufffd D \ufffd E <b>bold?</b> F &bogus; G link', bold: 0, href: 'https://example.com/?a=1&b=%222%22' });
    await page.close();
  });
});
