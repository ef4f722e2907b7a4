// Apply a code block to a file, deterministically: which file (the path the block names, the selection's file, the
// active editor), which form (whole file, search/replace hunks, unified diff, a replacement of the selection), and
// the proposed text computed from the file's current text, keeping its line endings and final newline.
import { applyPatch, parsePatch } from 'diff';

/** What the panel sends for a code block: its code, its fence's info string, and the line before the block. */
export interface CodeBlockInfo {
  code: string;
  info: string;
  before: string;
}

/** Code the conversation attached from an editor (the last Add Selection / Explain Selection): its file and lines. */
export interface ApplySelection {
  /** Workspace-relative path. */
  path: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  code: string;
  truncated: boolean;
}

/** One search/replace hunk: `search` must be found exactly once and becomes `replace`. */
export interface SearchReplaceHunk {
  search: string;
  replace: string;
}

/** How a block's code becomes the proposed text. */
export type Placement =
  | { kind: 'whole' }
  | { kind: 'searchReplace'; hunks: SearchReplaceHunk[] }
  | { kind: 'diff'; patch: string }
  | { kind: 'selection'; selection: ApplySelection };

/** Where the target came from, for the review's title and the messages. */
export type TargetSource = 'info' | 'block' | 'line' | 'selection' | 'active';

/** The plan for one Apply: the target path (undefined: ask the user) and the placement (undefined: cannot place). */
export interface ApplyPlan {
  target?: { path: string; source: TargetSource };
  placement?: Placement;
  /** The code block's form could not be read (a broken search/replace block): what is wrong, for the user. */
  error?: string;
}

/** The proposed text, or why there is none (for a person, and for the model through propose_edit). */
export type Proposal = { ok: true; text: string } | { ok: false; error: string };

const SEARCH_LINE = /^\s*<{5,9}\s*SEARCH\s*$/i;
const DIVIDER_LINE = /^\s*={5,9}\s*$/;
const REPLACE_LINE = /^\s*>{5,9}\s*REPLACE\s*$/i;
const DIFF_START = /^(diff --git |--- |Index: |@@(\s|$))/m;

/** The block's form: search/replace hunks, a unified diff, or plain code. */
export function blockForm(code: string): 'searchReplace' | 'diff' | 'plain' {
  const lines = code.split(/\r?\n/);
  if (lines.some((l) => SEARCH_LINE.test(l))) return 'searchReplace';
  const first = lines.find((l) => l.trim() !== '') ?? '';
  if (DIFF_START.test(first) && lines.some((l) => /^@@(\s|$)/.test(l))) return 'diff';
  return 'plain';
}

/**
 * The hunks of a search/replace block (`<<<<<<< SEARCH`, the old text, `=======`, the new text, `>>>>>>> REPLACE`;
 * 5 to 9 markers). The line break before a marker belongs to the marker. Also returns a path written on its own line
 * before the first hunk (as some models do). A string is what is wrong with the block.
 */
export function parseSearchReplace(code: string): { hunks: SearchReplaceHunk[]; path?: string } | string {
  const lines = code.replace(/\r\n/g, '\n').split('\n');
  const hunks: SearchReplaceHunk[] = [];
  const outside: string[] = [];
  let i = 0;
  while (i < lines.length) {
    if (!SEARCH_LINE.test(lines[i])) {
      if (hunks.length === 0 && lines[i].trim()) outside.push(lines[i].trim());
      i++;
      continue;
    }
    const n = hunks.length + 1;
    const search: string[] = [];
    for (i++; i < lines.length && !DIVIDER_LINE.test(lines[i]); i++) search.push(lines[i]);
    if (i >= lines.length) return `Hunk ${n} has no "=======" line after its search text.`;
    const replace: string[] = [];
    for (i++; i < lines.length && !REPLACE_LINE.test(lines[i]); i++) {
      if (SEARCH_LINE.test(lines[i]) || DIVIDER_LINE.test(lines[i])) return `Hunk ${n} has no ">>>>>>> REPLACE" line after its replacement.`;
      replace.push(lines[i]);
    }
    if (i >= lines.length) return `Hunk ${n} has no ">>>>>>> REPLACE" line after its replacement.`;
    hunks.push({ search: search.join('\n'), replace: replace.join('\n') });
    i++;
  }
  if (hunks.length === 0) return 'The block has no "<<<<<<< SEARCH" hunk.';
  const path = outside.length === 1 ? pathCandidate(outside[0].replace(/^[#/*\s]+/, ''), true) : undefined;
  return path ? { hunks, path } : { hunks };
}

const EXT_PATH = /^(?:[\w.@~$-]+[/\\])*(?:\.[\w-]+|[\w@~$-][\w.@~$-]*\.[A-Za-z][\w-]{0,11})$/;
const DIR_PATH = /^(?:[\w.@~$-]+[/\\])+\.?[\w@~$-][\w.@~$-]*$/;
const BARE_NAMES = /^(?:Dockerfile|Makefile|Containerfile|Justfile|Procfile|Gemfile|Rakefile|Jenkinsfile)$/;

/** `s` when it looks like a file path. Loose: also `name.ext` or a dotfile alone, and bare names such as Dockerfile. */
function pathCandidate(s: string, loose: boolean): string | undefined {
  const p = s.trim().replace(/^['"(]+|['"),:;.]+$/g, '').replace(/^\.\//, '');
  if (!p || p.length > 260 || /\s|:\/\/|^[a-z]+:/i.test(p)) return undefined;
  if (/[/\\]/.test(p) && (EXT_PATH.test(p) || DIR_PATH.test(p))) return p;
  if (loose && (EXT_PATH.test(p) || BARE_NAMES.test(p))) return p;
  return undefined;
}

/**
 * The path a fence's info string names: `path=…`, `file=…`, `filename=…`, `filepath=…` or `title=…` (quoted or
 * not), `lang:path`, or a word after the language that looks like a path (`ts src/app.ts`).
 */
export function pathFromInfo(info: string): string | undefined {
  const kv = /(?:^|[\s{,])(?:path|file|filename|filepath|title)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s,}]+))/i.exec(info);
  if (kv) return pathCandidate(kv[1] ?? kv[2] ?? kv[3] ?? '', true);
  const words = info.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return undefined;
  const colon = /^[\w+#-]+:(.+)$/.exec(words[0]);
  if (colon) return pathCandidate(colon[1], true);
  // The first word is the language, unless it is clearly a path (`src/app.ts`).
  if (words.length === 1) return pathCandidate(words[0], false);
  return pathCandidate(words[1], true);
}

/**
 * The path the line before a block names: a code span (`src/app.ts`), or a bold one, else a word with a folder in
 * it (src/app.ts), else the whole line when it is nothing but a file name ("app.ts:"). Prose such as "Using Node.js:"
 * names no file.
 */
export function pathFromLine(line: string): string | undefined {
  const text = line.trim();
  if (!text) return undefined;
  for (const m of text.matchAll(/`([^`]+)`|\*\*([^*]+)\*\*/g)) {
    const p = pathCandidate(m[1] ?? m[2], true);
    if (p) return p;
  }
  // An unmarked word counts only with a folder and a file extension (or a name such as Dockerfile): "client/server"
  // or "50/50" name no file.
  for (const word of text.split(/\s+/)) {
    const p = pathCandidate(word.replace(/^[*_]+|[*_]+$/g, ''), false);
    if (p && (EXT_PATH.test(p) || BARE_NAMES.test(p.split(/[/\\]/).pop() ?? ''))) return p;
  }
  const alone = text.replace(/^(?:#+\s*|[-*]\s+)/, '').replace(/^(?:File|Path|Filename)\s*:\s*/i, '').replace(/[*_]/g, '');
  return pathCandidate(alone, true);
}

const SHELL_LANGS = /^(?:bash|sh|shell|shellscript|console|terminal|zsh|fish|powershell|pwsh|ps1?|cmd|bat|batch|shell-session)$/i;

/**
 * The path the line before a block names, when it is the block's file. A shell block after "Then run `app.py`:" whose
 * commands name app.py (`python app.py`) is a command to run, not the new content of app.py; after "Save it as
 * `hi.sh`:" or "Add to `.bashrc`:" it is the file.
 */
function lineTarget(block: CodeBlockInfo): string | undefined {
  const path = pathFromLine(block.before);
  const lang = block.info.trim().split(/[\s{:]/)[0] ?? '';
  const name = path?.split(/[/\\]/).pop();
  if (path && name && SHELL_LANGS.test(lang) && block.code.includes(name)) return undefined;
  return path;
}

/** A line that stands for code left out ("// ... existing code ...", "# rest of the file unchanged"): a part, not a file. */
const ELISION = /^\s*(?:(?:\/\/|#|\/\*|<!--|--|;|%)\s*(?:\.\.\.|…|.*\b(?:existing code|rest of (?:the )?(?:file|code|class|function)|unchanged)\b)|(?:\.\.\.|…)\s*$)/i;

/**
 * Whether plain code that names `current`'s file looks like only part of it (a function, a few changed lines), so
 * that replacing the whole file with it would be a guess: it has a line that stands for code left out ("// ...
 * existing code ...") that the file does not have, or it has under half the file's non-blank lines and does not begin
 * and end as the file does. A file of a few lines, an empty one or a new one is always whole.
 */
export function looksPartial(current: string | undefined, code: string): boolean {
  const lines = (s: string) => s.replace(/\r\n/g, '\n').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  if (current === undefined) return false;
  const file = lines(current);
  const block = lines(code);
  if (file.length > 0 && block.some((l) => ELISION.test(l) && !file.includes(l))) return true;
  if (file.length <= 5 || block.length * 2 >= file.length) return false;
  return !(block[0] === file[0] && block[block.length - 1] === file[file.length - 1]);
}

/** The file a unified diff changes, from its `+++` line (or `---` for a deletion's header), without `a/`/`b/`. */
export function pathFromDiff(code: string): string | undefined {
  const plus = /^\+\+\+ (\S+)/m.exec(code)?.[1];
  const minus = /^--- (\S+)/m.exec(code)?.[1];
  const name = plus && plus !== '/dev/null' ? plus : minus && minus !== '/dev/null' ? minus : undefined;
  return name ? pathCandidate(name.replace(/^[ab]\//, ''), true) : undefined;
}

/**
 * Which file a block goes to and how: the path the block names (its info string, the file header inside it, or the
 * line before it), else the selection's file, else the active editor's; undefined target means ask. Plain code is the
 * whole file when the block names its path, else a replacement of the selection when there is one, else not placeable.
 */
export function planApply(block: CodeBlockInfo, selection: ApplySelection | undefined, activePath: string | undefined): ApplyPlan {
  const form = blockForm(block.code);
  let placement: Placement | undefined;
  let inBlock: string | undefined;
  if (form === 'searchReplace') {
    const parsed = parseSearchReplace(block.code);
    if (typeof parsed === 'string') return { error: parsed };
    placement = { kind: 'searchReplace', hunks: parsed.hunks };
    inBlock = parsed.path;
  } else if (form === 'diff') {
    placement = { kind: 'diff', patch: block.code };
    inBlock = pathFromDiff(block.code);
  }
  const fromInfo = pathFromInfo(block.info);
  const fromLine = fromInfo || inBlock ? undefined : lineTarget(block);
  const named = fromInfo ? { path: fromInfo, source: 'info' as const } : inBlock ? { path: inBlock, source: 'block' as const } : fromLine ? { path: fromLine, source: 'line' as const } : undefined;
  if (!placement) {
    if (named) placement = { kind: 'whole' };
    else if (selection) return { target: { path: selection.path, source: 'selection' }, placement: { kind: 'selection', selection } };
    else return {};
  }
  const target = named ?? (selection ? { path: selection.path, source: 'selection' as const } : activePath ? { path: activePath, source: 'active' as const } : undefined);
  return { target, placement };
}

/**
 * The proposed text for a file whose current text is `current` (undefined: the file does not exist yet). Works on
 * LF text and gives back the file's line ending (a CRLF file stays CRLF); whole-file, search/replace and selection
 * placements keep the file's final-newline state (a new file gets one). `name` is how messages name the file.
 */
export function propose(current: string | undefined, code: string, placement: Placement, name: string): Proposal {
  const crlf = current?.includes('\r\n') ?? false;
  const text = (current ?? '').replace(/\r\n/g, '\n');
  const lf = code.replace(/\r\n/g, '\n');
  let out: Proposal;
  switch (placement.kind) {
    case 'whole':
      out = { ok: true, text: lf };
      break;
    case 'searchReplace':
      out = applyHunks(text, placement.hunks, name, current === undefined);
      break;
    case 'diff':
      out = applyDiff(text, lf, name);
      break;
    case 'selection':
      out = current === undefined ? { ok: false, error: `${name} does not exist, so the selection it came from cannot be replaced.` } : replaceSelection(text, placement.selection, lf, name);
      break;
  }
  if (!out.ok) return out;
  let result = out.text;
  if (placement.kind !== 'diff') {
    const finalNewline = current === undefined || text === '' || text.endsWith('\n');
    if (finalNewline && result !== '' && !result.endsWith('\n')) result += '\n';
    if (!finalNewline && result.endsWith('\n')) result = result.slice(0, -1);
  }
  return { ok: true, text: crlf ? result.replace(/\n/g, '\r\n') : result };
}

/** The first line of a hunk's search text, to name it in a message. */
function hunkLabel(n: number, h: SearchReplaceHunk): string {
  const first = h.search.split('\n').find((l) => l.trim()) ?? '';
  return `Hunk ${n}${first ? ` (${JSON.stringify(first.trim().slice(0, 60))})` : ''}`;
}

function occurrences(text: string, search: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(search); i >= 0 && at.length < 100; i = text.indexOf(search, i + 1)) at.push(i);
  return at;
}

/**
 * Applies search/replace hunks in order to LF text: each search text (CRLF read as LF) must be found exactly once in
 * the text as the hunks before it left it. A hunk found nowhere or several times is reported, never guessed; any such
 * hunk means no proposal, and every failing hunk is listed. An empty search text only fills an empty or new file. An
 * empty replacement of whole lines removes their line break too.
 */
export function applyHunks(text: string, hunks: readonly SearchReplaceHunk[], name: string, isNew = false): Proposal {
  let out = text;
  const problems: string[] = [];
  hunks.forEach((h, i) => {
    const search = h.search.replace(/\r\n/g, '\n');
    const replace = h.replace.replace(/\r\n/g, '\n');
    if (search === '') {
      if (out === '') out = replace;
      else problems.push(`Hunk ${i + 1} has an empty search text, which only a new or empty file can take; ${name} is not empty.`);
      return;
    }
    if (isNew) {
      problems.push(`${hunkLabel(i + 1, h)}: ${name} does not exist, so there is nothing to search (leave the search text empty to create it).`);
      return;
    }
    const at = occurrences(out, search);
    if (at.length === 1) {
      let end = at[0] + search.length;
      // Deleting whole lines takes their line break too, so no blank line is left where they were.
      if (replace === '' && (at[0] === 0 || out[at[0] - 1] === '\n') && !search.endsWith('\n') && out[end] === '\n') end++;
      out = out.slice(0, at[0]) + replace + out.slice(end);
    }
    else if (at.length === 0) problems.push(`${hunkLabel(i + 1, h)}: the search text is not in ${name}.`);
    else problems.push(`${hunkLabel(i + 1, h)}: the search text is in ${name} ${at.length} times; add lines around it so that it matches once.`);
  });
  if (problems.length) return { ok: false, error: `${problems.length} of ${hunks.length} ${hunks.length === 1 ? 'hunk does' : 'hunks do'} not apply, so nothing was changed.\n${problems.join('\n')}` };
  return { ok: true, text: out };
}

/**
 * Rewrites each hunk header's line counts from its body (models often miscount, and jsdiff refuses a wrong count),
 * gives a bare `@@` header numbers (jsdiff then searches for the hunk), and reads an empty body line as an empty
 * context line.
 */
export function recountHunks(patch: string): string {
  const lines = patch.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const header = /^@@(?: -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*))?\s*$/.exec(lines[i]) ?? /^@@ .*@@(.*)$/.exec(lines[i]);
    if (!header) {
      out.push(lines[i]);
      continue;
    }
    const body: string[] = [];
    let j = i + 1;
    // A body line such as `--- old` (a removed `-- old`) is a file header only when a `+++ ` line follows it.
    for (; j < lines.length && !/^(@@|diff |Index: )/.test(lines[j]) && !(lines[j].startsWith('--- ') && lines[j + 1]?.startsWith('+++ ')); j++) body.push(lines[j]);
    while (body.length && body[body.length - 1] === '') body.pop();
    const fixed = body.map((l) => (l === '' ? ' ' : l));
    const old = fixed.filter((l) => l[0] === ' ' || l[0] === '-').length;
    const added = fixed.filter((l) => l[0] === ' ' || l[0] === '+').length;
    const numbered = header.length === 4 && header[1] !== undefined;
    const oldStart = numbered ? header[1] : '1';
    const newStart = numbered ? header[2] : '1';
    out.push(`@@ -${oldStart},${old} +${newStart},${added} @@`, ...fixed);
    i = j - 1;
  }
  return out.join('\n');
}

/**
 * The first hunk (1-based) with a bare `@@` header whose old lines (context and removed) occur in `text` more than
 * once: jsdiff would take the first silently. 0 when there is none.
 */
function bareHunksFoundTwice(text: string, patch: string): number {
  const hunks = recountHunks(patch).split('\n');
  const bare = patch.split('\n').filter((l) => /^@@/.test(l)).map((l) => /^@@\s*$/.test(l));
  let n = 0;
  for (let i = 0; i < hunks.length; i++) {
    if (!/^@@ /.test(hunks[i])) continue;
    n++;
    const old: string[] = [];
    for (let j = i + 1; j < hunks.length && !/^@@ /.test(hunks[j]) && !(hunks[j].startsWith('--- ') && hunks[j + 1]?.startsWith('+++ ')); j++) {
      if (hunks[j][0] === ' ' || hunks[j][0] === '-') old.push(hunks[j].slice(1));
    }
    if (!bare[n - 1] || old.length === 0) continue;
    if (occurrences(`\n${text}${text.endsWith('\n') ? '' : '\n'}`, `\n${old.join('\n')}\n`).length > 1) return n;
  }
  return 0;
}

/** Applies a unified diff of one file with jsdiff (exact context; the hunk is looked for near its line numbers, then anywhere). */
export function applyDiff(text: string, patch: string, name: string): Proposal {
  let files;
  try {
    files = parsePatch(recountHunks(patch));
  } catch (e) {
    return { ok: false, error: `The diff for ${name} cannot be read: ${e instanceof Error ? e.message : String(e)}` };
  }
  const withHunks = files.filter((f) => f.hunks.length > 0);
  if (withHunks.length === 0) return { ok: false, error: `The diff for ${name} has no hunks ("@@ -line,count +line,count @@" and the lines).` };
  if (withHunks.length > 1) return { ok: false, error: `The diff changes ${withHunks.length} files; Apply takes one file at a time.` };
  const ambiguous = bareHunksFoundTwice(text, patch);
  if (ambiguous) return { ok: false, error: `The diff's hunk ${ambiguous} has no line numbers, and its old lines are in ${name} more than once, so it cannot be told where it goes. Give the hunk line numbers (@@ -line,count +line,count @@) or more context lines.` };
  const result = applyPatch(text, withHunks[0]);
  if (result === false) return { ok: false, error: `The diff does not apply to ${name}: its context or removed lines are not in the file as it is now.` };
  return { ok: true, text: result };
}

/**
 * Replaces the selection the conversation attached: its lines when they still hold its code, else its code where it is
 * found exactly once; otherwise (or when the selection was cut to fit) it is reported.
 */
function replaceSelection(text: string, sel: ApplySelection, code: string, name: string): Proposal {
  if (sel.truncated) return { ok: false, error: `The selection from ${name} was cut to fit parley.maxContextChars, so it cannot be replaced whole. Select less and ask again.` };
  const original = sel.code.replace(/\r\n/g, '\n');
  const replacement = original.endsWith('\n') || !code.endsWith('\n') ? code : code.slice(0, -1);
  const lines = text.split('\n');
  const start = sel.startLine - 1;
  const atLines = lines.slice(start, sel.endLine).join('\n');
  if (start >= 0 && atLines === original.replace(/\n$/, '')) {
    const before = lines.slice(0, start).join('\n');
    const after = lines.slice(sel.endLine).join('\n');
    const mid = replacement.replace(/\n$/, '');
    return { ok: true, text: [...(start > 0 ? [before] : []), mid, ...(sel.endLine < lines.length ? [after] : [])].join('\n') };
  }
  const at = occurrences(text, original);
  if (at.length === 1) return { ok: true, text: text.slice(0, at[0]) + replacement + text.slice(at[0] + original.length) };
  return {
    ok: false,
    error: at.length === 0
      ? `The selection this block replaces (lines ${sel.startLine}-${sel.endLine} of ${name}) is no longer in the file: it changed after it was attached.`
      : `The selection this block replaces (lines ${sel.startLine}-${sel.endLine} of ${name}) is in the file ${at.length} times now; it cannot be told which to replace.`,
  };
}

/**
 * The smallest span that turns `before` into `after`: offsets in `before` and the text that replaces them. Never
 * splits a CRLF, so an editor edit built from it keeps whole line breaks.
 */
export function changedSpan(before: string, after: string): { start: number; end: number; text: string } {
  let start = 0;
  const max = Math.min(before.length, after.length);
  while (start < max && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  if (start > 0 && before[start - 1] === '\r') start--;
  let tail = 0;
  while (tail < max - start && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail++;
  if (tail > 0 && before[before.length - tail] === '\n' && before[before.length - tail - 1] === '\r') tail--;
  return { start, end: before.length - tail, text: after.slice(start, after.length - tail) };
}
