// The running turn: its one AbortController, its requests, and the pacing of the text it streams to the view.
import * as vscode from 'vscode';
import { turnView, type Turn } from '../core/conversation';
import { DeltaPacer } from '../core/deltaPacer';
import type { ChatResult, ChatMessage, StreamEvent, ToolDefinition } from '../core/types';
import type { ErrorView, TurnStatus } from '../shared/protocol';
import type { Log } from './log';
import { usageHost, type ReadyTarget, type Requester, type RunOutcome } from './requester';
import { estimatePromptTokens } from '../core/tokenEstimate';
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

/** One request of a turn. A turn makes one now; a tool loop would make several, all under the turn's signal. */
export interface TurnRequest {
  target: ReadyTarget;
  messages: ChatMessage[];
  source: 'chat' | 'explain';
  /** The turn's signal, as `run` handed it to the work. */
  signal: AbortSignal;
  /** Tools offered to the model in this request. */
  tools?: ToolDefinition[];
}

/**
 * Runs one assistant turn at a time. The turn owns THE AbortController of the user's action: Stop, a new question
 * and dispose abort it, and every request the turn makes goes out under its signal, down to the socket.
 */
export class TurnRunner implements vscode.Disposable {
  private running: { abort: AbortController; done: Promise<void> } | undefined;
  /** The last turn's end, its settle included: stop() waits for it. */
  private settled: Promise<void> = Promise.resolve();
  private pendingDelta: { turnId: string; text: string; reasoning: string } | undefined;
  private readonly pacer = new DeltaPacer(() => this.postDelta());
  private readonly noticesShown = new Set<string>();
  /** The window is going away (reload, close): a turn it ends is Interrupted, not Stopped by the reader. */
  private disposed = false;

  constructor(
    private readonly requester: Requester,
    private readonly channel: ViewChannel,
    private readonly log: Log,
    /** Called when a request starts, with its id now in `turn.inflight`: the owner saves the turn, so a crash counts it. */
    private readonly requestStarted: () => void = () => {},
  ) {}

  get generating(): boolean {
    return this.running !== undefined;
  }

  /**
   * Runs `work` as the running turn, with the turn's signal. Whatever `work` throws ends the turn with an error
   * card. `settle` runs after generating ends and before `stop()` returns (the conversation is saved there).
   */
  async run(turn: Turn, work: (signal: AbortSignal) => Promise<void>, settle: () => Promise<void>): Promise<void> {
    const abort = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    this.running = { abort, done };
    this.settled = done;
    this.setGenerating(true);
    try {
      await work(abort.signal);
    } catch (e) {
      // Core never throws for request failures; this is a bug, but the reader still sees an error card.
      this.log.error(`Unexpected failure: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      this.end(turn, 'error', { kind: 'unknown', title: `Parley failed: ${e instanceof Error ? e.message : String(e)}`, actions: ['retry', 'showLog'] });
    } finally {
      this.running = undefined;
      this.setGenerating(false);
      try {
        await settle();
      } finally {
        finish();
      }
    }
  }

  /** Sends one request of the running turn, streams its text into `turn` (paced), then sets what the result says. */
  async request(turn: Turn, req: TurnRequest): Promise<RunOutcome> {
    // Saved with the turn while it streams: if the window goes away first, this request is counted from it, once.
    const id = crypto.randomUUID();
    turn.inflight = { id, model: req.target.settings.model, host: usageHost(req.target), source: req.source, prompt: estimatePromptTokens(req.messages) };
    this.requestStarted();
    const outcome = await this.requester.run(req.target, {
      usageId: id,
      messages: req.messages,
      source: req.source,
      signal: req.signal,
      tools: req.tools,
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
    if (error) turn.error = { ...error, title: this.log.clean(error.title), detail: error.detail && this.log.clean(error.detail) };
    this.channel.post({ type: 'turnEnd', turn: turnView(turn) });
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
    this.channel.post({ type: 'notice', text: ADAPTATION_NOTICES[param] ?? `This server does not accept ${param}; Parley no longer sends it.` });
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
    this.channel.post({ type: 'delta', turnId: d.turnId, text: d.text || undefined, reasoning: d.reasoning || undefined });
  }

  private setGenerating(v: boolean): void {
    void vscode.commands.executeCommand('setContext', 'parley.generating', v);
    this.channel.post({ type: 'generating', value: v });
  }

  dispose(): void {
    this.disposed = true;
    this.running?.abort.abort();
    this.pacer.cancel();
  }
}
