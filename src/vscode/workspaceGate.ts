// The workspace gate: the one road to a workspace file for the tools, `@` mentions and Apply (excludes, links, real paths).
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  ToolError,
  displayToolPath,
  excludeMatcher,
  excludedMessage,
  isInside,
  relativeToFolders,
  resolveToolPath,
  type ExcludeMatcher,
  type ToolFolder,
} from '../core/toolPaths';
import { showWarning } from './notices';
import { isOpenedPath, readUpTo } from './tools/localRead';

/** Exclude globs this window has already told the user it cannot read. */
const toldInvalid = new Set<string>();

/** The settings the built-in tools read (from `parley.tools.*`). */
export interface BuiltinToolSettings {
  /** `parley.tools.exclude`: globs, relative to each workspace folder, that are never read. */
  exclude: readonly string[];
  /** `parley.tools.maxResultChars`: the most characters one result may have. */
  maxResultChars: number;
}

/** A file or folder a tool may touch: resolved, inside a folder, not excluded. */
export interface ToolTarget {
  uri: vscode.Uri;
  folder: vscode.WorkspaceFolder;
  /** Relative to the folder ('' for the folder itself). */
  relative: string;
  /** As shown to the model (resolveToolPath reads it back). */
  shown: string;
}

/**
 * Test seam: when set, awaited after a file's path was checked and before the file is read, with its local path, so
 * that a test can swap the path for a symbolic link at exactly that moment. Never set outside tests.
 */
export const toolReadSeam: { afterCheck?: (fsPath: string) => Promise<void> } = {};

/** Files larger than this are not read whole (read_file) or searched (search_text). */
export const MAX_READ_BYTES = 10 * 1024 * 1024;

/**
 * The workspace as one tool call, mention or Apply sees it: folders and excludes fixed when it is made. Checks each
 * path the model or the reader names (and each file a search finds) before anything is read; symlink checks are cached
 * for its life. Nothing reaches a workspace file for them any other way.
 */
export class WorkspaceGate {
  readonly folders: readonly vscode.WorkspaceFolder[];
  readonly toolFolders: ToolFolder[];
  readonly exclude: ExcludeMatcher;
  private readonly realRoots = new Map<string, Promise<string>>();
  private readonly linkFree = new Map<string, Promise<boolean>>();

  constructor(readonly settings: BuiltinToolSettings) {
    this.folders = vscode.workspace.workspaceFolders ?? [];
    this.toolFolders = this.folders.map((f) => ({ name: f.name, path: f.uri.path }));
    this.exclude = excludeMatcher(settings.exclude);
    for (const glob of this.exclude.invalid) {
      if (toldInvalid.has(glob)) continue;
      toldInvalid.add(glob);
      // Said once per window: the glob fails closed (it excludes every path), so the tools read nothing until it is mended.
      void showWarning(`Parley: the parley.tools.exclude glob ${JSON.stringify(glob.slice(0, 200))} cannot be read, so until it is mended it excludes every path and the tools read nothing.`, 'Open Settings')
        .then((a) => a && vscode.commands.executeCommand('workbench.action.openSettings', 'parley.tools.exclude'));
    }
  }

  /** Resolves a path from the model; throws ToolError when it is outside the folders or excluded. */
  target(input: string): ToolTarget {
    const r = resolveToolPath(input, this.toolFolders);
    const folder = this.folders[r.folderIndex];
    const t = { uri: folder.uri.with({ path: r.path }), folder, relative: r.relative, shown: displayToolPath(this.toolFolders, r.folderIndex, r.relative) };
    this.refuseExcluded(t);
    return t;
  }

  /** The target for a URI VS Code gave (a search result, a diagnostic); undefined when outside every folder or excluded. */
  fromUri(uri: vscode.Uri): ToolTarget | undefined {
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (!folder) return undefined;
    const index = this.folders.findIndex((f) => f.uri.toString() === folder.uri.toString());
    const r = index >= 0 ? relativeToFolders(uri.path, [this.toolFolders[index]]) : undefined;
    if (!r || this.exclude.match(r.relative)) return undefined;
    return { uri, folder, relative: r.relative, shown: displayToolPath(this.toolFolders, index, r.relative) };
  }

  private refuseExcluded(t: ToolTarget): void {
    const glob = this.exclude.match(t.relative);
    if (glob) throw new ToolError(excludedMessage(t.shown, glob, this.exclude.invalid.includes(glob)));
  }

  /**
   * Refuses a target reached through a symbolic link that leaves its folder. file: URIs are resolved with realpath
   * (the real path must stay in the folder and not be excluded); other schemes cannot be resolved, so any link on the
   * way is refused. For a file that does not exist yet (one Apply would create), the deepest folder that exists is
   * resolved and the same checks apply to where the file would land; a dangling symbolic link on the way is refused.
   * Resolves to the path, relative to the folder, that the target really is (its own, when no link is on the way).
   */
  async checkLinks(t: ToolTarget): Promise<string> {
    if (t.uri.scheme === 'file') return (await this.checkRealPath(t)).relative;
    let dir = t.folder.uri;
    for (const segment of t.relative.split('/').filter(Boolean)) {
      dir = vscode.Uri.joinPath(dir, segment);
      const key = dir.toString();
      if (!this.linkFree.has(key)) this.linkFree.set(key, statIsLink(dir).then((link) => !link));
      if (!(await this.linkFree.get(key))) {
        throw new ToolError(`"${t.shown}" goes through a symbolic link, which cannot be checked on a ${t.uri.scheme} workspace; it is not read.`);
      }
    }
    return t.relative;
  }

  /** The real path of a local target, checked: inside its folder's real path and not excluded; and relative to it. */
  private async checkRealPath(t: ToolTarget): Promise<{ real: string; relative: string }> {
    const rootKey = t.folder.uri.fsPath;
    if (!this.realRoots.has(rootKey)) this.realRoots.set(rootKey, fs.realpath(rootKey).catch(() => rootKey));
    const root = await (this.realRoots.get(rootKey) as Promise<string>);
    const real = await realPathOfMaybeMissing(t.uri.fsPath, t.shown);
    if (!isInside(real, root)) throw new ToolError(`"${t.shown}" is a symbolic link (or inside one) that leads outside the workspace folder; it is not read.`);
    const realRelative = relativeToFolders(real, [{ name: '', path: root }])?.relative ?? '';
    const glob = this.exclude.match(realRelative);
    if (glob) throw new ToolError(`"${t.shown}" leads through a symbolic link to "${realRelative}", which is excluded by parley.tools.exclude (${glob}): secrets and dependencies are not read.`);
    return { real, relative: realRelative };
  }

  /**
   * A file's bytes, read from what was checked. On a local folder (file:) the file is opened once, and the open file
   * is proven to be the checked one before anything is read from it: its real path is resolved and checked (inside
   * the folder, not excluded), that path is opened without following a link at its end, and what was opened must be
   * that path (Linux: the kernel's path of the open file; elsewhere: the same device and inode as the path, whose real
   * path is unchanged). A path swapped for a link after the check is refused, never read. Other schemes cannot resolve
   * links: a link anywhere on the way is refused (checkLinks) and the file is read through VS Code.
   * Throws ToolError for a folder, a missing file, a file over `maxBytes` and a file that changed under the check.
   */
  async readBytes(t: ToolTarget, maxBytes: number): Promise<Uint8Array> {
    if (t.uri.scheme !== 'file') {
      await this.checkLinks(t);
      const stat = await this.stat(t);
      if (stat.type & vscode.FileType.Directory) throw isFolder(t);
      if (stat.size > maxBytes) throw tooLarge(t, stat.size, maxBytes);
      try {
        return await vscode.workspace.fs.readFile(t.uri);
      } catch (e) {
        throw notFound(t, e);
      }
    }
    const { real } = await this.checkRealPath(t);
    await toolReadSeam.afterCheck?.(t.uri.fsPath);
    let file: fs.FileHandle;
    try {
      // O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused as not a regular file).
      file = await fs.open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    } catch (e) {
      throw openFailed(t, e);
    }
    try {
      const stat = await file.stat();
      if (!(await isOpenedPath(file, stat, real))) throw changedUnderCheck(t);
      if (stat.isDirectory()) throw isFolder(t);
      if (!stat.isFile()) throw new ToolError(`"${t.shown}" is not a regular file (a device, socket or pipe); it is not read.`);
      if (stat.size > maxBytes) throw tooLarge(t, stat.size, maxBytes);
      const bytes = await readUpTo(file, stat.size, maxBytes + 1);
      if (bytes.length > maxBytes) throw tooLarge(t, bytes.length, maxBytes);
      return bytes;
    } catch (e) {
      throw notFound(t, e);
    } finally {
      await file.close();
    }
  }

  /** Stats a target; a missing one is a ToolError that says so. */
  async stat(t: ToolTarget): Promise<vscode.FileStat> {
    try {
      return await vscode.workspace.fs.stat(t.uri);
    } catch (e) {
      throw notFound(t, e);
    }
  }
}

function isFolder(t: ToolTarget): ToolError {
  return new ToolError(`"${t.shown}" is a folder: use list_directory to see what it holds.`);
}

function tooLarge(t: ToolTarget, size: number, maxBytes: number): ToolError {
  const mb = (n: number) => `${Number((n / 1024 / 1024).toFixed(1))} MB`;
  return new ToolError(`"${t.shown}" is ${(size / 1024 / 1024).toFixed(1)} MB, too large to read (the limit is ${mb(maxBytes)}).`);
}

function changedUnderCheck(t: ToolTarget): ToolError {
  return new ToolError(`"${t.shown}" changed while it was being read (a symbolic link on the way was swapped); it is not read.`);
}

/** Why opening a checked local file failed, in words for the model. */
function openFailed(t: ToolTarget, e: unknown): ToolError {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return new ToolError(`"${t.shown}" does not exist.`);
  // O_NOFOLLOW met a link where the check found none (ELOOP; EMLINK on FreeBSD, EFTYPE on some BSDs).
  if (code === 'ELOOP' || code === 'EMLINK' || code === 'EFTYPE') return changedUnderCheck(t);
  if (code === 'EISDIR') return isFolder(t);
  return new ToolError(`"${t.shown}" could not be read: ${e instanceof Error ? e.message : String(e)}`);
}

/**
 * The real path of `p`, also when it does not exist yet: the deepest existing ancestor resolved, the missing rest
 * appended. Throws ToolError for a symbolic link whose target does not exist (writing through it would create that target).
 */
async function realPathOfMaybeMissing(p: string, shown: string): Promise<string> {
  const rest: string[] = [];
  for (let at = p; ; ) {
    try {
      return path.join(await fs.realpath(at), ...rest);
    } catch {
      // Missing: a dangling link is refused; otherwise look one folder up.
    }
    const link = await fs.lstat(at).then((st) => st.isSymbolicLink(), () => false);
    if (link) throw new ToolError(`"${shown}" goes through a symbolic link whose target does not exist; it is not used.`);
    const up = path.dirname(at);
    if (up === at) return p;
    rest.unshift(path.basename(at));
    at = up;
  }
}

async function statIsLink(uri: vscode.Uri): Promise<boolean> {
  try {
    return ((await vscode.workspace.fs.stat(uri)).type & vscode.FileType.SymbolicLink) !== 0;
  } catch {
    return false;
  }
}

/** A file-system failure in words for the model. */
export function notFound(t: ToolTarget, e: unknown): ToolError {
  if (e instanceof ToolError) return e;
  if (e instanceof vscode.FileSystemError && e.code === 'FileNotFound') return new ToolError(`"${t.shown}" does not exist.`);
  return new ToolError(`"${t.shown}" could not be read: ${e instanceof Error ? e.message : String(e)}`);
}

/** A CancellationToken that fires with `signal`; dispose it after the call. */
export function cancellationFor(signal: AbortSignal): vscode.CancellationTokenSource {
  const source = new vscode.CancellationTokenSource();
  if (signal.aborted) source.cancel();
  else signal.addEventListener('abort', () => source.cancel(), { once: true });
  return source;
}
