// What the chat needs of VS Code itself, as plain functions: ChatController and the turn take them from here in the
// extension, and from a recorder in test/unit/chatController.test.ts (they need nothing else of VS Code at run time).
import * as vscode from 'vscode';
import { setProfileModel, writeUserSetting } from './config';
import { showError } from './notices';

/** The few things the chat asks of VS Code. */
export interface ChatUi {
  /** Writes a `parley.*` setting in the user's settings (the header's profile and model for new chats). */
  writeUserSetting(key: string, value: unknown): Promise<void>;
  /** Sets a user profile's model in `parley.endpoints`. */
  setProfileModel(name: string, model: string): Promise<void>;
  /** VS Code's `parley.generating` context key (Stop's key binding and menu). */
  setGenerating(value: boolean): void;
  /** The first of a run of failed saves, as a notification with Export Chat. */
  unsavedNotification(text: string): void;
  /**
   * Opens a damaged conversation file as text, read-only. Random bytes are not text: VS Code's editor then says the
   * file is binary and offers to open it anyway.
   */
  openReadOnly(path: string): Promise<void>;
}

/** The chat's VS Code, for the extension. */
export const vscodeChatUi: ChatUi = {
  writeUserSetting,
  setProfileModel,
  setGenerating(value) {
    void vscode.commands.executeCommand('setContext', 'parley.generating', value);
  },
  unsavedNotification(text) {
    void showError(text, 'Export Chat').then((a) => {
      if (a) void vscode.commands.executeCommand('parley.exportChat');
    });
  },
  async openReadOnly(path) {
    const uri = vscode.Uri.file(path);
    try {
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
    } catch {
      await vscode.commands.executeCommand('vscode.open', uri, { preview: true });
    }
    await vscode.commands.executeCommand('workbench.action.files.setActiveEditorReadonlyInSession');
  },
};
