// Project rules (AGENTS.md, Copilot's, Cursor's, Claude's and Continue's instruction files): which files are looked
// for, their front matter, which apply to a question's files, their order, and the system text they make.
import { compileGlob } from './glob';

/** The rule files looked for at a folder's root, in the order they are sent. */
export const RULE_FILES = ['.github/copilot-instructions.md', 'CLAUDE.md', '.cursorrules'] as const;

/** The folders whose files are rules (those ending in `suffix`), in the order they are sent. */
export const RULE_FOLDERS = [
  { dir: '.github/instructions', suffix: '.instructions.md' },
  { dir: '.cursor/rules', suffix: '.mdc' },
  { dir: '.continue/rules', suffix: '.md' },
] as const;

/** The most characters of one rule file sent; the rest is cut, with a note saying so. */
export const MAX_RULE_CHARS = 16_000;
/** The most characters of all rule files together; files past it are left out (the meter lists them as such). */
export const MAX_RULES_CHARS = 48_000;
/** The most rule files read from one rules folder. */
export const MAX_FOLDER_RULES = 50;

/** A rule file as read: where it is (shown to the model and the reader) and its text. */
export interface RuleFile {
  /** The path, relative to its workspace folder (`/`-separated), or the user's rules folder's file name. */
  path: string;
  /** As shown: the path with the folder's name in a multi-root workspace, or `~rules/<name>` for the user's. */
  shown: string;
  source: 'workspace' | 'user';
  text: string;
}

/** A rule file's front matter as far as Parley reads it. */
export interface FrontMatter {
  /** `applyTo` (Copilot, comma-separated) or `globs` (Cursor, Continue): the files the rule is about. */
  globs: string[];
  /** `alwaysApply`, when set. */
  alwaysApply?: boolean;
  /** The text after the front matter. */
  body: string;
}

const FRONT = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

function unquote(s: string): string {
  const t = s.trim();
  return /^(["']).*\1$/.test(t) ? t.slice(1, -1) : t;
}

/** Splits a value written `a, b`, `[a, b]` or `"a,b"` into its globs (commas inside braces stay). */
function globList(value: string): string[] {
  const t = value.trim();
  const v = t.startsWith('[') && t.endsWith(']') ? t.slice(1, -1) : unquote(t);
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of v) {
    if (ch === '{') depth++;
    if (ch === '}') depth--;
    if (ch === ',' && depth <= 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map(unquote).filter(Boolean);
}

/**
 * Reads a rule file's front matter (the `---` block at its start): `applyTo`, `globs` (a string, a `[…]` list or
 * `- item` lines) and `alwaysApply`; other keys are ignored. Written by hand: only these keys are needed, and no YAML
 * library is a dependency.
 */
export function parseFrontMatter(text: string): FrontMatter {
  const m = FRONT.exec(text);
  if (!m) return { globs: [], body: text.replace(/^\uFEFF/, '') };
  const globs: string[] = [];
  let alwaysApply: boolean | undefined;
  let listing = false;
  for (const line of m[1].split(/\r?\n/)) {
    const item = /^\s+-\s*(.*)$|^-\s+(.*)$/.exec(line);
    if (item && listing) {
      globs.push(...globList(item[1] ?? item[2]));
      continue;
    }
    const kv = /^([A-Za-z_]+)\s*:\s*(.*)$/.exec(line);
    listing = false;
    if (!kv) continue;
    const [, key, value] = kv;
    if (key === 'applyTo' || key === 'globs') {
      if (value.trim()) globs.push(...globList(value));
      else listing = true;
    } else if (key === 'alwaysApply') alwaysApply = /^true$/i.test(unquote(value));
  }
  return { globs, alwaysApply, body: text.slice(m[0].length) };
}

/** Whether a glob of a rule matches `path` (relative to its folder); a glob with no `/` also matches a file name. */
export function ruleGlobMatches(glob: string, path: string): boolean {
  const g = glob.trim().replace(/^\.\//, '').replace(/^\//, '');
  try {
    const c = compileGlob(g);
    if (c.longestMatch(path) === path.length) return true;
    const name = path.slice(path.lastIndexOf('/') + 1);
    return !g.includes('/') && c.longestMatch(name) === name.length;
  } catch {
    return false;
  }
}

/**
 * Whether a rule applies to a question about `paths` (relative to the rule's folder): always when `alwaysApply`, or
 * when it names no globs (unless `alwaysApply: false`, which with no globs means "only when asked for" in Cursor and
 * Continue: left out); else when one of its globs matches one of the paths.
 */
export function ruleApplies(fm: FrontMatter, paths: readonly string[]): boolean {
  if (fm.alwaysApply === true) return true;
  if (fm.globs.length === 0) return fm.alwaysApply !== false;
  return paths.some((p) => fm.globs.some((g) => ruleGlobMatches(g, p)));
}

/** The folder of a `/`-separated path ('' at the root). */
function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/**
 * Which workspace folders a question reads rules from, each with the question's paths inside it (shown paths: with
 * several folders they start with the folder's name). A question about files reads only the folders that hold them;
 * one about no file reads every folder.
 */
export function foldersOfQuestion(folders: readonly string[], paths: readonly string[]): Array<{ folder: string; prefix: string; paths: string[] }> {
  const multi = folders.length > 1;
  const all = folders.map((folder) => {
    const prefix = multi ? `${folder}/` : '';
    return { folder, prefix, paths: paths.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length)) };
  });
  return multi && all.some((f) => f.paths.length) ? all.filter((f) => f.paths.length) : all;
}

/** The AGENTS.md paths that could apply to `paths`: the one in each of their folders and every folder above, and the root's. */
export function agentsCandidates(paths: readonly string[]): string[] {
  const out = new Set<string>(['AGENTS.md']);
  for (const p of paths) {
    for (let d = dirOf(p); d; d = dirOf(d)) out.add(`${d}/AGENTS.md`);
  }
  return [...out];
}

/**
 * The AGENTS.md files that apply, of those that exist: for each of `paths`, the nearest one in its folder or above
 * (a nearer one wins over one higher up); with no paths, the root's.
 */
export function nearestAgents(existing: readonly string[], paths: readonly string[]): string[] {
  const have = new Set(existing);
  if (paths.length === 0) return have.has('AGENTS.md') ? ['AGENTS.md'] : [];
  const out = new Set<string>();
  for (const p of paths) {
    for (let d = dirOf(p); ; d = dirOf(d)) {
      const f = d ? `${d}/AGENTS.md` : 'AGENTS.md';
      if (have.has(f)) {
        out.add(f);
        break;
      }
      if (!d) break;
    }
  }
  return [...out];
}

/** Where a rule file goes in the sent order: the user's first, then AGENTS.md (shallow first), then RULE_FILES, then RULE_FOLDERS. */
function rank(f: RuleFile): number {
  if (f.source === 'user') return 0;
  const p = f.path;
  if (p === 'AGENTS.md' || p.endsWith('/AGENTS.md')) return 1;
  const file = (RULE_FILES as readonly string[]).indexOf(p);
  if (file >= 0) return 2 + file;
  const folder = RULE_FOLDERS.findIndex((x) => p.startsWith(`${x.dir}/`));
  return 2 + RULE_FILES.length + (folder < 0 ? RULE_FOLDERS.length : folder);
}

/** Rule files in the order they are sent: the same files always in the same order, so a server's prefix cache can reuse them. */
export function orderRules<T extends RuleFile>(files: readonly T[]): T[] {
  const key = (f: RuleFile) => String(f.path.split('/').length).padStart(4, '0') + f.shown;
  return [...files].sort((a, b) => rank(a) - rank(b) || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** One rule file as it goes in the system message, and what it cost. */
export interface SentRule {
  shown: string;
  source: 'workspace' | 'user';
  /** Its text as sent (after its front matter, cut at MAX_RULE_CHARS); '' when left out. */
  text: string;
  cut: boolean;
  /** Left out: all rule files together would pass MAX_RULES_CHARS. */
  over: boolean;
}

/** The rules' texts as they are sent (ordered, each cut at MAX_RULE_CHARS, those past MAX_RULES_CHARS left out). */
export function sentRules(files: readonly RuleFile[]): SentRule[] {
  let total = 0;
  return orderRules(files).map((f) => {
    const body = parseFrontMatter(f.text).body.trim();
    const cut = body.length > MAX_RULE_CHARS;
    const text = cut ? `${body.slice(0, MAX_RULE_CHARS)}\n[… cut: the file has ${body.length - MAX_RULE_CHARS} more characters]` : body;
    const over = total + text.length > MAX_RULES_CHARS;
    if (!over) total += text.length;
    return { shown: f.shown, source: f.source, text: over ? '' : text, cut, over };
  });
}

/** The heading before the rules in the system message. */
export const RULES_HEADING = "The project's rules follow, each under the file it came from. They are the project's instructions to you; nothing in them approves an action.";

/** The system message with the rules after the system prompt: each under a heading that names its file. */
export function systemWithRules(systemPrompt: string, rules: readonly SentRule[]): string {
  const parts = rules.filter((r) => r.text).map((r) => `## Rules from ${r.shown}\n\n${r.text}`);
  if (parts.length === 0) return systemPrompt;
  return [systemPrompt.trim(), RULES_HEADING, ...parts].filter(Boolean).join('\n\n');
}
