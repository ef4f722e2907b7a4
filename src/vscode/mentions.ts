// `@` mentions on the host (dist/mentions.js, loaded on first use): the picker's entries, a pick checked and made a
// chip, Add File to Chat, and each mention read when its question is sent; every file through the workspace gate.
import * as vscode from 'vscode';
import type { ContextItem } from '../core/conversation';
import { sniffImage } from '../core/images';
import { FileListCache, isImagePath, mentionLabel, rankMentionsInSlices } from '../core/mentions';
import { ToolError } from '../core/toolPaths';
import { decodeText, looksBinary } from '../core/toolText';
import { LIMITS, type MentionKind } from '../shared/protocol';
import type { ChatController, ExpandedContext } from './chatController';
import { revealChatView } from './chatView';
import type { Settings, SettingsSnapshot } from './config';
import { contextFromEditor, type EditorTracker } from './editors';
import { showInfo, showWarning } from './notices';
import { diagnosticsText } from './tools/editorTools';
import { MAX_READ_BYTES, WorkspaceGate, type ToolTarget } from './workspaceGate';

/** What the mentions use: the chat (its chips and its view), the tools' settings, and the editor. */
export interface MentionDeps {
  chat: ChatController;
  settings: SettingsSnapshot;
  editors: EditorTracker;
}

/**
 * Most files listed for the picker: a bound on the memory the kept list holds (about 100 bytes a path, so some 20 MB),
 * twice the 100,000 files of a large monorepo. Past it VS Code lists an unspecified subset.
 */
const MAX_FILES = 200_000;
/** Most entries the picker shows. */
const MAX_CANDIDATES = 50;

/**
 * The whole workspace listed once (files.exclude applied by VS Code, parley.tools.exclude here) and kept: the picker
 * ranks every file for each query, so any file is found by its path however large the workspace. A watcher marks the
 * list stale when a file comes or goes, and the next query waits for a new listing.
 */
const fileList = new FileListCache();
let watcher: vscode.Disposable | undefined;

/** Every workspace file the tools could read, as shown paths. */
async function listFiles(ws: WorkspaceGate): Promise<string[]> {
  watchFiles();
  const uris = await vscode.workspace.findFiles('**/*', undefined, MAX_FILES);
  return uris.map((u) => ws.fromUri(u)?.shown).filter((p): p is string => p !== undefined);
}

/** Marks the kept list stale when a file or folder comes or goes, or files.exclude changes; for the window's life. */
function watchFiles(): void {
  if (watcher) return;
  const w = vscode.workspace.createFileSystemWatcher('**/*', false, true, false);
  const stale = () => fileList.markStale();
  watcher = vscode.Disposable.from(w, w.onDidCreate(stale), w.onDidDelete(stale), vscode.workspace.onDidChangeWorkspaceFolders(stale),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('files.exclude') && stale()));
}

/** The newest query each chat view asked: an answer still being ranked for an older one is dropped. */
const latestQuery = new WeakMap<object, number>();
let queries = 0;
/** Files mentioned lately in this window, newest first: offered after the open editors. */
const recent: string[] = [];

function workspaceFor(settings: Settings): WorkspaceGate {
  return new WorkspaceGate({ exclude: settings.tools.exclude, maxResultChars: settings.tools.maxResultChars });
}

function newChipId(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

/** The open editors' files (the active one first), as targets the tools could read. */
function openTargets(ws: WorkspaceGate): ToolTarget[] {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  const active = vscode.window.tabGroups.activeTabGroup.activeTab;
  const ordered = active ? [active, ...tabs.filter((t) => t !== active)] : tabs;
  const seen = new Set<string>();
  const out: ToolTarget[] = [];
  for (const tab of ordered) {
    const uri = tab.input instanceof vscode.TabInputText ? tab.input.uri : undefined;
    const t = uri && ws.fromUri(uri);
    if (!t || seen.has(t.shown)) continue;
    seen.add(t.shown);
    out.push(t);
  }
  return out;
}

/**
 * Answers the picker: the special mentions and the files that match `query`, open editors and recent ones first.
 * Ranking a large workspace yields between slices; when a newer query comes meanwhile, this one is not answered.
 */
export async function searchMentions(s: MentionDeps, query: string): Promise<void> {
  const asked = ++queries;
  const view = s.chat.channel;
  latestQuery.set(view, asked);
  const dropped = () => latestQuery.get(view) !== asked;
  const ws = workspaceFor(s.settings.current);
  const key = JSON.stringify([ws.settings.exclude, ws.folders.map((f) => f.uri.toString())]);
  const files = ws.folders.length ? await fileList.get(key, () => listFiles(ws)) : [];
  const first = [...openTargets(ws).map((t) => t.shown), ...recent];
  const items = await rankMentionsInSlices(query, files, first, MAX_CANDIDATES, dropped);
  if (items) s.chat.channel.post({ type: 'mentionCandidates', query, items });
}

/** A file the reader named (picked, or from the explorer): inside the workspace, not excluded, not a folder. */
async function checkedFile(ws: WorkspaceGate, path: string): Promise<{ t: ToolTarget; stat: vscode.FileStat }> {
  const t = ws.target(path);
  await ws.checkLinks(t);
  const stat = await ws.stat(t);
  if (stat.type & vscode.FileType.Directory) throw new ToolError(`"${t.shown}" is a folder: mention the files in it.`);
  return { t, stat };
}

/**
 * A pick in the `@` picker: a file becomes a chip (read when the question is sent) or, for an image, is attached as
 * one; the others become their chip. A refused file is not attached, and the composer says why.
 */
export async function addMention(s: MentionDeps, kind: MentionKind, path?: string): Promise<string | undefined> {
  if (kind !== 'file' || path === undefined) {
    if (!s.chat.context.chips().some((c) => c.mention === kind && c.startLine === 0)) {
      s.chat.context.add({ id: newChipId(), path: mentionLabel(kind, ''), startLine: 0, endLine: 0, language: '', truncated: false, mention: kind, code: '' });
    }
    return undefined;
  }
  const ws = workspaceFor(s.settings.current);
  try {
    if (ws.folders.length === 0) throw new ToolError('No folder is open, so there are no workspace files to mention.');
    const { t, stat } = await checkedFile(ws, path);
    remember(t.shown);
    if (isImagePath(t.shown)) return await attachImage(s, ws, t, stat);
    if (stat.size > MAX_READ_BYTES) throw new ToolError(`"${t.shown}" is ${(stat.size / 1024 / 1024).toFixed(1)} MB, too large to attach (the limit is ${MAX_READ_BYTES / 1024 / 1024} MB).`);
    if (!s.chat.context.chips().some((c) => c.mention === 'file' && c.path === t.shown)) {
      s.chat.context.add({ id: newChipId(), path: t.shown, startLine: 0, endLine: 0, language: '', truncated: false, mention: 'file', code: '' });
    }
    return undefined;
  } catch (e) {
    const why = `Not attached: ${reason(e)}`;
    s.chat.channel.post({ type: 'composerError', text: why });
    return why;
  }
}

function remember(shown: string): void {
  const i = recent.indexOf(shown);
  if (i >= 0) recent.splice(i, 1);
  recent.unshift(shown);
  recent.length = Math.min(recent.length, 20);
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** An image file attached as an image (the composer's images), when the model takes images. */
async function attachImage(s: MentionDeps, ws: WorkspaceGate, t: ToolTarget, stat: vscode.FileStat): Promise<undefined> {
  const refused = await s.chat.views.imagesRefused();
  if (refused) throw new ToolError(`${refused} ${t.shown} was not attached.`);
  if (stat.size > LIMITS.imageBytes) throw new ToolError(`${t.shown} is larger than ${LIMITS.imageBytes / 1024 / 1024} MB.`);
  // The bytes the check proved are this file's: a path swapped for a link after the check is refused, not read.
  const bytes = await ws.readBytes(t, LIMITS.imageBytes);
  const mime = sniffImage(bytes);
  if (!mime) throw new ToolError(`${t.shown} is not a PNG, JPEG, GIF or WebP image.`);
  const name = t.shown.split('/').pop() ?? t.shown;
  s.chat.channel.post({ type: 'imageAttached', image: { name, dataUrl: `data:${mime};base64,${Buffer.from(bytes).toString('base64')}` } });
  return undefined;
}

/**
 * Add File to Chat (explorer context menu, several files at once): opens the panel and adds each file as a chip,
 * or attaches it as an image. Without a file, the active editor's.
 */
export async function addFilesToChat(s: MentionDeps, uri?: unknown, uris?: unknown): Promise<void> {
  const given = (Array.isArray(uris) && uris.length ? uris : [uri ?? s.editors.current?.document.uri]).filter((u): u is vscode.Uri => u instanceof vscode.Uri);
  if (given.length === 0) {
    void showInfo('Parley: pick a file in the Explorer, or open one, to add it to the chat.');
    return;
  }
  await revealChatView();
  // An image goes to the webview itself: wait until the panel is there to receive it.
  for (let i = 0; i < 100 && !s.chat.channel.attached; i++) await new Promise((r) => setTimeout(r, 50));
  const refused: string[] = [];
  for (const u of given) {
    const why = await addMention(s, 'file', u.path);
    if (why) refused.push(why);
  }
  if (refused.length) void showWarning(`Parley: ${refused.join(' ')}`);
}

/**
 * The text of a workspace file as it is now: an open editor's with unsaved changes (what the reader is looking at),
 * else the bytes read from the file the check proved it is (WorkspaceGate.readBytes), never read again by path.
 */
async function currentText(ws: WorkspaceGate, path: string): Promise<{ t: ToolTarget; text: string; language: string; lines: number }> {
  const { t, stat } = await checkedFile(ws, path);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri.toString());
  if (open?.isDirty) return { t, text: open.getText(), language: open.languageId, lines: open.lineCount };
  if (stat.size > MAX_READ_BYTES) throw new ToolError(`"${t.shown}" is ${(stat.size / 1024 / 1024).toFixed(1)} MB, too large to send (the limit is ${MAX_READ_BYTES / 1024 / 1024} MB).`);
  const bytes = await ws.readBytes(t, MAX_READ_BYTES);
  if (looksBinary(bytes)) throw new ToolError(`"${t.shown}" is a binary file; only text files (and images) can be mentioned.`);
  const text = decodeText(bytes);
  // Opened (not shown) only for the language VS Code gives the file; its text is not used.
  const doc = open ?? (await Promise.resolve(vscode.workspace.openTextDocument(t.uri)).catch(() => undefined));
  return { t, text, language: doc?.languageId ?? '', lines: text.split(/\r\n|\r|\n/).length };
}

/**
 * Reads every mention among `items` as it is now: files, the editor's selection, the current file's problems, the open
 * editors (one item per file; an open file that may not be sent is left out, and a note says so). Other items stay
 * as they are. Returns why, when one cannot be read: nothing is sent then.
 */
export async function expandMentions(items: readonly ContextItem[], settings: Settings, editor: vscode.TextEditor | undefined): Promise<ExpandedContext | string> {
  const ws = workspaceFor(settings);
  const out: ContextItem[] = [];
  const notes: string[] = [];
  for (const item of items) {
    try {
      // A file is read again each time; a selection or problems already read (put back by Edit) stay as they were.
      if (item.mention === 'file') out.push(await fileItem(ws, item, item.path));
      else if (!item.mention || item.startLine > 0) out.push(item);
      else if (item.mention === 'selection') out.push(await selectionItem(ws, item, editor, settings.maxContextChars));
      else if (item.mention === 'problems') out.push(await problemsItem(ws, item, editor, settings.maxContextChars));
      else out.push(...(await openItems(ws, item, notes)));
    } catch (e) {
      return `${mentionLabel(item.mention ?? 'file', item.path)}: ${reason(e)} Remove its chip, or fix it, and send again.`;
    }
  }
  return { items: out, notes };
}

async function fileItem(ws: WorkspaceGate, item: ContextItem, path: string): Promise<ContextItem> {
  const f = await currentText(ws, path);
  // The file's last line break is not a line of its own, and the fence adds one.
  const code = f.text.replace(/\r?\n$/, '');
  const lines = Math.max(1, code === f.text ? f.lines : f.lines - 1);
  return { ...item, id: item.mention === 'open' ? newChipId() : item.id, mention: 'file', path: f.t.shown, startLine: 1, endLine: lines, language: f.language, code };
}

/**
 * The editor's document, when the tools' rules let it be sent: an untitled one, or a workspace file not excluded and
 * not a symbolic link that leads out of its folder or to an excluded file.
 */
async function editorTarget(ws: WorkspaceGate, editor: vscode.TextEditor | undefined, what: string): Promise<{ doc: vscode.TextDocument; shown: string }> {
  if (!editor) throw new ToolError(`no editor is open for ${what}.`);
  const doc = editor.document;
  if (doc.isUntitled) return { doc, shown: doc.fileName };
  const t = ws.fromUri(doc.uri);
  if (!t) {
    const inFolder = vscode.workspace.getWorkspaceFolder(doc.uri);
    throw new ToolError(inFolder
      ? `"${vscode.workspace.asRelativePath(doc.uri)}" is excluded by parley.tools.exclude: secrets and dependencies are not sent.`
      : `"${doc.fileName}" is outside the workspace; mentions send only workspace files.`);
  }
  await ws.checkLinks(t);
  return { doc, shown: t.shown };
}

async function selectionItem(ws: WorkspaceGate, item: ContextItem, editor: vscode.TextEditor | undefined, max: number): Promise<ContextItem> {
  await editorTarget(ws, editor, 'the selection');
  const found = editor && !editor.selection.isEmpty ? contextFromEditor(editor, max, false) : undefined;
  if (!found) throw new ToolError('nothing is selected in the editor. Select some code first.');
  return { ...item, ...found.ctx, mention: 'selection' };
}

async function problemsItem(ws: WorkspaceGate, item: ContextItem, editor: vscode.TextEditor | undefined, max: number): Promise<ContextItem> {
  const { doc, shown } = await editorTarget(ws, editor, 'its problems');
  const target = { uri: doc.uri, shown } as ToolTarget;
  const code = diagnosticsText([[target, vscode.languages.getDiagnostics(doc.uri)]], shown, max);
  return { ...item, path: shown, startLine: 1, endLine: doc.lineCount, language: 'text', code, mention: 'problems' };
}

/**
 * One item per open workspace file. A file that may not be sent (a symbolic link out of the folder or to an excluded
 * file; a binary or too large one) is left out, with a note naming it and why; the others are still sent.
 */
async function openItems(ws: WorkspaceGate, item: ContextItem, notes: string[]): Promise<ContextItem[]> {
  const targets = openTargets(ws);
  if (targets.length === 0) throw new ToolError('no workspace file is open in an editor (excluded files are left out).');
  const read = await Promise.all(targets.map((t) => fileItem(ws, item, t.shown).catch((e: unknown) => {
    if (!(e instanceof ToolError)) throw e;
    return `Left out of @open: ${e.message}`;
  })));
  notes.push(...read.filter((r): r is string => typeof r === 'string'));
  const items = read.filter((r): r is ContextItem => typeof r !== 'string');
  if (items.length === 0) throw new ToolError(`no open workspace file may be sent. ${notes.join(' ')}`);
  return items;
}
