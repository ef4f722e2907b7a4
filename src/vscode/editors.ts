// Editor helpers: the editor the user was last in, code taken from it as context, and untitled documents opened for code.
import * as vscode from 'vscode';
import { cutToLimit, enclosingBlock, type CodeContext } from '../core/editorPrompts';
import { Disposable } from './disposable';
import { showInfo } from './notices';

/** Follows the last text editor the user was in: the webview takes focus, so activeTextEditor is often undefined. */
export class EditorTracker extends Disposable {
  private last = vscode.window.activeTextEditor;

  constructor() {
    super();
    this._register(vscode.window.onDidChangeActiveTextEditor((e) => {
      if (e) this.last = e;
    }));
  }

  /** The active editor, else the one the user was last in (for commands run from the chat view). */
  get current(): vscode.TextEditor | undefined {
    return vscode.window.activeTextEditor ?? this.last;
  }

  /** Where Insert at Cursor goes: the active editor, the last one if still visible, or the first visible one. */
  forInsert(): vscode.TextEditor | undefined {
    if (vscode.window.activeTextEditor) return vscode.window.activeTextEditor;
    if (this.last && vscode.window.visibleTextEditors.includes(this.last)) return this.last;
    return vscode.window.visibleTextEditors[0];
  }
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
  // With several folders, led by the folder's name, as the tools and mentions show a path (and read it back).
  const path = doc.isUntitled ? doc.fileName : vscode.workspace.asRelativePath(doc.uri);
  const endLine = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return { ctx: { path, language: doc.languageId, startLine: range.start.line + 1, endLine, code, truncated }, used };
}

/** Opens an untitled document; with a file name it is offered when the user saves. */
export async function openUntitled(content: string, language: string, filename?: string): Promise<vscode.TextEditor> {
  if (!filename) {
    const doc = await vscode.workspace.openTextDocument({ content, language });
    return vscode.window.showTextDocument(doc, { preview: false });
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const uriFor = (name: string) =>
    folder ? vscode.Uri.joinPath(folder, name).with({ scheme: 'untitled' }) : vscode.Uri.from({ scheme: 'untitled', path: name });
  // An untitled document of the same name would be reused, and the code added to what it holds: take a free name.
  let uri = uriFor(filename);
  for (let n = 2; vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString()) && n < 100; n++) {
    uri = uriFor(filename.replace(/(\.[^.]*)?$/, (ext) => `-${n}${ext}`));
  }
  let doc = await vscode.workspace.openTextDocument(uri);
  if (doc.getText() !== '') doc = await vscode.workspace.openTextDocument({ content: '', language });
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  await editor.edit((e) => e.insert(new vscode.Position(0, 0), content));
  if (doc.languageId !== language) await vscode.languages.setTextDocumentLanguage(doc, language).then(undefined, () => undefined);
  return editor;
}

/** Insert at Cursor: replaces every selection of the editor the user was in with the code. */
export async function insertCode(editors: EditorTracker, code: string): Promise<void> {
  const editor = editors.forInsert();
  if (!editor) {
    void showInfo('Parley: open an editor to insert the code into.');
    return;
  }
  await editor.edit((e) => {
    for (const sel of editor.selections) e.replace(sel, code);
  });
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
}

/** Open in New Editor: a language VS Code does not know opens as plain text. */
export async function openCode(code: string, language: string): Promise<void> {
  const known = await vscode.languages.getLanguages();
  await openUntitled(code, known.includes(language) ? language : 'plaintext');
}
