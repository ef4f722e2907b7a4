// Prompt files on the host (dist/promptFiles.js, loaded on first use): the workspace's `.github/prompts/*.prompt.md`
// and the user's prompts folder listed for the `/` picker, and one run as the reader's own message.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { fillPrompt, ignoredWords, mentionPath, missingWords, parseArguments, parsePromptFile, promptInputs, promptMentions, type PromptEditor, type PromptFile } from '../core/promptFiles';
import { ToolError } from '../core/toolPaths';
import { decodeText } from '../core/toolText';
import type { PromptCandidate } from '../shared/protocol';
import { functionName } from './externalTools';
import { builtinTools } from './lazy/builtinTools';
import type { MentionDeps } from './mentions';
import { WorkspaceGate, type ToolTarget } from './workspaceGate';

/** A prompt file's largest size read. */
const MAX_PROMPT_BYTES = 256 * 1024;
const PROMPTS_DIR = '.github/prompts';

/** A prompt file found: what it says, and the workspace folder its relative mentions are read from. */
interface Found {
  file: PromptFile;
  /** The workspace path of its folder ('' for the user's prompts folder). */
  dir: string;
  source: string;
}

function gateFor(s: MentionDeps): WorkspaceGate {
  const t = s.settings.current.tools;
  return new WorkspaceGate({ exclude: t.exclude, maxResultChars: t.maxResultChars });
}

async function promptUris(dir: vscode.Uri): Promise<vscode.Uri[]> {
  const entries = await Promise.resolve(vscode.workspace.fs.readDirectory(dir)).catch(() => []);
  return entries.filter(([n, type]) => type & vscode.FileType.File && n.toLowerCase().endsWith('.prompt.md')).map(([n]) => vscode.Uri.joinPath(dir, n)).sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * The user's prompts folder (`parley.prompts.userFolder`, `~` for the home folder): from user settings only, since a
 * workspace may not point Parley at files outside it.
 */
function userFolder(): vscode.Uri | undefined {
  const v = vscode.workspace.getConfiguration('parley').inspect<string>('prompts.userFolder')?.globalValue;
  return typeof v === 'string' && v.trim() ? vscode.Uri.file(v.trim().replace(/^~(?=$|[/\\])/, os.homedir())) : undefined;
}

/**
 * Every prompt file: the user's, then the workspace's (through the workspace gate, so an excluded one is not read); a
 * name already found is not listed again, so a repository cannot take the name of one of the user's own prompts. A
 * file that cannot be read is left out.
 */
async function findPrompts(ws: WorkspaceGate): Promise<Found[]> {
  const out: Found[] = [];
  const add = (f: Found) => !out.some((o) => o.file.name === f.file.name) && out.push(f);
  const user = userFolder();
  for (const uri of user ? await promptUris(user) : []) {
    const bytes = await Promise.resolve(vscode.workspace.fs.readFile(uri)).catch(() => undefined);
    if (bytes && bytes.length <= MAX_PROMPT_BYTES) add({ file: parsePromptFile(uri.path, decodeText(bytes)), dir: '', source: 'user' });
  }
  for (const folder of ws.folders) {
    for (const uri of await promptUris(vscode.Uri.joinPath(folder.uri, PROMPTS_DIR))) {
      const t = ws.fromUri(uri);
      const text = t && (await readChecked(ws, t).catch(() => undefined));
      if (t && text !== undefined) add({ file: parsePromptFile(uri.path, text), dir: t.shown.replace(/\/?[^/]*$/, ''), source: t.shown });
    }
  }
  return out;
}

async function readChecked(ws: WorkspaceGate, t: ToolTarget): Promise<string> {
  await ws.checkLinks(t);
  return decodeText(await ws.readBytes(t, MAX_PROMPT_BYTES));
}

/** Answers the `/` picker: every prompt file, with its description and what to type after its name. */
export async function listPrompts(s: MentionDeps): Promise<void> {
  const items: PromptCandidate[] = (await findPrompts(gateFor(s))).map(({ file, source }) => ({
    name: file.name, description: file.description, source,
    hint: file.hint || promptInputs(file.body).map((i) => (i.placeholder ? `${i.name}: ${i.placeholder}` : i.name)).join(', '),
  }));
  s.chat.channel.post({ type: 'promptCandidates', items });
}

/**
 * `${selection}` and `${file}` from the active editor, when the body uses them: only a workspace file the tools could
 * read (or an untitled one), as `@selection` is. Returns why not, instead.
 */
function editorValues(ws: WorkspaceGate, editor: vscode.TextEditor | undefined, body: string): PromptEditor | string {
  if (!/\$\{(?:selection|file)\}/.test(body)) return {};
  const doc = editor?.document;
  if (!doc) return 'it uses ${selection} or ${file}, and no editor is open.';
  const shown = doc.isUntitled ? doc.fileName : ws.fromUri(doc.uri)?.shown;
  if (shown === undefined) return `it uses \${selection} or \${file}, and "${vscode.workspace.asRelativePath(doc.uri)}" is outside the workspace or excluded by parley.tools.exclude.`;
  return { file: shown, selection: doc.getText(editor?.selection) };
}

/**
 * The files a body mentions, each checked by the workspace gate as an `@` pick is: those it allows become chips, read
 * when the question is sent (through the gate again); the words for each it refuses.
 */
async function attachMentions(s: MentionDeps, ws: WorkspaceGate, dir: string, body: string): Promise<string[]> {
  const refused: string[] = [];
  for (const mentioned of promptMentions(body)) {
    const path = mentionPath(dir, mentioned);
    try {
      if (ws.folders.length === 0) throw new ToolError('no folder is open.');
      const t = ws.target(path);
      await ws.checkLinks(t);
      if ((await ws.stat(t)).type & vscode.FileType.Directory) throw new ToolError(`"${t.shown}" is a folder.`);
      if (!s.chat.context.chips().some((c) => c.mention === 'file' && c.path === t.shown)) {
        s.chat.context.add({ id: `prompt-${Math.random().toString(36).slice(2)}`, path: t.shown, startLine: 0, endLine: 0, language: '', truncated: false, mention: 'file', code: '' });
      }
    } catch (e) {
      refused.push(e instanceof Error ? e.message : String(e));
    }
  }
  return refused;
}

/** The tool names Parley could offer now: the built-in ones, propose_edit, and those of other extensions. */
function knownTools(s: MentionDeps): Set<string> {
  const names = builtinTools().builtinTools(s.settings.current.tools).map((t) => t.definition.function.name);
  return new Set([...names, 'propose_edit', ...vscode.lm.tools.map((t) => functionName(t.name))]);
}

/**
 * Runs prompt file `/name` with the arguments typed after it: its body, filled in, is sent as the reader's message
 * (never as system text), the files it mentions attached through the workspace gate, its model and tools used. A
 * missing argument or an unusable editor sends nothing and says why in the composer; what is ignored or left out is
 * said in a notice.
 */
export async function runPrompt(s: MentionDeps, name: string, args: string): Promise<void> {
  const refuse = (why: string) => s.chat.channel.post({ type: 'composerError', text: why });
  const ws = gateFor(s);
  const found = (await findPrompts(ws)).find((f) => f.file.name === name);
  if (!found) return refuse(`No prompt file /${name}: it is looked for in ${PROMPTS_DIR} and parley.prompts.userFolder.`);
  const { file } = found;
  const editor = editorValues(ws, s.editors.current, file.body);
  if (typeof editor === 'string') return refuse(`/${name} was not sent: ${editor}`);
  const filled = fillPrompt(file.body, parseArguments(args, promptInputs(file.body)), editor);
  if ('missing' in filled) return refuse(missingWords(name, filled.missing));
  if (!filled.text.trim()) return refuse(`/${name} was not sent: its body is empty.`);
  // The files the prompt file itself mentions: not those named in the arguments or the selection filled into it.
  const refused = await attachMentions(s, ws, found.dir, file.body);
  const unknown = file.tools?.filter((t) => !knownTools(s).has(t)) ?? [];
  // In Restricted Mode a workspace's prompt file is still the reader's pick, sent as their words, but the repository
  // does not choose where (or at what price) it goes.
  const model = found.source === 'user' || vscode.workspace.isTrusted ? file.model : undefined;
  const notes = [ignoredWords(file, unknown), ...refused.map((r) => `Prompt file /${name}: not attached: ${r}`),
    file.model && !model ? `Prompt file /${name}: its model ${file.model} was not used: in Restricted Mode a workspace's prompt file does not choose the model.` : undefined].filter(Boolean);
  if (notes.length) s.chat.channel.post({ type: 'notice', text: notes.join(' ') });
  if (model) await s.chat.setModel(model, true);
  await s.chat.send(filled.text, [], file.tools);
}
