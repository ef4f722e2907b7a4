// The editor commands: Explain Selection, Add Selection to Chat, Generate Code (JSON mode, opened in a new editor).
import * as vscode from 'vscode';
import { generateMessages, type CodeContext } from '../core/editorPrompts';
import { errorView } from '../core/errorView';
import { parseGenerated } from '../core/generatedCode';
import { newId } from '../core/ids';
import type { ChatController } from './chatController';
import { revealChatView } from './chatView';
import { openBudgetSettings, openSettings, type SettingsSnapshot } from './config';
import { contextFromEditor, openUntitled, type EditorTracker } from './editors';
import { setApiKey, type KeyCommandDeps } from './keyCommands';
import { askText, showError, showInfo, showProgress } from './notices';
import type { ReadyTarget, TargetProblem } from './requester';

/** What the editor commands use: the editor, the chat they ask or add to, and for Generate Code a request. */
export interface EditorCommandDeps extends KeyCommandDeps {
  editors: EditorTracker;
  settings: SettingsSnapshot;
  chat: ChatController;
}

function lineWords(ctx: CodeContext): string {
  return ctx.startLine === ctx.endLine ? `line ${ctx.startLine}` : `lines ${ctx.startLine}–${ctx.endLine}`;
}

function cutWords(ctx: CodeContext, max: number): string {
  return ctx.truncated ? ` (cut to ${max.toLocaleString('en-US')} characters)` : '';
}

/** Explain Selection: the selection, else the enclosing block or the line, explained in the chat. */
export async function explainSelection(s: EditorCommandDeps): Promise<void> {
  const editor = s.editors.current;
  if (!editor) {
    void showInfo('Parley: open a file and select the code to explain.');
    return;
  }
  const max = s.settings.current.maxContextChars;
  const found = contextFromEditor(editor, max, true);
  if (!found) {
    void showInfo('Parley: nothing to explain on an empty line. Select some code, or put the cursor in it.');
    return;
  }
  const { ctx, used } = found;
  await revealChatView();
  await s.chat.ask(
    {
      id: newId(),
      role: 'user',
      text: 'Explain this code: what it does, how it works, and anything surprising or risky.',
      note: `Explain ${used}: ${ctx.path}, ${lineWords(ctx)}${cutWords(ctx, max)}`,
      contextItems: [{ id: newId(), ...ctx }],
      status: 'done',
    },
    'explain',
  );
}

/** Add Selection to Chat: the selection becomes a chip for the next question. */
export async function addSelectionToChat(s: EditorCommandDeps): Promise<void> {
  const editor = s.editors.current;
  if (!editor || editor.selection.isEmpty) {
    void showInfo('Parley: select some code first.');
    return;
  }
  const max = s.settings.current.maxContextChars;
  const found = contextFromEditor(editor, max, false);
  if (!found) return;
  s.chat.context.add({ id: newId(), ...found.ctx });
  await revealChatView();
  if (found.ctx.truncated) void showInfo(`Parley: the selection was cut to ${max.toLocaleString('en-US')} characters.`);
}

function problemMessage(p: TargetProblem): string {
  return p.kind === 'no-key' ? `No API key is set for ${p.origin}. Run "Parley: Set API Key".` : p.error.message;
}

/** Generate Code. A description given as the command's argument (keybindings, tests) skips the input box. */
export async function generateCode(s: EditorCommandDeps, given?: unknown): Promise<void> {
  const t = await s.requester.target(undefined, true, s.chat.selection());
  if (t.kind !== 'ready') {
    const action = t.kind === 'no-key' ? 'Set API Key' : 'Open Settings';
    const a = await showError(`Parley: ${problemMessage(t)}`, action);
    if (a === 'Set API Key') await setApiKey(s);
    else if (a) await openSettings();
    return;
  }
  const editor = vscode.window.activeTextEditor;
  const max = t.settings.maxContextChars;
  const ctx = editor ? contextFromEditor(editor, max, false)?.ctx : undefined;
  const description = typeof given === 'string' ? given : await askText({
    title: 'Parley: Generate Code',
    prompt: ctx ? `Describe the code to generate. The selection (${ctx.path}, ${lineWords(ctx)}) goes along as context.` : 'Describe the code to generate.',
    placeHolder: 'A TypeScript function that parses ISO dates…',
    ignoreFocusOut: true,
  });
  if (!description?.trim()) return;
  await runGenerate(s, t, description.trim(), ctx);
}

/** Sends the Generate Code request (one AbortController, aborted by the notification's Cancel) and opens the result. */
async function runGenerate(s: EditorCommandDeps, t: ReadyTarget, description: string, ctx: CodeContext | undefined): Promise<void> {
  const outcome = await showProgress(
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
    void showInfo('Parley: code generation cancelled.');
    return;
  }
  if (r.ended === 'error' && r.error) {
    const view = errorView(r.error, { model: t.settings.model, url: t.endpoint.url });
    const words = s.log.clean([view.title, view.detail, view.hint].filter(Boolean).join(' '));
    if (r.text) await openUntitled(r.text, 'plaintext');
    const action = view.actions.includes('setApiKey') ? 'Set API Key' : view.actions.includes('openSettings') ? 'Open Settings'
      : view.actions.includes('openBudgetSettings') ? 'Open Budget Settings' : undefined;
    const a = await showError(`Parley: ${words}`, ...(action ? [action] : []));
    if (a === 'Set API Key') await setApiKey(s);
    else if (a === 'Open Settings') await openSettings();
    else if (a === 'Open Budget Settings') await openBudgetSettings();
    return;
  }
  const parsed = parseGenerated(r.text);
  if (!parsed.ok) {
    await openUntitled(r.text, 'plaintext');
    void showError(`Parley: ${parsed.reason} The raw reply is open in a new editor.`);
    return;
  }
  await openUntitled(parsed.value.code, parsed.value.language, parsed.value.filename || undefined);
}
