// Parley Complete: ghost text from the completion model, asked for a moment after the person stops typing, with every
// earlier request aborted, a cache that answers typing-through and going back, and the status bar's states and menu.
// Loaded on the first completion request: dist/completion.js (LAZY in esbuild.mjs).
import * as vscode from 'vscode';
import { CompletionCache, type CompletionPlace } from '../../core/completion/cache';
import { AdaptiveDebounce, ChunkRing, clipPrefix, clipSuffix } from '../../core/completion/context';
import { listModels } from '../../core/client';
import { chooseFimFamily, fimStops } from '../../core/completion/fim';
import { probeRoutes, requestCompletion, ROUTE_NAMES, stateRouteStore, type FimInput, type RouteId, type RouteOutcome, type RouteStore, type Wire } from '../../core/completion/routes';
import { completionChoice, languageEnabled, type CompletionChoice } from '../../core/completion/settings';
import { lineMode, shapeCompletion } from '../../core/completion/shape';
import { errorFromResponse } from '../../core/errors';
import { codeCell, codeSpan, markdownProse } from '../../core/markdownText';
import type { Usage } from '../../core/types';
import { sleep } from '../../core/sleep';
import { failedFetch, readText, send } from '../../core/transport';
import { recordFrom } from '../../core/usageLedger';
import { writeUserSetting, type SettingsSnapshot } from '../config';
import { Disposable } from '../disposable';
import type { Log } from '../log';
import { askText, pickOne, showError, type StatusEntry } from '../notices';
import { usageHost, type ReadyTarget, type Requester } from '../requester';
import type { ApiKeyStore } from '../secrets';
import type { UsageStore } from '../usageStore';
import { DocumentGate, SnippetWatch } from './gate';

/** What completions use of the window's objects. */
export interface CompletionDeps {
  settings: SettingsSnapshot;
  requester: Requester;
  log: Log;
  usage: UsageStore;
  /** A stored key changing counts as a settings change. */
  keys: ApiKeyStore;
}

/** The client's own wire functions: this bundle takes them from extension.js (scripts/node-bundles.mjs), no copy. */
const WIRE: Wire = { send, readText, errorFromResponse, failedFetch, listModels };

/** One completion VS Code asked for: where, as what (typing or asked for), and when the call came. */
interface Asked {
  doc: vscode.TextDocument;
  pos: vscode.Position;
  place: CompletionPlace;
  /** The suggest widget's selected item, which the completion continues. */
  picked: vscode.SelectedCompletionInfo | undefined;
  /** The file's name as the request may carry it (the gate's). */
  file: string;
  /** Asked as one types (debounced), not by the Trigger Inline Suggestion command. */
  auto: boolean;
  token: vscode.CancellationToken;
  /** performance.now() when VS Code called. */
  started: number;
}

/** Where completions go now, or why they cannot. */
type Resolved = { target: ReadyTarget; choice: CompletionChoice } | { off: string };

/** Most tokens asked for: one line, or a block. */
const MAX_TOKENS = { single: 64, multi: 160 };
/** How long a failure that no retry mends (no route takes the model) holds before the next try. */
const FINAL_FAILURE_MS = 5 * 60_000;
/** How long any other failure (the server down, a rejected key) holds: not a request per keystroke against it. */
const FAILURE_MS = 10_000;

/** What the engine did, for tests and the benchmark. */
export interface CompletionStats {
  /** Calls from VS Code. */
  provided: number;
  /** Requests sent to the server (a probe counts each route it tried as one). */
  sent: number;
  /** Answers from the cache, with no request. */
  cacheHits: number;
  /** Requests aborted before their answer (a keystroke, Escape). */
  aborted: number;
  /** The server's time of the last answer, and Parley's own time around it (ms). */
  lastServerMs: number;
  lastTotalMs: number;
}

export class CompletionEngine extends Disposable {
  readonly cache = new CompletionCache();
  readonly ring = new ChunkRing();
  readonly stats: CompletionStats = { provided: 0, sent: 0, cacheHits: 0, aborted: 0, lastServerMs: 0, lastTotalMs: 0 };
  private readonly debounce = new AdaptiveDebounce();
  private readonly gate: DocumentGate;
  private readonly snippets = this._register(new SnippetWatch());
  private readonly routes: RouteStore;
  private inflight: AbortController | undefined;
  private resolved: Promise<Resolved> | undefined;
  /** The last failure, said in the status bar; no request is sent until `until` (settings changes and Test Connection clear it). */
  private failure: { text: string; final: boolean; until: number } | undefined;
  private snoozedUntil = 0;
  private snoozeTimer: ReturnType<typeof setTimeout> | undefined;
  private lastRoute: RouteId | undefined;
  private waiting = false;

  constructor(private readonly s: CompletionDeps, state: vscode.Memento, private readonly status: StatusEntry) {
    super();
    this.routes = stateRouteStore(state);
    this.gate = new DocumentGate(() => s.settings.current.tools.exclude);
    this._register(s.keys.onDidChange(() => this.settingsChanged()));
    this._register(vscode.workspace.onDidChangeWorkspaceFolders(() => this.gate.reset()));
    this._register(vscode.window.onDidChangeActiveTextEditor((e) => this.editorChanged(e)));
    this._register(vscode.workspace.onDidSaveTextDocument((d) => this.takeChunk(d, vscode.window.activeTextEditor?.document === d ? vscode.window.activeTextEditor.selection.active.line : 0)));
    this._register(vscode.workspace.onDidCloseTextDocument((d) => this.ring.drop(d.uri.toString())));
    this._register({ dispose: () => this.abort() });
    this._register({ dispose: () => clearTimeout(this.snoozeTimer) });
    this.render();
  }

  /** The settings or keys changed: where completions go, and what is allowed, are read again. */
  settingsChanged(): void {
    this.resolved = undefined;
    this.failure = undefined;
    this.gate.reset();
    this.cache.clear();
    this.render();
  }

  /** Forgets the routes learnt (Reset Endpoint Adaptations clears the state they are kept in; this what is held here). */
  forgetRoutes(): void {
    this.lastRoute = undefined;
    this.failure = undefined;
  }

  private abort(): void {
    if (this.inflight && !this.inflight.signal.aborted) {
      this.stats.aborted++;
      this.inflight.abort();
    }
    this.inflight = undefined;
  }

  /** Why no completion may be asked for at all right now (global: off, snoozed, no model); undefined when they may. */
  private globalOff(): string | undefined {
    const c = this.s.settings.current.completion;
    if (!c.enabled) return 'turned off (parley.completion.enabled)';
    if (Date.now() < this.snoozedUntil) return `snoozed until ${new Date(this.snoozedUntil).toLocaleTimeString()}`;
    return undefined;
  }

  /** Why this document gets no completion (its language, Copilot's rule), or undefined. */
  private languageOff(languageId: string): string | undefined {
    const c = this.s.settings.current.completion;
    if (!languageEnabled(c, languageId)) return `off for ${languageId} (parley.completion.languages)`;
    if (c.whenCopilotIsOn === 'copilot' && copilotCompletes(languageId)) return `Copilot's completions are on for ${languageId}, and parley.completion.whenCopilotIsOn lets them win`;
    return undefined;
  }

  async provide(doc: vscode.TextDocument, pos: vscode.Position, ctx: vscode.InlineCompletionContext, token: vscode.CancellationToken): Promise<vscode.InlineCompletionItem[] | undefined> {
    const started = performance.now();
    this.stats.provided++;
    // Every keystroke ends the request before it: its socket is closed, not left to finish.
    this.abort();
    const auto = ctx.triggerKind === vscode.InlineCompletionTriggerKind.Automatic;
    if (auto) this.debounce.keystroke(Date.now());
    if (this.globalOff() || this.languageOff(doc.languageId)) return undefined;
    const editor = vscode.window.activeTextEditor;
    if (editor?.document === doc && (editor.selections.length > 1 || !editor.selection.isEmpty)) return undefined;
    const offset = doc.offsetAt(pos);
    if (this.snippets.activeAt(doc, offset)) return undefined;
    const gate = await this.gate.check(doc);
    if (!gate.ok || token.isCancellationRequested) return undefined;
    // With the suggest widget open, the completion continues its selected item (VS Code shows it only then).
    const picked = ctx.selectedCompletionInfo;
    const place = placeOf(doc, pos, offset, picked);
    const item = (text: string, replace = 0) => (picked ? new vscode.InlineCompletionItem(picked.text + text, picked.range) : new vscode.InlineCompletionItem(text, new vscode.Range(pos, pos.translate(0, replace))));
    const hit = this.cache.lookup(place);
    if (hit !== undefined) {
      this.stats.cacheHits++;
      return hit.text ? [item(hit.text, picked ? 0 : hit.replace)] : undefined;
    }
    const r = await this.resolve();
    if ('off' in r) return undefined;
    if (this.failure && Date.now() < this.failure.until) return undefined;
    const text = await this.ask({ doc, pos, place, picked, file: gate.filename, auto, token, started }, r.target, r.choice.model);
    return text ? [item(text)] : undefined;
  }

  /**
   * Asks the server for the completion at `a.place` (after the debounce, when VS Code asked as one types), counts it,
   * keeps it in the cache and returns its text; undefined when it failed, was cancelled or a keystroke came first.
   */
  private async ask(a: Asked, target: ReadyTarget, model: string): Promise<string | undefined> {
    const { doc, pos, place, picked } = a;
    const controller = new AbortController();
    this.inflight = controller;
    const sub = a.token.onCancellationRequested(() => {
      if (this.inflight === controller) this.abort();
    });
    let release: (() => Promise<void>) | undefined;
    let recorded: Promise<void> | undefined;
    try {
      const wait = a.auto ? this.debounce.delay() : 0;
      if (wait && !(await sleep(wait, controller.signal))) return undefined;
      const line = doc.lineAt(pos.line).text;
      const lineBefore = picked ? line.slice(0, picked.range.start.character) + picked.text : line.slice(0, pos.character);
      const mode = lineMode(lineBefore, line.slice(picked ? Math.max(pos.character, picked.range.end.character) : pos.character));
      const c = this.s.settings.current.completion;
      const input: FimInput = {
        model,
        prefix: place.prefix,
        suffix: place.suffix,
        file: a.file,
        languageId: doc.languageId,
        extras: this.ring.pick(place.doc),
        maxTokens: MAX_TOKENS[mode],
        stop: mode === 'single' ? ['\n'] : ['\n\n'],
        family: chooseFimFamily(model, c.fimTokens),
      };
      // The spend budget counts completions too: one past a blocking limit is not asked for (no pass: no card to click).
      const budget = await this.s.requester.budget.check({ settings: { ...target.settings, model }, messages: [{ role: 'user', content: place.prefix + place.suffix }], maxOutputTokens: input.maxTokens, host: usageHost(target) });
      if (budget.kind === 'block') return void this.failed(budget.words, true, []);
      release = budget.release;
      const opts = { ...this.s.requester.clientOptions(target, controller.signal), maxRetries: 0 };
      this.stats.sent++;
      this.setWaiting(true);
      const sent = performance.now();
      const result = await requestCompletion(opts, WIRE, this.routes, input);
      const serverMs = performance.now() - sent;
      if ('error' in result) {
        if (result.error.kind !== 'cancelled') this.failed(result.error.message, result.final, result.outcomes);
        return undefined;
      }
      recorded = this.record(target, model, result.usage, serverMs);
      const usedTokens = (result.route === 'tokens' || result.route === 'generate-tokens') && input.family;
      const text = shapeCompletion(result.text, { mode, lineBefore, suffix: place.suffix, languageId: doc.languageId, stops: usedTokens ? fimStops(usedTokens) : [] });
      this.cache.put(place, text);
      this.lastRoute = result.route;
      this.failure = undefined;
      this.stats.lastServerMs = serverMs;
      this.stats.lastTotalMs = performance.now() - a.started;
      // For bench/complete.mjs, which reads it at `debug`: VS Code's call to the answer, and what of it was the
      // debounce and the request.
      this.s.log.debug(`completion: debounce ${wait} ms, request ${serverMs.toFixed(1)} ms, provide ${this.stats.lastTotalMs.toFixed(1)} ms, route ${result.route}`);
      if (this.s.log.traceEnabled) this.s.log.trace(`completion: ${JSON.stringify(text).slice(0, 500)}`);
      return text && !controller.signal.aborted ? text : undefined;
    } finally {
      sub.dispose();
      if (this.inflight === controller) this.inflight = undefined;
      this.setWaiting(false);
      // Its budget reservation ends once its usage is on disk (not awaited here: the completion is shown first).
      void Promise.resolve(recorded).then(release);
    }
  }

  /** Where completions go: the completion model's profile, with the user's own base URL for the implicit one. Kept until the settings change. */
  private resolve(): Promise<Resolved> {
    this.resolved ??= (async (): Promise<Resolved> => {
      const current = this.s.settings.current;
      const choice = completionChoice(current.completion, current.profiles, current.activeProfile);
      if ('off' in choice) return choice;
      // A workspace's base URL is never where completions go: only the user's own settings name their endpoint.
      const base = { ...current, baseUrl: current.userBaseUrl, baseUrlSource: 'user' as const };
      const t = await this.s.requester.target(base, false, { profile: choice.profile, model: choice.model });
      if (t.kind === 'config') return { off: t.error.message };
      // With no key stored, the request goes without one, as Test Connection's does: a local server needs none.
      const target: ReadyTarget = t.kind === 'ready' ? t : { kind: 'ready', settings: t.settings, endpoint: t.endpoint, host: new URL(t.endpoint.origin).host, headers: t.headers };
      return { target, choice };
    })();
    void this.resolved.then(() => this.render());
    return this.resolved;
  }

  private record(target: ReadyTarget, model: string, usage: Usage, durationMs: number, source: 'complete' | 'test' = 'complete'): Promise<void> {
    const r = recordFrom(usage, { model, host: usageHost(target), durationMs: Math.round(durationMs), source, at: Date.now() });
    return this.s.usage.record(r).catch((e: unknown) => this.s.log.warn(`Recording completion usage failed: ${e instanceof Error ? e.message : String(e)}`));
  }

  private failed(why: string, final: boolean, outcomes: readonly RouteOutcome[]): void {
    const again = this.failure?.text === why;
    this.failure = { text: why, final, until: Date.now() + (final ? FINAL_FAILURE_MS : FAILURE_MS) };
    if (!again) {
      this.s.log.warn(`Completions failing: ${why}`);
      for (const o of outcomes) this.s.log.info(`  ${ROUTE_NAMES[o.route]}: ${o.verdict}, ${o.why}`);
    }
    this.render();
  }

  private setWaiting(on: boolean): void {
    if (this.waiting === on) return;
    this.waiting = on;
    this.render();
  }

  private editorChanged(e: vscode.TextEditor | undefined): void {
    // The file left behind was being worked on: a chunk around its cursor goes in the ring.
    for (const v of vscode.window.visibleTextEditors) if (v !== e) this.takeChunk(v.document, v.selection.active.line);
    this.render();
  }

  /** Adds a chunk of `doc` around `line` to the ring, when the gate lets the document out. */
  private takeChunk(doc: vscode.TextDocument, line: number): void {
    if (doc.uri.scheme === 'output' || doc.lineCount === 0) return;
    void this.gate.check(doc).then((g) => {
      if (!g.ok) return;
      const from = Math.max(0, line - 32);
      const text = doc.getText(new vscode.Range(from, 0, Math.min(doc.lineCount, line + 32), 0));
      this.ring.add({ doc: doc.uri.toString(), filename: g.filename, startLine: from, text });
    });
  }

  /** The status bar: on, waiting, failing (and why), off, snoozed; for the active editor's language. */
  render(): void {
    const current = this.s.settings.current;
    const choice = completionChoice(current.completion, current.profiles, current.activeProfile);
    if ('off' in choice) return this.status.hide();
    const doc = vscode.window.activeTextEditor?.document;
    const off = this.globalOff() ?? (doc ? this.languageOff(doc.languageId) : undefined);
    const model = `${codeSpan(choice.model)} (${markdownProse(choice.from)})`;
    const lines = [`**Parley completions**: ${off ? markdownProse(off) : this.failure ? 'failing' : this.waiting ? 'waiting for the server' : 'on'}`, '', `- Model: ${model}`];
    if (this.lastRoute) lines.push(`- Route: ${markdownProse(ROUTE_NAMES[this.lastRoute])}`);
    if (this.failure) lines.push(`- Failing: ${markdownProse(this.failure.text)}`);
    lines.push('', 'Click to turn them off, snooze them or switch the model.');
    const [icon, state] = off ? ['circle-slash', 'off'] : this.failure ? ['warning', 'failing'] : this.waiting ? ['loading~spin', 'waiting'] : ['sparkle', 'on'];
    this.status.show(icon, 'Parley', lines.join('\n'), `Parley completions ${state}${this.failure ? `: ${this.failure.text}` : off ? `: ${off}` : ''}`);
  }

  /** The status bar item's menu: off or on, snooze, this language, Copilot's rule, the model. */
  async menu(): Promise<void> {
    const c = this.s.settings.current.completion;
    const lang = vscode.window.activeTextEditor?.document.languageId;
    const snoozed = Date.now() < this.snoozedUntil;
    type Item = vscode.QuickPickItem & { run: () => unknown };
    const items: Item[] = [
      c.enabled
        ? { label: '$(circle-slash) Turn completions off', run: () => writeUserSetting('completion.enabled', false) }
        : { label: '$(sparkle) Turn completions on', run: () => writeUserSetting('completion.enabled', true) },
      ...(snoozed
        ? [{ label: '$(play) Resume now', run: () => this.snooze(0) }]
        : [5, 30, 60].map((m) => ({ label: `$(clock) Snooze for ${m < 60 ? `${m} minutes` : '1 hour'}`, run: () => this.snooze(m) }))),
      ...(lang
        ? [languageEnabled(c, lang)
          ? { label: `$(circle-slash) Turn off for ${lang}`, run: () => writeUserSetting('completion.languages', { ...userLanguages(), [lang]: false }) }
          : { label: `$(check) Turn on for ${lang}`, run: () => writeUserSetting('completion.languages', { ...userLanguages(), [lang]: true }) }]
        : []),
      { label: '$(arrow-swap) Switch completion model…', run: () => this.switchModel() },
      c.whenCopilotIsOn === 'parley'
        ? { label: "$(copilot) Let Copilot's completions win where they are on", run: () => writeUserSetting('completion.whenCopilotIsOn', 'copilot') }
        : { label: "$(copilot) Let Parley's completions win over Copilot's", run: () => writeUserSetting('completion.whenCopilotIsOn', 'parley') },
      { label: '$(pulse) Test Connection (with the completion routes)', run: () => vscode.commands.executeCommand('parley.testConnection') },
    ];
    const pick = await pickOne(items, { title: 'Parley Completions' });
    await pick?.run();
  }

  /** Snoozes for `minutes` (0: resume now). */
  snooze(minutes: number): void {
    clearTimeout(this.snoozeTimer);
    this.snoozedUntil = minutes > 0 ? Date.now() + minutes * 60_000 : 0;
    if (minutes > 0) this.snoozeTimer = setTimeout(() => this.render(), minutes * 60_000 + 50);
    this.abort();
    this.render();
  }

  /** Picks a profile of the user's, then one of its models (or one typed), as the completion model. */
  async switchModel(): Promise<void> {
    const current = this.s.settings.current;
    const mine = current.profiles.filter((p) => p.source === 'user' || p.source === 'implicit');
    const choice = completionChoice(current.completion, current.profiles, current.activeProfile);
    const currentModel = 'off' in choice ? undefined : choice.model;
    const profile = mine.length === 1 ? mine[0] : await pickOne(mine.map((p) => ({ label: p.name, description: String(p.baseUrl) })), { title: 'Parley: Completion Model (1/2): endpoint' }).then((x) => mine.find((p) => p.name === x?.label));
    if (!profile) return;
    const t = await this.s.requester.target({ ...current, baseUrl: current.userBaseUrl, baseUrlSource: 'user' }, false, { profile: profile.name });
    let models: string[] = [];
    if (t.kind !== 'config') {
      const target = t.kind === 'ready' ? t : undefined;
      models = await WIRE.listModels({ endpoint: t.endpoint, apiKey: target?.apiKey, headers: t.headers, requestTimeoutMs: 10_000 }).catch(() => []);
    }
    const typed = 'Type a model id…';
    const pick = models.length
      ? await pickOne([...models.map((m) => ({ label: m, description: currentModel === m ? 'current' : undefined })), { label: typed }], { title: 'Parley: Completion Model (2/2)' })
      : { label: typed };
    if (!pick) return;
    const model = pick.label === typed ? await askText({ title: 'Parley: Completion Model', prompt: 'The model id completions are asked of (a coder model with FIM, e.g. qwen2.5-coder:1.5b).' }) : pick.label;
    if (!model?.trim() || /\s/.test(model.trim())) {
      if (model !== undefined) void showError('Parley: a model id cannot be empty or contain spaces.');
      return;
    }
    await writeUserSetting('completion.endpoint', profile.source === 'implicit' ? '' : profile.name);
    await writeUserSetting('completion.model', model.trim());
  }

  /**
   * Test Connection's completion section: every route tried with a small request, what each answered, and the route
   * remembered. Undefined when no completion model is set.
   */
  async diagnose(signal: AbortSignal): Promise<string | undefined> {
    this.resolved = undefined;
    const r = await this.resolve();
    const current = this.s.settings.current;
    if ('off' in r) return 'off' in completionChoice(current.completion, current.profiles, current.activeProfile) ? undefined : `## Inline completions\n\nNot tested: ${markdownProse(r.off)}\n`;
    const input: FimInput = {
      model: r.choice.model,
      prefix: 'def add(a, b):\n    return ',
      suffix: '\n\n\nprint(add(1, 2))\n',
      file: 'parley_test.py',
      languageId: 'python',
      extras: [],
      maxTokens: 16,
      stop: ['\n'],
      family: chooseFimFamily(r.choice.model, current.completion.fimTokens),
    };
    const outcomes: RouteOutcome[] = [];
    const result = await probeRoutes({ ...this.s.requester.clientOptions(r.target, signal), maxRetries: 0 }, WIRE, input, outcomes, true);
    // Every route that answered was billed: counted as Test Connection's.
    await Promise.all(outcomes.flatMap((o) => (o.usage ? [this.record(r.target, r.choice.model, o.usage, o.durationMs ?? 0, 'test')] : [])));
    const works = outcomes.find((o) => o.verdict === 'works');
    if (works) {
      await this.routes.set(r.target.endpoint.origin, r.choice.model, works.route);
      this.lastRoute = works.route;
      this.failure = undefined;
    }
    this.render();
    const L = [
      '## Inline completions',
      '',
      `- Completion model: ${codeSpan(r.choice.model)} at ${codeSpan(r.target.endpoint.origin)} (${markdownProse(r.choice.from)})`,
      works ? `- Works through ${markdownProse(ROUTE_NAMES[works.route])}; Parley uses that route from now on.` : `- No route works: ${markdownProse('error' in result ? result.error.message : '')}`,
      '',
      '| Route | URL | Result | Why |',
      '|---|---|---|---|',
      ...outcomes.map((o) => `| ${markdownProse(ROUTE_NAMES[o.route])} | ${o.url ? codeCell(o.url) : ''} | ${o.verdict}${o.status ? ` (${o.status})` : ''} | ${markdownProse(o.why).replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`),
      '',
    ];
    return L.join('\n');
  }
}

/** The user's own `parley.completion.languages`, to change one language in it. */
function userLanguages(): Record<string, boolean> {
  const v = vscode.workspace.getConfiguration('parley').inspect<Record<string, boolean>>('completion.languages')?.globalValue;
  return v && typeof v === 'object' ? v : {};
}

/** Whether GitHub Copilot's inline completions are on for a language: its extension is enabled and `github.copilot.enable` does not turn it off. */
export function copilotCompletes(languageId: string): boolean {
  if (!vscode.extensions.getExtension('GitHub.copilot') && !vscode.extensions.getExtension('GitHub.copilot-chat')) return false;
  const map = vscode.workspace.getConfiguration('github.copilot').get<Record<string, boolean>>('enable') ?? {};
  const v = Object.prototype.hasOwnProperty.call(map, languageId) ? map[languageId] : map['*'];
  return v !== false;
}

/**
 * The text around the cursor within the budget, and the cursor's offset; with the suggest widget's selected item, as
 * the text would be once that item is inserted.
 */
function placeOf(doc: vscode.TextDocument, pos: vscode.Position, offset: number, picked?: vscode.SelectedCompletionInfo): CompletionPlace {
  const start = picked?.range.start ?? pos;
  const end = picked && picked.range.end.isAfter(pos) ? picked.range.end : pos;
  const before = doc.getText(new vscode.Range(Math.max(0, pos.line - 400), 0, start.line, start.character)) + (picked?.text ?? '');
  const suffix = clipSuffix(doc.getText(new vscode.Range(end.line, end.character, end.line + 200, 0)));
  return { doc: doc.uri.toString(), offset: picked ? doc.offsetAt(start) + picked.text.length : offset, prefix: clipPrefix(before), suffix };
}
