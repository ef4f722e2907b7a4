// Project rules for a chat turn (dist/rules.js, see LAZY in esbuild.mjs): the workspace's rule files found and read
// through the workspace gate (never in Restricted Mode), asked about once per exact text, and the user's own rules folder.
import * as os from 'node:os';
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { promptDigest, promptForQuestion } from '../core/promptConsent';
import { RULE_FILES, RULE_FOLDERS, MAX_FOLDER_RULES, MAX_RULE_CHARS, agentsCandidates, foldersOfQuestion, nearestAgents, parseFrontMatter, ruleApplies, sentRules, systemWithRules, type RuleFile } from '../core/rules';
import { estimateTokens } from '../core/tokenEstimate';
import { decodeText, looksBinary } from '../core/toolText';
import type { RuleView } from '../shared/protocol';
import type { Settings } from './config';
import type { Log } from './log';
import { pickOne, showInfo, showWarning } from './notices';
import { WorkspaceGate } from './workspaceGate';

/** Answers about workspace rule files, by the SHA-256 of their folder, path and text. */
export const RULE_ANSWERS_STATE = 'parley.workspaceRules';
/** The most bytes of a rule file read (its text is cut at MAX_RULE_CHARS anyway). */
const MAX_RULE_BYTES = 256 * 1024;
/** The most characters of each rule file the question shows. */
const SHOWN_RULE_CHARS = 1500;

/** What the rules need around them. */
export interface RulesHost {
  /** The requester's questions (tests replace them): allowWorkspaceRules, when set, asks instead of askWorkspaceRules. */
  prompts: { allowWorkspaceRules?(files: Array<{ path: string; text: string }>): Promise<boolean | undefined> };
  readonly state: vscode.Memento;
  readonly log: Log;
}

/** The system message with the rules that apply, and what each cost (for the meter). */
export interface TurnRules {
  system: string;
  rules: RuleView[];
}

/** `parley.rules.*`: on unless any level turns it off (a workspace may only turn rules off); the files turned off at any level. */
function rulesSettings(): { enabled: boolean; off: Set<string>; userFolder: string } {
  const c = vscode.workspace.getConfiguration('parley.rules');
  const e = c.inspect<boolean>('enabled');
  const enabled = ![e?.globalValue, e?.workspaceValue, e?.workspaceFolderValue].includes(false);
  const o = c.inspect<unknown>('off');
  const off = new Set([o?.globalValue, o?.workspaceValue, o?.workspaceFolderValue].flatMap((v) => (Array.isArray(v) ? v.map(String) : [])));
  // The user's folder is the user's setting only: a workspace may not point Parley at files outside it.
  const folder = c.inspect<unknown>('userFolder')?.globalValue;
  return { enabled, off, userFolder: typeof folder === 'string' ? folder.trim() : '' };
}

/** The paths (as shown) of the files a question is about: its file chips and the active editor's file. */
export function questionFiles(chipPaths: readonly string[], gate: WorkspaceGate): string[] {
  const active = vscode.window.activeTextEditor?.document.uri;
  const fromEditor = active ? gate.fromUri(active)?.shown : undefined;
  return [...new Set([...chipPaths, ...(fromEditor ? [fromEditor] : [])])];
}

/** Reads one workspace file through the gate; undefined when it is missing, excluded, binary or unreadable. */
async function readRule(gate: WorkspaceGate, shown: string): Promise<string | undefined> {
  try {
    const t = gate.target(shown);
    const bytes = await gate.readBytes(t, MAX_RULE_BYTES);
    return looksBinary(bytes) ? undefined : decodeText(bytes).slice(0, MAX_RULE_CHARS * 2);
  } catch {
    return undefined;
  }
}

/** The names in a folder of the workspace (through the gate: an excluded folder lists nothing), sorted. */
async function listRuleFolder(gate: WorkspaceGate, shownDir: string, suffix: string): Promise<string[]> {
  try {
    const t = gate.target(shownDir);
    await gate.checkLinks(t);
    const entries = await vscode.workspace.fs.readDirectory(t.uri);
    return entries.filter(([n, type]) => type === vscode.FileType.File && n.endsWith(suffix)).map(([n]) => n).sort().slice(0, MAX_FOLDER_RULES);
  } catch {
    return [];
  }
}

/**
 * The rule files of one workspace folder that apply to `paths` (relative to that folder). Every candidate is read at
 * once (a chat request waits for them), then taken in the fixed order.
 */
async function folderRules(gate: WorkspaceGate, prefix: string, paths: string[]): Promise<RuleFile[]> {
  const candidates = agentsCandidates(paths);
  const pairs = (rels: readonly string[]) => Promise.all(rels.map(async (rel) => [rel, await readRule(gate, prefix + rel)] as const));
  const [agents, fixed, listed] = await Promise.all([
    pairs(candidates),
    pairs(RULE_FILES),
    Promise.all(RULE_FOLDERS.map(async ({ dir, suffix }) => pairs((await listRuleFolder(gate, prefix + dir, suffix)).map((name) => `${dir}/${name}`)))),
  ]);
  const texts = new Map([...agents, ...fixed, ...listed.flat()]);
  const found = agents.filter(([, text]) => text !== undefined).map(([rel]) => rel);
  const out: RuleFile[] = [];
  for (const rel of [...nearestAgents(found, paths), ...RULE_FILES, ...listed.flat().map(([rel]) => rel)]) {
    const text = texts.get(rel);
    if (text !== undefined && ruleApplies(parseFrontMatter(text), paths)) out.push({ path: rel, shown: prefix + rel, source: 'workspace', text });
  }
  return out;
}

/** The user's own rules: the `.md`, `.mdc` and `.instructions.md` files of parley.rules.userFolder. */
async function userRules(folder: string, paths: string[], log: Log): Promise<RuleFile[]> {
  if (!folder) return [];
  const dir = folder.startsWith('~') ? path.join(os.homedir(), folder.slice(1)) : folder;
  try {
    const names = (await fs.readdir(dir)).filter((n) => /\.(md|mdc)$/i.test(n)).sort().slice(0, MAX_FOLDER_RULES);
    const out: RuleFile[] = [];
    for (const name of names) {
      const file = path.join(dir, name);
      const stat = await fs.stat(file);
      if (!stat.isFile() || stat.size > MAX_RULE_BYTES) continue;
      const text = await fs.readFile(file, 'utf8');
      if (ruleApplies(parseFrontMatter(text), paths)) out.push({ path: name, shown: `~rules/${name}`, source: 'user', text });
    }
    return out;
  } catch (e) {
    log.warn(`Parley could not read your rules folder (parley.rules.userFolder): ${e instanceof Error ? e.message : String(e)}`);
    return [];
  }
}

/** The workspace rule files the user allowed: asks once about those not answered yet (a request the user started only). */
async function allowed(host: RulesHost, files: RuleFile[], interactive: boolean): Promise<Set<RuleFile>> {
  const state = host.state;
  const ids = await Promise.all(files.map((f) => promptDigest(`${vscode.workspace.workspaceFolders?.[0]?.uri.toString()}\n${f.shown}\n${f.text}`)));
  const answers = state.get<Record<string, boolean>>(RULE_ANSWERS_STATE, {});
  const unasked = files.filter((_, i) => !Object.prototype.hasOwnProperty.call(answers, ids[i]));
  if (unasked.length && interactive) {
    const ask = host.prompts.allowWorkspaceRules ?? askWorkspaceRules;
    const answer = await ask(unasked.map((f) => ({ path: f.shown, text: f.text })));
    if (answer !== undefined) {
      const update = { ...state.get<Record<string, boolean>>(RULE_ANSWERS_STATE, {}) };
      files.forEach((f, i) => { if (unasked.includes(f)) update[ids[i]] = answer; });
      await state.update(RULE_ANSWERS_STATE, update);
      unasked.forEach((f) => { answers[ids[files.indexOf(f)]] = answer; });
    }
  }
  return new Set(files.filter((_, i) => answers[ids[i]] === true));
}

/** Asks whether the workspace's rule files may go with requests, showing what they say. Undefined: dismissed. */
export async function askWorkspaceRules(files: Array<{ path: string; text: string }>): Promise<boolean | undefined> {
  const allow = 'Use the Rules';
  const without = 'Send Without';
  // Each file's start only (the whole question stays readable); the rest is named, to be read in the file.
  const shown = files.map((f) => `${f.path}:\n${promptForQuestion(f.text.slice(0, SHOWN_RULE_CHARS))}${f.text.length > SHOWN_RULE_CHARS ? `\n[${f.text.length - SHOWN_RULE_CHARS} more characters: read them in ${f.path}]` : ''}`).join('\n\n');
  const answer = await showWarning(
    `This workspace has rule files for AI tools (${files.map((f) => f.path).join(', ')}). Send them to the model with your questions?`,
    {
      modal: true,
      detail: `Rules go in the system message and steer the model; they never approve an action. What they say:\n\n${shown}\n\n`
        + 'Parley remembers your answer for these exact texts and asks again when one changes; parley.rules.off turns a file off.',
    },
    allow,
    without,
  );
  return answer === allow ? true : answer === without ? false : undefined;
}

/**
 * The system message for a request with the rules that apply to the question's files (`chipPaths`, as shown, and the
 * active editor's): the user's own, and in a trusted workspace the workspace's that the user allowed. In Restricted
 * Mode no workspace rule file is read at all.
 */
export async function rulesForTurn(host: RulesHost, s: Settings, chipPaths: readonly string[], interactive: boolean, conversationOff: readonly string[] = []): Promise<TurnRules> {
  const set = rulesSettings();
  if (!set.enabled) return { system: s.systemPrompt, rules: [] };
  // Turned off for this conversation: not sent, not asked about, listed so that the Rules button can turn it on again.
  const mineOff = new Set(conversationOff);
  const gate = new WorkspaceGate({ exclude: s.tools.exclude, maxResultChars: s.tools.maxResultChars });
  const files = questionFiles(chipPaths, gate);
  const found: RuleFile[] = [];
  if (vscode.workspace.isTrusted) {
    for (const { prefix, paths } of foldersOfQuestion(gate.folders.map((f) => f.name), files)) found.push(...(await folderRules(gate, prefix, paths)));
  }
  const applying = [...(await userRules(set.userFolder, files, host.log)), ...found].filter((f) => !set.off.has(f.shown));
  const on = applying.filter((f) => !mineOff.has(f.shown));
  const workspace = found.filter((f) => on.includes(f));
  const ok = await allowed(host, workspace, interactive);
  const sent = sentRules(on.filter((f) => !workspace.includes(f) || ok.has(f)));
  const rules: RuleView[] = sent.map((r) => ({ path: r.shown, tokens: r.text ? estimateTokens(r.text) : 0, ...(r.over ? { note: 'over' as const } : r.cut ? { note: 'cut' as const } : {}) }));
  for (const f of workspace) if (!ok.has(f)) rules.push({ path: f.shown, tokens: 0, note: 'not allowed' });
  for (const f of applying) if (mineOff.has(f.shown)) rules.push({ path: f.shown, tokens: 0, note: 'off' });
  return { system: systemWithRules(s.systemPrompt, sent), rules };
}

/**
 * The panel's Rules button: a quick pick of the rule files of the conversation's last question, then what to do with
 * the one picked: leave it out of (or send it again with) this conversation's requests, or turn it off for the
 * workspace (no folder open: for the user) in `parley.rules.off`, which only ever tightens. Returns the conversation's
 * new list of files turned off (`off`, changed or not), or undefined when dismissed.
 */
export async function chooseRules(views: readonly RuleView[], off: readonly string[] = []): Promise<string[] | undefined> {
  const listed = views.filter((v) => v.note !== 'not allowed');
  if (!listed.length) {
    void showInfo('No rule file applied to the last question of this conversation (parley.rules).');
    return undefined;
  }
  const file = await pickOne(listed.map((v) => ({
    label: v.path,
    description: v.note === 'off' ? 'off for this conversation' : v.note === 'over' ? 'not sent: past 48,000 characters of rules' : `${v.tokens.toLocaleString('en-US')} tokens${v.note === 'cut' ? ', cut' : ''}`,
  })), { title: 'Rules sent with this conversation', placeHolder: 'Pick a rule file to leave out or send again' });
  if (!file) return undefined;
  const isOff = off.includes(file.label);
  const here = isOff ? 'Send with this conversation again' : 'Leave out of this conversation';
  const folders = vscode.workspace.workspaceFolders !== undefined;
  const everywhere = folders ? 'Turn off for this workspace' : 'Turn off for all workspaces';
  const act = await pickOne([here, everywhere], { title: file.label });
  if (act === here) return isOff ? off.filter((p) => p !== file.label) : [...off, file.label];
  if (act !== everywhere) return undefined;
  const c = vscode.workspace.getConfiguration('parley.rules');
  const level = c.inspect<unknown>('off');
  const was = folders ? level?.workspaceValue : level?.globalValue;
  const list = Array.isArray(was) ? was.map(String) : [];
  if (!list.includes(file.label)) await c.update('off', [...list, file.label], folders ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
  return [...off];
}
