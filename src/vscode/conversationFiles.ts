// The conversations' life on disk, as the chat sees it: read (a damaged file moved aside, a reply whose window went
// away recovered), saved one at a time (and every few seconds while a reply streams), other windows' interrupted
// replies recovered, and the history list's deletions. A failed save is said once, and again when saving works.
import { hostname } from 'node:os';
import { settleUnfinishedCalls, type Conversation, type Turn } from '../core/conversation';
import { newId } from '../core/ids';
import type { TurnOwner } from '../core/recovery';
import type { UsageRecord } from '../core/usageLedger';
import type { HistoryItem } from '../shared/protocol';
import type { HistoryStore } from './history';
import { durability } from './lazy/durability';
import type { Log } from './log';
import type { ViewChannel } from './viewChannel';

/** This extension host session, as the owner of the replies it streams (core/recovery.ts). */
const SESSION = newId();
/** A streaming reply is saved this often when it changed, and at least every HEARTBEAT_MS while it runs. */
const SAVE_EVERY_MS = 2_000;
const HEARTBEAT_MS = 10_000;

/** This window as the owner of a reply it streams, with a new beat. */
export function owner(): TurnOwner {
  return { session: SESSION, pid: process.pid, hostname: hostname(), beat: Date.now() };
}

/** What the files need around them, handed in. */
export interface FilesHost {
  history: HistoryStore;
  log: Log;
  channel: ViewChannel;
  /** Counts usage found after the fact (a recovered reply's request). */
  record(u: UsageRecord): Promise<void>;
  /** The conversation open in this window now. */
  openId(): string;
  /** The first failure of a run of failed saves, said outside the panel too (a notification with Export Chat). */
  unsavedNotification(text: string): void;
  /** Opens a damaged file as text, read-only. */
  openReadOnly(path: string): Promise<void>;
}

/** The conversations' files, for one window's chat. */
export class ConversationFiles {
  /** Saves one at a time, in order: a streaming save never lands after the final one. */
  private saving: Promise<void> = Promise.resolve();
  /** Why the last save failed, while saving fails: the panel says so until a save works again. */
  private unsaved: string | undefined;
  /** What a read found (a damaged file), said again once the view is there. */
  private readNotice: string | undefined;
  /** The assistant turn this window streams now: recovery leaves it alone. */
  streamingTurn: string | undefined;

  constructor(private readonly host: FilesHost) {}

  /**
   * Reads a conversation from the history. A damaged file is moved aside (the history lists it) and the reader is told;
   * a reply whose window went away while it streamed becomes Interrupted, its text kept and its usage counted once;
   * a tool call it left unfinished is not run.
   */
  async read(id: string): Promise<Conversation | undefined> {
    const { history, channel, log } = this.host;
    // A save still queued (a reply's final one) would otherwise be read as its older, streaming self.
    await this.saving;
    const r = await history.read(id);
    if (r && 'damagedId' in r) {
      const text = durability().damagedNotice(r.damagedId);
      this.readNotice = text;
      channel.post({ type: 'notice', text, actions: ['showLog'] });
      return undefined;
    }
    const c = r?.conversation;
    if (!c) return undefined;
    const streaming = () => c.turns.filter((t) => t.status === 'streaming').length;
    const before = streaming();
    if (before > 0) {
      const counted = durability().recover(c, SESSION, this.streamingTurn, log);
      if (streaming() < before) {
        for (const u of counted) await this.host.record(u);
        await this.persist(c);
      }
    }
    // A call the file left waiting (or queued, or running) in a turn that no longer streams will never run: it is shown
    // as not run, with no approval buttons, and the model is told so if the conversation goes on. A turn another live
    // window still streams (recover left it) is that window's: its waiting call may yet be answered there.
    settleUnfinishedCalls(c);
    return c;
  }

  /** The notices a redrawn panel shows again: a damaged file met on reading, a save that keeps failing. */
  postNotices(): void {
    const { channel } = this.host;
    if (this.readNotice) channel.post({ type: 'notice', text: this.readNotice, actions: ['showLog'] });
    this.readNotice = undefined;
    if (this.unsaved) channel.post({ type: 'notice', text: durability().unsavedText(this.unsaved) });
  }

  /** Saves `c` and marks it as the one open, for the next window. */
  save(c: Conversation): Promise<void> {
    return this.persist(c, true);
  }

  /**
   * Writes the conversation, one save at a time. When saving fails (a read-only or full disk, a storage folder that is
   * not a folder), the reader is told once, in a notification and in the panel; the conversation stays in memory and
   * each later change tries again; when one works, the panel says so. Never throws.
   */
  persist(c: Conversation, markOpen = false): Promise<void> {
    const { history, channel, log } = this.host;
    const run = this.saving.then(async () => {
      try {
        await history.save(c);
        if (markOpen) await history.setOpen(c.id);
      } catch (e) {
        const d = durability();
        const why = d.saveFailure(e);
        // Said once per run of failures; each later change tries again.
        if (this.unsaved === undefined) {
          const text = d.unsavedText(why, c.id, e, log);
          this.host.unsavedNotification(text);
          channel.post({ type: 'notice', text });
        }
        this.unsaved = why;
        return;
      }
      if (this.unsaved !== undefined) {
        this.unsaved = undefined;
        channel.post({ type: 'notice', text: durability().savedAgain(c.id, log) });
      }
    });
    // A throw in the failure handling must not stop every later save.
    this.saving = run.catch((e) => log.error(`Saving failed: ${e instanceof Error ? e.message : String(e)}`));
    return this.saving;
  }

  /**
   * Saves the conversation while `turn` streams: every SAVE_EVERY_MS when the turn changed, and every HEARTBEAT_MS
   * anyway (a call waiting for approval changes nothing), each time with a new beat in its owner, so that a reload
   * or a crash loses at most the last seconds of the reply. Returns the function that stops it.
   */
  whileStreaming(c: Conversation, turn: Turn): () => void {
    const shape = () => `${turn.text.length}|${turn.reasoning?.length ?? 0}|${turn.steps?.length ?? 0}|${turn.inflight?.id ?? ''}`;
    let saved = shape();
    let beat = Date.now();
    let busy = false;
    this.streamingTurn = turn.id;
    const timer = setInterval(() => {
      // On a disk slower than the interval, saves do not pile up: the next tick after this one takes the changes.
      if (busy || turn.status !== 'streaming' || (shape() === saved && Date.now() - beat < HEARTBEAT_MS)) return;
      saved = shape();
      beat = Date.now();
      turn.owner = owner();
      busy = true;
      // Marked open when the turn began: global state is not written every 2 s.
      void this.persist(c).finally(() => (busy = false));
    }, SAVE_EVERY_MS);
    return () => {
      clearInterval(timer);
      if (this.streamingTurn === turn.id) this.streamingTurn = undefined;
    };
  }

  /** Posts the history list, after recovering what other windows left streaming. */
  async postHistory(): Promise<void> {
    const { history, channel } = this.host;
    let items = await history.list();
    if (await this.recoverOthers(items)) items = await history.list();
    channel.post({ type: 'history', items });
  }

  /**
   * Recovers the replies that other conversations were streaming when their window went away (a window reloads into
   * the conversation last opened in any window, so its own may be another): each becomes Interrupted, its text kept
   * and its request's usage counted once. Replies a live window streams are left alone. Returns whether any changed.
   * Reads only conversations whose entry says a reply was streaming.
   */
  async recoverOthers(items?: readonly HistoryItem[]): Promise<boolean> {
    const { history, log } = this.host;
    let changed = false;
    for (const item of items ?? (await history.list())) {
      if (!item.streaming || item.id === this.host.openId()) continue;
      // In turn with this window's saves; the file is written back only if nobody saved or deleted it meanwhile (a
      // live window, or this one having opened it), and its usage is counted only then (another recoverer counts
      // the same request id, once).
      const run = this.saving.then(async () => {
        let counted: UsageRecord[] = [];
        const written = await history.update(item.id, (c) => {
          if (c.id === this.host.openId()) return false;
          const before = c.turns.filter((t) => t.status === 'streaming').length;
          counted = durability().recover(c, SESSION, this.streamingTurn, log);
          return c.turns.filter((t) => t.status === 'streaming').length < before;
        });
        if (written) for (const u of counted) await this.host.record(u);
        return written;
      });
      this.saving = run.then(() => {}, (e) => log.warn(`Recovering conversation ${item.id} failed: ${e instanceof Error ? e.message : String(e)}`));
      if (await run.catch(() => false)) changed = true;
    }
    return changed;
  }

  /** A damaged file from the history list: opened read-only, as text. */
  openRaw(id: string): Promise<void> {
    return this.host.openReadOnly(this.host.history.damagedPath(id));
  }

  async deleteDamaged(id: string): Promise<void> {
    await this.host.history.deleteDamaged(id);
    this.host.log.info(`History: deleted the damaged file ${id}.corrupt.json.`);
    await this.postHistory();
  }

  /** Deletes a conversation that is not open (the chat starts a new one first when it is). */
  async delete(id: string): Promise<void> {
    // After this window's saves: a save of another conversation naming an image is on the disk before the image
    // deletion reads who names it.
    await this.saving;
    await this.host.history.delete(id);
    await this.postHistory();
  }
}
