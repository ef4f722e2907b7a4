// Owns the open conversation and the running request. The webview only renders what this posts.
import * as vscode from 'vscode';
import {
  exportMarkdown, newConversation, titleFrom, toMessages, toView, turnView,
  type ContextItem, type Conversation, type Turn,
} from '../core/conversation';
import { DeltaPacer } from '../core/deltaPacer';
import { errorView } from '../core/errorView';
import { dataUrlHead, sniffImage } from '../core/images';
import { DEMO_MODEL, PRESETS } from '../core/presets';
import type { ChatResult, StreamEvent } from '../core/types';
import { listModels } from '../core/client';
import type { ErrorView, HeaderView, HistoryItem, HostMessage, ImageView, SetupView, TurnStatus } from '../shared/protocol';
import { readSettings } from './config';
import type { HistoryStore } from './history';
import type { Log } from './log';
import type { Requester, Target, TargetProblem } from './requester';
import { isLoopbackOrigin } from './secrets';

/** What a turn's end looks like to the reader. */
export function statusOf(r: ChatResult): TurnStatus {
  switch (r.ended) {
    case 'cancelled':
      return 'stopped';
    case 'error':
      return 'error';
    case 'incomplete':
      return 'incomplete';
    default:
      if (r.finishReason === 'length') return 'truncated';
      if (r.finishReason === 'content_filter') return 'filtered';
      return 'done';
  }
}

function newId(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

const ADAPTATION_NOTICES: Record<string, string> = {
  stream_options: 'This server does not accept stream_options; usage will be estimated when it sends none.',
  max_tokens: 'This server wants max_completion_tokens instead of max_tokens; Parley now sends that.',
};

export class ChatController implements vscode.Disposable {
  private conversation: Conversation;
  private running: { abort: AbortController; turn: Turn; done: Promise<void> } | undefined;
  private pendingContext: ContextItem[] = [];
  private poster: ((m: HostMessage) => void) | undefined;
  private readonly models = new Map<string, string[]>();
  private readonly noticesShown = new Set<string>();
  private pendingDelta: { turnId: string; text: string; reasoning: string } | undefined;
  private readonly pacer = new DeltaPacer(() => this.postDelta());
  private readonly generatingChanged = new vscode.EventEmitter<boolean>();
  readonly onDidChangeGenerating = this.generatingChanged.event;

  constructor(
    private readonly requester: Requester,
    private readonly history: HistoryStore,
    private readonly log: Log,
  ) {
    this.conversation = newConversation(newId(), Date.now());
  }

  /** Loads the conversation that was open last time: only that one. */
  async restore(): Promise<void> {
    const id = this.history.openId();
    const c = id ? await this.history.load(id) : undefined;
    if (!c) return;
    // A reply that was streaming when the window closed ended there.
    for (const t of c.turns) if (t.status === 'streaming') t.status = 'stopped';
    this.conversation = c;
  }

  get current(): Conversation {
    return this.conversation;
  }

  get generating(): boolean {
    return this.running !== undefined;
  }

  /** The view attaches a poster while it exists; messages are dropped while it does not. */
  attach(poster: ((m: HostMessage) => void) | undefined): void {
    this.poster = poster;
  }

  private post(m: HostMessage): void {
    this.poster?.(m);
  }

  /** Everything the webview needs to draw itself from nothing (also mid-stream). */
  async snapshot(): Promise<void> {
    const target = await this.requester.target();
    const problem = 'kind' in target ? target : undefined;
    // The snapshot carries every delta received so far, so a queued one would be applied twice.
    this.dropPendingDelta();
    this.post({
      type: 'snapshot',
      conversation: toView(this.conversation),
      generating: this.generating,
      header: this.header(target),
      setup: problem ? this.setupView(problem) : undefined,
      pendingContext: this.pendingContext.map(({ code: _c, ...chip }) => chip),
    });
    void this.refreshModels(false, target);
  }

  private setupView(p: TargetProblem): SetupView {
    if (p.kind === 'no-key') {
      return {
        reason: `No API key is set for ${p.origin}. Set one, mark this endpoint as needing none, or pick a preset.`,
        presets: [...PRESETS],
        origin: p.origin,
        actions: ['setApiKey', 'markNoKey', 'testConnection'],
      };
    }
    return {
      reason: `The endpoint is not set up: ${p.error.message}`,
      presets: [...PRESETS],
      origin: '',
      actions: ['openSettings', 'testConnection'],
    };
  }

  /**
   * The header names the endpoint requests actually go to: the user's own until a workspace-set origin is allowed.
   * The demo endpoint is `npm start`'s, on loopback with its own model name.
   */
  private header(target: Target | TargetProblem): HeaderView {
    const settings = 'kind' in target ? readSettings() : target.settings;
    const model = settings.model;
    let endpoint: string;
    if (!('kind' in target)) endpoint = target.host;
    else if (target.kind === 'no-key') endpoint = new URL(target.origin).host;
    else endpoint = String(settings.baseUrl); // shown as typed; the setup card says what is wrong with it
    const demo = model === DEMO_MODEL && !('kind' in target) && isLoopbackOrigin(target.endpoint.origin);
    return { model, endpoint, demo, models: this.models.get(endpoint) ?? [] };
  }

  /**
   * Asks GET /models once per endpoint; the header then offers a picker. Failure means "type the name".
   * `target` saves resolving it again when the caller just did.
   */
  async refreshModels(force = false, target?: Target | TargetProblem): Promise<string[]> {
    const t = target ?? (await this.requester.target());
    if ('kind' in t) return [];
    if (!force && this.models.has(t.host)) return this.models.get(t.host) ?? [];
    try {
      const list = await listModels(this.requester.clientOptions(t, AbortSignal.timeout(10_000)));
      this.models.set(t.host, list);
    } catch (e) {
      this.models.set(t.host, []);
      this.log.debug(`GET models failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.post({ type: 'header', header: this.header(t) });
    return this.models.get(t.host) ?? [];
  }

  /** Endpoint or key changed: redraw header and setup card. */
  async endpointChanged(): Promise<void> {
    const t = await this.requester.target();
    this.post({ type: 'header', header: this.header(t) });
    this.post({ type: 'setup', setup: 'kind' in t ? this.setupView(t) : undefined });
    void this.refreshModels(false, t);
  }

  // ---- asking -------------------------------------------------------------------------------

  /** Validates and sends a question typed in the composer. */
  async send(text: string, images: ImageView[]): Promise<void> {
    if (!text.trim() && images.length === 0) {
      this.post({ type: 'composerError', text: 'Type a question first.' });
      return;
    }
    const checked: ImageView[] = [];
    for (const img of images) {
      let kind: string | undefined;
      try {
        kind = sniffImage(dataUrlHead(img.dataUrl));
      } catch {
        kind = undefined;
      }
      if (!kind) {
        this.post({ type: 'composerError', text: `${img.name} is not a PNG, JPEG, GIF or WebP image. Nothing was sent.` });
        return;
      }
      // Labelled by its bytes, not by what the file or the clipboard claimed: servers reject a JPEG sent as PNG.
      checked.push({ name: img.name, dataUrl: `data:${kind};base64,${img.dataUrl.slice(img.dataUrl.indexOf(',') + 1)}` });
    }
    images = checked;
    const context = this.pendingContext;
    this.pendingContext = [];
    this.post({ type: 'pendingContext', chips: [] });
    await this.ask({ id: newId(), role: 'user', text, images: images.length ? images : undefined, contextItems: context.length ? context : undefined, status: 'done' });
  }

  /** Sends a user turn (from the composer, Explain Selection or Continue) and streams the reply. */
  async ask(user: Turn, source: 'chat' | 'explain' = 'chat'): Promise<void> {
    await this.stop();
    const c = this.conversation;
    if (c.turns.length === 0) c.title = titleFrom(user.text || user.contextItems?.[0]?.path || 'Images');
    c.turns.push(user);
    this.post({ type: 'turnStart', turn: turnView(user) });
    await this.reply(source);
  }

  /** Streams an assistant turn for the conversation as it stands. */
  private async reply(source: 'chat' | 'explain' = 'chat'): Promise<void> {
    const c = this.conversation;
    const settings = readSettings();
    const history = [...c.turns];
    const turn: Turn = { id: newId(), role: 'assistant', text: '', status: 'streaming', model: settings.model };
    c.turns.push(turn);
    c.updatedAt = Date.now();
    this.post({ type: 'turnStart', turn: turnView(turn) });
    const abort = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    this.running = { abort, turn, done };
    this.setGenerating(true);
    try {
      const target = await this.requester.target(settings, true);
      if ('kind' in target) {
        this.endTurn(turn, 'error', this.problemError(target));
        return;
      }
      await this.history.save(c);
      await this.history.setOpen(c.id);
      const messages = toMessages(settings.systemPrompt, history, { sendReasoningBack: settings.sendReasoningBack });
      const outcome = await this.requester.run(target, {
        messages,
        source,
        signal: abort.signal,
        onEvent: (e) => this.onEvent(turn, e),
        onAdapted: (p) => this.adapted(p),
      });
      const r = outcome.result;
      this.pacer.postNow();
      // The result is the truth; deltas were a preview of it.
      turn.text = r.text || (r.refusal ? `_Refusal:_ ${r.refusal}` : '');
      if (r.reasoning) turn.reasoning = r.reasoning;
      if (r.reasoningField) turn.reasoningField = r.reasoningField;
      if (turn.reasoningStartedAt && turn.reasoningMs === undefined) turn.reasoningMs = Date.now() - turn.reasoningStartedAt;
      const u = outcome.usage;
      if (u) turn.usage = { prompt: u.prompt, completion: u.completion, total: u.total, estimated: u.estimated };
      this.endTurn(turn, statusOf(r), r.error ? errorView(r.error, { model: settings.model, url: target.endpoint.url }) : undefined);
    } catch (e) {
      // Core never throws for request failures; this is a bug, but the reader still sees an error card.
      this.log.error(`Unexpected failure: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      this.endTurn(turn, 'error', { kind: 'unknown', title: `Parley failed: ${e instanceof Error ? e.message : String(e)}`, actions: ['retry', 'showLog'] });
    } finally {
      this.running = undefined;
      this.setGenerating(false);
      c.updatedAt = Date.now();
      await this.history.save(c);
      await this.history.setOpen(c.id);
      finish();
    }
  }

  private problemError(p: TargetProblem): ErrorView {
    if (p.kind === 'no-key') {
      return {
        kind: 'auth',
        title: `No API key is set for ${p.origin}.`,
        hint: 'Set the key for this endpoint, or mark it as needing none (local servers usually need none).',
        actions: ['setApiKey', 'markNoKey', 'testConnection'],
      };
    }
    return errorView(p.error, { model: readSettings().model, url: '' });
  }

  private endTurn(turn: Turn, status: TurnStatus, error?: ErrorView): void {
    turn.status = status;
    if (error) turn.error = { ...error, title: this.log.clean(error.title), detail: error.detail && this.log.clean(error.detail) };
    this.post({ type: 'turnEnd', turn: turnView(turn) });
  }

  private adapted(param: string): void {
    if (this.noticesShown.has(param)) return;
    this.noticesShown.add(param);
    this.post({ type: 'notice', text: ADAPTATION_NOTICES[param] ?? `This server does not accept ${param}; Parley no longer sends it.` });
  }

  private onEvent(turn: Turn, e: StreamEvent): void {
    if (e.type === 'text' && e.choice === 0) {
      if (turn.reasoningStartedAt && turn.reasoningMs === undefined) turn.reasoningMs = Date.now() - turn.reasoningStartedAt;
      turn.text += e.text;
      this.queueDelta(turn.id, e.text, '');
    } else if (e.type === 'reasoning' && e.choice === 0) {
      // The webview starts its own clock at the first reasoning delta; this one serves snapshots.
      turn.reasoningStartedAt ??= Date.now();
      turn.reasoning = (turn.reasoning ?? '') + e.text;
      this.queueDelta(turn.id, '', e.text);
    }
  }

  /** New text waits for the pacer (see deltaPacer.ts): one small message per update the reader sees. */
  private queueDelta(turnId: string, text: string, reasoning: string): void {
    if (this.pendingDelta && this.pendingDelta.turnId === turnId) {
      this.pendingDelta.text += text;
      this.pendingDelta.reasoning += reasoning;
    } else {
      this.pacer.postNow();
      this.pendingDelta = { turnId, text, reasoning };
    }
    this.pacer.add();
  }

  private dropPendingDelta(): void {
    this.pacer.cancel();
    this.pendingDelta = undefined;
  }

  /** Posts the waiting text: only ever called by the pacer, when it is due or asked to post now. */
  private postDelta(): void {
    const d = this.pendingDelta;
    this.pendingDelta = undefined;
    if (!d) return;
    this.post({ type: 'delta', turnId: d.turnId, text: d.text || undefined, reasoning: d.reasoning || undefined });
  }

  private setGenerating(v: boolean): void {
    void vscode.commands.executeCommand('setContext', 'parley.generating', v);
    this.post({ type: 'generating', value: v });
    this.generatingChanged.fire(v);
  }

  /** Aborts the running request, if any, and waits until its turn is closed. */
  async stop(): Promise<void> {
    const r = this.running;
    if (!r) return;
    r.abort.abort();
    await r.done;
  }

  // ---- acting on the last turn --------------------------------------------------------------

  private lastAssistantIndex(): number {
    const t = this.conversation.turns;
    return t.length > 0 && t[t.length - 1].role === 'assistant' ? t.length - 1 : -1;
  }

  /** Drops the last reply and asks again (Regenerate, and Retry on an error card). */
  async regenerate(): Promise<void> {
    await this.stop();
    const i = this.lastAssistantIndex();
    if (i < 0) return;
    this.conversation.turns.splice(i, 1);
    await this.snapshot();
    await this.reply();
  }

  /** Takes the last question (and its reply) out and puts its text back in the composer. */
  async editLast(): Promise<void> {
    await this.stop();
    const t = this.conversation.turns;
    let i = t.length - 1;
    while (i >= 0 && t[i].role !== 'user') i--;
    if (i < 0) return;
    const [user] = t.splice(i);
    // Attached code goes back to the pending chips so nothing is lost.
    if (user.contextItems?.length) this.pendingContext.push(...user.contextItems);
    await this.history.save(this.conversation);
    await this.snapshot();
    this.post({ type: 'composerText', text: user.text, images: user.images });
  }

  /** After a truncated reply: asks the model to go on. */
  async continueReply(): Promise<void> {
    await this.ask({ id: newId(), role: 'user', text: 'Continue exactly where you stopped, without repeating anything.', note: 'Continue', status: 'done' });
  }

  // ---- conversations ------------------------------------------------------------------------

  async newChat(): Promise<void> {
    await this.stop();
    this.conversation = newConversation(newId(), Date.now());
    await this.history.setOpen(undefined);
    await this.snapshot();
    this.post({ type: 'focusComposer' });
  }

  async openConversation(id: string): Promise<boolean> {
    const c = await this.history.load(id);
    if (!c) return false;
    await this.stop();
    this.conversation = c;
    await this.history.setOpen(id);
    await this.snapshot();
    return true;
  }

  async deleteConversation(id: string): Promise<void> {
    if (id === this.conversation.id) await this.newChat();
    await this.history.delete(id);
    this.post({ type: 'history', items: await this.history.list() });
  }

  async clearHistory(): Promise<void> {
    await this.newChat();
    await this.history.clear();
    this.post({ type: 'history', items: [] });
  }

  historyItems(): Promise<HistoryItem[]> {
    return this.history.list();
  }

  async postHistory(): Promise<void> {
    this.post({ type: 'history', items: await this.history.list() });
  }

  // ---- context ------------------------------------------------------------------------------

  addContext(item: ContextItem): void {
    this.pendingContext.push(item);
    this.post({ type: 'pendingContext', chips: this.pendingContext.map(({ code: _c, ...chip }) => chip) });
  }

  removeContext(id: string): void {
    this.pendingContext = this.pendingContext.filter((c) => c.id !== id);
    this.post({ type: 'pendingContext', chips: this.pendingContext.map(({ code: _c, ...chip }) => chip) });
  }

  attachImage(image: ImageView): void {
    this.post({ type: 'imageAttached', image });
  }

  composerError(text: string): void {
    this.post({ type: 'composerError', text });
  }

  /**
   * The open conversation as Markdown (for export), as it was written: only the exact keys are taken out, the
   * stored ones (`storedKeys`, for every origin) and any seen this session.
   */
  markdown(storedKeys: readonly string[]): string {
    return exportMarkdown(this.conversation, [...storedKeys, ...this.log.knownSecrets()]);
  }

  static newId = newId;

  dispose(): void {
    this.running?.abort.abort();
    this.pacer.cancel();
    this.generatingChanged.dispose();
  }
}
