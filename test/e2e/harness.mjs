// UI-test harness: code-server with the packaged Parley installed, a demo endpoint, and a Chromium page on the workbench.
//
// Every wait here is bounded and names what it waited for. Selectors for VS Code's own UI live here, so a VS Code
// update means fixing one file, not every scenario.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoEndpoint, DEMO_MODEL } from '../../scripts/demo-endpoint.mjs';
import { ROOT, startCodeServer } from '../../scripts/vscode-host.mjs';
import { pollUntil } from '../support/pollUntil.mjs';

export const RESULTS_DIR = join(ROOT, 'test-results');
const WORKSPACES = join(ROOT, 'test', 'e2e', 'workspaces');

/** Default bound for UI waits; a workbench on these machines reacts in well under a second. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** Runs `what` (a Playwright action or wait) and turns its failure into one that says what was awaited. */
export async function step(what, action) {
  try {
    return await action();
  } catch (e) {
    const reason = String(e?.message ?? e).split('\n')[0];
    throw new Error(`${what}: ${reason}`, { cause: e });
  }
}

/** Polls `check` (every 50 ms) until it returns something truthy; fails naming `what` (and the last error) after timeoutMs. */
export function waitFor(what, check, timeoutMs = DEFAULT_TIMEOUT_MS) {
  return pollUntil(what, check, timeoutMs, 50);
}

/** Waits until the locator is visible, failing with `what`. */
export function visible(locator, what, timeoutMs = DEFAULT_TIMEOUT_MS) {
  return step(`waiting for ${what} to be visible`, () => locator.first().waitFor({ state: 'visible', timeout: timeoutMs }));
}

/** Waits until the locator is gone or hidden, failing with `what`. */
export function hidden(locator, what, timeoutMs = DEFAULT_TIMEOUT_MS) {
  return step(`waiting for ${what} to disappear`, () => locator.first().waitFor({ state: 'hidden', timeout: timeoutMs }));
}

/**
 * Starts a workbench for one scenario file. Options:
 * - browser: a launched Chromium (shared by the run); extensionsDir: where the .vsix is installed (shared too).
 * - workspace: a folder under test/e2e/workspaces/ (copied to a temp dir) or an absolute path (default "basic").
 * - settings: user settings on top of the endpoint's; trust (default true): false keeps workspace trust on.
 * - endpoint: options for the demo endpoint (chunkDelayMs, requireKey, respond); see scripts/demo-endpoint.mjs.
 * Each workbench has a fresh profile and a fresh browser context, so no settings, secrets or state carry over.
 */
export async function startWorkbench({ browser, extensionsDir, workspace = 'basic', settings = {}, trust = true, endpoint: endpointOptions = {}, name = 'workbench' }) {
  const dir = mkdtempSync(join(tmpdir(), `parley-e2e-${name.replace(/[^\w-]+/g, '-')}-`));
  /** @type {Array<() => unknown>} Undone in reverse order, each awaited (some return a promise). */
  const cleanups = [() => rmSync(dir, { recursive: true, force: true })];
  const run = async (fn) => {
    try {
      return await fn();
    } catch (e) {
      for (const c of cleanups.reverse()) await c();
      throw e;
    }
  };
  return run(async () => {
    let folder = workspace;
    if (!workspace.startsWith('/')) {
      const fixture = join(WORKSPACES, workspace);
      if (!existsSync(fixture)) throw new Error(`no e2e workspace fixture ${fixture}`);
      folder = join(dir, workspace);
      cpSync(fixture, folder, { recursive: true });
    }
    const endpoint = await startDemoEndpoint(endpointOptions);
    cleanups.push(() => endpoint.close());
    const server = await startCodeServer({
      userDataDir: join(dir, 'user'),
      extensionsDir,
      workspace: folder,
      trust,
      // Settings may be made from the endpoint's URL (profiles that point at it).
      userSettings: { 'parley.baseUrl': endpoint.url, 'parley.model': DEMO_MODEL, ...(typeof settings === 'function' ? settings(endpoint.url) : settings) },
    });
    cleanups.push(() => server.stop());
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    cleanups.push(() => context.close().catch(() => {}));
    const page = await context.newPage();
    const pageErrors = collectPageErrors(page);
    await step('opening the workbench', () => page.goto(`${server.url}/?folder=${encodeURIComponent(folder)}`));
    const wb = new Workbench({ page, server, endpoint, folder, pageErrors, cleanups, userDataDir: join(dir, 'user') });
    await wb.ready();
    return wb;
  });
}

/** The page's uncaught errors, collected as they happen (a Workbench's pageErrors). */
function collectPageErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}

/** A running workbench page with helpers that act as a person would. */
export class Workbench {
  constructor({ page, server, endpoint, folder, pageErrors, cleanups, userDataDir }) {
    /** The Playwright page. */
    this.page = page;
    /** code-server's handle: url, port, output(). */
    this.server = server;
    /** The demo endpoint: url, requests, options (change them between steps). */
    this.endpoint = endpoint;
    /** Absolute path of the workspace folder on disk. */
    this.folder = folder;
    this.pageErrors = pageErrors;
    this._cleanups = cleanups;
    /** The profile's folder: Parley's global storage is under User/globalStorage/parley.parley. */
    this.userDataDir = userDataDir;
  }

  /** Parley's global storage folder in this profile (conversations/, usage/), as the extension host sees it. */
  parleyStorage() {
    return join(this.userDataDir, 'User', 'globalStorage', 'parley.parley');
  }

  /** Waits for the workbench to be usable: activity bar drawn and the extension host up. */
  async ready() {
    await visible(this.page.locator('.monaco-workbench .part.activitybar'), 'the workbench activity bar', 60_000);
    await visible(this.parleyActivityBarEntry(), 'the Parley entry in the activity bar (is the extension installed?)', 30_000);
  }

  /** The Parley icon in the activity bar. */
  parleyActivityBarEntry() {
    return this.page.locator('.part.activitybar .action-item a.action-label[aria-label^="Parley"]');
  }

  /** Opens the Parley view from the activity bar (a click on its icon) and waits for its webview to show. */
  async openParleyView() {
    const entry = this.parleyActivityBarEntry();
    const item = this.page.locator('.part.activitybar .action-item', { has: this.page.locator('a.action-label[aria-label^="Parley"]') });
    const container = this.page.locator('.part.sidebar [id="workbench.view.extension.parley"]');
    // A click on the icon of the open container closes the side bar: click only when it is not already checked. Just
    // after a reload the workbench may still be restoring the side bar it had, so a click read against the state
    // before that can close it again: look again, as a person would, until the container shows.
    for (let attempt = 1; ; attempt++) {
      const classes = await step('reading the state of the Parley activity-bar entry', () => item.first().getAttribute('class', { timeout: DEFAULT_TIMEOUT_MS }));
      if (!classes?.split(/\s+/).includes('checked')) {
        await step('clicking the Parley entry in the activity bar', () => entry.first().click());
      }
      const shown = await container.first().waitFor({ state: 'visible', timeout: 5_000 }).then(() => true, () => false);
      if (shown || attempt === 3) break;
    }
    await visible(container, 'the Parley view container in the side bar');
    await visible(this.webviewFrame(), "the Parley chat view's webview frame");
    return this.chatFrame();
  }

  /** The outer iframe of Parley's webview (VS Code tags it with the extension id). */
  webviewFrame() {
    return this.page.locator('iframe.webview[src*="extensionId=parley.parley"]');
  }

  /** The chat webview's document, two iframes deep: iframe.webview → iframe#active-frame. */
  chatFrame() {
    return this.page.frameLocator('iframe.webview[src*="extensionId=parley.parley"]').first().frameLocator('iframe#active-frame');
  }

  /** Opens VS Code's own chat view (Ctrl+Alt+I, "Chat: Open Chat") and waits for its input. */
  async openVsCodeChat() {
    await step('pressing Ctrl+Alt+I (Chat: Open Chat)', () => this.page.keyboard.press('Control+Alt+KeyI'));
    await visible(this.vsCodeChatInput(), "the input of VS Code's chat view");
  }

  /** The input of VS Code's chat view (a Monaco editor whose label starts "Chat Input"). */
  vsCodeChatInput() {
    return this.page.getByRole('textbox', { name: /^Chat Input/ });
  }

  /** The model picker's button in VS Code's chat view, labelled "Models, <model>" (or "Models, sign in to use Copilot"). */
  vsCodeChatModelPicker() {
    return this.page.locator('.part.auxiliarybar, .part.sidebar, .part.panel').getByRole('button', { name: /^Models, / });
  }

  /** VS Code's own Copilot set-up dialog, "Sign in to use GitHub Copilot" (Continue with GitHub, Google…). */
  copilotSignInDialog() {
    return this.page.locator('.monaco-dialog-box.chat-setup-dialog', { hasText: 'Sign in to use GitHub Copilot' });
  }

  /** Closes VS Code's Copilot sign-in dialog as a person without a GitHub account does: Escape (the dialog's cancel). */
  async dismissCopilotSignIn() {
    const dialog = this.copilotSignInDialog();
    await visible(dialog, 'VS Code\'s "Sign in to use GitHub Copilot" dialog');
    await this.page.keyboard.press('Escape');
    await hidden(dialog, 'the Copilot sign-in dialog, after Escape');
  }

  /** The transcript of VS Code's chat view: a list of listitems, each request labelled with its text. */
  vsCodeChatTranscript() {
    return this.page.getByRole('list', { name: 'Chat' });
  }

  /** Runs a command by its title (e.g. "Parley: Set API Key") through the command palette (F1). */
  async runCommand(title, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const widget = this.page.locator('.quick-input-widget');
    await this.page.keyboard.press('Escape');
    await this.page.locator('.monaco-workbench').first().focus().catch(() => {});
    await this.page.keyboard.press('F1');
    await visible(widget, 'the command palette', timeoutMs);
    const input = widget.locator('.quick-input-box input');
    await step(`typing "${title}" into the command palette`, () => input.fill(`>${title}`));
    // Enter only once the highlighted entry is exactly this command, not a fuzzy neighbour.
    const row = widget.locator('.monaco-list-row.focused');
    await waitFor(`"${title}" to be the selected entry of the command palette`, async () => {
      const label = await row.first().getAttribute('aria-label', { timeout: 500 });
      return label !== null && (label === title || label.startsWith(`${title},`) || label.startsWith(`${title} `));
    }, timeoutMs);
    await this.page.keyboard.press('Enter');
    // Done when the palette has closed, or has become the command's own input (same widget, no '>' in it): a
    // step right after this must not find the palette's fading input box.
    await waitFor(`the command palette to close after running "${title}"`, async () => !(await widget.isVisible()) || !(await input.inputValue({ timeout: 500 })).startsWith('>'), timeoutMs);
  }

  /** Waits for a quick input (input box or pick list) with `prompt` text, types `text` and presses Enter. */
  async answerInput(text, { prompt, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const widget = this.page.locator('.quick-input-widget');
    await visible(widget, `the input box${prompt ? ` asking "${prompt}"` : ''}`, timeoutMs);
    if (prompt) await visible(widget.getByText(prompt, { exact: false }), `the input prompt "${prompt}"`, timeoutMs);
    const input = widget.locator('.quick-input-box input');
    await step('typing into the input box', () => input.fill(text));
    await this.page.keyboard.press('Enter');
    await hidden(widget, 'the input box', timeoutMs);
  }

  /** The status-bar item whose text or accessible label contains `label` (a string or RegExp). */
  statusBarItem(label) {
    const items = this.page.locator('.part.statusbar .statusbar-item');
    return typeof label === 'string' ? items.filter({ has: this.page.locator(`[aria-label*="${label.replace(/"/g, '\\"')}"]`) }).or(items.filter({ hasText: label })) : items.filter({ hasText: label });
  }

  /** A notification toast whose text matches. */
  notification(text) {
    return this.page.locator('.notification-toast', { hasText: text });
  }

  /** Opens a workspace file by its path relative to the workspace, through Quick Open, and waits for its tab. */
  async openFile(relativePath) {
    await this.runCommand('Go to File...');
    const widget = this.page.locator('.quick-input-widget');
    await step(`typing "${relativePath}" into Quick Open`, () => widget.locator('.quick-input-box input').fill(relativePath));
    const base = relativePath.split('/').pop();
    await visible(widget.locator('.monaco-list-row.focused', { hasText: base }), `"${relativePath}" in Quick Open`);
    await this.page.keyboard.press('Enter');
    await visible(this.page.locator('.tabs-container .tab.active', { hasText: base }), `the editor tab of ${relativePath}`);
    return this.activeEditor();
  }

  /** The visible text editor of the active editor group. */
  activeEditor() {
    return this.page.locator('.editor-group-container.active .monaco-editor').first();
  }

  /** The text of the active editor's visible lines (Monaco only renders what is on screen). */
  async activeEditorText() {
    // Monaco reuses line elements, so their order in the DOM need not be the order on screen: sort by position.
    const lines = await this.activeEditor().locator('.view-lines .view-line').evaluateAll((els) =>
      els.map((el) => ({ top: parseFloat(el.style.top) || 0, text: el.innerText })).sort((a, b) => a.top - b.top).map((l) => l.text));
    // Monaco renders spaces as non-breaking spaces.
    return lines.join('\n').replace(/\u00a0/g, ' ');
  }

  /** The URI of the active editor's document (Monaco's data-uri), e.g. "untitled:/…/fizzbuzz.py" or "file:///…". */
  activeEditorResource() {
    return step("reading the active editor's resource", () => this.activeEditor().getAttribute('data-uri', { timeout: DEFAULT_TIMEOUT_MS }));
  }

  /** The language mode the status bar shows for the active editor ("TypeScript", "Python"…). */
  languageStatus() {
    return this.page.locator('.part.statusbar [id="status.editor.mode"]');
  }

  /** The editor tabs of all groups: label, resource name (file or webview id), active, dirty (unsaved). */
  editorTabs() {
    return step('reading the editor tabs', () =>
      this.page.locator('.tabs-container .tab').evaluateAll((els) =>
        els.map((el) => ({
          label: el.getAttribute('aria-label') ?? '',
          resource: el.getAttribute('data-resource-name') ?? '',
          active: el.classList.contains('active'),
          dirty: el.classList.contains('dirty'),
        }))));
  }

  /** Right-clicks the first line of the active editor (inside a select-all selection) and waits for the context menu. */
  async openEditorContextMenu() {
    await step('right-clicking the first line of the active editor', () => this.activeEditor().locator('.view-lines .view-line').first().click({ button: 'right' }));
    const menu = this.contextMenu();
    await visible(menu, 'the editor context menu');
    return menu;
  }

  /** The open context menu. */
  contextMenu() {
    return this.page.locator('.context-view .monaco-menu');
  }

  /** An entry of the open context menu, by its title (the keybinding shown beside it is ignored). */
  contextMenuItem(title) {
    return this.contextMenu().locator('.action-item a.action-menu-item', { has: this.page.locator('.action-label', { hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });
  }

  /**
   * Clicks an entry of the open context menu and waits for the menu to close, which is how VS Code shows it ran.
   * VS Code's menu items listen for the mouse-up only 100 ms after they render (a timer, so that the mouse-up of the
   * right-click that opened the menu cannot choose an entry). On a loaded machine that timer runs late, and a click
   * that comes sooner is ignored: the menu stays open. No person clicks that fast, so a click the menu ignored is
   * made again, every two seconds, until the menu closes. Returns how many clicks it took.
   */
  async clickContextMenuItem(title, timeoutMs = DEFAULT_TIMEOUT_MS) {
    const item = this.contextMenuItem(title).first();
    const menu = this.contextMenu().first();
    const deadline = Date.now() + timeoutMs;
    for (let clicks = 1; ; clicks++) {
      try {
        await item.click({ timeout: Math.max(1, deadline - Date.now()) });
      } catch (e) {
        // The menu may have closed after the wait below gave up on it: the click before this one ran the entry.
        if (clicks > 1 && !(await menu.isVisible())) return clicks - 1;
        throw new Error(`clicking "${title}" in the context menu: ${String(e?.message ?? e).split('\n')[0]}`, { cause: e });
      }
      if (await menu.waitFor({ state: 'hidden', timeout: 2_000 }).then(() => true, () => false)) return clicks;
      if (Date.now() > deadline) throw new Error(`the context menu stayed open after ${clicks} clicks on "${title}"`);
    }
  }

  /** The outer iframes of the built-in Markdown extension's previews (one per open preview). */
  markdownPreviews() {
    return this.page.locator('iframe.webview[src*="extensionId=vscode.markdown-language-features"]');
  }

  /** The document inside the `index`th Markdown preview's webview (two iframes deep, as for Parley's own view). */
  markdownPreviewFrame(index = 0) {
    return this.markdownPreviews().nth(index).contentFrame().frameLocator('iframe#active-frame');
  }

  /** Reloads the workbench page (Developer: Reload Window, as far as the browser side goes) and waits for it. */
  async reload() {
    await step('reloading the workbench page', () => this.page.reload());
    await this.ready();
  }

  /** Selects all text of the active editor (click into it, then Ctrl+A). */
  async selectAllInEditor() {
    await step('clicking into the active editor', () => this.activeEditor().locator('.view-lines').click());
    await this.page.keyboard.press('Control+A');
  }

  /**
   * Saves a screenshot as test-results/<name>.png and returns its path. The mouse first moves to the empty editor
   * area and any workbench hover is let go (one left over from a click on the activity bar covers the panel), unless
   * `keepHover`: a screenshot of a hover.
   */
  async screenshot(name, { keepHover = false } = {}) {
    if (!keepHover) {
      const { width, height } = this.page.viewportSize() ?? { width: 1400, height: 900 };
      await this.page.mouse.move(width * 0.75, height / 2);
      await this.page.locator('.workbench-hover, .monaco-hover:not(.hidden)').first().waitFor({ state: 'hidden', timeout: 3000 }).catch(() => {});
    }
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /**
   * Opens a second browser window (a page of the same browser context, so the same profile) on the same code-server
   * and folder, as a person opening the workbench's address in a new window. It gets its own extension host. Its
   * close() closes only that page; the first workbench's close() stops the server.
   */
  async openAnotherWindow() {
    const page = await step('opening another window', () => this.page.context().newPage());
    const pageErrors = collectPageErrors(page);
    const closePage = () => page.close().catch(() => {});
    this._cleanups.push(closePage);
    await step('opening the workbench in another window', () => page.goto(`${this.server.url}/?folder=${encodeURIComponent(this.folder)}`));
    const wb = new Workbench({ page, server: this.server, endpoint: this.endpoint, folder: this.folder, pageErrors, cleanups: [closePage], userDataDir: this.userDataDir });
    await wb.ready();
    return wb;
  }

  /** Closes the page and stops code-server and the endpoint; removes the temp folder. */
  async close() {
    for (const c of this._cleanups.reverse()) await c();
    this._cleanups = [];
  }
}
