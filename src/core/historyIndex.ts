// The history list, made from the conversation files themselves: one small entry file beside each conversation.
//
// Why this shape: the list used to be one array in global state, read, changed and written back whole by every save,
// so when two windows saved at about the same time the one that wrote last dropped the other's conversation. Now each
// conversation has its own entry file (title, time, turn count), written only when that conversation is saved, and
// the list is the set of entries whose conversation file exists. A save touches no other conversation's files, so it
// cannot drop another window's conversation. An entry that is missing or damaged is made again from its conversation
// file (or from the list that earlier versions kept), so the list repairs itself.
import type { HistoryItem } from '../shared/protocol';
import type { Conversation } from './conversation';

/** `<id>.json` is a conversation; `<id>.entry.json` is its entry in the list. Ids are ours: word characters and `-`. */
const CONVERSATION_FILE = /^([\w-]+)\.json$/;
const ENTRY_FILE = /^([\w-]+)\.entry\.json$/;

/** A conversation's file name. Ids are ours (hex), but never let one name a path outside the folder. */
export function conversationFileName(id: string): string {
  return `${safeId(id)}.json`;
}

/** A conversation's list entry's file name. */
export function entryFileName(id: string): string {
  return `${safeId(id)}.entry.json`;
}

function safeId(id: string): string {
  return id.replace(/[^\w-]/g, '');
}

/** What the history list shows of a conversation. */
export function entryOf(c: Conversation): HistoryItem {
  return { id: c.id, title: c.title, updatedAt: c.updatedAt, turnCount: c.turns.length };
}

/** An entry read from disk, or undefined when it is damaged or names another conversation. */
export function parseEntry(text: string | undefined, id: string): HistoryItem | undefined {
  try {
    const e = JSON.parse(text ?? '') as Partial<HistoryItem>;
    if (e?.id !== id || typeof e.title !== 'string' || typeof e.updatedAt !== 'number' || typeof e.turnCount !== 'number') return undefined;
    return { id: e.id, title: e.title, updatedAt: e.updatedAt, turnCount: e.turnCount };
  } catch {
    return undefined;
  }
}

/** The conversation ids and entry ids among a folder's file names. */
export function scanHistoryFolder(names: readonly string[]): { conversations: string[]; entries: string[] } {
  const conversations: string[] = [];
  const entries: string[] = [];
  for (const name of names) {
    const entry = ENTRY_FILE.exec(name);
    if (entry) entries.push(entry[1]);
    else {
      const c = CONVERSATION_FILE.exec(name);
      if (c) conversations.push(c[1]);
    }
  }
  return { conversations, entries };
}

/** The list, newest first: one entry per conversation file that exists (an entry alone is a deleted conversation). */
export function historyList(conversations: readonly string[], entries: ReadonlyMap<string, HistoryItem>): HistoryItem[] {
  const out: HistoryItem[] = [];
  for (const id of conversations) {
    const e = entries.get(id);
    if (e) out.push(e);
  }
  return out.sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id));
}
