// What a chat turn sends, fitted to the model's window: the context meter, the tools fitted to a small window,
// compaction's trigger (older turns summarized past the threshold, or the request refused with a card) and its
// summary, and the window checks after a reply (a prompt the server cut, a context_length error that compaction fixes).
import { toMessages, type Conversation, type Turn } from '../core/conversation';
import { compactionBudget, planCompaction } from '../core/compaction';
import { contextMeter, correction, exceedsServer, fits, overThreshold, type WindowInfo } from '../core/contextWindow';
import { errorView } from '../core/errorView';
import { overrideFor, profileName } from '../core/profiles';
import type { Tool } from '../core/tool';
import { guardMessage, type ToolLoopEnd } from '../core/toolLoop';
import { fitTools, type ToolFit } from '../core/toolFit';
import { estimatePromptTokens, estimateTokens } from '../core/tokenEstimate';
import type { ChatMessage } from '../core/types';
import type { ActionId, ContextMeterView, ErrorView, RuleView } from '../shared/protocol';
import type { ChatViewModels } from './chatViewModels';
import type { Log } from './log';
import type { PendingContext } from './pendingContext';
import type { ReadyTarget, Requester, Selection, Target } from './requester';
import type { Toolbox } from './toolbox';
import { statusOf, type TurnEnding, type TurnPlan } from './turn';
import type { ViewChannel } from './viewChannel';
import { serverWindow as windowWords } from './lazy/serverWindow';
import { summarize as summarizer } from './lazy/summarize';

/** The tools a request offers, fitted to the model's window (core/toolFit.ts), and what fitting did. */
interface FittedTools {
  tools: Tool[];
  fit: ToolFit;
}

/** A chat turn's plan, with what its end is checked against: the prompt's estimate, the tools' fit and the window. */
export interface RoomPlan extends TurnPlan {
  estimated: number;
  fit: ToolFit;
  window: Awaited<ReturnType<ChatViewModels['windowFor']>>;
}

/** Why a compaction changed nothing, with the buttons its notice gets. */
export interface NotCompacted {
  why: string;
  actions?: ActionId[];
}

/** What the room needs around it, handed in. */
export interface RoomHost {
  requester: Pick<Requester, 'target' | 'run'> & Partial<Pick<Requester, 'withRules' | 'chooseRules'>>;
  views: ChatViewModels;
  channel: ViewChannel;
  log: Log;
  /** The tools a turn may offer now, and their settings. */
  toolbox: Toolbox;
  /** The chips waiting for the next question. */
  context: PendingContext;
  /** The open conversation, and its profile and model. */
  conversation(): Conversation;
  selection(): Selection;
  /** Saves the open conversation (marked open). */
  save(c: Conversation): Promise<void>;
  /** Redraws the panel from a snapshot (after older turns were summarized mid-turn). */
  redraw(): Promise<void>;
}

/** The open conversation's fit to its model's window. */
export class ContextRoom {
  /** The conversation and tool count the small-window notice last spoke of. */
  private toolsNoticed: string | undefined;
  /** The rule files that went with the last request, for the meter, and its conversation's id (another has none yet). */
  private lastRules: { id: string; rules: RuleView[] | undefined } | undefined;

  private get rules(): RuleView[] | undefined {
    return this.lastRules?.id === this.host.conversation().id ? this.lastRules.rules : undefined;
  }

  constructor(private readonly host: RoomHost) {}

  /**
   * How full the model's window will be with the next request: the system prompt, the turns sent (from the last
   * summary on), the chips waiting and the tools' definitions (as fitted to the window), by Parley's estimate, scaled by
   * how far off it was on this conversation's last request.
   */
  async meter(t: ReadyTarget, messages?: ChatMessage[], fitted?: FittedTools): Promise<ContextMeterView> {
    const c = this.host.conversation();
    const s = t.settings;
    const w = await this.host.views.windowFor(t);
    const { fit } = fitted ?? this.fitTools(s, w);
    const sent = messages ?? toMessages(s.systemPrompt, c.turns, { sendReasoningBack: s.sendReasoningBack });
    // Before a request the system prompt read has no rules: the last request's are counted.
    const extra = estimateTokens(this.host.context.pendingText()) + fit.tokens + (messages ? 0 : (this.rules ?? []).reduce((n, r) => n + r.tokens, 0));
    const { plan } = this.plan(s, w, fit);
    const meter = contextMeter({
      messages: sent, extraTokens: extra, last: c.lastPrompt, threshold: s.compaction.threshold,
      compactable: plan?.summarize.filter((x) => x.role === 'user').length ?? 0, ...w,
    });
    meter.rules = this.rules;
    if (fit.offered) meter.tools = { tokens: fit.tokens, sent: fit.definitions.length, offered: fit.offered, short: fit.short };
    return meter;
  }

  /** The rules for a question at the end of `history` (its file chips), less those the conversation turned off; kept for the meter. */
  private async ruled(t: ReadyTarget, history: Turn[], interactive: boolean) {
    const files = [...history].reverse().find((x) => x.role === 'user')?.contextItems?.map((x) => x.path).filter((p) => !p.startsWith('@')) ?? [];
    const ruled = await this.host.requester.withRules?.(t.settings, files, this.host.conversation().rulesOff, interactive);
    this.lastRules = { id: this.host.conversation().id, rules: ruled?.rules };
    return ruled;
  }

  /** The meter's Rules button: which rule files go with this conversation's requests, kept with it; the meter redrawn. */
  async chooseRules(): Promise<void> {
    const c = this.host.conversation();
    const off = await this.host.requester.chooseRules?.(this.rules ?? [], c.rulesOff);
    if (!off) return;
    c.rulesOff = off.length ? off : undefined;
    if (c.turns.length) await this.host.save(c);
    const t = await this.host.requester.target(undefined, false, this.host.selection());
    if (t.kind === 'ready') await this.ruled(t, c.turns, false);
    await this.postMeter(t);
  }

  /** Posts the meter for the open conversation (none while the endpoint is not ready). */
  async postMeter(target?: Target): Promise<void> {
    const t = target ?? (await this.host.requester.target(undefined, false, this.host.selection()));
    this.host.channel.post({ type: 'meter', meter: t.kind === 'ready' ? await this.meter(t) : undefined });
  }

  /**
   * Everything a chat turn does before its first request: the target (asking any consent question), the window, the
   * tools fitted to it, and room made (see makeRoom). `given`: the caller just resolved the target.
   */
  async prepare(turn: Turn, history: Turn[], source: 'chat' | 'explain', signal: AbortSignal, given?: ReadyTarget): Promise<RoomPlan | TurnEnding> {
    const { requester, views, toolbox } = this.host;
    let target = given ?? (await requester.target(undefined, true, this.host.selection()));
    if (target.kind !== 'ready') return { status: 'error', error: views.problemError(target) };
    const ruled = await this.ruled(target, history, true);
    if (ruled) target = { ...target, settings: { ...target.settings, systemPrompt: ruled.system } };
    const settings = target.settings;
    turn.model = settings.model;
    turn.profile = profileName(settings);
    await this.host.save(this.host.conversation());
    const window = await views.windowFor(target);
    const fitted = this.fitTools(settings, window);
    this.toolsNotice(fitted, window);
    const messages = await this.makeRoom(target, turn, toMessages(settings.systemPrompt, history, { sendReasoningBack: settings.sendReasoningBack }), fitted, signal);
    if (!Array.isArray(messages)) return messages;
    // Servers count the tool definitions in prompt_tokens: so does the estimate they are compared with.
    const estimated = estimatePromptTokens(messages) + fitted.fit.tokens;
    return { target, messages, source, tools: fitted.tools, limits: toolbox().settings, estimated, fit: fitted.fit, window };
  }

  /**
   * How a chat turn ends, once its rounds are done: one request with a real count tells how far off the estimate was
   * (for the meter), or that the server cut the prompt; a context_length error offers compaction when it would help.
   */
  async finish(turn: Turn, end: ToolLoopEnd, plan: RoomPlan): Promise<TurnEnding> {
    const c = this.host.conversation();
    const { target } = plan;
    const settings = target.settings;
    const r = end.result;
    let dropped: ErrorView | undefined;
    if ((turn.requests ?? 1) === 1 && turn.usage && !turn.usage.estimated && turn.usage.prompt > 0) {
      dropped = await this.droppedPrompt(target, turn, Math.round(plan.estimated * correction(c.lastPrompt)), turn.usage.prompt);
      if (!dropped) c.lastPrompt = { estimated: plan.estimated, actual: turn.usage.prompt };
    } else await this.host.views.afterReply(target, r.error?.kind === 'context_length');
    if (end.guard) return { status: 'incomplete', error: { kind: 'unknown', title: guardMessage(end.guard, plan.limits), actions: ['continue'] } };
    const compactable = r.error?.kind === 'context_length' && this.plan(settings, plan.window, plan.fit, c.turns.filter((x) => x !== turn)).plan !== undefined;
    const error = r.error ? errorView(r.error, { model: settings.model, url: target.endpoint.url, compactable }) : dropped;
    return { status: statusOf(r), error };
  }

  /**
   * Summarizes the older turns (summarize.ts): true, or why nothing changed, with the buttons the notice gets. The
   * request is sized to fit the window and its usage is counted.
   */
  async summarize(t: ReadyTarget, signal?: AbortSignal): Promise<true | NotCompacted> {
    const s = t.settings;
    const w = await this.host.views.windowFor(t);
    const { plan, budget = w.reserve } = this.plan(s, w, this.fitTools(s, w).fit);
    if (!plan) return { why: `Nothing to compact yet: the last ${s.compaction.keepTurns} questions are kept word for word (parley.compaction.keepTurns).` };
    const r = await summarizer().summarize(this.host, this.host.conversation(), t, { plan, budget, window: w }, signal);
    if (r === true) return true;
    const why = r.error ? errorView(r.error, { model: s.model, url: t.endpoint.url }).title : r.ended === 'cancelled' ? 'it was stopped' : 'the model returned no summary';
    return { why: this.host.log.clean(`The conversation was not compacted: ${why}`), actions: ['showLog'] };
  }

  /** The tools offered now, fitted to window `w`: shortened, or fewer, when they would crowd a small window. */
  private fitTools(s: ReadyTarget['settings'], w: WindowInfo): FittedTools {
    const offered = this.offeredTools(s);
    const fit = fitTools(offered.map((x) => x.definition), w);
    // fitTools keeps the first ones, in order.
    return { tools: fit.definitions.map((definition, i) => ({ ...offered[i], definition })), fit };
  }

  /**
   * The tools a request of this conversation offers: none when tools are off, or the profile says the model takes none;
   * only those a prompt file's question names, when it names some.
   */
  private offeredTools(s: ReadyTarget['settings']): Tool[] {
    const box = this.host.toolbox();
    const c = this.host.conversation();
    const only = c.turns.filter((t) => t.role === 'user').pop()?.tools;
    const modelTools = s.profile ? overrideFor(s.profile, s.model).tools !== false : true;
    return box.settings.enabled && !c.toolsOff && modelTools ? box.tools.filter((t) => !only || only.includes(t.definition.function.name)) : [];
  }

  /**
   * What a compaction of `turns` would summarize now, and the tokens its summary and its kept turns may each take:
   * well below the threshold when the window is known, past the system prompt and the tool definitions, which no
   * compaction shrinks (compactionBudget).
   */
  private plan(s: ReadyTarget['settings'], w: WindowInfo, fit: ToolFit, turns = this.host.conversation().turns): { plan: ReturnType<typeof planCompaction>; budget?: number } {
    const fixed = estimatePromptTokens(toMessages(s.systemPrompt, [], { sendReasoningBack: false })) + fit.tokens;
    const budget = compactionBudget(w, s.compaction.threshold, fixed);
    return { plan: planCompaction(turns, s.compaction.keepTurns, budget), budget };
  }

  /** Says once per conversation (and again when it changes) that the window is too small for the tools as they are. */
  private toolsNotice({ fit }: FittedTools, w: WindowInfo): void {
    const left = fit.offered - fit.definitions.length;
    const key = `${this.host.conversation().id}:${fit.definitions.length}`;
    if (!fit.short || key === this.toolsNoticed) return;
    this.toolsNoticed = key;
    this.host.channel.post({
      type: 'notice',
      text: `The model's window is small (${w.window?.toLocaleString('en-US')} tokens): tools are sent in short form${left ? `, ${left} of ${fit.offered} left out` : ''}. Turning tools off in the composer frees their room.`,
    });
  }

  /**
   * Compaction's trigger. The messages to send, after making room when they would not fit the window: past the
   * compaction threshold older turns are summarized first (the reader is told), and with automatic compaction off a
   * request that cannot fit is not sent: the turn ends with a card that offers Compact and retry. A prompt larger than
   * the window the server runs is never sent (the server would refuse it, or drop its start and answer anyway): with
   * nothing left to compact the card says how to raise the server's window. Else how the turn ended unsent.
   */
  private async makeRoom(target: ReadyTarget, turn: Turn, messages: ChatMessage[], tools: FittedTools, signal: AbortSignal): Promise<ChatMessage[] | TurnEnding> {
    const { channel } = this.host;
    const m = await this.meter(target, messages, tools);
    if (fits(m) && !overThreshold(m)) return messages;
    if (m.compactable > 0 && m.threshold > 0) {
      channel.post({ type: 'notice', text: `The conversation fills ${Math.round((m.used / (m.window ?? m.used)) * 100)} % of the model's window: summarizing older turns first.` });
      const done = await this.summarize(target, signal);
      if (signal.aborted) return { status: 'stopped' };
      if (done !== true) {
        channel.post({ type: 'notice', text: done.why, actions: done.actions });
        return exceedsServer(m) ? this.refuse(target, m) : messages;
      }
      await this.host.redraw();
      const s = target.settings;
      const after = toMessages(s.systemPrompt, this.host.conversation().turns.filter((x) => x !== turn), { sendReasoningBack: s.sendReasoningBack });
      const left = await this.meter(target, after, tools);
      return exceedsServer(left) ? this.refuse(target, left) : after;
    }
    if ((fits(m) || m.compactable === 0) && !exceedsServer(m)) return messages;
    return this.refuse(target, m);
  }

  /** Ends the turn unsent, with a card: Compact and retry when there is something to summarize, and how to raise the server's window. */
  private async refuse(target: ReadyTarget, m: ContextMeterView): Promise<TurnEnding> {
    const w = await this.host.views.windowFor(target);
    // The window may be raised before the next try (a server restarted with a larger -c): it is asked again then.
    await this.host.views.afterReply(target, true);
    return { status: 'error', error: windowWords().notSentCard(m, w.server, target.settings.model, target.settings.compaction.keepTurns) };
  }

  /**
   * The card for a reply whose prompt_tokens says the server dropped part of the prompt (see promptDropped), asked
   * after the server's window is read again (loading the model settled it); undefined when nothing was dropped.
   */
  private async droppedPrompt(target: ReadyTarget, turn: Turn, expected: number, actual: number): Promise<ErrorView | undefined> {
    const { views } = this.host;
    await views.afterReply(target);
    const w = await views.windowFor(target);
    // Only a local server cuts a prompt silently; a cloud API refuses it, and may count cached tokens apart.
    if (w.server.kind === undefined || !windowWords().promptDropped({ expected, actual, window: w.serverWindow })) return undefined;
    await views.afterReply(target, true);
    const compactable = planCompaction(this.host.conversation().turns.filter((x) => x !== turn), target.settings.compaction.keepTurns) !== undefined;
    return windowWords().droppedCard({ expected, actual, window: w.serverWindow, reserve: w.reserve, compactable }, w.server, target.settings.model);
  }
}
