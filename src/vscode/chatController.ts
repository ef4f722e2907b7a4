// Owns the open conversation: questions in, turns out. The turn (turn.ts), the window's room (contextRoom.ts) and the
// conversation's files (conversationFiles.ts) each do their part; the webview only renders what they post. Needs
// nothing of VS Code at run time (what it asks of VS Code comes in `ui`): test/unit/chatController.test.ts drives it.
import { newConversation, pinToLastUsed, titleFrom, toView, turnView, type Conversation, type ContextItem, type Turn } from '../core/conversation';
import { checkImages } from '../core/images';
import { newId } from '../core/ids';
import { applyContextBudget, budgetNote } from '../core/mentions';
import type { ImageView } from '../shared/protocol';
import type { ChatUi } from './chatUi';
import type { SettingsSnapshot } from './config';
import { ChatViewModels } from './chatViewModels';
import { ContextRoom } from './contextRoom';
import { ConversationFiles, owner } from './conversationFiles';
import type { HistoryStore } from './history';
import type { Log } from './log';
import { PendingContext } from './pendingContext';
import { profileName } from '../core/profiles';
import type { ChatRequester, ReadyTarget, Selection } from './requester';
import type { Toolbox } from './toolbox';
import { ToolSession } from './toolSession';
import { TurnRunner } from './turn';
import { ViewChannel } from './viewChannel';

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

/** What the chat is made of: handed in by extension.ts (and by the tests, with their own store, view and VS Code). */
export interface ChatParts {
  requester: ChatRequester;
  history: HistoryStore;
  log: Log;
  settings: Pick<SettingsSnapshot, 'current'>;
  /** What the chat asks of VS Code itself. */
  ui: ChatUi;
  channel?: ViewChannel;
  /** The tools a turn may offer now ([] in Restricted Mode or when they are off), and their settings. */
  toolbox?: Toolbox;
  expandContext?: ContextExpander;
}

const NO_TOOLS: Toolbox = () => ({ tools: [], settings: { enabled: false, askBeforeReading: false, maxRounds: 10, maxTurnTokens: 200_000 } });

/**
 * The chat in the view. Its parts each have one job: the running turn (`runner`), the header, setup card and model list
 * (`views`), the chips for the next question (`context`), the fit to the model's window (`room`), the files (`files`);
 * all post through one `channel`.
 */
export class ChatController {
  private conversation: Conversation;
  readonly channel: ViewChannel;
  readonly runner: TurnRunner;
  readonly views: ChatViewModels;
  readonly context: PendingContext;
  readonly room: ContextRoom;
  readonly files: ConversationFiles;
  /** Calls waiting for the reader, and the tools always allowed in this window. */
  readonly tools = new ToolSession();
  /** The model list and meter that wait for the panel to have drawn its first snapshot. */
  private afterDrawn: { run: () => void; timer: ReturnType<typeof setTimeout> } | undefined;
  private readonly requester: ChatRequester;
  private readonly log: Log;
  private readonly toolbox: Toolbox;
  private readonly expandContext: ContextExpander;

  constructor(private readonly parts: ChatParts) {
    const { requester, history, log, settings, ui } = parts;
    this.requester = requester;
    this.log = log;
    this.toolbox = parts.toolbox ?? NO_TOOLS;
    this.expandContext = parts.expandContext ?? (async (items) => ({ items: [...items], notes: [] }));
    const channel = (this.channel = parts.channel ?? new ViewChannel());
    this.conversation = newConversation(newId(), Date.now());
    this.files = new ConversationFiles({
      history, log, channel, record: (u) => requester.record(u), openId: () => this.conversation.id,
      unsavedNotification: (text) => ui.unsavedNotification(text), openReadOnly: (path) => ui.openReadOnly(path),
    });
    this.runner = new TurnRunner({
      requester, channel, log, session: this.tools, setGenerating: (v) => ui.setGenerating(v),
      requestStarted: () => void this.files.persist(this.conversation),
      conversationId: () => this.conversation.id,
    });
    this.views = new ChatViewModels(requester, channel, log, settings, () => this.selection());
    this.context = new PendingContext(channel, () => void this.room.postMeter());
    this.room = new ContextRoom({
      requester, views: this.views, channel, log, toolbox: this.toolbox, context: this.context,
      conversation: () => this.conversation, selection: () => this.selection(),
      save: (c) => this.files.save(c), redraw: () => this.snapshot(),
    });
  }

  /** Loads the conversation that was open last time: only that one. */
  async restore(): Promise<void> {
    const id = this.parts.history.openId();
    const c = id ? await this.files.read(id) : undefined;
    if (c) this.conversation = c;
  }

  get current(): Conversation {
    return this.conversation;
  }

  /**
   * The open conversation's profile, model and reasoning effort; unset parts follow parley.endpoint and the profile's
   * model, and the effort last chosen for the model (null).
   */
  selection(): Selection {
    return { profile: this.conversation.profile, model: this.conversation.model, effort: this.conversation.effort ?? null };
  }

  get generating(): boolean {
    return this.runner.generating;
  }

  /**
   * Everything the webview needs to draw itself from nothing (also mid-stream). For a panel that has just loaded
   * (`ready`), the model list and the meter wait until it says it has drawn the snapshot (`drawn`, at most a second):
   * a window's first request loads Node's fetch, and the snapshot would wait behind it (bench/latency.mjs).
   */
  async snapshot(ready = false): Promise<void> {
    const { runner, views, channel, context } = this;
    const target = await views.snapshotTarget();
    // The snapshot carries every delta received so far, so a queued one would be applied twice.
    runner.dropPendingDelta();
    channel.post({
      type: 'snapshot',
      conversation: toView(this.conversation, this.files.streamingTurn),
      generating: this.generating,
      header: views.header(target),
      setup: views.setup(target),
      pendingContext: context.chips(),
    });
    this.log.debug('stage: snapshot posted');
    this.postTools();
    this.files.postNotices();
    clearTimeout(this.afterDrawn?.timer);
    this.afterDrawn = undefined;
    const models = () => void views.refreshModels(false, target).then(() => this.room.postMeter(target));
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
    // The model list and meter waiting for `drawn` would be the old endpoint's: this asks for the new ones.
    clearTimeout(this.afterDrawn?.timer);
    this.afterDrawn = undefined;
    await this.room.postMeter(await this.views.endpointChanged());
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
    const done = await this.room.summarize(t);
    if (done !== true) return this.channel.post({ type: 'notice', text: done.why, actions: done.actions });
    await this.files.save(this.conversation);
    await this.snapshot();
  }

  /** After a context_length error: the failed reply goes, older turns are summarized, and the question is asked again. */
  async compactAndRetry(): Promise<void> {
    await this.stop();
    const turns = this.conversation.turns;
    const failed = turns.at(-1)?.role === 'assistant' && turns.at(-1)?.status === 'error' ? turns.pop() : undefined;
    const t = await this.requester.target(undefined, true, this.selection());
    const done = t.kind === 'ready' ? await this.room.summarize(t) : true;
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

  /** Validates and sends a question typed in the composer (or a prompt file's, with the tools it limits the turn to). */
  async send(text: string, images: ImageView[], tools?: string[]): Promise<void> {
    const { channel, context } = this;
    const refuse = (why: string) => channel.post({ type: 'composerError', text: why });
    if (!text.trim() && images.length === 0) return refuse('Type a question first.');
    const checked = checkImages(images);
    if (typeof checked === 'string') return refuse(checked);
    const refused = checked.length ? await this.views.imagesRefused() : undefined;
    if (refused) return refuse(`${refused} Nothing was sent.`);
    const taken = context.take();
    const expanded = await this.expandContext(taken);
    if (typeof expanded === 'string') {
      context.restore(taken);
      return refuse(`${expanded} Nothing was sent.`);
    }
    // One budget for all the attached context; the turn says what was cut.
    const max = this.parts.settings.current.maxContextChars;
    const { items, cut } = applyContextBudget(expanded.items, max);
    const notes = [...expanded.notes, ...(cut.length ? [budgetNote(cut, max)] : [])];
    await this.ask({
      id: newId(), role: 'user', text, tools, images: checked.length ? checked : undefined, contextItems: items.length ? items : undefined,
      ...(notes.length ? { note: notes.join(' ') } : {}), status: 'done',
    });
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

  /**
   * Streams an assistant turn for the conversation as it stands: the room prepares it (target, window, tools, room
   * made), the runner runs its rounds, the room says how it ended; saved while it streams and once at its end.
   */
  private async reply(source: 'chat' | 'explain' = 'chat', given?: ReadyTarget): Promise<void> {
    const { room, files } = this;
    const c = this.conversation;
    const history = [...c.turns];
    const preview = this.requester.selected(this.selection());
    const turn: Turn = { id: newId(), role: 'assistant', text: '', status: 'streaming', model: preview.model, profile: profileName(preview), owner: owner() };
    c.turns.push(turn);
    c.updatedAt = Date.now();
    this.channel.post({ type: 'turnStart', turn: turnView(turn) });
    const stopSaving = files.whileStreaming(c, turn);
    await this.runner.run(turn, {
      prepare: (signal) => room.prepare(turn, history, source, signal, given),
      finish: (end, plan) => room.finish(turn, end, plan),
      settle: async () => {
        stopSaving();
        // Ended: nobody streams it any more, and its requests are counted.
        delete turn.owner;
        delete turn.inflight;
        c.updatedAt = Date.now();
        await files.save(c);
        await room.postMeter();
      },
    });
  }

  /**
   * The header's profile switcher: the open conversation goes on with that profile and its default model, and new
   * conversations start with it (parley.endpoint in user settings). Unknown names change nothing.
   */
  async setProfile(name: string): Promise<boolean> {
    const p = this.parts.settings.current.profiles.find((x) => x.name === name);
    if (!p) return false;
    this.conversation.profile = p.name;
    this.conversation.model = this.conversation.effort = undefined;
    if (this.conversation.turns.length) await this.files.save(this.conversation);
    await this.parts.ui.writeUserSetting('endpoint', p.source === 'implicit' ? '' : p.name);
    await this.endpointChanged();
    return true;
  }

  /**
   * The header's model picker: the open conversation goes on with that model, and new ones start with it (the
   * profile's model in user settings: parley.model for the Default profile, else its entry in parley.endpoints).
   * `here` (a prompt file's model): this conversation only.
   */
  async setModel(model: string, here?: boolean): Promise<void> {
    const p = this.requester.selected(this.selection()).profile;
    // The effort chosen was the old model's: the new one's last choice applies.
    this.conversation.effort = undefined;
    this.conversation.model = model;
    if (this.conversation.turns.length) await this.files.save(this.conversation);
    if (!here && (!p || p.source === 'implicit')) await this.parts.ui.writeUserSetting('model', model);
    else if (!here && p?.source === 'user') await this.parts.ui.setProfileModel(p.name, model);
    await this.endpointChanged();
  }

  /** The composer's tools switch: on or off for the open conversation, kept with it. */
  async setToolsEnabled(enabled: boolean): Promise<void> {
    this.conversation.toolsOff = enabled ? undefined : true;
    if (this.conversation.turns.length) await this.files.save(this.conversation);
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
    await this.files.persist(this.conversation);
    await this.snapshot();
    this.channel.post({ type: 'composerText', text: user.text, images: user.images });
  }

  /** After a truncated reply: asks the model to go on. */
  async continueReply(): Promise<void> {
    await this.ask({ id: newId(), role: 'user', text: 'Continue exactly where you stopped, without repeating anything.', note: 'Continue', status: 'done' });
  }

  async newChat(): Promise<void> {
    await this.stop();
    this.conversation = newConversation(newId(), Date.now());
    await this.parts.history.setOpen(undefined);
    await this.snapshot();
    this.channel.post({ type: 'focusComposer' });
  }

  async openConversation(id: string): Promise<boolean> {
    // Stopped first: the running reply is then saved, so reading its conversation gets it whole, not mid-stream.
    await this.stop();
    const c = await this.files.read(id);
    if (!c) {
      await this.files.postHistory();
      return false;
    }
    pinToLastUsed(c);
    this.conversation = c;
    await this.parts.history.setOpen(id);
    await this.snapshot();
    return true;
  }

  async deleteConversation(id: string): Promise<void> {
    if (id === this.conversation.id) await this.newChat();
    await this.files.delete(id);
  }

  async clearHistory(): Promise<void> {
    await this.newChat();
    await this.parts.history.clear();
    this.channel.post({ type: 'history', items: [] });
  }

  dispose(): void {
    clearTimeout(this.afterDrawn?.timer);
    this.runner.dispose();
  }
}
