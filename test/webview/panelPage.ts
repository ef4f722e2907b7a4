// A chat panel page for a webview suite in headless Chromium: the real bundle behind the host's CSP, a stand-in host
// that records what the panel posts, and a fresh page with an empty conversation before each test.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { HeaderView, HostMessage, WebviewMessage } from '../../src/shared/protocol';
import type { Harness } from '../webview-harness/harness.mjs';

declare global {
  interface Window {
    __posted: WebviewMessage[];
    __host(msg: HostMessage): void;
  }
}

const root = resolve(__dirname, '../../..');

/** How long a step waits for the page. */
export const WAIT = { timeout: 5000 };

/** One profile, one model: the header of an ordinary endpoint. */
export const HEADER: HeaderView = { model: 'm', endpoint: 'api.example.com', demo: false, models: [], profile: 'Default', profiles: [{ name: 'Default', endpoint: 'api.example.com' }] };

/** The page of the test that runs, and its host's side. */
export interface PanelPage {
  readonly page: Page;
  /** Sends a message from the host to the panel. */
  host(m: HostMessage): Promise<void>;
  /** Every message the panel posted to its host so far. */
  posted(): Promise<WebviewMessage[]>;
}

/** The webview bundle and Chromium, started once for a suite. */
export interface ChromiumHarness {
  /** The bundle served under the host's own Content Security Policy (the harness's default), as users get it. */
  readonly harness: Harness;
  readonly browser: Browser;
}

/** Registers a suite's `before` and `after` (call it inside `describe`): the bundle built, served, and Chromium started. */
export function chromiumHarness(): ChromiumHarness {
  let harness: Harness | undefined;
  let browser: Browser | undefined;
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('chromiumHarness() is used inside a test or hook of its suite');
    return v;
  };
  before(async () => {
    const { buildWebview } = (await import(pathToFileURL(resolve(root, 'test/webview-harness/build.mjs')).href)) as typeof import('../webview-harness/build.mjs');
    const { startHarness, CHROMIUM } = (await import(pathToFileURL(resolve(root, 'test/webview-harness/harness.mjs')).href)) as typeof import('../webview-harness/harness.mjs');
    await buildWebview();
    harness = await startHarness();
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: CHROMIUM.args });
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });
  return {
    get harness() {
      return started(harness);
    },
    get browser() {
      return started(browser);
    },
  };
}

/** Registers the suite's hooks (call it inside `describe`): the bundle built and Chromium started once, a page per test. */
export function panelPage(): PanelPage {
  const chrome = chromiumHarness();
  let page: Page | undefined;
  const panel: PanelPage = {
    get page() {
      if (!page) throw new Error('no page: panelPage() is used inside a test');
      return page;
    },
    host: async (m) => void (await panel.page.evaluate((msg) => window.__host(msg), m)),
    posted: () => panel.page.evaluate(() => window.__posted),
  };

  beforeEach(async () => {
    const p = await chrome.browser.newPage({ viewport: { width: 420, height: 700 } });
    page = p;
    p.on('pageerror', (e) => { throw e; });
    await p.goto(chrome.harness.url);
    await p.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), undefined, WAIT);
    await panel.host({ type: 'snapshot', conversation: { id: 'c', title: 't', turns: [] }, generating: false, header: HEADER, pendingContext: [] });
  });

  afterEach(async () => {
    await page?.close();
    page = undefined;
  });

  return panel;
}
