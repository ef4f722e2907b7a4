// One function per command, plus the host actions the chat view asks for.
import * as vscode from 'vscode';
import type { ContextItem } from '../core/conversation';
import { cutToLimit, enclosingBlock, generateMessages, parseGenerated, type CodeContext } from '../core/editorPrompts';
import { errorView } from '../core/errorView';
import { noticeText } from '../core/markdownText';
import { IMAGE_MIME_TYPES, LIMITS } from '../shared/protocol';
import { sniffImage } from '../core/images';
import { PRESETS } from '../core/presets';
import { ChatController } from './chatController';
import type { ChatViewProvider, ViewActions } from './chatView';
import { readSettings, writeUserSetting } from './config';
import type { Log } from './log';
import type { Requester, Target, TargetProblem } from './requester';
import type { ReportDocuments } from './reports';
import type { ApiKeyStore } from './secrets';
import type { UsageTracker } from './usage';
import { testConnection } from './testConnection';

export interface Services {
  chat: ChatController;
  view: ChatViewProvider;
  requester: Requester;
  keys: ApiKeyStore;
  usage: UsageTracker;
  log: Log;
  reports: ReportDocuments;
}

/** The last text editor the user was in: the webview takes focus, so activeTextEditor is often undefined. */
let lastEditor: vscode.TextEditor | undefined;

export function trackEditors(): vscode.Disposable {
  lastEditor = vscode.window.activeTextEditor;
  return vscode.window.onDidChangeActiveTextEditor((e) => {
    if (e) lastEditor = e;
  });
}

function editorForInsert(): vscode.TextEditor | undefined {
  if (vscode.window.activeTextEditor) return vscode.window.activeTextEditor;
  if (lastEditor && vscode.window.visibleTextEditors.includes(lastEditor)) return lastEditor;
  return vscode.window.visibleTextEditors[0];
}

/** Where the current settings send requests, for messages: the origin, or why there is none. */
async function originForKey(s: Services): Promise<string | undefined> {
  const t = await s.requester.target(undefined, true);
  if ('endpoint' in t) return t.endpoint.origin;
  if (t.kind === 'no-key') return t.origin;
  void vscode.window.showErrorMessage(noticeText(`Parley: ${t.error.message}`), 'Open Settings').then((a) => a && openSettings());
  return undefined;
}

function openSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', '@ext:parley.parley');
}

export async function setApiKey(s: Services): Promise<void> {
  const origin = await originForKey(s);
  if (!origin) return;
  const key = await vscode.window.showInputBox({
    title: `Parley: API key for ${origin}`,
    prompt: `The key is stored in VS Code's secret storage and sent only to ${origin}.`,
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'sk-…',
    validateInput: (v) => (/[\s]/.test(v.trim()) ? 'A key has no spaces or line breaks.' : undefined),
  });
  if (key === undefined) return;
  const trimmed = key.trim();
  if (!trimmed) {
    void vscode.window.showWarningMessage('Parley: no key entered; nothing was stored.');
    return;
  }
  await s.keys.set(origin, trimmed);
  s.log.info(`API key stored for ${origin}.`);
  void vscode.window.showInformationMessage(`Parley: API key stored for ${origin}.`);
}

export async function clearApiKey(s: Services): Promise<void> {
  const origins = s.keys.origins();
  if (origins.length === 0) {
    void vscode.window.showInformationMessage('Parley: no API keys are stored.');
    return;
  }
  const all = 'All stored keys';
  const pick = await vscode.window.showQuickPick([...origins, all], { title: 'Parley: Clear API Key', placeHolder: 'Which endpoint’s key?' });
  if (!pick) return;
  for (const o of pick === all ? origins : [pick]) await s.keys.delete(o);
  s.log.info(`API key removed for ${pick === all ? 'all origins' : pick}.`);
  void vscode.window.showInformationMessage(`Parley: removed ${pick === all ? 'all stored keys' : `the key for ${pick}`}.`);
}

async function markNoKey(s: Services): Promise<void> {
  const origin = await originForKey(s);
  if (!origin) return;
  await s.keys.markNoKeyNeeded(origin);
  s.log.info(`${origin} marked as needing no API key.`);
}

/** The selection (or, without one, the enclosing block or the line) as context, cut to the limit. */
export function contextFromEditor(editor: vscode.TextEditor, maxChars: number, fallback: boolean): { ctx: CodeContext; used: string } | undefined {
  const doc = editor.document;
  let range: vscode.Range = editor.selection;
  let used = 'the selection';
  if (editor.selection.isEmpty) {
    if (!fallback) return undefined;
    const lines = doc.getText().split(/\r?\n/);
    const line = editor.selection.active.line;
    const block = enclosingBlock(lines, line);
    if (block) {
      range = new vscode.Range(block.start, 0, block.end, doc.lineAt(block.end).text.length);
      used = 'the enclosing block';
    } else {
      range = doc.lineAt(line).range;
      used = 'the current line';
      if (doc.lineAt(line).isEmptyOrWhitespace) return undefined;
    }
  }
  const { code, truncated } = cutToLimit(doc.getText(range), maxChars);
  const path = doc.isUntitled ? doc.fileName : vscode.workspace.asRelativePath(doc.uri, false);
  const endLine = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return { ctx: { path, language: doc.languageId, startLine: range.start.line + 1, endLine, code, truncated }, used };
}

function lineWords(ctx: CodeContext): string {
  return ctx.startLine === ctx.endLine ? `line ${ctx.startLine}` : `lines ${ctx.startLine}–${ctx.endLine}`;
}

function cutWords(ctx: CodeContext, max: number): string {
  return ctx.truncated ? ` (cut to ${max.toLocaleString('en-US')} characters)` : '';
}

export async function explainSelection(s: Services): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? lastEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Parley: open a file and select the code to explain.');
    return;
  }
  const max = readSettings().maxContextChars;
  const found = contextFromEditor(editor, max, true);
  if (!found) {
    void vscode.window.showInformationMessage('Parley: nothing to explain on an empty line. Select some code, or put the cursor in it.');
    return;
  }
  const { ctx, used } = found;
  const item: ContextItem = { id: ChatController.newId(), ...ctx };
  await s.view.reveal();
  await s.chat.ask(
    {
      id: ChatController.newId(),
      role: 'user',
      text: 'Explain this code: what it does, how it works, and anything surprising or risky.',
      note: `Explain ${used}: ${ctx.path}, ${lineWords(ctx)}${cutWords(ctx, max)}`,
      contextItems: [item],
      status: 'done',
    },
    'explain',
  );
}

export async function addSelectionToChat(s: Services): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? lastEditor;
  if (!editor || editor.selection.isEmpty) {
    void vscode.window.showInformationMessage('Parley: select some code first.');
    return;
  }
  const max = readSettings().maxContextChars;
  const found = contextFromEditor(editor, max, false);
  if (!found) return;
  s.chat.addContext({ id: ChatController.newId(), ...found.ctx });
  await s.view.reveal();
  if (found.ctx.truncated) void vscode.window.showInformationMessage(`Parley: the selection was cut to ${max.toLocaleString('en-US')} characters.`);
}

function problemMessage(p: TargetProblem): string {
  return p.kind === 'no-key' ? `No API key is set for ${p.origin}. Run "Parley: Set API Key".` : p.error.message;
}

/** Opens an untitled document; with a file name it is offered when the user saves. */
async function openUntitled(content: string, language: string, filename?: string): Promise<vscode.TextEditor> {
  let doc: vscode.TextDocument;
  if (filename) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uriFor = (name: string) =>
      folder ? vscode.Uri.joinPath(folder, name).with({ scheme: 'untitled' }) : vscode.Uri.from({ scheme: 'untitled', path: name });
    // An untitled document of the same name would be reused, and the code added to what it holds: take a free name.
    let uri = uriFor(filename);
    for (let n = 2; vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString()) && n < 100; n++) {
      uri = uriFor(filename.replace(/(\.[^.]*)?$/, (ext) => `-${n}${ext}`));
    }
    doc = await vscode.workspace.openTextDocument(uri);
    if (doc.getText() !== '') doc = await vscode.workspace.openTextDocument({ content: '', language });
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    await editor.edit((e) => e.insert(new vscode.Position(0, 0), content));
    if (doc.languageId !== language) await vscode.languages.setTextDocumentLanguage(doc, language).then(undefined, () => undefined);
    return editor;
  }
  doc = await vscode.workspace.openTextDocument({ content, language });
  return vscode.window.showTextDocument(doc, { preview: false });
}

/** Generate Code. A description given as the command's argument (keybindings, tests) skips the input box. */
export async function generateCode(s: Services, given?: unknown): Promise<void> {
  const t = await s.requester.target(undefined, true);
  if (!('endpoint' in t)) {
    const action = t.kind === 'no-key' ? 'Set API Key' : 'Open Settings';
    const a = await vscode.window.showErrorMessage(noticeText(`Parley: ${problemMessage(t)}`), action);
    if (a === 'Set API Key') await setApiKey(s);
    else if (a) await openSettings();
    return;
  }
  const editor = vscode.window.activeTextEditor;
  const max = t.settings.maxContextChars;
  const ctx = editor ? contextFromEditor(editor, max, false)?.ctx : undefined;
  const description = typeof given === 'string' ? given : await vscode.window.showInputBox({
    title: 'Parley: Generate Code',
    prompt: ctx ? `Describe the code to generate. The selection (${ctx.path}, ${lineWords(ctx)}) goes along as context.` : 'Describe the code to generate.',
    placeHolder: 'A TypeScript function that parses ISO dates…',
    ignoreFocusOut: true,
  });
  if (!description?.trim()) return;
  await runGenerate(s, t, description.trim(), ctx);
}

async function runGenerate(s: Services, t: Target, description: string, ctx: CodeContext | undefined): Promise<void> {
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Parley: generating code with ${t.settings.model}…`, cancellable: true },
    async (_progress, token) => {
      const abort = new AbortController();
      const sub = token.onCancellationRequested(() => abort.abort());
      try {
        return await s.requester.run(t, {
          messages: generateMessages(description, ctx),
          source: 'generate',
          stream: false,
          responseFormat: { type: 'json_object' },
          signal: abort.signal,
        });
      } finally {
        sub.dispose();
      }
    },
  );
  const r = outcome.result;
  if (r.ended === 'cancelled') {
    void vscode.window.showInformationMessage('Parley: code generation cancelled.');
    return;
  }
  if (r.ended === 'error' && r.error) {
    const view = errorView(r.error, { model: t.settings.model, url: t.endpoint.url });
    const words = s.log.clean([view.title, view.detail, view.hint].filter(Boolean).join(' '));
    if (r.text) await openUntitled(r.text, 'plaintext');
    const action = view.actions.includes('setApiKey') ? 'Set API Key' : view.actions.includes('openSettings') ? 'Open Settings' : undefined;
    const a = await vscode.window.showErrorMessage(noticeText(`Parley: ${words}`), ...(action ? [action] : []));
    if (a === 'Set API Key') await setApiKey(s);
    else if (a === 'Open Settings') await openSettings();
    return;
  }
  const parsed = parseGenerated(r.text);
  if (!parsed.ok) {
    await openUntitled(r.text, 'plaintext');
    void vscode.window.showErrorMessage(`Parley: ${parsed.reason} The raw reply is open in a new editor.`);
    return;
  }
  await openUntitled(parsed.value.code, parsed.value.language, parsed.value.filename || undefined);
}

export async function exportChat(s: Services): Promise<void> {
  if (s.chat.current.turns.length === 0) {
    void vscode.window.showInformationMessage('Parley: the chat is empty; nothing to export.');
    return;
  }
  await openUntitled(s.chat.markdown(await s.keys.storedKeys()), 'markdown');
}

export async function showHistory(s: Services): Promise<void> {
  const items = await s.chat.historyItems();
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Parley: no saved conversations yet.');
    return;
  }
  const pick = await vscode.window.showQuickPick(
    items.map((i) => ({ label: i.title, description: new Date(i.updatedAt).toLocaleString(), detail: `${i.turnCount} messages`, id: i.id })),
    { title: 'Parley: Chat History', matchOnDescription: true },
  );
  if (!pick) return;
  await s.view.reveal();
  await s.chat.openConversation(pick.id);
}

export async function selectModel(s: Services): Promise<void> {
  const models = await s.chat.refreshModels(true);
  const current = readSettings().model;
  let model: string | undefined;
  if (models.length > 0) {
    const other = 'Type a model name…';
    const pick = await vscode.window.showQuickPick([...models.map((m) => ({ label: m, description: m === current ? 'current' : undefined })), { label: other }], {
      title: 'Parley: Select Model',
    });
    if (!pick) return;
    model = pick.label === other ? undefined : pick.label;
  }
  model ??= await vscode.window.showInputBox({ title: 'Parley: Model', value: current, prompt: 'The model name sent as "model".' });
  if (model === undefined) return;
  await setModel(s, model);
}

export async function setModel(s: Services, model: string): Promise<void> {
  const m = model.trim();
  if (!m || /[\s]/.test(m)) {
    void vscode.window.showErrorMessage('Parley: a model name cannot be empty or contain spaces or line breaks.');
    return;
  }
  await writeUserSetting('model', m);
}

async function applyPreset(s: Services, id: string): Promise<void> {
  const p = PRESETS.find((x) => x.id === id);
  if (!p) return;
  if (p.id === 'custom') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'parley.baseUrl');
    return;
  }
  await writeUserSetting('baseUrl', p.baseUrl);
  await writeUserSetting('model', p.model);
  const t = await s.requester.target();
  if ('kind' in t && t.kind === 'no-key' && p.needsKey) await setApiKey(s);
}

async function pickImage(s: Services): Promise<void> {
  const uris = await vscode.window.showOpenDialog({
    canSelectMany: true,
    openLabel: 'Attach',
    filters: { Images: ['png', 'jpg', 'jpeg', 'gif', 'webp'] },
  });
  for (const uri of uris ?? []) {
    const name = uri.path.split('/').pop() ?? 'image';
    // Size first: a huge file is refused without being read.
    if ((await vscode.workspace.fs.stat(uri)).size > LIMITS.imageBytes) {
      s.chat.composerError(`${name} is larger than ${LIMITS.imageBytes / 1024 / 1024} MB; it was not attached.`);
      continue;
    }
    const bytes = await vscode.workspace.fs.readFile(uri);
    const mime = sniffImage(bytes);
    if (!mime || !(IMAGE_MIME_TYPES as readonly string[]).includes(mime)) {
      s.chat.composerError(`${name} is not a PNG, JPEG, GIF or WebP image; it was not attached.`);
      continue;
    }
    s.chat.attachImage({ name, dataUrl: `data:${mime};base64,${Buffer.from(bytes).toString('base64')}` });
  }
}

/** The host actions behind the webview's buttons. */
export function viewActions(s: Services): ViewActions {
  return {
    async run(action) {
      switch (action) {
        case 'setApiKey':
          return setApiKey(s);
        case 'markNoKey':
          return markNoKey(s);
        case 'openSettings':
          await openSettings();
          return;
        case 'testConnection':
          return testConnection(s.requester, s.log, s.reports);
        case 'showLog':
          s.log.show();
          return;
        case 'pickModel':
          return selectModel(s);
        case 'pickImage':
          return pickImage(s);
      }
    },
    applyPreset: (id) => applyPreset(s, id),
    setModel: (model) => setModel(s, model),
    async insertCode(code) {
      const editor = editorForInsert();
      if (!editor) {
        void vscode.window.showInformationMessage('Parley: open an editor to insert the code into.');
        return;
      }
      await editor.edit((e) => {
        for (const sel of editor.selections) e.replace(sel, code);
      });
      await vscode.window.showTextDocument(editor.document, editor.viewColumn);
    },
    async openCode(code, language) {
      const known = await vscode.languages.getLanguages();
      await openUntitled(code, known.includes(language) ? language : 'plaintext');
    },
  };
}

/** Registers every command. */
export function registerCommands(s: Services): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => vscode.commands.registerCommand(id, fn);
  return [
    trackEditors(),
    reg('parley.openChat', () => s.view.reveal()),
    reg('parley.newChat', async () => {
      await s.view.reveal();
      await s.chat.newChat();
    }),
    reg('parley.cancel', () => s.chat.stop()),
    reg('parley.exportChat', () => exportChat(s)),
    reg('parley.showHistory', () => showHistory(s)),
    reg('parley.setApiKey', () => setApiKey(s)),
    reg('parley.clearApiKey', () => clearApiKey(s)),
    reg('parley.addSelectionToChat', () => addSelectionToChat(s)),
    reg('parley.explainSelection', () => explainSelection(s)),
    reg('parley.generateCode', (description) => generateCode(s, description)),
    reg('parley.showUsage', () => s.usage.showReport(s.reports)),
    reg('parley.resetUsage', () =>
      s.usage.reset(async () => {
        const yes = 'Reset';
        return (await vscode.window.showWarningMessage('Reset all Parley usage totals?', { modal: true }, yes)) === yes;
      }),
    ),
    reg('parley.testConnection', () => testConnection(s.requester, s.log, s.reports)),
    reg('parley.resetAdaptations', async () => {
      await s.requester.resetAdaptations();
      s.log.info('Endpoint adaptations forgotten.');
      void vscode.window.showInformationMessage('Parley: forgot what it learnt about endpoints; the next request sends every parameter again.');
    }),
    reg('parley.resetWorkspaceOrigins', async () => {
      const n = await s.requester.resetWorkspaceOrigins();
      s.log.info(`Forgot ${n} answer(s) about workspace-set endpoints.`);
      void vscode.window.showInformationMessage(n
        ? `Parley: forgot ${n} answer${n === 1 ? '' : 's'} about workspace endpoints; Parley asks again before using one.`
        : 'Parley: there were no answers about workspace endpoints to forget.');
      await s.chat.endpointChanged();
    }),
    reg('parley.selectModel', () => selectModel(s)),
    reg('parley.showLog', () => s.log.show()),
  ];
}
