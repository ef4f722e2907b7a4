// A chat turn that may use tools: the host side of core/toolLoop.ts. Runs each call (asking the reader first when
// its tool needs it), keeps the turn's steps and cards up to date, sums the turn's usage, and says once when a model
// cannot use tools. Approval comes only from the reader's click or key in the panel (ToolSession.answer).
import { questionArguments, tooLongToReview, undeclaredArguments } from '../core/toolArguments';
import { runToolLoop, STOPPED_RESULT, type RoundCall, type ToolLoopEnd, type ToolLoopHost, type ToolLoopLimits, type ToolOutcome } from '../core/toolLoop';
import type { ChatMessage, ChatResult, ToolDefinition } from '../core/types';
import type { ToolCallView, ToolDecision, ToolStepView } from '../shared/protocol';
import type { Turn } from '../core/conversation';
import type { Log } from './log';
import type { ReadyTarget } from './requester';
import type { TurnRunner } from './turnRunner';
import type { ViewChannel } from './viewChannel';

/** A tool the chat can offer: its definition for the model, and how to run it. */
export interface TurnTool {
  definition: ToolDefinition;
  /** Built-in read-only tools run without asking, unless the reader set them to ask; any other tool asks. */
  readOnly: boolean;
  /**
   * The tool asks the reader itself, in a review that only the reader's Accept or Reject ends (propose_edit): the
   * panel does not ask first as well.
   */
  reviewed?: boolean;
  /** The main argument, for the card (a path, a query). */
  summary(args: Record<string, unknown>): string;
  /** The result text for the model. Throws for a failure whose message the model should read. */
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<string>;
}

/** What the reader decided for one waiting call, or that the turn was stopped while it waited. */
type Answer = ToolDecision | 'stopped';

/** A call as its question shows it: Parley's id for it, its tool's name and its arguments (the JSON text). */
export interface AskedCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * The window's tool state: calls waiting for the reader, and the tools the reader chose to always allow (for this
 * window's session; nothing a model or a tool result says can add to it).
 */
export class ToolSession {
  private readonly always = new Set<string>();
  private readonly waiting = new Map<string, { call: AskedCall; settle: (a: Answer) => void }>();

  /** Waits for the reader's answer to `call` (by Parley's id, unique in the conversation); a stop answers `stopped`. */
  ask(call: AskedCall, signal: AbortSignal): Promise<Answer> {
    if (signal.aborted) return Promise.resolve('stopped');
    const asked = { ...call };
    return new Promise<Answer>((resolve) => {
      const onAbort = () => settle('stopped');
      const settle = (a: Answer) => {
        this.waiting.delete(asked.id);
        signal.removeEventListener('abort', onAbort);
        resolve(a);
      };
      this.waiting.set(asked.id, { call: asked, settle });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * The reader's click or key in the panel, on the question that showed `shown`. Acts only when the call waiting
   * under that id is that call, same tool and same arguments; returns false (and leaves any call waiting) otherwise.
   */
  answer(shown: AskedCall, decision: ToolDecision): boolean {
    const w = this.waiting.get(shown.id);
    if (!w || w.call.name !== shown.name || w.call.arguments !== shown.arguments) return false;
    w.settle(decision);
    return true;
  }

  isAlwaysAllowed(name: string): boolean {
    return this.always.has(name);
  }

  allowAlways(name: string): void {
    this.always.add(name);
  }
}

/** The tool settings a turn runs under (parley.tools.*). */
export interface ToolSettings {
  enabled: boolean;
  askBeforeReading: boolean;
  maxRounds: number;
  maxTurnTokens: number;
}

/** Everything one tool turn needs. */
export interface ToolTurnDeps {
  turn: Turn;
  runner: TurnRunner;
  channel: ViewChannel;
  log: Log;
  session: ToolSession;
  target: ReadyTarget;
  tools: readonly TurnTool[];
  signal: AbortSignal;
  source: 'chat' | 'explain';
  /** Ask before built-in read tools too (parley.tools.askBeforeReading). */
  askBeforeReading: boolean;
}

/** Runs one turn through the tool loop. */
export async function runToolTurn(deps: ToolTurnDeps, messages: ChatMessage[], limits: ToolLoopLimits): Promise<ToolLoopEnd> {
  return runToolLoop(messages, new ToolTurn(deps), limits);
}

/** One turn's side of the loop: requests, steps and cards, and each call's run. */
class ToolTurn implements ToolLoopHost {
  private readonly byName = new Map<string, TurnTool>();
  /** The cards of this turn's calls, by Parley's id. */
  private readonly views = new Map<string, ToolCallView>();
  private offered: ToolDefinition[];
  private usage = { prompt: 0, completion: 0, total: 0, estimated: false };
  private requests = 0;

  constructor(private readonly d: ToolTurnDeps) {
    for (const t of d.tools) this.byName.set(t.definition.function.name, t);
    this.offered = d.tools.map((t) => t.definition);
  }

  async request(messages: ChatMessage[]): Promise<{ result: ChatResult; tokens: number }> {
    const { turn, runner, target, signal, source } = this.d;
    const outcome = await runner.request(turn, { target, messages, source, signal, tools: this.offered });
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
    return `${this.d.turn.id}.${round}.${index}`;
  }

  round(text: string, calls: RoundCall[]): void {
    const { turn } = this.d;
    const step: ToolStepView = { text, calls: calls.map((c) => this.view(c)) };
    for (const v of step.calls) this.views.set(v.id, v);
    turn.steps = [...(turn.steps ?? []), step];
    turn.text = '';
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
      const text = await tool.run(args, this.d.signal);
      if (this.d.signal.aborted) return this.settle(view, 'stopped', STOPPED_RESULT, started);
      return this.settle(view, 'done', text, started);
    } catch (e) {
      if (this.d.signal.aborted) return this.settle(view, 'stopped', STOPPED_RESULT, started);
      return this.settle(view, 'failed', e instanceof Error ? e.message : String(e), started);
    }
  }

  stopped(): boolean {
    return this.d.signal.aborted;
  }

  /**
   * Asks the reader when the tool needs it; true to run, else how the call ended. The question shows every argument,
   * whole, in the schema's order (a call whose arguments are too long for that is refused unasked); the answer counts
   * only for this call (its id, tool and arguments), and "always" for its tool.
   */
  private async approve(tool: TurnTool, view: ToolCallView, args: Record<string, unknown>): Promise<true | ToolOutcome> {
    const { session, signal, askBeforeReading } = this.d;
    const name = tool.definition.function.name;
    if ((tool.readOnly && !askBeforeReading) || tool.reviewed || session.isAlwaysAllowed(name)) return true;
    const question = questionArguments(args, tool.definition.function.parameters);
    // Too long to read in the panel: not asked at all, rather than asked with a part the reader could not weigh.
    const tooLong = tooLongToReview(name, question);
    if (tooLong) return this.settle(view, 'failed', tooLong);
    view.status = 'waiting';
    view.question = question;
    this.post();
    const answer = await session.ask({ id: view.id, name: view.name, arguments: view.arguments }, signal);
    delete view.question;
    if (answer === 'stopped') return this.settle(view, 'stopped', STOPPED_RESULT);
    if (answer === 'deny') return this.settle(view, 'denied', 'The user denied this call. Do not try it again unless the user asks.');
    if (answer === 'always') session.allowAlways(name);
    return true;
  }

  /** Ends a call: its card shows the status, the time and the (redacted) result the model receives. */
  private settle(view: ToolCallView, status: ToolOutcome['status'], content: string, started?: number): ToolOutcome {
    const clean = this.d.log.clean(content);
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
    this.d.channel.post({ type: 'turnSteps', turnId: this.d.turn.id, steps: this.d.turn.steps ?? [] });
  }
}

/** A call's arguments as an object, or what is wrong with them (for the model). Empty arguments are `{}`. */
export function parseArguments(text: string): Record<string, unknown> | string {
  if (!text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return `The arguments are not valid JSON: ${text.slice(0, 200)}`;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'The arguments must be a JSON object.';
  return v as Record<string, unknown>;
}
