// Parley's endpoint as a LanguageModelChatProvider (vendor `parley`): VS Code's chat and every vscode.lm caller get its
// models, through the same key, trust rules, adaptations and usage ledger as the panel (Requester does all of that).
import * as vscode from 'vscode';
import { listModelInfo } from '../core/client';
import { ParleyError } from '../core/errors';
import { countTokens, errorWords, settingsFromModelOptions, toChatMessages, toolChoiceFor, toToolDefinitions, ToolCallFeed, type LmMessage, type LmPart } from '../core/lmMapping';
import { tokenLimits, type ModelInfo } from '../core/modelInfo';
import { mapOrdered } from '../core/orderedPool';
import { overrideFor } from '../core/profiles';
import { OLLAMA_DEFAULT_CONTEXT, WindowProbe, type ServerWindow } from '../core/serverWindow';
import type { SettingsSnapshot } from './config';
import { Disposable } from './disposable';
import type { Log } from './log';
import type { ReadyTarget, Requester } from './requester';
import type { ApiKeyStore } from './secrets';

/** How long a model list is reused before GET /models is asked again (an endpoint or key change clears it at once). */
const MODELS_TTL_MS = 5 * 60_000;
/** How long VS Code's picker waits for GET /models before it gets the configured model alone. */
const MODELS_TIMEOUT_MS = 10_000;
/** Models whose window is asked of a local server at once (Ollama's /api/show is one request per model). */
const WINDOW_PROBES_AT_ONCE = 4;
/**
 * VS Code sends the parts a provider reported in its last 30 ms together with the provider's error, and a caller's
 * response stream throws at the error without giving the parts it has not read yet: an error after text waits this
 * long first, so that the text already reported reaches the caller (a reply the budget stopped keeps its text).
 */
const PARTS_BEFORE_ERROR_MS = 100;

type Obj = Record<string, unknown>;

/**
 * VS Code's LanguageModelThinkingPart where the running VS Code has it (1.139 does; @types/vscode 1.104 has it only as
 * the proposal languageModelThinkingPart, which VS Code checks neither when a provider reports the part nor when a
 * caller reads it). Reasoning goes to VS Code's chat in it, and nowhere else: without it, reasoning is left out.
 */
function thinkingPart(): (new (value: string) => vscode.LanguageModelResponsePart) | undefined {
  return (vscode as unknown as { LanguageModelThinkingPart?: new (value: string) => vscode.LanguageModelResponsePart }).LanguageModelThinkingPart;
}

/** A VS Code part as plain data, told apart by shape: the parts' classes differ across VS Code versions (…Part2). */
function toLmPart(p: unknown): LmPart {
  const o = (typeof p === 'object' && p !== null ? p : {}) as Obj;
  // Reasoning VS Code's chat keeps in its history has a `value` too: it is never sent back as the answer's text.
  const Thinking = thinkingPart();
  if (Thinking && p instanceof Thinking) return { kind: 'other' };
  if (typeof o.callId === 'string' && Array.isArray(o.content)) return { kind: 'toolResult', callId: o.callId, content: o.content.map(toLmPart) };
  if (typeof o.callId === 'string' && typeof o.name === 'string') return { kind: 'toolCall', callId: o.callId, name: o.name, input: o.input };
  if (typeof o.value === 'string') return { kind: 'text', value: o.value };
  // LanguageModelDataPart (images among them) is not in the 1.104 typings: read by shape.
  if (typeof o.mimeType === 'string' && o.data instanceof Uint8Array) return { kind: 'data', mimeType: o.mimeType, data: o.data };
  return { kind: 'other' };
}

function toLmMessage(m: vscode.LanguageModelChatRequestMessage): LmMessage {
  // Role 3 is the proposed System role, which VS Code's own chat sends.
  const role = m.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : (m.role as number) === 3 ? 'system' : 'user';
  return { role, content: m.content.map(toLmPart), name: m.name };
}

/** The target with VS Code's chosen model in place of parley.model: requests, adaptations and usage all follow it. */
function withModel(t: ReadyTarget, model: string): ReadyTarget {
  return { ...t, settings: { ...t.settings, model } };
}

export class ParleyChatProvider extends Disposable implements vscode.LanguageModelChatProvider {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private cache: { host: string; at: number; ids: string; models: ModelInfo[]; windows: ServerWindow[] } | undefined;

  /** `modelsTimeoutMs`: how long GET /models may take (a test sets it far off, so that only its cancel can end one). */
  constructor(
    private readonly requester: Requester,
    settings: SettingsSnapshot,
    keys: ApiKeyStore,
    private readonly log: Log,
    private readonly modelsTimeoutMs = MODELS_TIMEOUT_MS,
  ) {
    super();
    const endpointChanged = () => {
      this.cache = undefined;
      this.changed.fire();
    };
    this._register(settings.onDidChange(endpointChanged));
    this._register(keys.onDidChange(endpointChanged));
  }

  async provideLanguageModelChatInformation(options: vscode.PrepareLanguageModelChatModelOptions, token: vscode.CancellationToken): Promise<vscode.LanguageModelChatInformation[]> {
    const t = await this.requester.target();
    if (t.kind !== 'ready') {
      // Asked outright (not silent): the panel's setup card leads to the key or the endpoint.
      if (!options.silent) void vscode.commands.executeCommand('parley.openChat');
      return [];
    }
    const { models, windows } = await this.models(t, token);
    const p = t.settings.profile;
    const override = (id: string) => (p ? overrideFor(p, id) : {});
    return models.map((m, i) => {
      const o = override(m.id);
      // The window the server runs, lowered by a smaller setting; unknown on Ollama: the window it loads a model at by default.
      const w = windows[i] ?? {};
      const { maxInputTokens, maxOutputTokens } = tokenLimits({ contextLength: w.window, maxOutputTokens: m.maxOutputTokens },
        { contextWindow: o.contextWindow ?? t.settings.contextWindow, maxTokens: o.maxOutputTokens ?? t.settings.maxTokens },
        w.kind === 'ollama' ? OLLAMA_DEFAULT_CONTEXT : undefined);
      // A server that refused `tools` for this model (learnt from vscode.lm requests in this window) gets none offered.
      const refused = this.requester.adaptations(withModel(t, m.id), 'vscode-chat')?.drop?.includes('tools') === true;
      return {
        id: m.id, name: m.id, family: m.id, version: t.host, detail: t.host, tooltip: `${m.id} · ${t.endpoint.origin}`,
        maxInputTokens, maxOutputTokens,
        // Unknown is taken as yes: a server that cannot do it says so in words, which beats a feature hidden for nothing.
        capabilities: {
          toolCalling: !refused && (override(m.id).tools ?? m.toolCalling) !== false,
          imageInput: (override(m.id).vision ?? m.imageInput) !== false,
        },
      };
    });
  }

  /**
   * GET /models and the window the server runs each model at (cached per endpoint), or the configured model when the
   * server lists none or cannot be asked.
   */
  private async models(t: ReadyTarget, token: vscode.CancellationToken): Promise<{ models: ModelInfo[]; windows: ServerWindow[] }> {
    const c = this.cache;
    if (c && c.host === t.host && Date.now() - c.at < MODELS_TTL_MS && c.models.length > 0) return c;
    const stop = new AbortController();
    const sub = token.onCancellationRequested(() => stop.abort());
    let models: ModelInfo[] = [];
    const windows: ServerWindow[] = [];
    try {
      const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(this.modelsTimeoutMs)]);
      const opts = this.requester.clientOptions(t, signal);
      try {
        models = await listModelInfo(opts);
      } catch (e) {
        this.log.debug(`GET models for VS Code's chat failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (models.length === 0 && t.settings.model.trim()) models = [{ id: t.settings.model.trim() }];
      const probe = new WindowProbe(opts, models);
      for await (const w of mapOrdered(models, WINDOW_PROBES_AT_ONCE, (m) => probe.windowOf(m.id), signal)) windows.push(w.ok ? w.value : {});
    } catch {
      // Cancelled while asking the windows: the models go without them.
    } finally {
      sub.dispose();
    }
    const ids = models.map((m) => m.id).join('\n');
    const listChanged = c !== undefined && c.host === t.host && c.ids !== ids;
    this.cache = { host: t.host, at: Date.now(), ids, models, windows };
    if (listChanged) this.changed.fire();
    return { models, windows };
  }

  async provideLanguageModelChatResponse(
    model: vscode.LanguageModelChatInformation,
    messages: readonly vscode.LanguageModelChatRequestMessage[],
    options: vscode.ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<vscode.LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    // The target for VS Code's chosen model: what a workspace profile adds for that model is asked about for it.
    const target = await this.requester.target(undefined, true, { model: model.id });
    if (target.kind === 'no-key') throw new vscode.LanguageModelError(`Parley: no API key is set for ${target.origin}. Run "Parley: Set API Key".`);
    if (target.kind === 'config') throw new vscode.LanguageModelError(errorWords(target.error, { model: model.id, url: '' }));
    const t = withModel(target, model.id);
    const stop = new AbortController();
    const sub = token.onCancellationRequested(() => stop.abort());
    const toolChoice = toolChoiceFor(options.toolMode === vscode.LanguageModelChatToolMode.Required, options.tools);
    let reported = false;
    const Thinking = thinkingPart();
    // Each call once, whole, in order, as soon as it is complete: the stream's fragments are assembled by index or id.
    const calls = new ToolCallFeed(`parley_${Date.now().toString(36)}_`);
    const reportCalls = (done: readonly { callId: string; name: string; input: object }[]) => {
      for (const c of done) progress.report(new vscode.LanguageModelToolCallPart(c.callId, c.name, c.input));
      if (done.length > 0) reported = true;
    };
    try {
      const { result } = await this.requester.run(t, {
        messages: toChatMessages(messages.map(toLmMessage)),
        source: 'vscode-chat',
        signal: stop.signal,
        tools: toToolDefinitions(options.tools),
        overrides: { ...settingsFromModelOptions(options.modelOptions), ...(toolChoice ? { toolChoice } : {}) },
        // Text, refusals and reasoning as they arrive; reasoning only in a thinking part, never mixed into the text.
        onEvent: (e) => {
          reportCalls(calls.event(e));
          if ((e.type !== 'text' && e.type !== 'refusal' && e.type !== 'reasoning') || e.choice !== 0) return;
          if (e.type !== 'reasoning') progress.report(new vscode.LanguageModelTextPart(e.text));
          else if (Thinking) progress.report(new Thinking(e.text));
          else return;
          reported = true;
        },
      });
      // Stopped by the caller; one the budget stopped carries its error.
      if (token.isCancellationRequested || (result.ended === 'cancelled' && !result.error)) return;
      if (result.ended === 'error' || result.error) {
        if (reported) await new Promise((r) => setTimeout(r, PARTS_BEFORE_ERROR_MS));
        throw result.error ?? new ParleyError('protocol', 'The request failed.');
      }
      if (result.ended === 'incomplete') throw new ParleyError('protocol', 'The server closed the stream before the reply was complete.');
      reportCalls(calls.end());
      if (calls.error) {
        if (reported) await new Promise((r) => setTimeout(r, PARTS_BEFORE_ERROR_MS));
        // The model's fault, not the endpoint's: no settings hint.
        throw new vscode.LanguageModelError(`Parley: ${calls.error.message}`);
      }
    } catch (e) {
      // dist/chatProvider.js takes ParleyError from extension.js (scripts/node-bundles.mjs): the request's errors are of this class.
      if (e instanceof ParleyError) throw new vscode.LanguageModelError(errorWords(e, { model: model.id, url: t.endpoint.url }));
      throw e;
    } finally {
      sub.dispose();
    }
  }

  provideTokenCount(_model: vscode.LanguageModelChatInformation, text: string | vscode.LanguageModelChatRequestMessage): Promise<number> {
    return Promise.resolve(countTokens(typeof text === 'string' ? text : toLmMessage(text)));
  }
}
