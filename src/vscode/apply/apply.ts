// Apply a code block, and the model's propose_edit tool: both reach the file through the workspace gate, open the same
// review (reviews.ts) and write nothing without the user's Accept. Loaded on first use as dist/apply.js (LAZY), with jsdiff.
import * as vscode from 'vscode';
import { looksPartial, planApply, propose, type ApplySelection, type CodeBlockInfo, type Placement, type Proposal } from '../../core/apply';
import { runsCodeReason, unsafePathReason } from '../../core/applyTargets';
import type { Conversation } from '../../core/conversation';
import type { Tool } from '../../core/tool';
import { ToolError } from '../../core/toolPaths';
import { requiredString } from '../../core/toolText';
import type { ToolDefinition } from '../../core/types';
import type { SettingsSnapshot } from '../config';
import { insertCode, type EditorTracker } from '../editors';
import type { Log } from '../log';
import { pickOne, showError, showWarning } from '../notices';
import { PATH_HELP } from '../tools/fileTools';
import { WorkspaceGate, type BuiltinToolSettings, type ToolTarget } from '../workspaceGate';
import { Reviews, type ReviewDecision } from './reviews';

export { PROPOSAL_SCHEME } from './reviews';

let reviews: Reviews | undefined;

/** The window's reviews, made on first use (they register the proposal scheme). */
function theReviews(): Reviews {
  reviews ??= new Reviews();
  return reviews;
}

/** parley.acceptProposal: applies the active (or only) review's proposal to the document, unsaved. */
export function acceptProposal(arg?: unknown): Promise<void> {
  return theReviews().accept(arg);
}

/** parley.rejectProposal: closes the review; nothing changes. */
export function rejectProposal(arg?: unknown): Promise<void> {
  return theReviews().reject(arg);
}

/** Closes every review (each counts as closed without Accept). */
export function disposeReviews(): void {
  reviews?.dispose();
  reviews = undefined;
}

/** A file to apply to: checked against the workspace rules, with its current text (an open editor's, saved or not). */
interface Current {
  target: ToolTarget;
  /** The path, relative to the folder, that the target really is (another one when a symbolic link is on the way). */
  real: string;
  text: string | undefined;
  version?: number;
}

/**
 * Resolves and checks a path (no control or bidi characters, inside the folders, not excluded, no symlink escape)
 * and reads what it holds now.
 */
async function current(path: string, settings: BuiltinToolSettings): Promise<Current> {
  const ws = new WorkspaceGate(settings);
  const unsafe = unsafePathReason(path);
  if (unsafe) throw new ToolError(unsafe);
  const target = ws.target(path);
  const real = await ws.checkLinks(target);
  const unsafeReal = unsafePathReason(target.shown) ?? unsafePathReason(real);
  if (unsafeReal) throw new ToolError(unsafeReal);
  let stat: vscode.FileStat | undefined;
  try {
    stat = await vscode.workspace.fs.stat(target.uri);
  } catch {
    stat = undefined;
  }
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.uri.toString());
  if (!stat && !open) return { target, real, text: undefined };
  if (stat && stat.type & vscode.FileType.Directory) throw new ToolError(`"${target.shown}" is a folder, not a file.`);
  const doc = open ?? (await vscode.workspace.openTextDocument(target.uri));
  return { target, real, text: doc.getText(), version: doc.version };
}

/** The review's warning when the file runs code (core/applyTargets.ts has the list), else undefined. */
function runsCodeWarning(file: Current): string | undefined {
  const linked = file.real !== file.target.relative;
  const why = runsCodeReason(file.target.relative) ?? (linked ? runsCodeReason(file.real) : undefined);
  if (!why) return undefined;
  const name = linked ? `${file.target.shown} (a symbolic link to ${file.real})` : file.target.shown;
  return `${name} can run code: ${why}. Read every line of the change before you Accept: once the file is saved (auto save may do that at once), what it says can run on this machine.`;
}

/** Computes the proposal and opens its review; resolves to the review's decision, or the reason there is none. */
async function review(file: Current, code: string, placement: Placement, settings: BuiltinToolSettings): Promise<{ decision: Promise<ReviewDecision>; uri: vscode.Uri } | string> {
  const proposal: Proposal = propose(file.text, code, placement, file.target.shown);
  if (!proposal.ok) return proposal.error;
  if (proposal.text === file.text) return `The change makes no difference to ${file.target.shown}: it already reads that way.`;
  return theReviews().show({
    target: file.target.uri,
    shown: file.target.shown,
    warning: runsCodeWarning(file),
    base: file.text,
    version: file.version,
    proposed: proposal.text,
    recompute: (text) => propose(text, code, placement, file.target.shown),
    // A symbolic link may have been made on the way since the review opened: the same checks again, before writing.
    recheck: async () => {
      const ws = new WorkspaceGate(settings);
      await ws.checkLinks(ws.target(file.target.shown));
    },
  });
}

/** What Apply uses: the open conversation (its last selection), the editor, the tools' settings and the log. */
export interface ApplyDeps {
  /** The chat; only its open conversation is read (so this bundle needs nothing of the controller's). */
  chat: { readonly current: Conversation };
  editors: EditorTracker;
  settings: SettingsSnapshot;
  log: Log;
}

/**
 * The selection the conversation last attached (Add Selection to Chat, Explain Selection, `@selection`), if any.
 * Other mentions (`@file`, `@open`, `@problems`) are not a selection: replacing them with a block would be a guess.
 */
function lastSelection(s: ApplyDeps): ApplySelection | undefined {
  const turns = s.chat.current.turns;
  for (let i = turns.length - 1; i >= 0; i--) {
    const items = turns[i].contextItems ?? [];
    for (let k = items.length - 1; k >= 0; k--) {
      const c = items[k];
      if (c.mention !== undefined && c.mention !== 'selection') continue;
      return { path: c.path, startLine: c.startLine, endLine: c.endLine, code: c.code, truncated: c.truncated };
    }
  }
  return undefined;
}

/** The active (or last) editor's file, when it is in a workspace folder. */
function activePath(s: ApplyDeps): string | undefined {
  const doc = s.editors.current?.document;
  return doc && !doc.isUntitled && vscode.workspace.getWorkspaceFolder(doc.uri) ? doc.uri.path : undefined;
}

/** Asks which workspace file the block goes to. */
async function askForFile(settings: BuiltinToolSettings): Promise<string | undefined> {
  const ws = new WorkspaceGate(settings);
  const files = await vscode.workspace.findFiles('**/*', undefined, 5000);
  const items = files.map((u) => ws.fromUri(u)).filter((t): t is ToolTarget => t !== undefined).map((t) => t.shown).sort();
  return pickOne(items, { title: 'Parley: Apply', placeHolder: 'The block names no file: which file should it change?' });
}

/**
 * The workspace files named `name` (not excluded): the one there is, the one the user picks when there are several
 * (null when the pick is dismissed), or undefined when there is none (then it is a new file at the top).
 */
async function findByName(name: string, settings: BuiltinToolSettings): Promise<string | undefined | null> {
  if (/[[\]{}*?,]/.test(name)) return undefined;
  const ws = new WorkspaceGate(settings);
  // Excluded folders (node_modules, .git…) are left out by the search itself, so they cannot crowd out the files.
  const exclude = settings.exclude.length ? `{${settings.exclude.join(',')}}` : undefined;
  const found = (await vscode.workspace.findFiles(`**/${name}`, exclude, 200)).map((u) => ws.fromUri(u)).filter((t): t is ToolTarget => t !== undefined).map((t) => t.shown).sort();
  if (found.length <= 1) return found[0];
  const top = `New file: ${name}`;
  const pick = await pickOne([...found, top], { title: 'Parley: Apply', placeHolder: `The block names ${name}: which one?` });
  return pick === top ? undefined : (pick ?? null);
}

/**
 * The Apply button of a code block: finds the target (the path the block names, the conversation's selection, the
 * active editor, else asks) and opens the review of the proposed change. Refusals and blocks that do not apply are
 * said in a message; a block that cannot be placed offers Insert at Cursor.
 */
export async function applyCodeBlock(s: ApplyDeps, block: CodeBlockInfo): Promise<void> {
  const plan = planApply(block, lastSelection(s), activePath(s));
  if (plan.error) return refuse(s, `Parley could not read the code block: ${plan.error}`);
  if (!plan.placement) {
    const insert = 'Insert at Cursor';
    const text = 'Parley cannot tell where this code goes: the block names no file, is not a diff or search/replace block, and the conversation has no selection it could replace.';
    s.log.info(`Apply: ${text}`);
    // Not awaited: the message stays until dismissed, and nothing else waits for it.
    void showWarning(text, insert).then((pick) => (pick === insert ? insertCode(s.editors, block.code) : undefined));
    return;
  }
  const settings = s.settings.current.tools;
  const path = plan.target?.path ?? (await askForFile(settings));
  if (!path) return;
  let file: Current;
  try {
    file = await current(path, settings);
    // A bare file name the block gives ("**stats.py**") that is not at the top: the workspace's file of that name.
    if (file.text === undefined && plan.target && plan.target.source !== 'selection' && plan.target.source !== 'active' && !/[/\\]/.test(path)) {
      const found = await findByName(path, settings);
      if (found === null) return;
      if (found) file = await current(found, settings);
    }
  } catch (e) {
    return refuse(s, `Parley will not apply this block: ${e instanceof Error ? e.message : String(e)}`);
  }
  let placement = plan.placement;
  if (placement.kind === 'whole' && looksPartial(file.text, block.code)) {
    // Plain code naming a longer file is likely a part of it: never guessed as the whole file. It replaces the
    // conversation's selection when that came from this file; otherwise the user chooses.
    const selection = lastSelection(s);
    if (selection && sameFile(selection.path, file.target, settings)) placement = { kind: 'selection', selection };
    else return offerPartial(s, file, block.code, settings);
  }
  await reviewOrSay(s, file, block.code, placement, settings);
}

/** Opens the review of a block, or says why it does not apply. */
async function reviewOrSay(s: ApplyDeps, file: Current, code: string, placement: Placement, settings: BuiltinToolSettings): Promise<void> {
  const opened = await review(file, code, placement, settings);
  if (typeof opened === 'string') refuse(s, `Parley could not apply the block to ${file.target.shown}: ${opened.replace(/\n/g, ' ')}`);
}

/** Whether a workspace-relative path is the target's file. */
function sameFile(path: string, target: ToolTarget, settings: BuiltinToolSettings): boolean {
  try {
    return new WorkspaceGate(settings).target(path).uri.toString() === target.uri.toString();
  } catch {
    return false;
  }
}

/**
 * A block that names a file but looks like only part of it: Parley says so and lets the user choose to review it as
 * the whole file (the review still waits for Accept) or insert it at the cursor.
 */
function offerPartial(s: ApplyDeps, file: Current, code: string, settings: BuiltinToolSettings): void {
  const whole = 'Review as Whole File';
  const insert = 'Insert at Cursor';
  const text = `This block looks like part of ${file.target.shown}, not all of it, and the conversation has no selection in that file for it to replace, so Parley cannot tell where it goes. Ask for a search/replace block or a diff, or choose:`;
  s.log.info(`Apply: ${text}`);
  void showWarning(text, whole, insert).then(async (pick) => {
    if (pick === insert) return insertCode(s.editors, code);
    if (pick === whole) await reviewOrSay(s, file, code, { kind: 'whole' }, settings);
  });
}

/** Says why Apply opened no review, in a notification and in the log. */
function refuse(s: ApplyDeps, text: string): void {
  s.log.info(`Apply: ${text}`);
  void showError(text);
}

/** The most hunks one propose_edit call may carry. */
const MAX_EDITS = 50;

/** propose_edit as the model sees it. */
const PROPOSE_EDIT: ToolDefinition = {
  type: 'function',
  function: {
    name: 'propose_edit',
    description: 'Proposes a change to one file in the workspace. The user reviews it in a diff and accepts or rejects it; the result says which. Each edit replaces a search text, which must occur exactly once in the current file, with its replacement; include enough lines to make it unique. To create a new file, give one edit with an empty search text and the whole content as the replacement.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: `The file to change or create. ${PATH_HELP}` },
        edits: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_EDITS,
          description: 'Applied in order.',
          items: {
            type: 'object',
            properties: {
              search: { type: 'string', description: 'Exact text of the current file (whole lines), found exactly once. Empty only to create a new file.' },
              replace: { type: 'string', description: 'The text that takes its place.' },
            },
            required: ['search', 'replace'],
            additionalProperties: false,
          },
        },
      },
      required: ['path', 'edits'],
      additionalProperties: false,
    },
  },
};

/**
 * The propose_edit tool: search/replace hunks for one file (an empty search text creates a new file), shown to the
 * user as a review. It is not read-only and asks the user itself: its review in the editor is the question. It waits
 * for Accept or Reject; its result says which, and comes only from that action.
 */
export function proposeEditTool(settings: BuiltinToolSettings): Tool {
  return {
    definition: PROPOSE_EDIT,
    policy: 'review',
    source: 'builtin',
    summary: (args) => (typeof args.path === 'string' ? args.path : ''),
    async run(args, signal) {
      const path = requiredString('propose_edit', args, 'path', 'the file to change, relative to the workspace');
      const hunks = editHunks(args.edits);
      const file = await current(path, settings);
      signal.throwIfAborted();
      const opened = await review(file, '', { kind: 'searchReplace', hunks }, settings);
      if (typeof opened === 'string') throw new ToolError(`${opened}\nNothing was shown to the user.`);
      const decision = await untilStopped(opened.decision, signal);
      if (decision === 'stopped') {
        await theReviews().cancel(opened.uri);
        throw signal.reason instanceof Error ? signal.reason : new Error('stopped');
      }
      return decisionText(decision, file);
    },
  };
}

/** propose_edit's "edits" argument as hunks; throws ToolError, for the model, when it is not a list of them. */
function editHunks(edits: unknown): { search: string; replace: string }[] {
  if (!Array.isArray(edits) || edits.length === 0) throw new ToolError('propose_edit needs "edits": an array of { "search": …, "replace": … } objects.');
  if (edits.length > MAX_EDITS) throw new ToolError(`propose_edit takes at most ${MAX_EDITS} edits at a time.`);
  return edits.map((e, i) => {
    const h = e as { search?: unknown; replace?: unknown } | null;
    if (typeof h !== 'object' || h === null || typeof h.search !== 'string' || typeof h.replace !== 'string') {
      throw new ToolError(`Edit ${i + 1} must be an object with string fields "search" and "replace".`);
    }
    return { search: h.search, replace: h.replace };
  });
}

/** What the review's end tells the model. */
function decisionText(decision: Exclude<ReviewDecision, 'stopped'>, file: Current): string {
  const shown = file.target.shown;
  switch (decision) {
    case 'accepted':
      return file.text === undefined
        ? `The user accepted: ${shown} is created in the editor, with the proposed content, not yet saved.`
        : `The user accepted the edit: ${shown} has it in the editor, not yet saved.`;
    case 'rejected':
      return `The user rejected the edit; ${shown} is unchanged. Do not propose it again unless the user asks.`;
    case 'closed':
      return `The user closed the review without accepting; ${shown} is unchanged.`;
  }
}

/** The decision, or 'stopped' as soon as the turn is stopped. */
function untilStopped(decision: Promise<ReviewDecision>, signal: AbortSignal): Promise<ReviewDecision> {
  if (signal.aborted) return Promise.resolve('stopped');
  return new Promise((resolve) => {
    const onAbort = () => resolve('stopped');
    signal.addEventListener('abort', onAbort, { once: true });
    void decision.then((d) => {
      signal.removeEventListener('abort', onAbort);
      resolve(d);
    });
  });
}
