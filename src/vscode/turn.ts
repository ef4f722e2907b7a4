// One assistant turn, whole: its one AbortController, its requests and the pacing of the text they stream to the view,
// and its tool rounds (the host side of core/toolLoop.ts: each call run, asking the reader first when its tool needs
// it, its card kept up to date, the turn's usage summed). Approval comes only from the reader's click or key in the
// panel (ToolSession.answer). Needs nothing of VS Code at run time: test/unit/chatTurn.test.ts drives it in Node.
import { turnView, type Turn } from '../core/conversation';
import { DeltaPacer } from '../core/deltaPacer';
import { usageHostOf } from '../core/profiles';
import { approval, type Tool } from '../core/tool';
import { parseArguments, questionArguments, tooLongToReview, undeclaredArguments } from '../core/toolArguments';
import { runToolLoop, STOPPED_RESULT, type RoundCall, type ToolLoopEnd, type ToolLoopHost, type ToolOutcome } from '../core/toolLoop';
import { estimatePromptTokens } from '../core/tokenEstimate';
import type { ChatResult, ChatMessage, StreamEvent, ToolDefinition } from '../core/types';
import type { ErrorView, ToolCallView, ToolStepView, TurnStatus } from '../shared/protocol';
import type { Log } from './log';
import type { ReadyTarget, Requester, RunOutcome } from './requester';
import type { ToolSession } from './toolSession';
import type { ViewChannel } from './viewChannel';

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

const ADAPTATION_NOTICES: Record<string, string> = {
  stream_options: 'This server does not accept stream_options; usage will be estimated when it sends none.',
  max_tokens: 'This server wants max_completion_tokens instead of max_tokens; Parley now sends that.',
  tools: 'This model cannot use tools at this server: Parley goes on without them (Reset Endpoint Adaptations tries again).',
};

/** The tool settings a turn runs under (parley.tools.*). */
export interface ToolSettings {
  enabled: boolean;
  askBeforeReading: boolean;
  maxRounds: number;
  maxTurnTokens: number;
}

/** What the turn needs around it, handed in (so it runs in plain Node too). */
export interface TurnHost {
  requester: Pick<Requester, 'run'>;
  channel: ViewChannel;
  log: Log;
  /** The window's waiting calls and always-allowed tools. */
  session: ToolSession;
  /** Whether a turn runs, for VS Code's `parley.generating` context key (the panel is told by the runner). */
  setGenerating(value: boolean): void;
  /** A request started, its id now in `turn.inflight`: the owner saves the turn, so a crash counts it. */
  requestStarted(): void;
  /** The open conversation's id: a "Send once anyway" pass given for it lets its next request through the budget. */
  conversationId?(): string;
}

/** What a turn sends, as its preparation made it. */
export interface TurnPlan {
  target: ReadyTarget;
  messages: ChatMessage[];
  source: 'chat' | 'explain';
  /** The tools offered, fitted to the window ([] for none). */
  tools: readonly Tool[];
  /** The tool settings: the loop's limits, and whether built-in read tools ask too. */
  limits: ToolSettings;
}

/** How a turn ends: its status, and the card it shows. */
export interface TurnEnding {
  status: TurnStatus;
  error?: ErrorView;
}

/** The stages of one turn around its requests: each runs under the turn's signal, in this order. */
export interface TurnStages<P extends TurnPlan> {
  /** Everything before the first request (target, window, room): the plan, or how the turn ended unsent. */
  prepare(signal: AbortSignal): Promise<P | TurnEnding>;
  /** After the last round: how the turn ends. */
  finish(end: ToolLoopEnd, plan: P): Promise<TurnEnding>;
  /** After generating ended and before `stop()` returns (the final save). */
  settle(): Promise<void>;
}

/**
 * Runs one assistant turn at a time. The turn owns THE AbortController of the user's action: Stop, a new question
 * and dispose abort it, and every request and tool call the turn makes runs under its signal, down to the socket.
 */
export class TurnRunner {
  private running: { abort: AbortController; done: Promise<void> } | undefined;
  /** The last turn's end, its settle included: stop() waits for it. */
  private settled: Promise<void> = Promise.resolve();
  private pendingDelta: { turnId: string; text: string; reasoning: string } | undefined;
  private readonly pacer = new DeltaPacer(() => this.postDelta());
  private readonly noticesShown = new Set<string>();
  /** The window is going away (reload, close): a turn it ends is Interrupted, not Stopped by the reader. */
  private disposed = false;

  constructor(private readonly host: TurnHost) {}

  get generating(): boolean {
    return this.running !== undefined;
  }

  /**
   * Runs `turn` through its stages: prepare, the tool loop's rounds, finish; then settle. Whatever a stage throws ends
   * the turn with an error card.
   */
  async run<P extends TurnPlan>(turn: Turn, stages: TurnStages<P>): Promise<void> {
    const abort = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    this.running = { abort, done };
    this.settled = done;
    this.setGenerating(true);
    try {
      const plan = await stages.prepare(abort.signal);
      if (!('target' in plan)) return this.end(turn, plan.status, plan.error);
      const end = await runToolLoop(plan.messages, new ToolRounds(this, this.host, turn, plan, abort.signal), plan.limits);
      const ending = await stages.finish(end, plan);
      this.end(turn, ending.status, ending.error);
    } catch (e) {
      // Core never throws for request failures; this is a bug, but the reader still sees an error card.
      this.host.log.error(`Unexpected failure: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      this.end(turn, 'error', { kind: 'unknown', title: `Parley failed: ${e instanceof Error ? e.message : String(e)}`, actions: ['retry', 'showLog'] });
    } finally {
      this.running = undefined;
      this.setGenerating(false);
      try {
        await stages.settle();
      } finally {
        finish();
      }
    }
  }

  /** Sends one request of the running turn, streams its text into `turn` (paced), then sets what the result says. */
  async request(turn: Turn, plan: TurnPlan, signal: AbortSignal, tools: ToolDefinition[], messages: ChatMessage[]): Promise<RunOutcome> {
    // Saved with the turn while it streams: if the window goes away first, this request is counted from it, once.
    const id = crypto.randomUUID();
    const { target, source } = plan;
    turn.inflight = { id, model: target.settings.model, host: usageHostOf(target.settings.profile, target.host), source, prompt: estimatePromptTokens(messages) };
    this.host.requestStarted();
    const outcome = await this.host.requester.run(target, {
      usageId: id, messages, source, signal, tools,
      budgetKey: this.host.conversationId?.(),
      onBudgetWarning: (text) => this.host.channel.post({ type: 'notice', text, actions: ['openBudgetSettings'] }),
      onEvent: (e) => this.onEvent(turn, e),
      onAdapted: (p) => this.adapted(p),
    });
    const r = outcome.result;
    if (turn.inflight?.id === id) delete turn.inflight;
    this.pacer.postNow();
    // The result is the truth; deltas were a preview of it.
    turn.text = r.text || (r.refusal ? `_Refusal:_ ${r.refusal}` : '');
    if (r.reasoning) turn.reasoning = r.reasoning;
    if (r.reasoningField) turn.reasoningField = r.reasoningField;
    if (turn.reasoningStartedAt && turn.reasoningMs === undefined) turn.reasoningMs = Date.now() - turn.reasoningStartedAt;
    const u = outcome.usage;
    if (u) turn.usage = { prompt: u.prompt, completion: u.completion, total: u.total, estimated: u.estimated };
    return outcome;
  }

  /** Closes a turn: its status, its error card (without any key), and the message that redraws it. */
  end(turn: Turn, status: TurnStatus, error?: ErrorView): void {
    turn.status = status === 'stopped' && this.disposed ? 'interrupted' : status;
    if (error) turn.error = { ...error, title: this.host.log.clean(error.title), detail: error.detail && this.host.log.clean(error.detail) };
    this.host.channel.post({ type: 'turnEnd', turn: turnView(turn) });
  }

  /** Aborts the running turn, if any, and waits until it is closed. */
  async stop(): Promise<void> {
    this.running?.abort.abort();
    // Also after generating ended: until the turn's settle (its final save) is done, a read of the file is stale.
    await this.settled;
  }

  /** The view is redrawn from a snapshot, which carries every delta so far: a queued one would be applied twice. */
  dropPendingDelta(): void {
    this.pacer.cancel();
    this.pendingDelta = undefined;
  }

  private adapted(param: string): void {
    if (this.noticesShown.has(param)) return;
    this.noticesShown.add(param);
    this.host.channel.post({ type: 'notice', text: ADAPTATION_NOTICES[param] ?? `This server does not accept ${param}; Parley no longer sends it.` });
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

  /** Posts the waiting text: only ever called by the pacer, when it is due or asked to post now. */
  private postDelta(): void {
    const d = this.pendingDelta;
    this.pendingDelta = undefined;
    if (!d) return;
    this.host.channel.post({ type: 'delta', turnId: d.turnId, text: d.text || undefined, reasoning: d.reasoning || undefined });
  }

  private setGenerating(v: boolean): void {
    this.host.setGenerating(v);
    this.host.channel.post({ type: 'generating', value: v });
  }

  dispose(): void {
    this.disposed = true;
    this.running?.abort.abort();
    this.pacer.cancel();
  }
}

/** One turn's side of the tool loop: its requests, its steps and cards, and each call's run. */
class ToolRounds implements ToolLoopHost {
  private readonly byName = new Map<string, Tool>();
  /** The cards of this turn's calls, by Parley's id. */
  private readonly views = new Map<string, ToolCallView>();
  private offered: ToolDefinition[];
  private usage = { prompt: 0, completion: 0, total: 0, estimated: false };
  private requests = 0;

  constructor(
    private readonly runner: TurnRunner,
    private readonly host: TurnHost,
    private readonly turn: Turn,
    private readonly plan: TurnPlan,
    private readonly signal: AbortSignal,
  ) {
    for (const t of plan.tools) this.byName.set(t.definition.function.name, t);
    this.offered = plan.tools.map((t) => t.definition);
  }

  async request(messages: ChatMessage[]): Promise<{ result: ChatResult; tokens: number }> {
    const { turn } = this;
    const outcome = await this.runner.request(turn, this.plan, this.signal, this.offered, messages);
    // The server refused tools: this turn (and, learnt, the next ones) go on without them; the runner says so once.
    if (outcome.dropped.includes('tools')) this.offered = [];
    // Calls to tools that were never offered are not run (a server that sends them unasked).
    const result = this.offered.length ? outcome.result : { ...outcome.result, toolCalls: [] };
    const u = outcome.usage;
    this.requests++;
    if (u) {
      this.usage = { prompt: this.usage.prompt + u.prompt, completion: this.usage.completion + u.completion, total: this.usage.total + u.total, estimated: this.usage.estimated || u.estimated };
    }
    // The turn's footer shows the sum of its requests, and how many there were.
    if (this.requests > 1 || u) turn.usage = { ...this.usage };
    turn.requests = this.requests;
    return { result, tokens: u?.total ?? 0 };
  }

  /** The turn's id (random, so unique in the conversation and the window) with the round and the call's place in it. */
  callId(round: number, index: number): string {
    return `${this.turn.id}.${round}.${index}`;
  }

  round(text: string, calls: RoundCall[]): void {
    const step: ToolStepView = { text, calls: calls.map((c) => this.view(c)) };
    for (const v of step.calls) this.views.set(v.id, v);
    this.turn.steps = [...(this.turn.steps ?? []), step];
    this.turn.text = '';
    this.post();
  }

  async run(call: RoundCall): Promise<ToolOutcome> {
    const view = this.views.get(call.id);
    if (!view) throw new Error(`tool call ${call.id} has no card`);
    const { name, arguments: text } = call.wire.function;
    const tool = this.byName.get(name);
    if (!tool) return this.settle(view, 'failed', `There is no tool named "${name}". The tools are: ${[...this.byName.keys()].join(', ') || 'none'}.`);
    const args = parseArguments(text);
    if (typeof args === 'string') return this.settle(view, 'failed', args);
    // Before any question: an argument the schema does not declare would reach the tool unweighed.
    const undeclared = undeclaredArguments(name, args, tool.definition.function.parameters);
    if (undeclared) return this.settle(view, 'failed', undeclared);
    const allowed = await this.approve(tool, view, args);
    if (allowed !== true) return allowed;
    view.status = 'running';
    this.post();
    const started = Date.now();
    try {
      const text = await tool.run(args, this.signal);
      if (this.signal.aborted) return this.settle(view, 'stopped', STOPPED_RESULT, started);
      return this.settle(view, 'done', text, started);
    } catch (e) {
      if (this.signal.aborted) return this.settle(view, 'stopped', STOPPED_RESULT, started);
      return this.settle(view, 'failed', e instanceof Error ? e.message : String(e), started);
    }
  }

  stopped(): boolean {
    return this.signal.aborted;
  }

  /**
   * Asks the reader when the tool needs it; true to run, else how the call ended. The question shows every argument,
   * whole, in the schema's order (a call whose arguments are too long for that is refused unasked); the answer counts
   * only for this call (its id, tool and arguments), and "always" for its tool.
   */
  private async approve(tool: Tool, view: ToolCallView, args: Record<string, unknown>): Promise<true | ToolOutcome> {
    const { session } = this.host;
    const name = tool.definition.function.name;
    if (approval(tool, { askBeforeReading: this.plan.limits.askBeforeReading, alwaysAllowed: session.isAlwaysAllowed(name) }) !== 'ask') return true;
    const question = questionArguments(args, tool.definition.function.parameters);
    // Too long to read in the panel: not asked at all, rather than asked with a part the reader could not weigh.
    const tooLong = tooLongToReview(name, question);
    if (tooLong) return this.settle(view, 'failed', tooLong);
    view.status = 'waiting';
    view.question = question;
    this.post();
    const answer = await session.ask({ id: view.id, name: view.name, arguments: view.arguments }, this.signal);
    delete view.question;
    if (answer === 'stopped') return this.settle(view, 'stopped', STOPPED_RESULT);
    if (answer === 'deny') return this.settle(view, 'denied', 'The user denied this call. Do not try it again unless the user asks.');
    if (answer === 'always') session.allowAlways(name);
    return true;
  }

  /** Ends a call: its card shows the status, the time and the (redacted) result the model receives. */
  private settle(view: ToolCallView, status: ToolOutcome['status'], content: string, started?: number): ToolOutcome {
    const clean = this.host.log.clean(content);
    view.status = status === 'stopped' ? 'failed' : status;
    view.result = clean;
    if (started !== undefined) view.ms = Date.now() - started;
    this.post();
    return { status, content: clean };
  }

  private view(call: RoundCall): ToolCallView {
    const { name, arguments: text } = call.wire.function;
    const tool = this.byName.get(name);
    const args = parseArguments(text);
    let summary = '';
    if (tool && typeof args !== 'string') {
      try {
        summary = tool.summary(args);
      } catch {
        summary = '';
      }
    }
    return { id: call.id, wireId: call.wire.id, name, summary: summary.slice(0, 200), arguments: text, status: 'queued' };
  }

  private post(): void {
    this.host.channel.post({ type: 'turnSteps', turnId: this.turn.id, steps: this.turn.steps ?? [] });
  }
}
