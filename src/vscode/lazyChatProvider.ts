// Parley as a LanguageModelChatProvider, registered at activation but loaded when VS Code's chat first asks:
// dist/chatProvider.js (see LAZY in esbuild.mjs), so windows that never use VS Code's chat never load it.
import * as vscode from 'vscode';
import type * as ChatProviderModule from './chatProvider';
import type { SettingsSnapshot } from './config';
import { Disposable } from './disposable';
import { chatProvider } from './lazy/chatProvider';
import type { Log } from './log';
import type { Requester } from './requester';
import type { ApiKeyStore } from './secrets';

export const VENDOR = 'parley';

export class LazyChatProvider extends Disposable implements vscode.LanguageModelChatProvider {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private real: ChatProviderModule.ParleyChatProvider | undefined;

  constructor(private readonly requester: Requester, private readonly settings: SettingsSnapshot, private readonly keys: ApiKeyStore, private readonly log: Log) {
    super();
  }

  /** The provider itself, made on first use; until then VS Code has asked nothing, so there is no change to report. */
  private get provider(): ChatProviderModule.ParleyChatProvider {
    if (!this.real) {
      const { ParleyChatProvider } = chatProvider();
      this.real = this._register(new ParleyChatProvider(this.requester, this.settings, this.keys, this.log));
      this._register(this.real.onDidChangeLanguageModelChatInformation(() => this.changed.fire()));
    }
    return this.real;
  }

  provideLanguageModelChatInformation(options: vscode.PrepareLanguageModelChatModelOptions, token: vscode.CancellationToken) {
    return this.provider.provideLanguageModelChatInformation(options, token);
  }

  provideLanguageModelChatResponse(...args: Parameters<ChatProviderModule.ParleyChatProvider['provideLanguageModelChatResponse']>) {
    return this.provider.provideLanguageModelChatResponse(...args);
  }

  provideTokenCount(...args: Parameters<ChatProviderModule.ParleyChatProvider['provideTokenCount']>) {
    return this.provider.provideTokenCount(...args);
  }
}
