// The history list, made from the conversation files themselves: one small entry file beside each conversation.
//
// Why this shape: the list used to be one array in global state, read, changed and written back whole by every save,
// so when two windows saved at about the same time the one that wrote last dropped the other's conversation. Now each
// conversation has its own entry file (title, time, turn count), written only when that conversation is saved, and
// the list is the set of entries whose conversation file exists. A save touches no other conversation's files, so it
// cannot drop another window's conversation. An entry that is missing or damaged is made again from its conversation
// file (or from the list that earlier versions kept), so the list repairs itself.
//
// A conversation file that is not a conversation (cut short, random bytes, another program's JSON) is never dropped:
// it is moved aside as `<id>.corrupt.json`, and the list shows it as damaged, to open as text or delete.
import type { HistoryItem } from '../shared/protocol';
import type { Conversation } from './conversation';
import { conversationProblem } from './storedConversation';

/** `<id>.json` is a conversation; `<id>.entry.json` is its entry in the list. Ids are ours: word characters and `-`. */
const CONVERSATION_FILE = /^([\w-]+)\.json$/;
const ENTRY_FILE = /^([\w-]+)\.entry\.json$/;
const DAMAGED_FILE = /^([\w-]+)\.corrupt\.json$/;

/** A conversation's file name. Ids are ours (hex), but never let one name a path outside the folder. */
export function conversationFileName(id: string): string {
  return `${safeId(id)}.json`;
}

/** A conversation's list entry's file name. */
export function entryFileName(id: string): string {
  return `${safeId(id)}.entry.json`;
}

/** Where a damaged conversation file is moved: `<id>.corrupt.json`, or with `suffix` when that name is taken. */
export function damagedFileName(id: string, suffix = ''): string {
  return `${safeId(id)}${suffix ? `-${safeId(suffix)}` : ''}.corrupt.json`;
}

function safeId(id: string): string {
  return id.replace(/[^\w-]/g, '');
}

/** What the history list shows of a conversation. */
export function entryOf(c: Conversation): HistoryItem {
  const e: HistoryItem = { id: c.id, title: c.title, updatedAt: c.updatedAt, turnCount: c.turns.length };
  if (c.turns.some((t) => t.status === 'streaming')) e.streaming = true;
  return e;
}

/** An entry read from disk, or undefined when it is damaged or names another conversation. */
export function parseEntry(text: string | undefined, id: string): HistoryItem | undefined {
  try {
    const e = JSON.parse(text ?? '') as Partial<HistoryItem>;
    if (e?.id !== id || typeof e.title !== 'string' || typeof e.updatedAt !== 'number' || typeof e.turnCount !== 'number') return undefined;
    const out: HistoryItem = { id: e.id, title: e.title, updatedAt: e.updatedAt, turnCount: e.turnCount };
    if (typeof e.bytes === 'number') out.bytes = e.bytes;
    if (e.streaming === true) out.streaming = true;
    return out;
  } catch {
    return undefined;
  }
}

/**
 * A conversation file's text checked: the conversation, or why it is not one, in words for the log (field paths,
 * never content). Not one: not JSON (cut short, random bytes), or JSON of another shape: another conversation's id, or
 * any field, however deep, of another type than Parley writes (core/storedConversation.ts).
 */
export function checkConversationFile(text: string, id: string): { conversation: Conversation } | { problem: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { problem: 'not JSON: cut short, or not Parley\'s' };
  }
  const bad = conversationProblem(v, id);
  return bad === undefined ? { conversation: v as Conversation } : { problem: `${bad} is not what Parley writes there` };
}

/** A conversation read from disk, or undefined when the text is not one (see checkConversationFile). */
export function parseConversation(text: string, id: string): Conversation | undefined {
  const r = checkConversationFile(text, id);
  return 'conversation' in r ? r.conversation : undefined;
}

/** The conversation ids, entry ids and damaged files (by the name before `.corrupt.json`) among a folder's file names. */
export function scanHistoryFolder(names: readonly string[]): { conversations: string[]; entries: string[]; damaged: string[] } {
  const conversations: string[] = [];
  const entries: string[] = [];
  const damaged: string[] = [];
  for (const name of names) {
    const entry = ENTRY_FILE.exec(name);
    const bad = DAMAGED_FILE.exec(name);
    const c = CONVERSATION_FILE.exec(name);
    if (entry) entries.push(entry[1]);
    else if (bad) damaged.push(bad[1]);
    else if (c) conversations.push(c[1]);
  }
  return { conversations, entries, damaged };
}

/** How the list shows a damaged file: its name, when it was damaged (or found), and the flag for Open raw and Delete. */
export function damagedItem(id: string, mtimeMs: number): HistoryItem {
  return { id, title: damagedFileName(id), updatedAt: mtimeMs, turnCount: 0, damaged: true };
}

/**
 * The list, newest first: one entry per conversation file that exists (an entry alone is a deleted conversation), and
 * the damaged files.
 */
export function historyList(conversations: readonly string[], entries: ReadonlyMap<string, HistoryItem>, damaged: readonly HistoryItem[] = []): HistoryItem[] {
  const out: HistoryItem[] = [...damaged];
  for (const id of conversations) {
    const e = entries.get(id);
    if (e) out.push(e);
  }
  return out.sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id));
}

/** Why saving failed, in words, from the file system's error code. */
export function storageErrorReason(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return 'the disk is full';
    case 'EROFS':
      return 'the disk is read-only';
    case 'EACCES':
    case 'EPERM':
      return "Parley's storage folder is read-only";
    case 'ENOTDIR':
    case 'EEXIST':
    case 'EISDIR':
      return "Parley's storage folder is not a folder any more";
    default:
      return `the file system refused (${typeof code === 'string' ? code : e instanceof Error ? e.message : String(e)})`;
  }
}
