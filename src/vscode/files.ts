// Small file helpers for what Parley keeps under its global storage: whole-file writes that readers never see half done.
//
// Node's fs, not vscode.workspace.fs: Parley runs only in a Node extension host (package.json has no `browser` entry),
// where globalStorageUri is a file: URI, and only Node's fs can append to a file and create a file exclusively.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';

/**
 * Writes a file whole: to a temporary file beside it, then renamed over it. A rename within one folder is atomic, so a
 * reader (another window too) sees the old content or the new, never a part.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, path);
  } catch (e) {
    await fs.rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
}

/**
 * Creates a file whole only when it does not exist yet: written to a temporary file, then hard-linked to its name
 * (link fails when the name exists, atomically). Returns false when it existed.
 */
export async function createFileOnce(path: string, data: string): Promise<boolean> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await fs.writeFile(tmp, data);
    await fs.link(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    await fs.rm(tmp, { force: true }).catch(() => {});
  }
}

/** A file's text, or undefined when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** A folder's entry names, or [] when it does not exist. */
export async function listFolder(path: string): Promise<string[]> {
  try {
    return await fs.readdir(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}
