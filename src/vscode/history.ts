// Conversations on disk under the extension's global storage: one file each, and beside it the small entry the list shows.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type * as vscode from 'vscode';
import type { Conversation } from '../core/conversation';
import {
  checkConversationFile, conversationFileName, damagedFileName, damagedItem, entryFileName, entryOf, historyList, parseEntry,
  scanHistoryFolder,
} from '../core/historyIndex';
import type { HistoryItem } from '../shared/protocol';
import { createFileOnce, listFolder, readTextIfExists, writeFileAtomic, type HalfWritten } from './files';
import { durability } from './lazy/durability';
import { historyImages } from './lazy/historyImages';

/** The list that earlier versions kept in global state; read only to make a missing entry (see core/historyIndex.ts). */
const INDEX_STATE = 'parley.historyIndex';
const OPEN_STATE = 'parley.openConversation';

/**
 * A conversation read from disk: the conversation, or (damaged) the id its file was moved aside under
 * (`<damagedId>.corrupt.json`), or nothing there.
 */
export type Loaded = { conversation: Conversation } | { damagedId: string } | undefined;

/**
 * The saved conversations. The list is made from the folder itself (core/historyIndex.ts says why), so a conversation
 * saved in one window is in every window's list, and no save can drop another's. Files are written whole (temporary
 * file flushed to disk, then rename), so a window reading while another writes sees the old file or the new one, and
 * so does anyone after a power loss. A file that is not a conversation is moved aside, never dropped.
 */
export class HistoryStore {
  private readonly dir: string;

  /** `faults`: only a test's own store has them (src/vscode/testSeam.ts), to stop a save half-way. */
  constructor(
    storage: Pick<vscode.Uri, 'fsPath'>,
    private readonly state: Pick<vscode.Memento, 'get' | 'update'>,
    private readonly log?: { warn(line: string): void },
    private readonly faults?: { halfWritten: HalfWritten },
  ) {
    this.dir = join(storage.fsPath, 'conversations');
  }

  /**
   * The list, newest first, from the entry files: long histories never load every conversation. A conversation is
   * read only when its entry is missing or damaged, or its file's size is not the one its entry was written with
   * (cut short, or written by another window after the entry was read): then it is checked, and moved aside if damaged.
   */
  async list(): Promise<HistoryItem[]> {
    const names = await listFolder(this.dir);
    void this.removeLeftovers(this.dir, names);
    const { conversations, entries, damaged } = scanHistoryFolder(names);
    const withEntry = new Set(entries);
    const read = new Map<string, HistoryItem>();
    const bad: HistoryItem[] = [];
    const legacy = new Map((this.state.get<HistoryItem[]>(INDEX_STATE) ?? []).map((i) => [i.id, i]));
    await Promise.all(conversations.map(async (id) => {
      let e = withEntry.has(id) ? parseEntry(await readTextIfExists(join(this.dir, entryFileName(id))).catch(() => undefined), id) : undefined;
      if (e?.bytes !== undefined && (await this.size(conversationFileName(id))) !== e.bytes) e = undefined;
      if (!e) {
        // The old list only for a conversation with no entry file at all: a stale entry is newer than it.
        const r = await this.repairEntry(id, withEntry.has(id) ? undefined : legacy.get(id));
        if (r && 'damagedId' in r) damaged.push(r.damagedId);
        else e = r;
      }
      if (e) read.set(id, e);
    }));
    await Promise.all([...new Set(damaged)].map(async (id) => bad.push(damagedItem(id, (await this.mtime(damagedFileName(id))) ?? 0))));
    // Each conversation has had its entry made by now: the old list is not needed again (an entry that could not be
    // written is made from its conversation file next time).
    if (legacy.size > 0) await this.state.update(INDEX_STATE, undefined);
    return historyList(conversations, read, bad);
  }

  /**
   * Makes a missing or damaged entry: from the list earlier versions kept, else from the conversation file. Created
   * only if no entry exists by then, so a save's newer entry is never replaced by this older one.
   */
  private async repairEntry(id: string, legacy: HistoryItem | undefined): Promise<HistoryItem | { damagedId: string } | undefined> {
    const loaded = legacy?.id === id ? undefined : await this.read(id);
    if (loaded && 'damagedId' in loaded) return loaded;
    const c = loaded?.conversation;
    const e = legacy?.id === id ? legacy : c && c.turns.length > 0 ? { ...entryOf(c), bytes: await this.size(conversationFileName(id)) } : undefined;
    if (!e) return undefined;
    const path = join(this.dir, entryFileName(id));
    const existing = await readTextIfExists(path).catch(() => undefined);
    const saved = parseEntry(existing, id);
    // A save wrote it meanwhile (its size check is for the next list).
    if (saved && (saved.bytes === undefined || saved.bytes === e.bytes)) return saved;
    // A damaged or stale entry is replaced; at worst this replaces an entry a save wrote this very moment with an older
    // one (an older title or time), never with none, and the next list's size check mends it.
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

  /** The conversation, or undefined when it is missing or damaged (a damaged file is moved aside: see `read`). */
  async load(id: string): Promise<Conversation | undefined> {
    const r = await this.read(id);
    return r && 'conversation' in r ? r.conversation : undefined;
  }

  /**
   * Reads a conversation; a file that is not one (not JSON, or any field of another type than Parley writes) is moved
   * aside as `<id>.corrupt.json` and logged.
   */
  async read(id: string): Promise<Loaded> {
    const file = conversationFileName(id);
    const text = await readTextIfExists(join(this.dir, file)).catch(() => undefined);
    if (text === undefined) return undefined;
    const checked = checkConversationFile(text, id);
    if (!('conversation' in checked)) return durability().moveAside(this.dir, id, this.log, checked.problem);
    const c = checked.conversation;
    if (text.includes('"ref":')) {
      const images = historyImages();
      if (images.hasImageRefs(c)) await images.withImageData(c, join(this.dir, 'images'));
    }
    return { conversation: c };
  }

  /**
   * Reads a conversation, lets `change` change it, and writes it back only if `change` says it changed it and the file
   * is still as it was read (no other save or delete came between). Returns whether it was written.
   */
  async update(id: string, change: (c: Conversation) => boolean): Promise<boolean> {
    const path = join(this.dir, conversationFileName(id));
    const before = await readTextIfExists(path).catch(() => undefined);
    if (before === undefined) return false;
    const r = await this.read(id);
    const c = r && 'conversation' in r ? r.conversation : undefined;
    if (!c || !change(c)) return false;
    if ((await readTextIfExists(path).catch(() => undefined)) !== before) return false;
    await this.save(c);
    return true;
  }

  /** The path of a damaged file, to open as text. */
  damagedPath(id: string): string {
    return join(this.dir, damagedFileName(id));
  }

  async deleteDamaged(id: string): Promise<void> {
    await fs.rm(this.damagedPath(id), { force: true });
  }

  /** Saves a conversation with at least one turn: its file, then its entry; no other conversation's files are touched. */
  async save(c: Conversation): Promise<void> {
    if (c.turns.length === 0) return;
    // Images go to files of their own, written once (historyImages.ts says why).
    const stored = c.turns.some((t) => t.images?.length) ? await historyImages().withImageRefs(c, join(this.dir, 'images')) : c;
    const text = JSON.stringify(stored);
    await fs.mkdir(this.dir, { recursive: true });
    await writeFileAtomic(join(this.dir, conversationFileName(c.id)), text, this.faults?.halfWritten);
    await writeFileAtomic(join(this.dir, entryFileName(c.id)), JSON.stringify({ ...entryOf(c), bytes: Buffer.byteLength(text) }), this.faults?.halfWritten);
    // Another window deleting a conversation may have removed an image this one names just before it was written:
    // each named image is checked for again now, and written again if gone.
    if (stored !== c) await historyImages().withImageRefs(c, join(this.dir, 'images'));
  }

  /**
   * Deletes the conversation file first (an entry without its conversation is not listed), then its images that no
   * other conversation names: a deleted screenshot does not stay on the disk.
   */
  async delete(id: string): Promise<void> {
    const path = join(this.dir, conversationFileName(id));
    const refs = imageRefs(await readTextIfExists(path).catch(() => undefined));
    await fs.rm(path, { force: true });
    await fs.rm(join(this.dir, entryFileName(id)), { force: true });
    if (refs.size > 0) await this.removeUnusedImages(refs);
  }

  /** Removes those of `refs` that no conversation file names any more (reading only the files that hold images). */
  private async removeUnusedImages(refs: Set<string>): Promise<void> {
    const { conversations } = scanHistoryFolder(await listFolder(this.dir));
    for (const other of conversations) {
      const text = await readTextIfExists(join(this.dir, conversationFileName(other))).catch(() => null);
      // A file that could not be read might name any of them: keep them all.
      if (text === null) return;
      for (const r of imageRefs(text)) refs.delete(r);
      if (refs.size === 0) return;
    }
    const images = join(this.dir, 'images');
    await Promise.all([...refs].map((r) => fs.rm(join(images, r), { force: true }).catch(() => {})));
    void this.removeLeftovers(images, await listFolder(images).catch(() => []));
  }

  /**
   * Removes the temporary files of writes that a crash cut short (`*.tmp`, never renamed into place). Only those over
   * a minute old: a younger one may be another window's write in progress.
   */
  private async removeLeftovers(dir: string, names: readonly string[]): Promise<void> {
    const now = Date.now();
    for (const name of names) {
      if (!name.endsWith('.tmp')) continue;
      const p = join(dir, name);
      const st = await fs.stat(p).catch(() => undefined);
      if (st && now - st.mtimeMs > 60_000) await fs.rm(p, { force: true }).catch(() => {});
    }
  }

  async clear(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
    await this.state.update(INDEX_STATE, undefined);
  }

  private async size(name: string): Promise<number | undefined> {
    return fs.stat(join(this.dir, name)).then((s) => s.size, () => undefined);
  }

  private async mtime(name: string): Promise<number | undefined> {
    return fs.stat(join(this.dir, name)).then((s) => s.mtimeMs, () => undefined);
  }
}

/** The image files a conversation file's text names (`"ref":"<sha-256>.<type>"`). */
function imageRefs(text: string | undefined): Set<string> {
  const out = new Set<string>();
  if (!text?.includes('"ref":')) return out;
  for (const m of text.matchAll(/"ref":"([0-9a-f]{64}\.(?:png|jpeg|gif|webp))"/g)) out.add(m[1]);
  return out;
}
