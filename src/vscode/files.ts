// Small file helpers for what Parley keeps under its global storage: whole-file writes that readers never see half done.
//
// Node's fs, not vscode.workspace.fs: Parley runs only in a Node extension host (package.json has no `browser` entry),
// where globalStorageUri is a file: URI, and only Node's fs can append to a file and create a file exclusively.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Test-only (src/vscode/testSeam.ts): called with the file being written once half of its data is in the temporary
 * file; throwing stops the write there, as a crash would. Never set outside tests.
 */
export type HalfWritten = (target: string) => void;

/** Writes `data` to a new file and flushes it to the disk before returning, so a rename after it never names half a file. */
async function writeDurable(path: string, data: string | Uint8Array, halfWritten?: () => void): Promise<void> {
  const f = await fs.open(path, 'wx');
  try {
    if (halfWritten) {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      await f.writeFile(bytes.subarray(0, bytes.length >> 1));
      halfWritten();
      await f.writeFile(bytes.subarray(bytes.length >> 1));
    } else {
      await f.writeFile(data);
    }
    await f.sync();
  } finally {
    await f.close();
  }
}

/** Best effort: flushes a folder's entries (a rename in it) to the disk. Not every system can open a folder. */
async function syncFolder(path: string): Promise<void> {
  try {
    const d = await fs.open(dirname(path), 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // Windows cannot fsync a folder; the rename is still atomic for readers.
  }
}

/**
 * Writes a file whole: to a temporary file beside it, flushed to the disk, then renamed over it. A rename within one
 * folder is atomic, so a reader (another window too) sees the old content or the new, never a part; and since the
 * temporary file is on the disk before the rename, a power loss leaves the old content or the new too.
 */
export async function writeFileAtomic(path: string, data: string, halfWritten?: HalfWritten): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeDurable(tmp, data, halfWritten && (() => halfWritten(path)));
    await fs.rename(tmp, path);
  } catch (e) {
    await fs.rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
  await syncFolder(path);
}

/** Appends `data` to a file (made if missing) and flushes it to the disk before returning: a request counted stays counted. */
export async function appendDurable(path: string, data: string): Promise<void> {
  const f = await fs.open(path, 'a');
  try {
    await f.appendFile(data);
    await f.datasync();
  } finally {
    await f.close();
  }
}

/**
 * Creates a file whole only when it does not exist yet: written to a temporary file, then hard-linked to its name
 * (link fails when the name exists, atomically). Returns false when it existed.
 */
export async function createFileOnce(path: string, data: string | Uint8Array): Promise<boolean> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeDurable(tmp, data);
    await fs.link(tmp, path);
    await syncFolder(path);
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
