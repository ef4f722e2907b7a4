// Owns the open conversation: questions in, turns out, saved as they change. The webview only renders what it posts.
import {
  exportMarkdown, newConversation, settleUnfinishedCalls, titleFrom, toMessages, toView, turnView,
  type Conversation, type ContextItem, type Turn,
} from '../core/conversation';
import { errorView, imagesRefusal } from '../core/errorView';
import { dataUrlHead, sniffImage } from '../core/images';
import { newId } from '../core/ids';
import { applyContextBudget, budgetNote } from '../core/mentions';
import type * as vscode from 'vscode';
import { hostname } from 'node:os';
import type { ImageView } from '../shared/protocol';
import type { TurnOwner } from '../core/recovery';
import { setProfileModel, writeUserSetting, type Settings, type SettingsSnapshot } from './config';
import { ChatViewModels } from './chatViewModels';
import { durability, type HistoryStore } from './history';
import type { Log } from './log';
import { PendingContext } from './pendingContext';
import { profileName, type Requester, type Selection } from './requester';
import { guardMessage } from '../core/toolLoop';
import { compactionBudget, planCompaction, summaryRequest, summaryTurn } from '../core/compaction';
import { overrideFor } from '../core/profiles';
import { contextMeter, correction, exceedsServer, fits, overThreshold, type WindowInfo } from '../core/contextWindow';
import type * as ServerWindowModule from '../core/serverWindow';
import { fitTools, type ToolFit } from '../core/toolFit';
import { estimatePromptTokens, estimateTokens } from '../core/tokenEstimate';
import type { ChatMessage } from '../core/types';
import type { ActionId, ContextMeterView, ErrorView, HistoryItem } from '../shared/protocol';
import type { ReadyTarget, Target } from './requester';
import type { UsageRecord } from '../core/usageLedger';
import type { Toolbox } from './toolbox';
import { runToolTurn, ToolSession, type TurnTool } from './toolTurn';
import { statusOf, TurnRunner } from './turnRunner';
import { ViewChannel } from './viewChannel';

/** This extension host session, as the owner of the replies it streams (core/recovery.ts). */
const SESSION = newId();
/** A streaming reply is saved this often when it changed, and at least every HEARTBEAT_MS while it runs. */
const SAVE_EVERY_MS = 2_000;
const HEARTBEAT_MS = 10_000;

function owner(): TurnOwner {
  return { session: SESSION, pid: process.pid, hostname: hostname(), beat: Date.now() };
}

/**
 * A conversation taken up again from the history goes on with the profile and model its last
 * reply used, whatever is selected for new chats. The open conversation follows the settings until then, or until
 * the header's switchers pick for it.
 */
function pinToLastUsed(c: Conversation): void {
  if (c.profile !== undefined) return;
  const last = [...c.turns].reverse().find((t) => t.role === 'assistant' && t.profile !== undefined);
  if (!last) return;
  c.profile = last.profile;
  c.model = last.model;
}

/** The cards about the server's window, with the window probe (dist/serverWindow.js, loaded by the first meter). */
const windowWords = () => require('./serverWindow.js') as typeof ServerWindowModule;

/** Images labelled by their bytes, not by what the file or the clipboard claimed, or why one is refused. */
function checkImages(images: ImageView[]): ImageView[] | string {
  const checked: ImageView[] = [];
  for (const img of images) {
    let kind: string | undefined;
    try {
      kind = sniffImage(dataUrlHead(img.dataUrl));
    } catch {
      kind = undefined;
    }
    if (!kind) return `${img.name} is not a PNG, JPEG, GIF or WebP image. Nothing was sent.`;
    // Servers reject a JPEG sent as PNG.
    checked.push({ name: img.name, dataUrl: `data:${kind};base64,${img.dataUrl.slice(img.dataUrl.indexOf(',') + 1)}` });
  }
  return checked;
}

/** The tools a request offers, fitted to the model's window (core/toolFit.ts), and what fitting did. */
interface FittedTools {
  tools: TurnTool[];
  fit: ToolFit;
}

/** The context a question sends, and notes for its turn (an open file left out of `@open`, and why). */
export interface ExpandedContext {
  items: ContextItem[];
  notes: string[];
}

/**
 * Reads the `@` mentions among the chips as they are when the question is sent (mentions.ts); the others pass as they
 * are. Returns why one cannot be read: nothing is sent then.
 */
export type ContextExpander = (items: readonly ContextItem[]) => Promise<ExpandedContext | string>;

/**
 * The chat in the view. Its parts each have one job: the running turn and its pacing (`runner`), the header, setup
 * card and model list (`views`), the chips for the next question (`context`); all post through one `channel`.
 */
export class ChatController implements vscode.Disposable {
  private conversation: Conversation;
  readonly runner: TurnRunner;
  readonly views: ChatViewModels;
  readonly context: PendingContext;
  /** Calls waiting for the reader, and the tools always allowed in this window. */
  readonly tools = new ToolSession();
  /** Saves one at a time, in order: a streaming save never lands after the final one. */
  private saving: Promise<void> = Promise.resolve();
  /** Why the last save failed, while saving fails: the panel says so until a save works again. */
  private unsaved: string | undefined;
  /** What restore() found, said once the view is there. */
  private restoreNotice: string | undefined;
  /** The assistant turn streaming now. */
  private streamingTurn: string | undefined;
  /** The first snapshot's target, resolving since the view was made (prefetch). */
  private early: { target: Promise<Target>; settings: Settings; selection: string; generation: number; at: number } | undefined;
  /** The model list and meter that wait for the panel to have drawn its first snapshot. */
  private afterDrawn: { run: () => void; timer: ReturnType<typeof setTimeout> } | undefined;
  /** Counts endpoint changes (settings, keys, the header's profile and model), so a prefetched target is not stale. */
  private endpointGeneration = 0;
  /** The conversation and tool count the small-window notice last spoke of. */
  private toolsNoticed: string | undefined;

  constructor(
    private readonly requester: Requester,
    private readonly history: HistoryStore,
    private readonly log: Log,
    private readonly settings: SettingsSnapshot,
    readonly channel = new ViewChannel(),
    /** The tools a turn may offer now ([] in Restricted Mode or when they are off), and their settings. */
    private readonly toolbox: Toolbox = () => ({ tools: [], settings: { enabled: false, askBeforeReading: false, maxRounds: 10, maxTurnTokens: 200_000 } }),
    private readonly expandContext: ContextExpander = async (items) => ({ items: [...items], notes: [] }),
  ) {
    this.conversation = newConversation(newId(), Date.now());
    this.runner = new TurnRunner(requester, channel, log, () => void this.persist(this.conversation));
    this.views = new ChatViewModels(requester, channel, log, () => this.selection());
    this.context = new PendingContext(channel, () => void this.postMeter());
  }

  /** Loads the conversation that was open last time: only that one. */
  async restore(): Promise<void> {
    const id = this.history.openId();
    const c = id ? await this.read(id) : undefined;
    if (!c) return;
    this.conversation = c;
  }

  /**
   * Reads a conversation from the history. A damaged file is moved aside (the history lists it) and the reader is told;
   * a reply whose window went away while it streamed becomes Interrupted, its text kept and its usage counted once;
   * a tool call it left unfinished is not run.
   */
  private async read(id: string): Promise<Conversation | undefined> {
    // A save still queued (a reply's final one) would otherwise be read as its older, streaming self.
    await this.saving;
    const r = await this.history.read(id);
    if (r && 'damagedId' in r) {
      const text = durability().damagedNotice(r.damagedId);
      this.restoreNotice = text;
      this.channel.post({ type: 'notice', text, actions: ['showLog'] });
      return undefined;
    }
    const c = r?.conversation;
    if (!c) return undefined;
    const streaming = () => c.turns.filter((t) => t.status === 'streaming').length;
    const before = streaming();
    if (before > 0) {
      const counted = durability().recover(c, SESSION, this.streamingTurn, this.log);
      if (streaming() < before) {
        for (const u of counted) await this.requester.record(u);
        await this.persist(c);
      }
    }
    // A call the file left waiting (or queued, or running) in a turn that no longer streams will never run: it is shown
    // as not run, with no approval buttons, and the model is told so if the conversation goes on. A turn another live
    // window still streams (recover left it) is that window's: its waiting call may yet be answered there.
    settleUnfinishedCalls(c);
    return c;
  }

  get current(): Conversation {
    return this.conversation;
  }

  /** The open conversation's profile and model; unset parts follow parley.endpoint and the profile's model. */
  selection(): Selection {
    return { profile: this.conversation.profile, model: this.conversation.model };
  }

  get generating(): boolean {
    return this.runner.generating;
  }

  /**
   * Starts resolving the target the first snapshot needs (the key from SecretStorage: in a remote window a round trip
   * to the browser side, slow in a window just opened) while the panel's webview loads, instead of after it is ready.
   */
  prefetch(): void {
    if (this.early) return;
    const settings = this.settings.current;
    const target = this.requester.target(settings, false, this.selection());
    target.catch(() => {});
    this.early = { target, settings, selection: JSON.stringify(this.selection()), generation: this.endpointGeneration, at: Date.now() };
  }

  /** The prefetched target when nothing it depends on changed since (settings, keys, the profile or model); once. */
  private snapshotTarget(): Promise<Target> {
    const e = this.early;
    this.early = undefined;
    const again = () => this.requester.target(undefined, false, this.selection());
    // Fresh only for a few seconds (a key changed in another window is not announced here), and asked again if it failed.
    const fresh = e && Date.now() - e.at < 5_000 && e.settings === this.settings.current && e.generation === this.endpointGeneration && e.selection === JSON.stringify(this.selection());
    return fresh ? e.target.catch(again) : again();
  }

  /**
   * Everything the webview needs to draw itself from nothing (also mid-stream). For a panel that has just loaded
   * (`ready`), the model list and the meter wait until it says it has drawn the snapshot (`drawn`, at most a second):
   * a window's first request loads Node's fetch, and the snapshot would wait behind it (bench/latency.mjs).
   */
  async snapshot(ready = false): Promise<void> {
    const { runner, views, channel, context } = this;
    const target = await this.snapshotTarget();
    // The snapshot carries every delta received so far, so a queued one would be applied twice.
    runner.dropPendingDelta();
    channel.post({
      type: 'snapshot',
      conversation: toView(this.conversation, this.streamingTurn),
      generating: this.generating,
      header: views.header(target),
      setup: views.setup(target),
      pendingContext: context.chips(),
    });
    this.log.debug('stage: snapshot posted');
    this.postTools();
    if (this.restoreNotice) channel.post({ type: 'notice', text: this.restoreNotice, actions: ['showLog'] });
    this.restoreNotice = undefined;
    if (this.unsaved) channel.post({ type: 'notice', text: durability().unsavedText(this.unsaved) });
    clearTimeout(this.afterDrawn?.timer);
    this.afterDrawn = undefined;
    const models = () => void views.refreshModels(false, target).then(() => this.postMeter(target));
    if (!ready) return models();
    // A panel that never says `drawn` (an older page, a test) gets them anyway.
    this.afterDrawn = { run: models, timer: setTimeout(() => this.drawn(), 1_000) };
  }

  /** The panel painted its first snapshot: the model list and the meter now (see snapshot). */
  drawn(): void {
    const pending = this.afterDrawn;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.afterDrawn = undefined;
    pending.run();
  }

  /** Header and setup card again (endpoint, key or settings changed), then the meter. */
  async endpointChanged(): Promise<void> {
    this.endpointGeneration++;
    // The model list and meter waiting for `drawn` would be the old endpoint's: this asks for the new ones.
    clearTimeout(this.afterDrawn?.timer);
    this.afterDrawn = undefined;
    await this.postMeter(await this.views.endpointChanged());
  }

  // ---- context ------------------------------------------------------------------------------

  /**
   * How full the model's window will be with the next request: the system prompt, the turns sent (from the last
   * summary on), the chips waiting and the tools' definitions (as fitted to the window), by Parley's estimate, scaled by
   * how far off it was on this conversation's last request.
   */
  async meter(t: ReadyTarget, messages?: ChatMessage[], fitted?: FittedTools): Promise<ContextMeterView> {
    const c = this.conversation;
    const s = t.settings;
    const w = await this.views.windowFor(t);
    const { fit } = fitted ?? this.fitTools(s, w);
    const sent = messages ?? toMessages(s.systemPrompt, c.turns, { sendReasoningBack: s.sendReasoningBack });
    const extra = estimateTokens(this.context.pendingText()) + fit.tokens;
    const { plan } = this.compaction(s, w, fit);
    const meter = contextMeter({
      messages: sent, extraTokens: extra, last: c.lastPrompt, threshold: s.compaction.threshold,
      compactable: plan?.summarize.filter((x) => x.role === 'user').length ?? 0, ...w,
    });
    if (fit.offered) meter.tools = { tokens: fit.tokens, sent: fit.definitions.length, offered: fit.offered, short: fit.short };
    return meter;
  }

  /** The tools offered now, fitted to window `w`: shortened, or fewer, when they would crowd a small window. */
  private fitTools(s: Settings, w: WindowInfo): FittedTools {
    const offered = this.offeredTools(s);
    const fit = fitTools(offered.map((x) => x.definition), w);
    // fitTools keeps the first ones, in order.
    return { tools: fit.definitions.map((definition, i) => ({ ...offered[i], definition })), fit };
  }

  /**
   * What a compaction of `turns` would summarize now, and the tokens its summary and its kept turns may each take:
   * well below the threshold when the window is known, past the system prompt and the tool definitions, which no
   * compaction shrinks (compactionBudget).
   */
  private compaction(s: Settings, w: WindowInfo, fit: ToolFit, turns = this.conversation.turns): { plan: ReturnType<typeof planCompaction>; budget?: number } {
    const fixed = estimatePromptTokens(toMessages(s.systemPrompt, [], { sendReasoningBack: false })) + fit.tokens;
    const budget = compactionBudget(w, s.compaction.threshold, fixed);
    return { plan: planCompaction(turns, s.compaction.keepTurns, budget), budget };
  }

  /** Says once per conversation (and again when it changes) that the window is too small for the tools as they are. */
  private toolsNotice({ fit }: FittedTools, w: WindowInfo): void {
    const left = fit.offered - fit.definitions.length;
    const key = `${this.conversation.id}:${fit.definitions.length}`;
    if (!fit.short || key === this.toolsNoticed) return;
    this.toolsNoticed = key;
    this.channel.post({
      type: 'notice',
      text: `The model's window is small (${w.window?.toLocaleString('en-US')} tokens): tools are sent in short form${left ? `, ${left} of ${fit.offered} left out` : ''}. Turning tools off in the composer frees their room.`,
    });
  }

  /** Posts the meter for the open conversation (none while the endpoint is not ready). */
  async postMeter(target?: Target): Promise<void> {
    const t = target ?? (await this.requester.target(undefined, false, this.selection()));
    this.channel.post({ type: 'meter', meter: t.kind === 'ready' ? await this.meter(t) : undefined });
  }

  /** Parley: Compact Conversation, the meter's Compact button and the "won't fit" card. */
  async compact(): Promise<void> {
    if (this.generating) {
      this.channel.post({ type: 'notice', text: 'Stop the reply first: compaction summarizes the conversation as it stands.' });
      return;
    }
    const t = await this.requester.target(undefined, true, this.selection());
    if (t.kind !== 'ready') {
      this.channel.post({ type: 'notice', text: 'The endpoint is not ready, so nothing was summarized.', actions: ['testConnection'] });
      return;
    }
    const done = await this.summarize(t);
    if (done !== true) return this.channel.post({ type: 'notice', text: done.why, actions: done.actions });
    await this.save();
    await this.snapshot();
  }

  /** After a context_length error: the failed reply goes, older turns are summarized, and the question is asked again. */
  async compactAndRetry(): Promise<void> {
    await this.stop();
    const turns = this.conversation.turns;
    const failed = turns.at(-1)?.role === 'assistant' && turns.at(-1)?.status === 'error' ? turns.pop() : undefined;
    const t = await this.requester.target(undefined, true, this.selection());
    const done = t.kind === 'ready' ? await this.summarize(t) : true;
    if (done !== true) {
      // Nothing changed: the failed reply and its card stay, so Retry and Compact and retry are still there.
      if (failed) turns.push(failed);
      this.channel.post({ type: 'notice', text: done.why, actions: done.actions });
      await this.snapshot();
      return;
    }
    await this.snapshot();
    await this.reply('chat', t.kind === 'ready' ? t : undefined);
  }

  /**
   * Asks the same model for a summary of the older turns and puts it in front of the turns kept word for word. The
   * request is sized to fit the window (a 2,048-token local model too) and its usage is counted. Returns true, or why
   * nothing changed, with the buttons the notice gets.
   */
  private async summarize(t: ReadyTarget, signal?: AbortSignal): Promise<true | { why: string; actions?: ActionId[] }> {
    const c = this.conversation;
    const s = t.settings;
    const w = await this.views.windowFor(t);
    const { plan, budget = w.reserve } = this.compaction(s, w, this.fitTools(s, w).fit);
    if (!plan) return { why: `Nothing to compact yet: the last ${s.compaction.keepTurns} questions are kept word for word (parley.compaction.keepTurns).` };
    // The summary stays within its part of the budget, but no shorter than 128 tokens.
    const req = summaryRequest({ summarize: plan.summarize, window: w.window, reserveHint: Math.min(w.reserve, Math.max(128, budget)) });
    this.log.info(`Compacting: ${plan.summarize.length} turns into a summary (max_tokens ${req.maxTokens}${req.cut ? ', oldest text cut to fit' : ''}).`);
    const out = await this.requester.run(t, { messages: req.messages, source: 'compact', signal, overrides: { maxTokens: req.maxTokens } });
    const r = out.result;
    if (r.ended !== 'done' || !r.text.trim()) {
      const why = r.error ? errorView(r.error, { model: s.model, url: t.endpoint.url }).title : r.ended === 'cancelled' ? 'it was stopped' : 'the model returned no summary';
      return { why: `The conversation was not compacted: ${why}`, actions: ['showLog'] };
    }
    const turn = summaryTurn(newId(), r.text.trim(), plan.keepFrom, s.model);
    if (out.usage) turn.usage = { prompt: out.usage.prompt, completion: out.usage.completion, total: out.usage.total, estimated: out.usage.estimated };
    turn.profile = profileName(s);
    c.turns.splice(plan.keepFrom, 0, turn);
    c.lastPrompt = undefined;
    c.updatedAt = Date.now();
    return true;
  }

  // ---- asking -------------------------------------------------------------------------------

  /** Validates and sends a question typed in the composer. */
  async send(text: string, images: ImageView[]): Promise<void> {
    const { channel, context } = this;
    if (!text.trim() && images.length === 0) {
      channel.post({ type: 'composerError', text: 'Type a question first.' });
      return;
    }
    const checked = checkImages(images);
    if (typeof checked === 'string') {
      channel.post({ type: 'composerError', text: checked });
      return;
    }
    const refused = checked.length ? await this.imagesRefused() : undefined;
    if (refused) {
      channel.post({ type: 'composerError', text: `${refused} Nothing was sent.` });
      return;
    }
    const taken = context.take();
    const expanded = await this.expandContext(taken);
    if (typeof expanded === 'string') {
      context.restore(taken);
      channel.post({ type: 'composerError', text: `${expanded} Nothing was sent.` });
      return;
    }
    // One budget for all the attached context; the turn says what was cut.
    const max = this.settings.current.maxContextChars;
    const { items, cut } = applyContextBudget(expanded.items, max);
    const notes = [...expanded.notes, ...(cut.length ? [budgetNote(cut, max)] : [])];
    await this.ask({
      id: newId(), role: 'user', text, images: checked.length ? checked : undefined, contextItems: items.length ? items : undefined,
      ...(notes.length ? { note: notes.join(' ') } : {}), status: 'done',
    });
  }

  /**
   * Why the open conversation's model takes no images, in words, or undefined: its profile says so (`vision: false`),
   * or else the server's model list does (`vision: true` in the profile wins over the list). Checked before an image
   * is sent or attached, so that a text-only model is not sent one (llama.cpp answers it with a 500).
   */
  async imagesRefused(): Promise<string | undefined> {
    const s = this.requester.selected(this.selection());
    const p = s.profile;
    const vision = p ? overrideFor(p, s.model).vision : undefined;
    // The model list is asked only when the profile does not say.
    return imagesRefusal(s.model, p ? { name: p.name, vision } : undefined, vision === undefined ? await this.views.takesImages() : undefined);
  }

  /** Sends a user turn (from the composer, Explain Selection or Continue) and streams the reply. */
  async ask(user: Turn, source: 'chat' | 'explain' = 'chat'): Promise<void> {
    await this.stop();
    const c = this.conversation;
    if (c.turns.length === 0) c.title = titleFrom(user.text || user.contextItems?.[0]?.path || 'Images');
    c.turns.push(user);
    this.channel.post({ type: 'turnStart', turn: turnView(user) });
    await this.reply(source);
  }

  /** Streams an assistant turn for the conversation as it stands. */
  private async reply(source: 'chat' | 'explain' = 'chat', given?: ReadyTarget): Promise<void> {
    const { requester, runner, views, channel } = this;
    const c = this.conversation;
    const history = [...c.turns];
    const preview = requester.selected(this.selection());
    const turn: Turn = { id: newId(), role: 'assistant', text: '', status: 'streaming', model: preview.model, profile: profileName(preview), owner: owner() };
    c.turns.push(turn);
    c.updatedAt = Date.now();
    channel.post({ type: 'turnStart', turn: turnView(turn) });
    this.streamingTurn = turn.id;
    const stopSaving = this.saveWhileStreaming(c, turn);
    await runner.run(turn, async (signal) => {
      // `given`: the caller just resolved it, asking any consent question already (Compact and retry).
      const target = given ?? (await requester.target(undefined, true, this.selection()));
      const settings = target.settings;
      if (target.kind !== 'ready') return runner.end(turn, 'error', views.problemError(target));
      turn.model = settings.model;
      turn.profile = profileName(settings);
      await this.save(c);
      const w = await views.windowFor(target);
      const fitted = this.fitTools(settings, w);
      this.toolsNotice(fitted, w);
      const messages = await this.makeRoom(target, turn, toMessages(settings.systemPrompt, history, { sendReasoningBack: settings.sendReasoningBack }), fitted, signal);
      if (!messages) return;
      // Servers count the tool definitions in prompt_tokens: so does the estimate they are compared with.
      const estimated = estimatePromptTokens(messages) + fitted.fit.tokens;
      const box = this.toolbox();
      const end = await runToolTurn({
        turn, runner, channel, log: this.log, session: this.tools, target, tools: fitted.tools, signal, source,
        askBeforeReading: box.settings.askBeforeReading,
      }, messages, box.settings);
      const r = end.result;
      // One request with a real count: how far off the estimate was, for the meter; or a sign the server cut the prompt.
      let dropped: ErrorView | undefined;
      if ((turn.requests ?? 1) === 1 && turn.usage && !turn.usage.estimated && turn.usage.prompt > 0) {
        dropped = await this.droppedPrompt(target, turn, Math.round(estimated * correction(c.lastPrompt)), turn.usage.prompt);
        if (!dropped) c.lastPrompt = { estimated, actual: turn.usage.prompt };
      } else await views.afterReply(target, r.error?.kind === 'context_length');
      if (end.guard) return runner.end(turn, 'incomplete', { kind: 'unknown', title: guardMessage(end.guard, box.settings), actions: ['continue'] });
      const compactable = r.error?.kind === 'context_length' && this.compaction(settings, w, fitted.fit, c.turns.filter((x) => x !== turn)).plan !== undefined;
      const error = r.error ? errorView(r.error, { model: settings.model, url: target.endpoint.url, compactable }) : dropped;
      runner.end(turn, statusOf(r), error);
    }, async () => {
      stopSaving();
      this.streamingTurn = undefined;
      // Ended: nobody streams it any more, and its requests are counted.
      delete turn.owner;
      delete turn.inflight;
      c.updatedAt = Date.now();
      await this.save(c);
      await this.postMeter();
    });
  }

  /**
   * Saves the conversation while `turn` streams: every SAVE_EVERY_MS when the turn changed, and every HEARTBEAT_MS
   * anyway (a call waiting for approval changes nothing), each time with a new beat in its owner, so that a reload
   * or a crash loses at most the last seconds of the reply. Returns the function that stops it.
   */
  private saveWhileStreaming(c: Conversation, turn: Turn): () => void {
    const shape = () => `${turn.text.length}|${turn.reasoning?.length ?? 0}|${turn.steps?.length ?? 0}|${turn.inflight?.id ?? ''}`;
    let saved = shape();
    let beat = Date.now();
    let busy = false;
    const timer = setInterval(() => {
      // On a disk slower than the interval, saves do not pile up: the next tick after this one takes the changes.
      if (busy || turn.status !== 'streaming' || (shape() === saved && Date.now() - beat < HEARTBEAT_MS)) return;
      saved = shape();
      beat = Date.now();
      turn.owner = owner();
      busy = true;
      // Marked open when the turn began: global state is not written every 2 s.
      void this.persist(c).finally(() => (busy = false));
    }, SAVE_EVERY_MS);
    return () => clearInterval(timer);
  }

  /**
   * The messages to send, after making room when they would not fit the window: past the compaction threshold older
   * turns are summarized first (the reader is told), and with automatic compaction off a request that cannot fit is
   * not sent: the turn ends with a card that offers Compact and retry. A prompt larger than the window the server runs
   * is never sent (the server would refuse it, or drop its start and answer anyway): with nothing left to compact the
   * card says how to raise the server's window. Undefined when the turn has ended.
   */
  private async makeRoom(target: ReadyTarget, turn: Turn, messages: ChatMessage[], tools: FittedTools, signal: AbortSignal): Promise<ChatMessage[] | undefined> {
    const m = await this.meter(target, messages, tools);
    if (fits(m) && !overThreshold(m)) return messages;
    if (m.compactable > 0 && m.threshold > 0) {
      this.channel.post({ type: 'notice', text: `The conversation fills ${Math.round((m.used / (m.window ?? m.used)) * 100)} % of the model's window: summarizing older turns first.` });
      const done = await this.summarize(target, signal);
      if (signal.aborted) return void this.runner.end(turn, 'stopped');
      if (done !== true) {
        this.channel.post({ type: 'notice', text: done.why, actions: done.actions });
        return exceedsServer(m) ? this.refuse(target, turn, m) : messages;
      }
      await this.snapshot();
      const s = target.settings;
      const after = toMessages(s.systemPrompt, this.conversation.turns.filter((x) => x !== turn), { sendReasoningBack: s.sendReasoningBack });
      const left = await this.meter(target, after, tools);
      return exceedsServer(left) ? this.refuse(target, turn, left) : after;
    }
    if ((fits(m) || m.compactable === 0) && !exceedsServer(m)) return messages;
    return this.refuse(target, turn, m);
  }

  /** Ends `turn` unsent, with a card: Compact and retry when there is something to summarize, and how to raise the server's window. */
  private async refuse(target: ReadyTarget, turn: Turn, m: ContextMeterView): Promise<undefined> {
    const w = await this.views.windowFor(target);
    // The window may be raised before the next try (a server restarted with a larger -c): it is asked again then.
    await this.views.afterReply(target, true);
    this.runner.end(turn, 'error', windowWords().notSentCard(m, w.server, target.settings.model, target.settings.compaction.keepTurns));
    return undefined;
  }

  /**
   * The card for a reply whose prompt_tokens says the server dropped part of the prompt (see promptDropped), asked
   * after the server's window is read again (loading the model settled it); undefined when nothing was dropped.
   */
  private async droppedPrompt(target: ReadyTarget, turn: Turn, expected: number, actual: number): Promise<ErrorView | undefined> {
    await this.views.afterReply(target);
    const w = await this.views.windowFor(target);
    // Only a local server cuts a prompt silently; a cloud API refuses it, and may count cached tokens apart.
    if (w.server.kind === undefined || !windowWords().promptDropped({ expected, actual, window: w.serverWindow })) return undefined;
    await this.views.afterReply(target, true);
    const compactable = planCompaction(this.conversation.turns.filter((x) => x !== turn), target.settings.compaction.keepTurns) !== undefined;
    return windowWords().droppedCard({ expected, actual, window: w.serverWindow, reserve: w.reserve, compactable }, w.server, target.settings.model);
  }

  /** The tools a request of this conversation offers: none when tools are off, or the profile says the model takes none. */
  private offeredTools(s: Settings): TurnTool[] {
    const box = this.toolbox();
    const modelTools = s.profile ? overrideFor(s.profile, s.model).tools !== false : true;
    return box.settings.enabled && !this.conversation.toolsOff && modelTools ? box.tools : [];
  }

  /**
   * The header's profile switcher: the open conversation goes on with that profile and its default model, and new
   * conversations start with it (parley.endpoint in user settings). Unknown names change nothing.
   */
  async setProfile(name: string): Promise<boolean> {
    const p = this.settings.current.profiles.find((x) => x.name === name);
    if (!p) return false;
    this.conversation.profile = p.name;
    this.conversation.model = undefined;
    if (this.conversation.turns.length) await this.save();
    await writeUserSetting('endpoint', p.source === 'implicit' ? '' : p.name);
    await this.endpointChanged();
    return true;
  }

  /**
   * The header's model picker: the open conversation goes on with that model, and new ones start with it (the
   * profile's model in user settings: parley.model for the Default profile, else its entry in parley.endpoints).
   */
  async setModel(model: string): Promise<void> {
    const p = this.requester.selected(this.selection()).profile;
    this.conversation.model = model;
    if (this.conversation.turns.length) await this.save();
    if (!p || p.source === 'implicit') await writeUserSetting('model', model);
    else if (p.source === 'user') await setProfileModel(p.name, model);
    await this.endpointChanged();
  }

  /** The composer's tools switch: on or off for the open conversation, kept with it. */
  async setToolsEnabled(enabled: boolean): Promise<void> {
    this.conversation.toolsOff = enabled ? undefined : true;
    if (this.conversation.turns.length) await this.save();
    this.postTools();
  }

  /** The composer's tools switch: on unless the open conversation turned it off; available when a turn would offer tools. */
  private postTools(): void {
    const box = this.toolbox();
    this.channel.post({ type: 'tools', enabled: !this.conversation.toolsOff, available: box.settings.enabled && box.tools.length > 0 });
  }

  /** Stops the running turn, if any, and waits until it is closed and saved. */
  stop(): Promise<void> {
    return this.runner.stop();
  }

  // ---- acting on the last turn --------------------------------------------------------------

  /** Drops the last reply and asks again (Regenerate, and Retry on an error card). */
  async regenerate(): Promise<void> {
    await this.stop();
    const t = this.conversation.turns;
    if (t.length === 0 || t[t.length - 1].role !== 'assistant') return;
    t.pop();
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
    if (user.contextItems?.length) this.context.putBack(user.contextItems);
    await this.persist(this.conversation);
    await this.snapshot();
    this.channel.post({ type: 'composerText', text: user.text, images: user.images });
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
    this.channel.post({ type: 'focusComposer' });
  }

  async openConversation(id: string): Promise<boolean> {
    // Stopped first: the running reply is then saved, so reading its conversation gets it whole, not mid-stream.
    await this.stop();
    const c = await this.read(id);
    if (!c) {
      await this.postHistory();
      return false;
    }
    pinToLastUsed(c);
    this.conversation = c;
    await this.history.setOpen(id);
    await this.snapshot();
    return true;
  }

  /** A damaged file from the history list: opened read-only, as text. */
  openRaw(id: string): Promise<void> {
    return durability().openRaw(this.history.damagedPath(id));
  }

  async deleteDamaged(id: string): Promise<void> {
    await this.history.deleteDamaged(id);
    this.log.info(`History: deleted the damaged file ${id}.corrupt.json.`);
    await this.postHistory();
  }

  async deleteConversation(id: string): Promise<void> {
    if (id === this.conversation.id) await this.newChat();
    // After this window's saves: a save of another conversation naming an image is on the disk before the image
    // deletion reads who names it.
    await this.saving;
    await this.history.delete(id);
    await this.postHistory();
  }

  async clearHistory(): Promise<void> {
    await this.newChat();
    await this.history.clear();
    this.channel.post({ type: 'history', items: [] });
  }

  async postHistory(): Promise<void> {
    let items = await this.history.list();
    if (await this.recoverOthers(items)) items = await this.history.list();
    this.channel.post({ type: 'history', items });
  }

  /**
   * Recovers the replies that other conversations were streaming when their window went away (a window reloads into
   * the conversation last opened in any window, so its own may be another): each becomes Interrupted, its text kept
   * and its request's usage counted once. Replies a live window streams are left alone. Returns whether any changed.
   * Reads only conversations whose entry says a reply was streaming.
   */
  async recoverOthers(items?: readonly HistoryItem[]): Promise<boolean> {
    let changed = false;
    for (const item of items ?? (await this.history.list())) {
      if (!item.streaming || item.id === this.conversation.id) continue;
      // In turn with this window's saves; the file is written back only if nobody saved or deleted it meanwhile (a
      // live window, or this one having opened it), and its usage is counted only then (another recoverer counts
      // the same request id, once).
      const run = this.saving.then(async () => {
        let counted: UsageRecord[] = [];
        const written = await this.history.update(item.id, (c) => {
          if (c.id === this.conversation.id) return false;
          const before = c.turns.filter((t) => t.status === 'streaming').length;
          counted = durability().recover(c, SESSION, this.streamingTurn, this.log);
          return c.turns.filter((t) => t.status === 'streaming').length < before;
        });
        if (written) for (const u of counted) await this.requester.record(u);
        return written;
      });
      this.saving = run.then(() => {}, (e) => this.log.warn(`Recovering conversation ${item.id} failed: ${e instanceof Error ? e.message : String(e)}`));
      if (await run.catch(() => false)) changed = true;
    }
    return changed;
  }

  /** Saves the conversation and marks it as the one open, for the next window. */
  private save(c = this.conversation): Promise<void> {
    return this.persist(c, true);
  }

  /**
   * Writes the conversation, one save at a time. When saving fails (a read-only or full disk, a storage folder that is
   * not a folder), the reader is told once, in a notification and in the panel; the conversation stays in memory and
   * each later change tries again; when one works, the panel says so. Never throws.
   */
  private persist(c: Conversation, markOpen = false): Promise<void> {
    const run = this.saving.then(async () => {
      try {
        await this.history.save(c);
        if (markOpen) await this.history.setOpen(c.id);
      } catch (e) {
        const d = durability();
        const why = d.saveFailure(e);
        // Said once per run of failures; each later change tries again.
        if (this.unsaved === undefined) this.channel.post({ type: 'notice', text: d.unsavedText(why, c.id, e, this.log) });
        this.unsaved = why;
        return;
      }
      if (this.unsaved !== undefined) {
        this.unsaved = undefined;
        this.channel.post({ type: 'notice', text: durability().savedAgain(c.id, this.log) });
      }
    });
    // A throw in the failure handling must not stop every later save.
    this.saving = run.catch((e) => this.log.error(`Saving failed: ${e instanceof Error ? e.message : String(e)}`));
    return this.saving;
  }

  /**
   * The open conversation as Markdown (for export), as it was written: only the exact keys are taken out, the
   * stored ones (`storedKeys`, for every origin) and any seen this session.
   */
  markdown(storedKeys: readonly string[]): string {
    return exportMarkdown(this.conversation, [...storedKeys, ...this.log.knownSecrets()]);
  }

  dispose(): void {
    clearTimeout(this.afterDrawn?.timer);
    this.runner.dispose();
  }
}
