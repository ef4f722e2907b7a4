// Inline completions, registered at activation and loaded on the first request: dist/completion.js (LAZY in
// esbuild.mjs) holds the routes, the context and the status bar's states, so a window that never completes loads none.
import * as vscode from 'vscode';
import { completionChoice } from '../core/completion/settings';
import type * as Engine from './completion/engine';
import type { CompletionDeps } from './completion/engine';
import { Disposable } from './disposable';
import { StatusEntry } from './notices';
import { completion } from './lazy/completion';

/**
 * The provider VS Code asks, and the status bar item. Until a completion model is set it answers nothing and loads
 * nothing; the engine is made on the first request (or the first click on the item).
 */
export class Completions extends Disposable implements vscode.InlineCompletionItemProvider {
  /** Public so that tests read what a person sees. */
  readonly status = this._register(new StatusEntry('parley.completions', vscode.StatusBarAlignment.Right, 101, 'Parley Completions', 'parley.completionMenu'));
  private real: Engine.CompletionEngine | undefined;

  constructor(private readonly s: CompletionDeps, private readonly state: vscode.Memento) {
    super();
    this._register(vscode.languages.registerInlineCompletionItemProvider({ pattern: '**' }, this));
    this._register(s.settings.onDidChange(() => (this.real ? this.real.settingsChanged() : this.render())));
    this.render();
  }

  /** The engine, made on first use. */
  get engine(): Engine.CompletionEngine {
    this.real ??= this._register(new (completion().CompletionEngine)(this.s, this.state, this.status));
    return this.real;
  }

  /** Whether a completion model is set (whether or not completions are on). */
  get configured(): boolean {
    const settings = this.s.settings.current;
    return !('off' in completionChoice(settings.completion, settings.profiles, settings.activeProfile));
  }

  /** Whether the engine was loaded (tests, and Reset Endpoint Adaptations, which has nothing to tell an unloaded one). */
  get loaded(): boolean {
    return this.real !== undefined;
  }

  provideInlineCompletionItems(doc: vscode.TextDocument, pos: vscode.Position, ctx: vscode.InlineCompletionContext, token: vscode.CancellationToken) {
    const settings = this.s.settings.current;
    if (!this.real && (!settings.completion.enabled || !this.configured)) return undefined;
    return this.engine.provide(doc, pos, ctx, token);
  }

  /** The item before the engine is loaded: shown only when a completion model is set. */
  private render(): void {
    const settings = this.s.settings.current;
    const choice = completionChoice(settings.completion, settings.profiles, settings.activeProfile);
    if ('off' in choice) return this.status.hide();
    const on = settings.completion.enabled;
    this.status.show(on ? 'sparkle' : 'circle-slash', 'Parley', `Parley completions ${on ? 'on' : 'off'}: \`${choice.model.replace(/`/g, "'")}\`. Click for the menu.`, `Parley completions ${on ? 'on' : 'off'}, ${choice.model}`);
  }
}
