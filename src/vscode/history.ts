// Conversations on disk under the extension's global storage: one file each, plus a small index in global state.
import * as vscode from 'vscode';
import type { Conversation } from '../core/conversation';
import type { HistoryItem } from '../shared/protocol';

const INDEX_STATE = 'parley.historyIndex';
const OPEN_STATE = 'parley.openConversation';

export class HistoryStore {
  private readonly dir: vscode.Uri;

  constructor(storage: vscode.Uri, private readonly state: vscode.Memento) {
    this.dir = vscode.Uri.joinPath(storage, 'conversations');
  }

  /** The index only: long histories never load every conversation. */
  list(): HistoryItem[] {
    return [...this.state.get<HistoryItem[]>(INDEX_STATE, [])].sort((a, b) => b.updatedAt - a.updatedAt);
  }

  openId(): string | undefined {
    return this.state.get<string>(OPEN_STATE);
  }

  async setOpen(id: string | undefined): Promise<void> {
    await this.state.update(OPEN_STATE, id);
  }

  private file(id: string): vscode.Uri {
    // Ids are ours (hex), but never let one name a path outside the folder.
    return vscode.Uri.joinPath(this.dir, `${id.replace(/[^\w-]/g, '')}.json`);
  }

  async load(id: string): Promise<Conversation | undefined> {
    try {
      const bytes = await vscode.workspace.fs.readFile(this.file(id));
      const c = JSON.parse(new TextDecoder().decode(bytes)) as Conversation;
      return c && Array.isArray(c.turns) ? c : undefined;
    } catch {
      return undefined;
    }
  }

  /** Saves a conversation with at least one turn and updates the index. */
  async save(c: Conversation): Promise<void> {
    if (c.turns.length === 0) return;
    await vscode.workspace.fs.createDirectory(this.dir);
    await vscode.workspace.fs.writeFile(this.file(c.id), new TextEncoder().encode(JSON.stringify(c)));
    const item: HistoryItem = { id: c.id, title: c.title, updatedAt: c.updatedAt, turnCount: c.turns.length };
    await this.state.update(INDEX_STATE, [item, ...this.list().filter((i) => i.id !== c.id)]);
  }

  async delete(id: string): Promise<void> {
    try {
      await vscode.workspace.fs.delete(this.file(id));
    } catch {
      // Already gone.
    }
    await this.state.update(INDEX_STATE, this.list().filter((i) => i.id !== id));
  }

  async clear(): Promise<void> {
    try {
      await vscode.workspace.fs.delete(this.dir, { recursive: true });
    } catch {
      // Nothing stored yet.
    }
    await this.state.update(INDEX_STATE, []);
  }
}
