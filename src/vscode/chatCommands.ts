// The chat commands: open, new chat, Stop, history, export, and attaching an image from a file.
import * as vscode from 'vscode';
import { exportMarkdown } from '../core/conversation';
import { sniffImage } from '../core/images';
import { IMAGE_MIME_TYPES, LIMITS } from '../shared/protocol';
import type { ChatController } from './chatController';
import { revealChatView } from './chatView';
import { openUntitled } from './editors';
import type { HistoryStore } from './history';
import type { Log } from './log';
import { pickFiles, pickOne, showInfo } from './notices';
import type { ApiKeyStore } from './secrets';

/** Parley: New Chat. */
export async function newChat(chat: ChatController): Promise<void> {
  await revealChatView();
  await chat.newChat();
}

/** Parley: Stop (command id `parley.cancel`), the Stop button and Escape: aborts the running turn. */
export function stop(chat: ChatController): Promise<void> {
  return chat.stop();
}

/** Parley: Export Chat as Markdown, without any stored key. */
export async function exportChat(chat: ChatController, keys: ApiKeyStore, log: Log): Promise<void> {
  if (chat.current.turns.length === 0) {
    void showInfo('Parley: the chat is empty; nothing to export.');
    return;
  }
  await openUntitled(exportMarkdown(chat.current, [...(await keys.storedKeys()), ...log.knownSecrets()]), 'markdown');
}

/** Parley: Show Chat History: a pick of saved conversations; the picked one opens in the view. */
export async function showHistory(history: HistoryStore, chat: ChatController): Promise<void> {
  const items = await history.list();
  if (items.length === 0) {
    void showInfo('Parley: no saved conversations yet.');
    return;
  }
  const pick = await pickOne(
    items.map((i) => i.damaged
      ? { label: `Damaged: ${i.id}.corrupt.json`, iconPath: new vscode.ThemeIcon('warning'), description: new Date(i.updatedAt).toLocaleString(), detail: 'Opens it as text', id: i.id, damaged: true }
      : { label: i.title, description: new Date(i.updatedAt).toLocaleString(), detail: `${i.turnCount} messages`, id: i.id, damaged: false }),
    { title: 'Parley: Chat History', matchOnDescription: true },
  );
  if (!pick) return;
  if (pick.damaged) return chat.files.openRaw(pick.id);
  await revealChatView();
  await chat.openConversation(pick.id);
}

/** The composer's image button: files are checked by size first, then by their bytes. */
export async function pickImage(chat: ChatController): Promise<void> {
  const uris = await pickFiles({
    canSelectMany: true,
    openLabel: 'Attach',
    filters: { Images: ['png', 'jpg', 'jpeg', 'gif', 'webp'] },
  });
  const post = chat.channel.post.bind(chat.channel);
  for (const uri of uris ?? []) {
    const name = uri.path.split('/').pop() ?? 'image';
    // Size first: a huge file is refused without being read.
    if ((await vscode.workspace.fs.stat(uri)).size > LIMITS.imageBytes) {
      post({ type: 'composerError', text: `${name} is larger than ${LIMITS.imageBytes / 1024 / 1024} MB; it was not attached.` });
      continue;
    }
    const bytes = await vscode.workspace.fs.readFile(uri);
    const mime = sniffImage(bytes);
    if (!mime || !(IMAGE_MIME_TYPES as readonly string[]).includes(mime)) {
      post({ type: 'composerError', text: `${name} is not a PNG, JPEG, GIF or WebP image; it was not attached.` });
      continue;
    }
    post({ type: 'imageAttached', image: { name, dataUrl: `data:${mime};base64,${Buffer.from(bytes).toString('base64')}` } });
  }
}
