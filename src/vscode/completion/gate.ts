// Which documents completions may read: the workspace gate of the tools (inside a workspace folder, not excluded, no
// symbolic link leading out), and whether a snippet is being filled in (VS Code's API does not say; see SnippetWatch).
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { excludeMatcher, isInside, relativeToFolders } from '../../core/toolPaths';
import { Disposable } from '../disposable';

/** A document completions may read, with its path as the model sees it; or why not. */
export type GateResult = { ok: true; filename: string } | { ok: false; why: string };

/**
 * The same gate as the built-in tools: an untitled document (no path, nothing on disk) may go; a file must be inside
 * a workspace folder, match no `parley.tools.exclude` glob, and (on a local disk) not be, or be inside, a symbolic
 * link that leads out of its folder or to an excluded path. Answers are kept per document until the settings change.
 */
export class DocumentGate {
  private readonly known = new Map<string, Promise<GateResult>>();

  constructor(private readonly exclude: () => readonly string[]) {}

  /** Forgets every answer (the excludes or the folders changed). */
  reset(): void {
    this.known.clear();
  }

  check(doc: vscode.TextDocument): Promise<GateResult> {
    const key = doc.uri.toString();
    let r = this.known.get(key);
    if (!r) {
      r = this.decide(doc.uri);
      this.known.set(key, r);
    }
    return r;
  }

  private async decide(uri: vscode.Uri): Promise<GateResult> {
    if (uri.scheme === 'untitled') return { ok: true, filename: uri.path };
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    const rel = folder && relativeToFolders(uri.path, [{ name: folder.name, path: folder.uri.path }]);
    if (!folder || !rel) return { ok: false, why: 'the file is outside the workspace folders' };
    const matcher = excludeMatcher(this.exclude());
    const glob = matcher.match(rel.relative);
    if (glob) return { ok: false, why: `the file is excluded by parley.tools.exclude (${glob})` };
    if (uri.scheme === 'file') {
      try {
        const [real, root] = await Promise.all([fs.realpath(uri.fsPath), fs.realpath(folder.uri.fsPath)]);
        if (!isInside(real, root)) return { ok: false, why: 'the file is a symbolic link that leads outside the workspace folder' };
        const realRel = relativeToFolders(real, [{ name: '', path: root }])?.relative ?? '';
        const realGlob = matcher.match(realRel);
        if (realGlob) return { ok: false, why: `the file leads to "${realRel}", excluded by parley.tools.exclude (${realGlob})` };
      } catch {
        // Not on disk yet (a new file being written): its path was checked above.
      }
    }
    const shown = (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? `${folder.name}/${rel.relative}` : rel.relative;
    return { ok: true, filename: shown };
  }
}

/** Text a snippet never is: nothing but spaces, or a pair of brackets or quotes an editor closes for you. */
const NOT_A_SNIPPET = /^(?:\s*|\(\)|\[\]|\{\}|""|''|``|<>)$/;

/**
 * Whether a snippet is being filled in, as far as edits show it: VS Code's API has no snippet mode, so a snippet is
 * known by what inserting one does. An insertion of more than a closing pair that leaves the cursor inside what it
 * inserted (at its first placeholder) starts one; it lasts while the cursor stays in that text (growing as it is
 * typed in) and ends when the cursor leaves it or the document changes elsewhere. (VS Code itself hides inline
 * suggestions in snippet mode: `editor.inlineSuggest.suppressInSnippetMode`; this keeps the request from being sent.)
 */
export class SnippetWatch extends Disposable {
  private pending: { doc: string; start: number; end: number } | undefined;
  private active: { doc: string; start: number; end: number } | undefined;

  constructor() {
    super();
    this._register(vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)));
    this._register(vscode.window.onDidChangeTextEditorSelection((e) => this.moved(e)));
  }

  /** Whether a snippet is being filled in at this place. */
  activeAt(doc: vscode.TextDocument, offset: number): boolean {
    const a = this.active;
    return !!a && a.doc === doc.uri.toString() && offset >= a.start && offset < a.end;
  }

  private changed(e: vscode.TextDocumentChangeEvent): void {
    if (e.contentChanges.length === 0) return;
    const doc = e.document.uri.toString();
    const a = this.active;
    if (a && a.doc === doc) {
      for (const c of e.contentChanges) {
        if (c.rangeOffset < a.start || c.rangeOffset + c.rangeLength > a.end) {
          this.active = undefined;
          break;
        }
        a.end += c.text.length - c.rangeLength;
      }
    }
    const c = e.contentChanges[0];
    this.pending = e.contentChanges.length === 1 && c.text.length > 1 && !NOT_A_SNIPPET.test(c.text) && !this.active
      ? { doc, start: c.rangeOffset, end: c.rangeOffset + c.text.length }
      : undefined;
  }

  private moved(e: vscode.TextEditorSelectionChangeEvent): void {
    const doc = e.textEditor.document;
    const at = doc.offsetAt(e.selections[0].active);
    const p = this.pending;
    this.pending = undefined;
    if (p && p.doc === doc.uri.toString() && at >= p.start && at < p.end) this.active = p;
    // The end of the inserted text is where its last tab stop ($0) puts the cursor: the snippet is done there.
    else if (this.active && (this.active.doc !== doc.uri.toString() || at < this.active.start || at >= this.active.end)) this.active = undefined;
  }
}
