// Conversations on disk under the extension's global storage: one file each, and beside it the small entry the list shows.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type * as vscode from 'vscode';
import type { Conversation } from '../core/conversation';
import { conversationFileName, entryFileName, entryOf, historyList, parseEntry, scanHistoryFolder } from '../core/historyIndex';
import type { HistoryItem } from '../shared/protocol';
import { createFileOnce, listFolder, readTextIfExists, writeFileAtomic } from './files';

/** The list that earlier versions kept in global state; read only to make a missing entry (see core/historyIndex.ts). */
const INDEX_STATE = 'parley.historyIndex';
const OPEN_STATE = 'parley.openConversation';

/**
 * The saved conversations. The list is made from the folder itself (core/historyIndex.ts says why), so a conversation
 * saved in one window is in every window's list, and no save can drop another's. Files are written whole (temporary
 * file, then rename), so a window reading while another writes sees the old file or the new one.
 */
export class HistoryStore {
  private readonly dir: string;

  constructor(storage: vscode.Uri, private readonly state: vscode.Memento) {
    this.dir = join(storage.fsPath, 'conversations');
  }

  /** The list, newest first, from the entry files only: long histories never load every conversation. */
  async list(): Promise<HistoryItem[]> {
    const { conversations, entries } = scanHistoryFolder(await listFolder(this.dir));
    const withEntry = new Set(entries);
    const read = new Map<string, HistoryItem>();
    const legacy = new Map((this.state.get<HistoryItem[]>(INDEX_STATE) ?? []).map((i) => [i.id, i]));
    await Promise.all(conversations.map(async (id) => {
      let e = withEntry.has(id) ? parseEntry(await readTextIfExists(join(this.dir, entryFileName(id))).catch(() => undefined), id) : undefined;
      if (!e) e = await this.repairEntry(id, legacy.get(id));
      if (e) read.set(id, e);
    }));
    return historyList(conversations, read);
  }

  /**
   * Makes a missing or damaged entry: from the list earlier versions kept, else from the conversation file. Created
   * only if no entry exists by then, so a save's newer entry is never replaced by this older one.
   */
  private async repairEntry(id: string, legacy: HistoryItem | undefined): Promise<HistoryItem | undefined> {
    const c = legacy?.id === id ? undefined : await this.load(id);
    const e = legacy?.id === id ? legacy : c && c.turns.length > 0 ? entryOf(c) : undefined;
    if (!e) return undefined;
    const path = join(this.dir, entryFileName(id));
    const existing = await readTextIfExists(path).catch(() => undefined);
    const saved = parseEntry(existing, id);
    if (saved) return saved; // a save wrote it meanwhile
    // A damaged entry is replaced; at worst this replaces an entry a save wrote this very moment with an older one
    // (an older title or time), never with none.
    if (existing !== undefined) await writeFileAtomic(path, JSON.stringify(e)).catch(() => {});
    else await createFileOnce(path, JSON.stringify(e)).catch(() => false);
    return e;
  }

  openId(): string | undefined {
    return this.state.get<string>(OPEN_STATE);
  }

  async setOpen(id: string | undefined): Promise<void> {
    await this.state.update(OPEN_STATE, id);
  }

  async load(id: string): Promise<Conversation | undefined> {
    try {
      const c = JSON.parse(await fs.readFile(join(this.dir, conversationFileName(id)), 'utf8')) as Conversation;
      return c && Array.isArray(c.turns) ? c : undefined;
    } catch {
      return undefined;
    }
  }

  /** Saves a conversation with at least one turn: its file, then its entry; no other conversation's files are touched. */
  async save(c: Conversation): Promise<void> {
    if (c.turns.length === 0) return;
    await fs.mkdir(this.dir, { recursive: true });
    await writeFileAtomic(join(this.dir, conversationFileName(c.id)), JSON.stringify(c));
    await writeFileAtomic(join(this.dir, entryFileName(c.id)), JSON.stringify(entryOf(c)));
  }

  /** Deletes the conversation file first: an entry without its conversation is not listed. */
  async delete(id: string): Promise<void> {
    await fs.rm(join(this.dir, conversationFileName(id)), { force: true });
    await fs.rm(join(this.dir, entryFileName(id)), { force: true });
  }

  async clear(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
    await this.state.update(INDEX_STATE, undefined);
  }
}
