// The one place Parley calls VS Code's notifications, dialogs, quick picks, input boxes, progress and status bar
// (eslint.config.mjs refuses those calls elsewhere): each string is made inert here for the way VS Code draws it.
import * as vscode from 'vscode';
import { iconFreeText, noticeText, promptText } from '../core/markdownText';

/** One string handed to VS Code here, as handed, and how VS Code draws it. */
export interface ShownText {
  surface: 'notice' | 'prompt' | 'label' | 'plain';
  text: string;
}

// On globalThis: the bundles loaded on first use (dist/apply.js, dist/mentions.js…) each carry a copy of this module.
const RECORD = Symbol.for('parley.shownTexts');

/** Tests only (extension.ts, in VS Code's test mode): every string shown from now on is also pushed to `into`. */
export function recordShownTexts(into: ShownText[]): void {
  (globalThis as Record<symbol, unknown>)[RECORD] = into;
}

function shown(surface: ShownText['surface'], text: string): string {
  const into = (globalThis as Record<symbol, unknown>)[RECORD] as ShownText[] | undefined;
  if (into) {
    into.push({ surface, text });
    if (into.length > 200) into.splice(0, into.length - 200);
  }
  return text;
}

// How VS Code draws each (read in its source, src/vs/…): a notification's message, a modal's message and detail and
// a progress notification's title and message find `[label](command:…)` links (parseLinkedText; a modal draws plain
// text, but takes the same call); a quick input's prompt and validation message draw links and `$(icon)`s
// (renderQuickInputDescription); quick pick items and status bar text draw `$(icon)`s only (renderLabelWithIcons); a
// quick input's title (textContent), its placeholder (an attribute) and a file dialog's labels are plain text.
const notice = (s: string) => shown('notice', noticeText(s));
const prompt = (s: string) => shown('prompt', promptText(s));
const label = (s: string) => shown('label', iconFreeText(s));
const plain = (s: string) => shown('plain', s);
const maybe = <T>(s: string | undefined, f: (s: string) => T) => (s === undefined ? undefined : f(s));

/** A message's optional MessageOptions (modal, detail), then its buttons. */
export type MessageArgs = [options: vscode.MessageOptions, ...buttons: string[]] | string[];

async function message(severity: 'error' | 'warning' | 'info', text: string, args: MessageArgs): Promise<string | undefined> {
  const options = typeof args[0] === 'object' ? args[0] : undefined;
  const buttons = (options ? args.slice(1) : args) as string[];
  const drawn = buttons.map(notice);
  const o: vscode.MessageOptions = { ...options, detail: maybe(options?.detail, notice) };
  const m = notice(text);
  const picked = await (severity === 'error'
    ? vscode.window.showErrorMessage(m, o, ...drawn)
    : severity === 'warning' ? vscode.window.showWarningMessage(m, o, ...drawn) : vscode.window.showInformationMessage(m, o, ...drawn));
  return picked === undefined ? undefined : buttons[drawn.indexOf(picked)];
}

/** vscode.window.showErrorMessage: resolves to the button picked (as given), or undefined. */
export function showError(text: string, ...args: MessageArgs): Promise<string | undefined> {
  return message('error', text, args);
}

/** vscode.window.showWarningMessage (a modal one with `{ modal: true }`). */
export function showWarning(text: string, ...args: MessageArgs): Promise<string | undefined> {
  return message('warning', text, args);
}

/** vscode.window.showInformationMessage. */
export function showInfo(text: string, ...args: MessageArgs): Promise<string | undefined> {
  return message('info', text, args);
}

/** The options of a quick pick that Parley uses: title and placeholder are drawn as plain text. */
export type PickOptions = Pick<vscode.QuickPickOptions, 'title' | 'placeHolder' | 'matchOnDescription' | 'matchOnDetail' | 'ignoreFocusOut'>;

/** The items as drawn (a string item as an item with that label); the one picked is found by its place. */
function pickItems(items: ReadonlyArray<string | vscode.QuickPickItem>): vscode.QuickPickItem[] {
  return items.map((item) => (typeof item === 'string'
    ? { label: label(item) }
    : { ...item, label: label(item.label), description: maybe(item.description, label), detail: maybe(item.detail, label) }));
}

function pickOptions(options: PickOptions): PickOptions {
  return { ...options, title: maybe(options.title, plain), placeHolder: maybe(options.placeHolder, plain) };
}

/** vscode.window.showQuickPick, one item: resolves to the item picked (as given), or undefined. */
export async function pickOne<T extends string | vscode.QuickPickItem>(items: readonly T[], options: PickOptions): Promise<T | undefined> {
  const drawn = pickItems(items);
  const picked = await vscode.window.showQuickPick(drawn, { ...pickOptions(options), canPickMany: false });
  return picked === undefined ? undefined : items[drawn.indexOf(picked)];
}

/** vscode.window.showQuickPick with canPickMany: the items ticked (as given), or undefined when dismissed. */
export async function pickMany<T extends vscode.QuickPickItem>(items: readonly T[], options: PickOptions): Promise<T[] | undefined> {
  const drawn = pickItems(items);
  const picked = await vscode.window.showQuickPick(drawn, { ...pickOptions(options), canPickMany: true });
  return picked?.map((p) => items[drawn.indexOf(p)]);
}

/**
 * vscode.window.showInputBox. The prompt and what validateInput returns are drawn with links and icons; the value is
 * the user's own text to edit, passed as it is.
 */
export async function askText(options: vscode.InputBoxOptions): Promise<string | undefined> {
  const validate = options.validateInput;
  return vscode.window.showInputBox({
    ...options,
    title: maybe(options.title, plain),
    placeHolder: maybe(options.placeHolder, plain),
    prompt: maybe(options.prompt, prompt),
    validateInput: validate && (async (value) => {
      const r = await validate(value);
      if (r === undefined || r === null) return r;
      return typeof r === 'string' ? prompt(r) : { ...r, message: prompt(r.message) };
    }),
  });
}

/** vscode.window.showOpenDialog; its title and button label are drawn as plain text. */
export async function pickFiles(options: vscode.OpenDialogOptions): Promise<vscode.Uri[] | undefined> {
  return vscode.window.showOpenDialog({ ...options, title: maybe(options.title, plain), openLabel: maybe(options.openLabel, plain) });
}

/** What a progress task reports. */
export type ProgressStep = { message?: string; increment?: number };

/**
 * vscode.window.withProgress. In a notification the title and each message are a notification's text; elsewhere
 * (the status bar) VS Code shows a link's label and draws icons, so both are made inert.
 */
export async function showProgress<R>(
  options: vscode.ProgressOptions,
  task: (progress: vscode.Progress<ProgressStep>, token: vscode.CancellationToken) => Thenable<R>,
): Promise<R> {
  const inert = options.location === vscode.ProgressLocation.Notification ? notice : prompt;
  return vscode.window.withProgress({ ...options, title: maybe(options.title, inert) }, (progress, token) =>
    task({ report: (step) => progress.report({ ...step, message: maybe(step.message, inert) }) }, token));
}

/**
 * A status bar item whose text is one of Parley's icons and words drawn as written, and whose tooltip is Markdown
 * that is never trusted (no command links, no HTML).
 */
export class StatusEntry implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(id: string, alignment: vscode.StatusBarAlignment, priority: number, name: string, command: string) {
    this.item = vscode.window.createStatusBarItem(id, alignment, priority);
    this.item.name = name;
    this.item.command = command;
  }

  /** What the status bar shows now (tests read what a person sees). */
  get text(): string {
    return this.item.text;
  }

  /** What a screen reader says for it. */
  get accessibilityInformation(): vscode.AccessibilityInformation | undefined {
    return this.item.accessibilityInformation;
  }

  /** The tooltip's Markdown source (tests read what a person sees). */
  get tooltip(): string | undefined {
    const t = this.item.tooltip;
    return typeof t === 'string' ? t : t?.value;
  }

  /** Whether the item has the warning colour. */
  get warning(): boolean {
    return this.item.backgroundColor !== undefined;
  }

  /** Shows `$(icon) words`, with a Markdown tooltip and a screen-reader label; `warning`: in the theme's warning colour. */
  show(icon: string, words: string, tooltipMarkdown: string, accessibleLabel: string, warning = false): void {
    this.item.text = `$(${icon}) ${label(words)}`;
    this.item.backgroundColor = warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    const md = new vscode.MarkdownString(tooltipMarkdown);
    md.isTrusted = false;
    md.supportHtml = false;
    this.item.tooltip = md;
    this.item.accessibilityInformation = { label: accessibleLabel, role: 'button' };
    this.item.show();
  }

  hide(): void {
    this.item.hide();
  }

  dispose(): void {
    this.item.dispose();
  }
}
