// The chat's parts in plain Node: a requester made of core's own request path (chatAndLearn, recordFrom) against a
// real loopback server, a history in a temporary folder, a log and a view channel that record, and a VS Code that
// records what the chat asked of it. ChatController and the turn take exactly these in the extension too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatAndLearn, memoryAdaptationStore } from '../../src/core/adaptations';
import type { ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import { ParleyError } from '../../src/core/errors';
import { findProfile, readProfiles } from '../../src/core/profiles';
import { recordFrom, type UsageRecord } from '../../src/core/usageLedger';
import type { HostMessage } from '../../src/shared/protocol';
import { ChatController, type ChatParts } from '../../src/vscode/chatController';
import type { ChatUi } from '../../src/vscode/chatUi';
import type { Settings } from '../../src/vscode/config';
import { HistoryStore } from '../../src/vscode/history';
import { Log } from '../../src/vscode/log';
import type { ChatRequester, ReadyTarget, RunOutcome, Selection } from '../../src/vscode/requester';
import type { BudgetGuard } from '../../src/vscode/budgetGuard';
import type { Toolbox } from '../../src/vscode/toolbox';
import type { UsageStore } from '../../src/vscode/usageStore';
import { ViewChannel } from '../../src/vscode/viewChannel';
import { memoryState } from './memoryState';

/** Every setting at its default, the endpoint at `baseUrl` with model `test-model`, then `over`. */
export function nodeSettings(baseUrl: string, over: Partial<Settings> = {}): Settings {
  const { profiles } = readProfiles({ baseUrl, model: 'test-model' }, []);
  return {
    profiles, activeProfile: '', profileProblems: [], unapplied: [], compaction: { threshold: 85, keepTurns: 4 },
    baseUrl, baseUrlSource: 'user', userBaseUrl: baseUrl, model: 'test-model',
    systemPrompt: 'You are a test.', systemPromptSource: 'user', userSystemPrompt: 'You are a test.',
    requestTimeoutSeconds: 10, streamIdleTimeoutSeconds: 10, maxRetries: 0, maxContextChars: 24_000, sendReasoningBack: false,
    pricing: {}, budget: [], budgetMistakes: [], logLevel: 'info',
    tools: { enabled: true, askBeforeReading: false, maxRounds: 10, maxTurnTokens: 200_000, exclude: [], maxResultChars: 20_000 },
    completion: { model: '', endpoint: '', enabled: false, languages: {}, fimTokens: 'auto', whenCopilotIsOn: 'parley' },
    adjusted: [],
    ...over,
  };
}

/** The spend budget a node requester's requests pass, as Requester.run's do: the guard, and the usage store it reads. */
export interface NodeBudget {
  guard: BudgetGuard;
  usage: Pick<UsageStore, 'record'>;
}

/**
 * A requester for the chat made of core's request path: no key, no consent questions (a user's own loopback endpoint).
 * With `budget`, each request passes it as in Requester.run: checked before it is sent, its stream watched, each
 * usage recorded in the budget's store and the thresholds it crossed said.
 */
export function nodeRequester(settings: () => Settings, budget?: NodeBudget): ChatRequester & { records: UsageRecord[] } {
  const learnt = memoryAdaptationStore();
  const records: UsageRecord[] = [];
  const selected = (selection: Selection = {}, base: Settings = settings()) => {
    const profile = findProfile(base.profiles, selection.profile ?? base.activeProfile);
    return { ...base, profile, model: selection.model?.trim() || profile.model || base.model };
  };
  const clientOptions = (t: ReadyTarget, signal?: AbortSignal): ClientOptions => ({
    endpoint: t.endpoint, apiKey: t.apiKey, maxRetries: 0, signal,
    requestTimeoutMs: t.settings.requestTimeoutSeconds * 1000, idleTimeoutMs: t.settings.streamIdleTimeoutSeconds * 1000,
  });
  return {
    records,
    selected,
    clientOptions,
    async target(base = settings(), _interactive = false, selection: Selection = {}) {
      const s = selected(selection, base);
      const endpoint = resolveEndpoint(s.baseUrl);
      return { kind: 'ready', settings: s, endpoint, host: new URL(endpoint.origin).host };
    },
    async run(t, opts): Promise<RunOutcome> {
      const started = Date.now();
      const request = { model: t.settings.model, stream: true, maxTokens: t.settings.maxTokens, tools: opts.tools?.length ? opts.tools : undefined, ...opts.overrides };
      const say = (ws: ReadonlyArray<{ words: string }>) => ws.forEach((w) => opts.onBudgetWarning?.(w.words));
      const decision = await budget?.guard.check({
        settings: t.settings, messages: opts.messages, tools: request.tools, maxOutputTokens: request.maxTokens, passKey: opts.budgetKey,
        stream: { signal: opts.signal, onEvent: opts.onEvent }, host: t.host, source: opts.source,
      });
      if (decision && decision.kind !== 'send') say(decision.warnings);
      if (decision?.kind === 'block') {
        const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated: true };
        const result = { text: '', reasoning: '', refusal: '', toolCalls: [], finishReason: null, choices: [], sawDone: false, ended: 'error' as const, usage, error: new ParleyError('budget', decision.words) };
        return { result, target: t, dropped: [], durationMs: 0 };
      }
      const watch = decision?.watch;
      const out = await chatAndLearn(learnt, clientOptions(t, watch?.signal ?? opts.signal), request, opts.messages, watch?.onEvent ?? opts.onEvent);
      for (const p of out.dropped) opts.onAdapted?.(p);
      const usage = recordFrom(out.result.usage, { model: request.model, host: t.host, durationMs: Date.now() - started, source: opts.source, at: Date.now(), id: opts.usageId });
      records.push(usage);
      if (budget) {
        await budget.usage.record(usage);
        await decision?.release?.();
        say(await budget.guard.crossed(t.settings));
      }
      return { result: watch?.result(out.result) ?? out.result, target: t, dropped: out.dropped, durationMs: Date.now() - started, usage };
    },
    async record(u) {
      records.push(u);
    },
  };
}

/** A chat in plain Node, with what it posted, logged and asked of VS Code. */
export interface NodeChat {
  chat: ChatController;
  requester: ReturnType<typeof nodeRequester>;
  posted: HostMessage[];
  logged: string[];
  /** What the chat asked of VS Code: settings written, the generating key, notifications, files opened. */
  asked: string[];
  history: HistoryStore;
  dir: string;
  /** Another chat over the same history folder and state, as a reloaded window. */
  reopen(): NodeChat;
  dispose(): void;
}

/** Builds a chat for the endpoint at `baseUrl`, with `toolbox` and settings `over`. */
export function nodeChat(baseUrl: string, opts: { toolbox?: Toolbox; settings?: Partial<Settings>; dir?: string; state?: ReturnType<typeof memoryState>; budget?: NodeBudget } = {}): NodeChat {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'parley-chat-'));
  const state = opts.state ?? memoryState();
  const current = nodeSettings(baseUrl, opts.settings);
  const posted: HostMessage[] = [];
  const logged: string[] = [];
  const asked: string[] = [];
  const channel = new ViewChannel();
  // Copies, as the webview gets them: a later change to a turn does not rewrite what was posted.
  channel.attach((m) => posted.push(structuredClone(m)));
  const sink = { info: (l: string) => logged.push(l), warn: (l: string) => logged.push(l), error: (l: string) => logged.push(l), show: () => {}, dispose: () => {} };
  const log = new Log(() => 'info', sink);
  const ui: ChatUi = {
    writeUserSetting: async (key, value) => void asked.push(`setting ${key}=${JSON.stringify(value)}`),
    setProfileModel: async (name, model) => void asked.push(`profile ${name} model=${model}`),
    setGenerating: (v) => void asked.push(`generating ${v}`),
    unsavedNotification: (text) => void asked.push(`notification ${text}`),
    openReadOnly: async (path) => void asked.push(`open ${path}`),
  };
  const requester = nodeRequester(() => current, opts.budget);
  const history = new HistoryStore({ fsPath: dir }, state);
  const parts: ChatParts = { requester, history, log, settings: { current }, ui, channel, toolbox: opts.toolbox };
  const chat = new ChatController(parts);
  const made: NodeChat = {
    chat, requester, posted, logged, asked, history, dir,
    reopen: () => nodeChat(baseUrl, { ...opts, dir, state }),
    dispose: () => {
      chat.dispose();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return made;
}
