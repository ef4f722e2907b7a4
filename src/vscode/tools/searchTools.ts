// The find_files and search_text tools: files by glob through VS Code's search (files.exclude and search.exclude
// apply), and text or regex search over them.
//
// search_text reads the files itself (vscode.workspace.findTextInFiles is a proposed API, not available to Parley),
// SEARCH_READ_AHEAD at a time, and matches them in a worker thread (searchEngine.ts) in path order: the model's regex
// never runs on the extension host's thread.
import * as vscode from 'vscode';
import { MAX_LINE_CHARS } from '../../core/lineMatch';
import { mapOrdered } from '../../core/orderedPool';
import type { Tool } from '../../core/tool';
import { ToolError } from '../../core/toolPaths';
import { cappedList, compileQuery, decodeText, looksBinary, optionalBool, optionalInt, optionalString, requiredString } from '../../core/toolText';
import { LineSearch, SEARCH_TIME_LIMIT_MS, SearchFailedError, SearchTooSlowError, type FileMatches } from './searchEngine';
import { WorkspaceGate, cancellationFor, type BuiltinToolSettings, type ToolTarget } from '../workspaceGate';

/**
 * Most files search_text searches: VS Code's search is asked for one more, so that more is known. Below it every
 * matching file of the workspace is searched, in path order; past it VS Code picks which files it lists.
 */
const MAX_SEARCH_FILES = 100_000;
/** How many files search_text reads at once (one by one, a remote or virtual workspace answers a few ms per file). */
export const SEARCH_READ_AHEAD = 16;
/** Files larger than this search_text skips. */
const MAX_SEARCH_BYTES = 1024 * 1024;
/** How many paths find_files asks VS Code's search for, to sort and cut to maxResults. */
const FIND_LIMIT = 2000;

const GLOB_HELP = 'Relative to the workspace folder(s): "**/*.ts" finds TypeScript files at any depth, "src/**" everything under src. With several folders, a glob that starts with a folder name searches only that folder.';

/** The glob as VS Code's search takes it: a RelativePattern when it starts with a workspace folder's name. */
function includePattern(tool: string, ws: WorkspaceGate, glob: string): vscode.GlobPattern {
  if (ws.folders.length === 0) throw new ToolError('No folder is open in VS Code, so there are no workspace files to search.');
  const g = glob.replace(/\\/g, '/');
  if (g.startsWith('/') || /^[a-zA-Z]:/.test(g) || g.split('/').includes('..')) {
    throw new ToolError(`${tool}: the glob "${glob}" must be relative to the workspace folders (no leading "/", drive or "..").`);
  }
  if (ws.folders.length > 1) {
    const folder = ws.folders.find((f) => g.startsWith(`${f.name}/`));
    if (folder) return new vscode.RelativePattern(folder, g.slice(folder.name.length + 1));
  }
  return g;
}

/** Files matching `include`, under the settings' excludes and VS Code's, sorted, without symlink escapes. */
async function findTargets(ws: WorkspaceGate, include: vscode.GlobPattern, limit: number, signal: AbortSignal): Promise<{ targets: ToolTarget[]; full: boolean }> {
  const listed = await listTargets(ws, include, limit, signal);
  const targets: ToolTarget[] = [];
  for (const t of listed.targets) if (await linksOk(ws, t)) targets.push(t);
  return { targets, full: listed.full };
}

/**
 * Files matching `include`, under the settings' excludes and VS Code's, sorted by path (links not checked yet);
 * `full` when VS Code listed `limit` files, which then are its choice among more.
 */
async function listTargets(ws: WorkspaceGate, include: vscode.GlobPattern, limit: number, signal: AbortSignal): Promise<{ targets: ToolTarget[]; full: boolean }> {
  const cancel = cancellationFor(signal);
  let uris: vscode.Uri[];
  try {
    // `undefined` exclude: files.exclude and search.exclude apply, as in the Search view.
    uris = await vscode.workspace.findFiles(include, undefined, limit, cancel.token);
  } catch (e) {
    signal.throwIfAborted();
    throw e;
  } finally {
    cancel.dispose();
  }
  signal.throwIfAborted();
  const targets: ToolTarget[] = [];
  for (const uri of uris) {
    const t = ws.fromUri(uri);
    if (t) targets.push(t);
  }
  targets.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
  return { targets, full: uris.length >= limit };
}

async function linksOk(ws: WorkspaceGate, t: ToolTarget): Promise<boolean> {
  try {
    await ws.checkLinks(t);
    return true;
  } catch (e) {
    if (e instanceof ToolError) return false;
    throw e;
  }
}

/** The find_files tool: workspace files whose path matches a glob. */
export function findFilesTool(settings: BuiltinToolSettings): Tool {
  return {
    policy: 'read',
    source: 'builtin',
    definition: {
      type: 'function',
      function: {
        name: 'find_files',
        description: "Finds workspace files whose path matches a glob, honouring the user's files.exclude and search.exclude. Returns paths, sorted.",
        parameters: {
          type: 'object',
          properties: {
            glob: { type: 'string', description: GLOB_HELP },
            maxResults: { type: 'integer', minimum: 1, maximum: 1000, description: 'Most paths to return. Default: 100.' },
          },
          required: ['glob'],
          additionalProperties: false,
        },
      },
    },
    summary: (args) => (typeof args.glob === 'string' ? args.glob : ''),
    async run(args, signal) {
      const glob = requiredString('find_files', args, 'glob', 'a glob such as "**/*.ts"');
      const max = optionalInt('find_files', args, 'maxResults', 1, 1000) ?? 100;
      const ws = new WorkspaceGate(settings);
      // Asks for many more than max: the search returns an arbitrary subset at its limit, and the excludes filter
      // some out afterwards; the first `max` of a sorted larger set are stable from call to call.
      const { targets, full } = await findTargets(ws, includePattern('find_files', ws, glob), Math.max(FIND_LIMIT, max * 2), signal);
      if (targets.length === 0) return `No files match "${glob}" (files.exclude, search.exclude and parley.tools.exclude apply).`;
      const more = targets.length > max || full;
      const header = `${Math.min(max, targets.length)} ${targets.length === 1 ? 'file matches' : 'files match'} "${glob}"${more ? ` (more exist: only the first ${max} are listed; narrow the glob)` : ''}:`;
      return `${header}\n${cappedList(targets.slice(0, max).map((t) => t.shown), settings.maxResultChars - 200, 'Narrow the glob.')}`;
    },
  };
}

interface SearchArgs {
  query: string;
  isRegex: boolean;
  caseSensitive: boolean;
  glob: string;
  max: number;
}

function searchArgs(args: Record<string, unknown>): SearchArgs {
  if (typeof args.query !== 'string' || args.query === '') throw new ToolError('search_text: "query" is required: the text (or, with isRegex, the regular expression) to find.');
  return {
    query: args.query,
    isRegex: optionalBool('search_text', args, 'isRegex') ?? false,
    caseSensitive: optionalBool('search_text', args, 'caseSensitive') ?? false,
    glob: optionalString('search_text', args, 'glob', 'which files to search, such as "src/**/*.ts"') ?? '**/*',
    max: optionalInt('search_text', args, 'maxResults', 1, 500) ?? 50,
  };
}

/** The search_text tool: matching lines as `path:line: text`, in path order, up to a cap. */
export function searchTextTool(settings: BuiltinToolSettings): Tool {
  return {
    policy: 'read',
    source: 'builtin',
    definition: {
      type: 'function',
      function: {
        name: 'search_text',
        description: `Searches the text of workspace files for a literal string or a regular expression (JavaScript syntax, one line at a time; a line is searched in its first ${MAX_LINE_CHARS} characters). Returns matching lines as "path:line: text". Binary files, files over 1 MB and excluded files are skipped. A search that takes more than ${SEARCH_TIME_LIMIT_MS / 1000} s of matching is stopped.`,
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'The text to find, or a regular expression when isRegex is true.' },
            isRegex: { type: 'boolean', description: 'Treat query as a regular expression. Default: false.' },
            caseSensitive: { type: 'boolean', description: 'Match case. Default: false.' },
            glob: { type: 'string', description: `Which files to search. Default: all. ${GLOB_HELP}` },
            maxResults: { type: 'integer', minimum: 1, maximum: 500, description: 'Most matching lines to return. Default: 50.' },
          },
          required: ['query'],
          additionalProperties: false,
        },
      },
    },
    summary: (args) => (typeof args.query === 'string' ? args.query + (typeof args.glob === 'string' && args.glob ? ` in ${args.glob}` : '') : ''),
    async run(args, signal) {
      const a = searchArgs(args);
      const re = compileQuery(a.query, a.isRegex, a.caseSensitive);
      const ws = new WorkspaceGate(settings);
      const { targets, full } = await listTargets(ws, includePattern('search_text', ws, a.glob), MAX_SEARCH_FILES + 1, signal);
      return searchText(ws, targets.slice(0, MAX_SEARCH_FILES), re, a, signal, full ? targets.length : undefined);
    },
  };
}

/** What reading and matching one file gave: hidden (a link out of the workspace), skipped (unreadable), or its matches. */
type FileResult = { kind: 'hidden' } | { kind: 'skipped' } | { kind: 'matched'; found: FileMatches };

/** What search_text found and passed over, for its result. */
interface SearchTally {
  hits: string[];
  files: Set<string>;
  skipped: number;
  searched: number;
  longLines: number;
  /** The file at which matching took too long, when it did. */
  slowAt?: string;
}

/**
 * Searches `targets` (sorted by path): read SEARCH_READ_AHEAD at a time, matched and reported in their order, so the
 * result is the same whatever order the reads end in. `listedPastCap`: how many files VS Code listed when it listed
 * more than search_text searches.
 */
async function searchText(ws: WorkspaceGate, targets: ToolTarget[], re: RegExp, a: SearchArgs, signal: AbortSignal, listedPastCap: number | undefined): Promise<string> {
  const tally: SearchTally = { hits: [], files: new Set(), skipped: 0, searched: 0, longLines: 0 };
  const { hits, files } = tally;
  const search = new LineSearch(re, signal);
  const dirty = new Map(vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => [d.uri.toString(), d]));
  const searchOne = async (t: ToolTarget): Promise<FileResult> => {
    if (!(await linksOk(ws, t))) return { kind: 'hidden' };
    const text = await searchableText(ws, t, dirty);
    if (text === undefined) return { kind: 'skipped' };
    // Each file may give up to max lines: the cap is applied in path order below.
    return { kind: 'matched', found: await search.match(text, a.max) };
  };
  try {
    let i = -1;
    for await (const r of mapOrdered(targets, SEARCH_READ_AHEAD, searchOne, signal)) {
      const t = targets[++i];
      if (!r.ok) {
        const e = r.error;
        if (e instanceof SearchTooSlowError) {
          tally.slowAt = t.shown;
          break;
        }
        if (e instanceof SearchFailedError) throw new ToolError(`search_text: ${e.message} Try a simpler pattern or a narrower glob.`);
        throw e;
      }
      if (r.value.kind === 'hidden') continue;
      if (r.value.kind === 'skipped') {
        tally.skipped++;
        continue;
      }
      tally.searched++;
      tally.longLines += r.value.found.longLines;
      for (const m of r.value.found.matches.slice(0, a.max - hits.length)) {
        hits.push(`${t.shown}:${m.line}: ${m.text}`);
        files.add(t.shown);
      }
      if (hits.length >= a.max) break;
    }
  } finally {
    search.dispose();
  }
  return searchResult(tally, a, listedPastCap, ws.settings.maxResultChars);
}

/** search_text's result: the matching lines, then notes on where it stopped and what it passed over. */
function searchResult(tally: SearchTally, a: SearchArgs, listedPastCap: number | undefined, maxResultChars: number): string {
  const { hits, files, skipped, searched, longLines, slowAt } = tally;
  const what = `${a.isRegex ? 'regex' : 'text'} "${a.query}"${a.glob === '**/*' ? '' : ` in ${a.glob}`}`;
  const notes: string[] = [];
  if (slowAt !== undefined) {
    const why = `search_text stopped: matching the ${what} took more than ${SEARCH_TIME_LIMIT_MS / 1000} s (at ${slowAt}, after ${searched} ${searched === 1 ? 'file' : 'files'}), so the pattern is too slow. `
      + 'A pattern with nested or repeated quantifiers, such as (.*.*)* or (a+)+, can take exponentially long on some lines: use a simpler pattern without them, a narrower glob, or isRegex false to find literal text.';
    if (hits.length === 0) throw new ToolError(why);
    notes.push(`[${why} The matches above are from the files searched before.]`);
  } else if (hits.length >= a.max) notes.push(`[Stopped at maxResults (${a.max}) after ${searched} files: there may be more matches. Narrow the query or the glob, or raise maxResults.]`);
  else if (listedPastCap !== undefined) {
    notes.push(`[More than ${MAX_SEARCH_FILES} files match, more than search_text searches: VS Code listed ${listedPastCap} (its choice, not the first by path), and the first ${MAX_SEARCH_FILES} of those by path were looked at (${searched} searched; binary, large and unreadable ones skipped). Narrow the glob to search the rest.]`);
  }
  if (skipped > 0) notes.push(`[${skipped} binary, unreadable or larger than 1 MB ${skipped === 1 ? 'file was' : 'files were'} skipped.]`);
  if (longLines > 0) notes.push(`[${longLines} ${longLines === 1 ? 'line longer than' : 'lines longer than'} ${MAX_LINE_CHARS} characters ${longLines === 1 ? 'was' : 'were'} searched in ${longLines === 1 ? 'its' : 'their'} first ${MAX_LINE_CHARS} characters only.]`);
  if (hits.length === 0) return [`No matches for ${what} in ${searched} ${searched === 1 ? 'file' : 'files'}.`, ...notes].join('\n');
  const header = `${hits.length} ${hits.length === 1 ? 'match' : 'matches'} for ${what} in ${files.size} ${files.size === 1 ? 'file' : 'files'}:`;
  return [header, cappedList(hits, maxResultChars - 300, 'Narrow the query or the glob.'), ...notes].join('\n');
}

/** A file's text for searching (read as checked), or undefined when it is binary, too large or unreadable. */
async function searchableText(ws: WorkspaceGate, t: ToolTarget, dirty: ReadonlyMap<string, vscode.TextDocument>): Promise<string | undefined> {
  const open = dirty.get(t.uri.toString());
  if (open) return open.getText();
  try {
    const bytes = await ws.readBytes(t, MAX_SEARCH_BYTES);
    return looksBinary(bytes) ? undefined : decodeText(bytes);
  } catch {
    return undefined;
  }
}
