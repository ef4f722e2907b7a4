// Reading a local file by the handle that was proven to be the checked file (Node's fs only, no VS Code: unit tested).
import { promises as fs, type Stats } from 'node:fs';

/**
 * Whether an open file is the file at `real` (a real path, checked before it was opened) now. Linux names the open
 * file's path in /proc/self/fd, which is exact whatever was swapped on the way (`procFd` false tries the other way,
 * for tests); elsewhere the path must still resolve to itself (no link on it) and be the same file (device and inode)
 * as the one opened.
 */
export async function isOpenedPath(file: fs.FileHandle, stat: Stats, real: string, procFd = true): Promise<boolean> {
  const opened = procFd ? await fs.readlink(`/proc/self/fd/${file.fd}`).catch(() => undefined) : undefined;
  if (opened !== undefined) return opened === real;
  try {
    const [now, again] = await Promise.all([fs.lstat(real), fs.realpath(real)]);
    return again === real && now.dev === stat.dev && now.ino === stat.ino;
  } catch {
    return false;
  }
}

/**
 * An open file's bytes from its start, at most `limit` (fewer when it ends sooner). `expected` is its size when it was
 * measured; it may have grown or shrunk since, so the read goes on to the end or to the limit.
 */
export async function readUpTo(file: fs.FileHandle, expected: number, limit: number): Promise<Uint8Array> {
  let buffer = new Uint8Array(Math.max(1, Math.min(expected + 1, limit)));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length >= limit) break;
      const bigger = new Uint8Array(Math.min(buffer.length * 2, limit));
      bigger.set(buffer);
      buffer = bigger;
    }
    const { bytesRead } = await file.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return buffer.subarray(0, length);
}
