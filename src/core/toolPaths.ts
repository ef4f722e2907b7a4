// Paths the model gives to the workspace tools: resolved inside a workspace folder, `..` escapes refused, excludes matched.
import zeptomatch from 'zeptomatch';

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
 * for an empty path, `..` that leaves the folder and absolute paths outside every folder. Does not look at the disk:
 * symlinks are the caller's to check.
 */
export function resolveToolPath(input: string, folders: readonly ToolFolder[]): ResolvedToolPath {
  if (folders.length === 0) throw new ToolError('No folder is open in VS Code, so there are no workspace files to read.');
  if (input.includes('\0')) throw new ToolError('The path contains a NUL character.');
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
  /** Globs that could not be compiled (they exclude nothing). */
  invalid: string[];
}

/**
 * Compiles the exclude globs with zeptomatch (VS Code's glob syntax: `*`, `**`, `?`, `[…]`, `{a,b}`; dotfiles match
 * like any file), case-insensitive so that `.ENV` is refused too. zeptomatch, not picomatch: a third of the bundle size (8 KB).
 * A path is excluded when it or any folder above it matches, as with VS Code's `files.exclude`.
 */
export function excludeMatcher(globs: readonly string[]): ExcludeMatcher {
  const invalid: string[] = [];
  const compiled: { glob: string; test: (p: string) => boolean }[] = [];
  for (const glob of globs) {
    if (typeof glob !== 'string' || !glob.trim()) continue;
    try {
      const re = zeptomatch.compile(glob.replace(/\\/g, '/'));
      const nocase = new RegExp(re.source, re.flags.includes('i') ? re.flags : `${re.flags}i`);
      compiled.push({ glob, test: (p) => nocase.test(p) });
    } catch {
      invalid.push(glob);
    }
  }
  return {
    invalid,
    match(relative: string): string | undefined {
      const segments = canonical(relative).split('/').filter((s) => s !== '' && s !== '.');
      for (let n = segments.length; n >= 1; n--) {
        const p = segments.slice(0, n).join('/');
        const hit = compiled.find((c) => c.test(p));
        if (hit) return hit.glob;
      }
      return undefined;
    },
  };
}

/** The refusal for an excluded path, for the model. */
export function excludedMessage(shown: string, glob: string): string {
  return `"${shown}" is excluded by parley.tools.exclude (${glob}): secrets and dependencies are not read.`;
}
