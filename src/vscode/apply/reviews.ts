// The review of a proposed change: VS Code's diff editor (the file as it is, left; Parley's proposal, read-only, right)
// with Accept and Reject. Nothing is written before Accept, and Accept only edits the document: undoable, unsaved.
import * as vscode from 'vscode';
import { changedSpan, type Proposal } from '../../core/apply';
import { showError, showInfo, showWarning } from '../notices';
import { PROPOSAL_SCHEME } from './scheme';

export { PROPOSAL_SCHEME };

/** Set while a review is open: Accept and Reject are then in the Command Palette. */
const CONTEXT_KEY = 'parley.reviewingProposal';

/** How a review ended: one of the user's two actions, the diff closed without either, or the turn stopped. */
export type ReviewDecision = 'accepted' | 'rejected' | 'closed' | 'stopped';

/** What a review is opened with. */
export interface ReviewRequest {
  target: vscode.Uri;
  /** How the file is named to the user (workspace-relative). */
  shown: string;
  /** Set for a file that can run code (a task, a hook, a CI workflow…): what the review warns, in its title and a notice. */
  warning?: string;
  /** The text the proposal was computed from; undefined for a file that does not exist yet. */
  base: string | undefined;
  /** The document's version when `base` was read. */
  version?: number;
  proposed: string;
  /** Computes the proposal again from the file's current text (the user changed it after the review opened). */
  recompute(current: string): Proposal;
  /** Checks the target again just before Accept writes (inside the workspace, not excluded); throws why not. */
  recheck(): Promise<void>;
}

interface Review extends ReviewRequest {
  id: string;
  uri: vscode.Uri;
  settle(d: ReviewDecision): void;
  /** An Accept is under way: a second one (a double click) does nothing. */
  accepting?: boolean;
}

/** An open review: its proposal's URI, and the user's decision once made. */
export interface OpenReview {
  uri: vscode.Uri;
  decision: Promise<ReviewDecision>;
}

/** Every open review of the window, and the content of their proposal documents. */
export class Reviews implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly open = new Map<string, Review>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[];
  private next = 1;

  constructor() {
    this.disposables = [
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, this),
      // Closing the diff without choosing is not an Accept.
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const review = this.ofUri(diffModified(tab));
          if (review && !this.isShown(review)) review.settle('closed');
        }
      }),
    ];
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const { id, side } = parseQuery(uri);
    if (side === 'empty') return '';
    return this.open.get(id)?.proposed ?? '';
  }

  /** Opens the diff editor for a proposal. The decision comes only from Accept, Reject or closing the diff. */
  async show(r: ReviewRequest): Promise<OpenReview> {
    const id = `${Date.now().toString(36)}-${this.next++}`;
    const uri = r.target.with({ scheme: PROPOSAL_SCHEME, query: `id=${id}` });
    let settle!: (d: ReviewDecision) => void;
    const decision = new Promise<ReviewDecision>((resolve) => {
      settle = (d) => {
        if (!this.open.delete(id)) return;
        void this.updateContext();
        resolve(d);
      };
    });
    this.open.set(id, { ...r, id, uri, settle });
    await this.updateContext();
    const left = r.base === undefined ? uri.with({ query: `id=${id}&side=empty` }) : r.target;
    // The whole workspace-relative path: the file name alone could hide where the change goes. A file that can run
    // code says so first, where a narrow tab still shows it; notifications can be silenced, a title cannot.
    const name = `${r.warning ? '⚠ Runs code: ' : ''}${r.shown}`;
    const title = r.base === undefined ? `${name} (new file) ↔ Parley's proposal` : `${name} ↔ Parley's proposal`;
    try {
      await vscode.commands.executeCommand('vscode.diff', left, uri, title, { preview: false });
    } catch (e) {
      settle('closed');
      void showError(`Parley: the review of ${r.shown} could not be opened: ${e instanceof Error ? e.message : String(e)}`);
      return { uri, decision };
    }
    if (r.warning) void showWarning(`Parley: review this change with care. ${r.warning}`);
    return { uri, decision };
  }

  /**
   * Accept: checks that the file is as it was when the proposal was made (else computes the proposal again and asks
   * for another look, or says why it no longer applies), then applies one WorkspaceEdit (one undo) and leaves the
   * document unsaved. A new file is created only now.
   */
  async accept(arg?: unknown): Promise<void> {
    const review = this.pick(arg);
    if (!review || review.accepting) return;
    review.accepting = true;
    try {
      await review.recheck();
    } catch (e) {
      review.accepting = false;
      void showError(`Parley: the change to ${review.shown} was not applied: ${e instanceof Error ? e.message : String(e)} Reject it.`);
      return;
    }
    try {
      await (review.base === undefined ? this.acceptNew(review) : this.acceptEdit(review));
    } finally {
      review.accepting = false;
    }
  }

  private async acceptEdit(review: Review): Promise<void> {
    let doc: vscode.TextDocument;
    try {
      await vscode.workspace.fs.stat(review.target);
      doc = await vscode.workspace.openTextDocument(review.target);
    } catch {
      void showError(`Parley: ${review.shown} is gone (deleted or moved after the review opened), so the change was not applied. Reject it.`);
      return;
    }
    const current = doc.getText();
    if (doc.version !== review.version && current !== review.base) {
      const again = review.recompute(current);
      if (!again.ok) {
        void showError(`Parley: ${review.shown} changed after the review opened, and the proposal no longer applies. ${again.error.replace(/\n/g, ' ')} Reject it and apply the block again.`);
        return;
      }
      review.base = current;
      review.version = doc.version;
      review.proposed = again.text;
      this.changed.fire(review.uri);
      void showWarning(`Parley: ${review.shown} changed after the review opened. The proposal now applies to its current text: look at it again, then Accept.`);
      return;
    }
    const span = changedSpan(current, review.proposed);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(review.target, new vscode.Range(doc.positionAt(span.start), doc.positionAt(span.end)), span.text);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void showError(`Parley: VS Code did not apply the change to ${review.shown} (is the file read-only?). The review stays open.`);
      return;
    }
    await this.finish(review, 'accepted', doc);
  }

  private async acceptNew(review: Review): Promise<void> {
    try {
      await vscode.workspace.fs.stat(review.target);
      void showError(`Parley: ${review.shown} was created after the review opened, so the new file was not written over. Reject it and apply the block again.`);
      return;
    } catch {
      // Still missing: create it.
    }
    const edit = new vscode.WorkspaceEdit();
    edit.createFile(review.target, { ignoreIfExists: false });
    edit.insert(review.target, new vscode.Position(0, 0), review.proposed);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void showError(`Parley: VS Code did not create ${review.shown}. The review stays open.`);
      return;
    }
    await this.finish(review, 'accepted', await vscode.workspace.openTextDocument(review.target));
  }

  /** Reject: nothing is changed; the diff closes. */
  async reject(arg?: unknown): Promise<void> {
    const review = this.pick(arg);
    if (review) await this.finish(review, 'rejected');
  }

  /** Ends a review without the user (the turn was stopped): the diff closes, nothing is changed. */
  async cancel(uri: vscode.Uri): Promise<void> {
    const review = this.ofUri(uri);
    if (review) await this.finish(review, 'stopped');
  }

  private async finish(review: Review, decision: ReviewDecision, show?: vscode.TextDocument): Promise<void> {
    review.settle(decision);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => diffModified(t)?.toString() === review.uri.toString());
    if (tabs.length) await vscode.window.tabGroups.close(tabs);
    if (show) await vscode.window.showTextDocument(show, { preview: false });
  }

  /** The review a command is for: the URI the editor title passed, else the active diff, else the only one open. */
  private pick(arg: unknown): Review | undefined {
    const fromArg = arg instanceof vscode.Uri ? this.ofUri(arg) : undefined;
    const active = this.ofUri(diffModified(vscode.window.tabGroups.activeTabGroup.activeTab));
    const only = this.open.size === 1 ? [...this.open.values()][0] : undefined;
    const review = fromArg ?? active ?? only;
    if (!review) {
      void showInfo(this.open.size ? 'Parley: open the review you mean, then Accept or Reject it.' : 'Parley: there is no proposed change to review.');
    }
    return review;
  }

  private ofUri(uri: vscode.Uri | undefined): Review | undefined {
    return uri?.scheme === PROPOSAL_SCHEME ? this.open.get(parseQuery(uri).id) : undefined;
  }

  /** Whether the review's diff is still in a tab (a tab closing may leave the same diff open in another group). */
  private isShown(review: Review): boolean {
    return vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => diffModified(t)?.toString() === review.uri.toString()));
  }

  private async updateContext(): Promise<void> {
    await vscode.commands.executeCommand('setContext', CONTEXT_KEY, this.open.size > 0);
  }

  dispose(): void {
    for (const r of this.open.values()) r.settle('closed');
    for (const d of this.disposables) d.dispose();
  }
}

/** The right side of a tab that is a diff, else undefined. */
function diffModified(tab: vscode.Tab | undefined): vscode.Uri | undefined {
  return tab?.input instanceof vscode.TabInputTextDiff ? tab.input.modified : undefined;
}

function parseQuery(uri: vscode.Uri): { id: string; side?: string } {
  const q = new URLSearchParams(uri.query);
  return { id: q.get('id') ?? '', side: q.get('side') ?? undefined };
}
