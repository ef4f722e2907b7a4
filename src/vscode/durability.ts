// What Parley does when storage is not what it expects: a damaged conversation file moved aside, a reply interrupted
// by its window going away, a save that fails. Rarely needed, so built into dist/durability.js and loaded on first use.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Conversation } from '../core/conversation';
import { conversationFileName, damagedFileName, entryFileName, parseConversation, storageErrorReason } from '../core/historyIndex';
import { recoverInterrupted } from '../core/recovery';
import type { UsageRecord } from '../core/usageLedger';
import { readTextIfExists } from './files';
import type { Log } from './log';

/** A conversation checked again after a damaged read: good after all (saved meanwhile), moved aside under an id, or gone. */
export type MoveAside = { conversation: Conversation } | { damagedId: string } | undefined;

/**
 * Moves the damaged conversation file `<dir>/<id>.json` to `<id>.corrupt.json` (another name if that one exists:
 * nothing is replaced), with its entry deleted, and says so in the log with `why` (names and field paths only, never
 * content). Renamed, which takes whatever is at `<id>.json` at that moment, then checked again: a good file that
 * another window saved meanwhile goes back (unless a newer save is there by then), so a good save is never moved aside
 * or deleted.
 */
export async function moveAside(dir: string, id: string, log: { warn(line: string): void } | undefined, why?: string): Promise<MoveAside> {
  const from = join(dir, conversationFileName(id));
  const exists = (p: string) => fs.stat(p).then(() => true, () => false);
  for (let i = 0; i < 5; i++) {
    const damagedId = i === 0 ? id : `${id}-${randomBytes(3).toString('hex')}`;
    const name = damagedFileName(damagedId);
    const to = join(dir, name);
    if (await exists(to)) continue;
    try {
      await fs.rename(from, to);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      log?.warn(`History: ${conversationFileName(id)} is damaged and could not be moved aside (${(e as NodeJS.ErrnoException).code ?? String(e)}).`);
      return undefined;
    }
    const again = parseConversation((await readTextIfExists(to).catch(() => undefined)) ?? '', id);
    if (again) {
      // A save landed between the read and the rename: put it back, unless an even newer save is there already.
      await fs.link(to, from).catch(() => undefined);
      await fs.rm(to, { force: true });
      return { conversation: again };
    }
    await fs.rm(join(dir, entryFileName(id)), { force: true });
    log?.warn(`History: ${conversationFileName(id)} is not a readable conversation (${why ?? "cut short, or not Parley's"}); moved aside as ${name}. The history list shows it as damaged, with Open raw and Delete.`);
    return { damagedId };
  }
  return undefined;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Marks the replies of `c` that no live window streams as Interrupted (core/recovery.ts has the rule) and returns the
 * usage to count for them, each under its request's id.
 */
export function recover(c: Conversation, session: string, streamingTurn: string | undefined, log: Log): UsageRecord[] {
  const before = c.turns.filter((t) => t.status === 'streaming').length;
  const counted = recoverInterrupted(c, {
    session, pid: process.pid, hostname: hostname(), now: Date.now(), alive: processAlive,
    streaming: (turnId) => streamingTurn === turnId,
  });
  const after = c.turns.filter((t) => t.status === 'streaming').length;
  if (after < before) {
    log.info(`Conversation ${c.id}: ${before - after} reply interrupted while it streamed (its window went away): its text is kept, marked Interrupted; ${counted.length} request's estimated usage counted.`);
  }
  return counted;
}

/** What the panel says when the conversation to open is damaged. */
export function damagedNotice(damagedId: string): string {
  return `This conversation's file is damaged, so it was not opened. It was moved aside as ${damagedId}.corrupt.json: the history list shows it, with Open raw and Delete.`;
}

/**
 * What the panel and the notification say while the conversation cannot be saved. With the failure (`id`, `e`,
 * `log`): the first of a run of failures, also logged (the chat shows it as a notification with Export Chat).
 */
export function unsavedText(why: string, id?: string, e?: unknown, log?: Log): string {
  const text = `Parley can't save this conversation: ${why}. It stays open in this window until you close it; copy or export it (Parley: Export Chat as Markdown) to keep it. Parley tries again with each change.`;
  if (log && id) {
    log.error(`Saving conversation ${id} failed: ${why} (${(e as NodeJS.ErrnoException | undefined)?.code ?? 'no code'}). It stays in memory; each change tries again.`);
  }
  return text;
}

/** Why a save failed, in words, for unsavedText. */
export function saveFailure(e: unknown): string {
  return storageErrorReason(e);
}

/** What the panel says, and the log, when saving works again after failing. */
export function savedAgain(id: string, log: Log): string {
  log.info(`Saving conversation ${id} works again.`);
  return 'Parley can save again: this conversation is saved.';
}
