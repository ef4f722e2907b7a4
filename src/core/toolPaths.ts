// The workspace gate's pure half (vscode/workspaceGate.ts): paths resolved inside a folder, `..` refused, excludes matched.
import { compileGlob, globPath, type CompiledGlob } from './glob';

/**
 * A failure of a tool call whose message is meant for the model (a refused path, bad arguments, a missing file).
 * The tool loop sends the message back as the tool result; any other error is a bug.
 */
export class ToolError extends Error {
  override readonly name = 'ToolError';
}

/**
 * The default of `parley.tools.exclude` (package.json has the same list): secrets and dependencies are never read.
 * Secrets: environment files, private keys and key stores, the credential folders and files of SSH, GnuPG, cloud and
 * container tools, package registries, Git and databases, and Terraform state (it holds resources' secrets in clear).
 */
export const DEFAULT_TOOL_EXCLUDE: readonly string[] = [
  '**/.env*',
  '**/*.pem',
  '**/*.key',
  '**/*.p12',
  '**/*.pfx',
  '**/*.jks',
  '**/*.keystore',
  '**/id_rsa*',
  '**/id_dsa*',
  '**/id_ecdsa*',
  '**/id_ed25519*',
  '**/.ssh/**',
  '**/.gnupg/**',
  '**/.aws/**',
  '**/.azure/**',
  '**/.config/gcloud/**',
  '**/.kube/**',
  '**/.docker/config.json',
  '**/.config/gh/hosts.yml',
  '**/.npmrc',
  '**/.pypirc',
  '**/.cargo/credentials*',
  '**/.gem/credentials',
  '**/.netrc',
  '**/_netrc',
  '**/.git-credentials',
  '**/.pgpass',
  '**/.vault-token',
  '**/.htpasswd',
  '**/credentials.json',
  '**/*.tfstate*',
  '**/*.env',
  '**/*.ppk',
  '**/*.kdbx',
  '**/.terraform.d/credentials.tfrc.json',
  '**/.s3cfg',
  '**/.boto',
  '**/.config/rclone/rclone.conf',
  '**/.m2/settings.xml',
  '**/.gradle/gradle.properties',
  '**/.composer/auth.json',
  '**/.config/composer/auth.json',
  '**/.*_history',
  '**/.git/**',
  '**/node_modules/**',
];

/** A workspace folder as the tools see it: its name and its URI path (absolute, `/`-separated, e.g. `/c:/src/app`). */
export interface ToolFolder {
  name: string;
  path: string;
}

/** A path resolved inside one workspace folder. */
export interface ResolvedToolPath {
  /** Index into the folders given to resolveToolPath. */
  folderIndex: number;
  /** Relative to the folder, `/`-separated, no `.` or `..` segments; '' for the folder itself. */
  relative: string;
  /** The folder's path joined with `relative`. */
  path: string;
}

const DRIVE = /^\/?([a-zA-Z]):(\/|$)/;

/** `C:\x\y`, `c:/x` and `/C:/x` all become `/c:/x`; backslashes become slashes. */
function canonical(p: string): string {
  const slashed = p.replace(/\\/g, '/');
  const drive = DRIVE.exec(slashed);
  if (!drive) return slashed;
  return `/${drive[1].toLowerCase()}:/${slashed.slice(drive[0].length)}`;
}

function isAbsolute(p: string): boolean {
  return p.startsWith('/') || DRIVE.test(p);
}

/** Splits a `/`-separated path into its segments, applying `.` and `..`; undefined when `..` climbs above the start. */
function normalSegments(p: string): string[] | undefined {
  const out: string[] = [];
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(s);
  }
  return out;
}

function join(folder: string, relative: string): string {
  if (!relative) return folder;
  return folder.endsWith('/') ? folder + relative : `${folder}/${relative}`;
}

/** The folder whose path contains `absolute` (the longest, for nested folders), with the rest of the path. */
function containingFolder(absolute: string[], folders: readonly ToolFolder[]): { index: number; rest: string[] } | undefined {
  let best: { index: number; rest: string[]; depth: number } | undefined;
  folders.forEach((f, index) => {
    const root = normalSegments(canonical(f.path)) ?? [];
    if (root.length > absolute.length || !root.every((s, i) => s === absolute[i])) return;
    if (!best || root.length > best.depth) best = { index, rest: absolute.slice(root.length), depth: root.length };
  });
  return best && { index: best.index, rest: best.rest };
}

/** Where the workspace folders are, in words for the model. */
function describeFolders(folders: readonly ToolFolder[]): string {
  if (folders.length === 1) return `the workspace folder "${folders[0].name}"`;
  return `the workspace folders (${folders.map((f) => `"${f.name}"`).join(', ')}; start a relative path with a folder's name to pick one)`;
}

/**
 * Resolves a path the model gave: relative to a workspace folder (with several folders, a leading folder name picks
 * one, else the first folder), or absolute inside one (Windows drive paths and backslashes accepted). Throws ToolError
 * for an empty path, `..` that leaves the folder, absolute paths outside every folder, and a path longer than
 * MAX_TOOL_PATH or with a name longer than MAX_TOOL_NAME (no file system holds one). Does not look at the disk:
 * symlinks are the caller's to check.
 */
export function resolveToolPath(input: string, folders: readonly ToolFolder[]): ResolvedToolPath {
  if (folders.length === 0) throw new ToolError('No folder is open in VS Code, so there are no workspace files to read.');
  if (input.includes('\0')) throw new ToolError('The path contains a NUL character.');
  refuseOverlong(input);
  const given = canonical(input.trim().replace(/^file:\/\//i, ''));
  if (isAbsolute(given)) {
    const segments = normalSegments(given);
    const found = segments && containingFolder(segments, folders);
    if (!found) throw new ToolError(`"${input}" is outside ${describeFolders(folders)}; tools read only inside the workspace (for a path relative to the workspace, leave out the leading "/").`);
    return resolved(folders, found.index, found.rest);
  }
  let index = 0;
  let rest = given;
  if (folders.length > 1) {
    const first = given.split('/').find((s) => s !== '' && s !== '.');
    const named = folders.findIndex((f) => f.name === first);
    if (named >= 0) {
      index = named;
      rest = given.slice(given.indexOf(first as string) + (first as string).length);
    }
  }
  const segments = normalSegments(rest);
  if (!segments) throw new ToolError(`"${input}" leaves ${describeFolders(folders)} through "..": tools read only inside the workspace.`);
  return resolved(folders, index, segments);
}

/** The longest path the tools take, in UTF-16 units: Linux's PATH_MAX; no workspace file needs more. */
export const MAX_TOOL_PATH = 4096;
/** The longest name of one file or folder, in characters: ext4, NTFS and APFS all stop at 255. */
export const MAX_TOOL_NAME = 255;

/** Refuses a path no file system could hold before anything matches it, so its cost stays bounded. */
function refuseOverlong(input: string): void {
  if (input.length > MAX_TOOL_PATH) throw new ToolError(`The path is ${input.length} characters long; no workspace file has a path longer than ${MAX_TOOL_PATH}.`);
  for (const name of input.split(/[\\/]/)) {
    // Code units first (cheap); a name of astral characters may have up to 510.
    if (name.length > MAX_TOOL_NAME && [...name].length > MAX_TOOL_NAME) {
      throw new ToolError(`The path has a name of ${[...name].length} characters ("${name.slice(0, 40)}…"); no file system allows a name longer than ${MAX_TOOL_NAME}.`);
    }
  }
}

function resolved(folders: readonly ToolFolder[], folderIndex: number, segments: string[]): ResolvedToolPath {
  const relative = segments.join('/');
  return { folderIndex, relative, path: join(folders[folderIndex].path, relative) };
}

/** How a path is shown to the model, in a form resolveToolPath reads back: with several folders, led by the folder's name. */
export function displayToolPath(folders: readonly ToolFolder[], folderIndex: number, relative: string): string {
  if (folders.length <= 1) return relative || '.';
  return relative ? `${folders[folderIndex].name}/${relative}` : folders[folderIndex].name;
}

/** The folder-relative path of an absolute URI path inside a folder, or undefined when it is in none. */
export function relativeToFolders(absolute: string, folders: readonly ToolFolder[]): { folderIndex: number; relative: string } | undefined {
  const segments = normalSegments(canonical(absolute));
  const found = segments && containingFolder(segments, folders);
  return found && { folderIndex: found.index, relative: found.rest.join('/') };
}

/** Whether `inner` is `outer` or below it (both absolute, any separators). */
export function isInside(inner: string, outer: string): boolean {
  const i = normalSegments(canonical(inner));
  const o = normalSegments(canonical(outer));
  return !!i && !!o && o.length <= i.length && o.every((s, k) => s === i[k]);
}

/** Matches folder-relative paths against `parley.tools.exclude`. */
export interface ExcludeMatcher {
  /** The glob that excludes `relative` (or one of its parent folders), or undefined when the path may be read. */
  match(relative: string): string | undefined;
  /** Globs that could not be compiled: each excludes every path (fails closed) until the setting is mended. */
  invalid: string[];
}

/**
 * Compiles the exclude globs with compileGlob (zeptomatch's syntax, which is VS Code's: `*`, `**`, `?`, `[…]`,
 * `{a,b}`; dotfiles match like any file), case-insensitive so that `.ENV` is refused too, in time bounded by the path's
 * length times the glob's size whatever the model names. A path is excluded when it or any folder above it matches,
 * as with VS Code's `files.exclude`; the glob named is the first that matches the longest such path.
 * A glob that cannot be compiled excludes every path rather than none: it was meant to keep something out.
 */
export function excludeMatcher(globs: readonly string[]): ExcludeMatcher {
  // Every tool call makes a WorkspaceGate, and so a matcher: the last list's is kept, so globs are compiled once.
  const key = JSON.stringify(globs);
  if (lastMatcher?.key !== key) lastMatcher = { key, matcher: compileExcludes(globs) };
  return lastMatcher.matcher;
}

let lastMatcher: { key: string; matcher: ExcludeMatcher } | undefined;

function compileExcludes(globs: readonly string[]): ExcludeMatcher {
  const invalid: string[] = [];
  const compiled: { glob: string; m: CompiledGlob | undefined }[] = [];
  for (const glob of globs) {
    if (typeof glob !== 'string' || !glob.trim()) continue;
    try {
      compiled.push({ glob, m: compileGlob(glob) });
    } catch {
      invalid.push(glob);
      compiled.push({ glob, m: undefined });
    }
  }
  return {
    invalid,
    match(relative: string): string | undefined {
      const path = globPath(canonical(relative).split('/').filter((s) => s !== '' && s !== '.').join('/'));
      let best: string | undefined;
      let longest = 0;
      for (const c of compiled) {
        const n = c.m ? c.m.longestMatch(path) : path.text.length;
        if (n > longest) {
          best = c.glob;
          longest = n;
          if (n === path.text.length) break;
        }
      }
      return best;
    },
  };
}

/** The refusal for an excluded path, for the model; `unreadable` when the glob could not be compiled (it excludes every path). */
export function excludedMessage(shown: string, glob: string, unreadable = false): string {
  if (unreadable) return `"${shown}" is excluded by parley.tools.exclude (${glob}): that glob cannot be read, so it excludes every path until the setting is mended.`;
  return `"${shown}" is excluded by parley.tools.exclude (${glob}): secrets and dependencies are not read.`;
}
