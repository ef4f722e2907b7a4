// The panel's conversation as src/vscode/chatController.ts runs it, made of core's pieces only (the controller itself
// needs VS Code): the window as ChatViewModels.windowFor reads it; before each request the meter, a compaction past the
// threshold or the window, and no request past the window the server runs (makeRoom); the request as Requester.run
// sends it (chatAndLearn); Compact and retry. Follows the controller step by step, by hand: what runs is core's code.
import { chatAndLearn, memoryAdaptationStore } from '../../src/core/adaptations';
import { listModelInfo, type ClientOptions } from '../../src/core/client';
import { compactionBudget, planCompaction, summaryRequest, summaryTurn } from '../../src/core/compaction';
import { contextMeter, correction, exceedsServer, fits, overThreshold, resolveWindow, type LastUsage, type WindowInfo } from '../../src/core/contextWindow';
import { toMessages, type Turn } from '../../src/core/conversation';
import type { ModelInfo } from '../../src/core/modelInfo';
import { promptDropped, windowNotes, WindowProbe, type ServerWindow } from '../../src/core/serverWindow';
import { estimatePromptTokens } from '../../src/core/tokenEstimate';
import { fitTools, type ToolFit } from '../../src/core/toolFit';
import type { ChatMessage, ChatResult, ToolDefinition } from '../../src/core/types';
import type { ContextMeterView, ImageView } from '../../src/shared/protocol';

/** parley.systemPrompt's default. */
export const SYSTEM_PROMPT = 'You are Parley, a concise and precise programming assistant inside VS Code. Answer in Markdown and put code in fenced blocks tagged with their language.';
/** parley.compaction.threshold and keepTurns: their defaults. */
export const THRESHOLD = 85;
export const KEEP_TURNS = 4;

/** The window as the panel has it: WindowInfo with the tooltip's words and what the server said. */
export interface PanelWindow extends WindowInfo {
  notes: string[];
  server: ServerWindow;
  /** The model list the window was read with. */
  list: ModelInfo[];
}

/**
 * ChatViewModels.fetchModels and windowFor: GET /models, the window probe, the contextWindow setting applied;
 * `serverWindow` only for a local server.
 */
export async function panelWindow(opts: ClientOptions, model: string, settings: { contextWindow?: number; maxTokens?: number } = {}): Promise<PanelWindow> {
  let list: ModelInfo[] = [];
  try {
    list = await listModelInfo(opts);
  } catch {
    // As the panel: no list, the model name is typed.
  }
  const server = await new WindowProbe(opts, list).windowOf(model);
  const info = list.find((m) => m.id === model);
  const w = resolveWindow({ contextLength: server.window, maxOutputTokens: info?.maxOutputTokens }, { contextWindow: settings.contextWindow }, settings.maxTokens);
  const notes = windowNotes(server, w, model);
  if (!server.kind) delete w.serverWindow;
  return { ...w, notes, server, list };
}

/** One request the conversation sent, and Parley's estimate of its prompt (tools included). */
export interface SentRequest {
  source: 'chat' | 'compact';
  estimated: number;
  result: ChatResult;
}

/** A conversation of the panel with one model at one window. */
export class Panel {
  readonly turns: Turn[] = [];
  readonly requests: SentRequest[] = [];
  /** The meters of turns makeRoom did not send (their card: notSentCard). */
  readonly notSent: ContextMeterView[] = [];
  /** Replies whose prompt_tokens said the server cut the prompt (their card: droppedCard). */
  readonly dropped: SentRequest[] = [];
  compactions = 0;
  private last: LastUsage | undefined;
  private ids = 0;
  private readonly store = memoryAdaptationStore();

  constructor(private readonly opts: ClientOptions, private readonly model: string, private readonly w: WindowInfo, private readonly tools: readonly ToolDefinition[] = []) {}

  /** The messages of the conversation as it stands (toMessages). */
  messages(turns: readonly Turn[] = this.turns): ChatMessage[] {
    return toMessages(SYSTEM_PROMPT, turns, { sendReasoningBack: false });
  }

  /** ChatController.meter with ChatController.compaction: the meter, the tools as fitted, and what a compaction would summarize. */
  meter(messages: ChatMessage[] = this.messages()): { meter: ContextMeterView; fit: ToolFit; plan: ReturnType<typeof planCompaction>; budget?: number } {
    const fit = fitTools(this.tools, this.w);
    const fixed = estimatePromptTokens(this.messages([])) + fit.tokens;
    const budget = compactionBudget(this.w, THRESHOLD, fixed);
    const plan = planCompaction(this.turns, KEEP_TURNS, budget);
    const meter = contextMeter({
      messages, extraTokens: fit.tokens, last: this.last, threshold: THRESHOLD,
      compactable: plan?.summarize.filter((x) => x.role === 'user').length ?? 0, ...this.w,
    });
    return { meter, fit, plan, budget };
  }

  /** A question from the composer (with its images, already checked), and its reply. */
  ask(text: string, images?: ImageView[]): Promise<ChatResult | undefined> {
    this.turns.push({ id: `u${++this.ids}`, role: 'user', text, ...(images?.length ? { images } : {}), status: 'done' });
    return this.reply();
  }

  /** ChatController.reply: makeRoom, then the request; undefined when the turn was not sent. */
  async reply(): Promise<ChatResult | undefined> {
    const messages = await this.makeRoom(this.messages());
    return messages && this.send(messages);
  }

  /**
   * The request for `messages` as Requester.run sends it, the reply as a turn, and what the reply's real count teaches
   * the meter (or says about a prompt the server cut). Without makeRoom: what a prompt the meter did not stop meets.
   */
  async send(messages: ChatMessage[] = this.messages()): Promise<ChatResult> {
    const { fit } = this.meter(messages);
    const estimated = estimatePromptTokens(messages) + fit.tokens;
    const result = await this.request('chat', messages, fit.definitions, undefined, estimated);
    this.turns.push({ id: `a${this.ids}`, role: 'assistant', text: result.text, status: result.ended === 'done' ? 'done' : 'error' });
    if (!result.usage.estimated && result.usage.prompt_tokens > 0) {
      const expected = Math.round(estimated * correction(this.last));
      if (promptDropped({ expected, actual: result.usage.prompt_tokens, window: this.w.serverWindow })) this.dropped.push(this.requests[this.requests.length - 1]);
      else this.last = { estimated, actual: result.usage.prompt_tokens };
    }
    return result;
  }

  /** ChatController.compactAndRetry: the failed reply goes, older turns are summarized, the question is asked again. */
  async compactAndRetry(): Promise<ChatResult | undefined> {
    const lastTurn = this.turns[this.turns.length - 1];
    const failed = lastTurn?.role === 'assistant' && lastTurn.status === 'error' ? this.turns.pop() : undefined;
    if (!(await this.summarize())) {
      if (failed) this.turns.push(failed);
      return undefined;
    }
    return this.reply();
  }

  /** ChatController.makeRoom: the messages to send, after a compaction when they need one; undefined: not sent. */
  private async makeRoom(messages: ChatMessage[]): Promise<ChatMessage[] | undefined> {
    const { meter: m } = this.meter(messages);
    if (fits(m) && !overThreshold(m)) return messages;
    if (m.compactable > 0 && m.threshold > 0) {
      if (!(await this.summarize())) return exceedsServer(m) ? this.refuse(m) : messages;
      const after = this.messages();
      const left = this.meter(after).meter;
      return exceedsServer(left) ? this.refuse(left) : after;
    }
    if ((fits(m) || m.compactable === 0) && !exceedsServer(m)) return messages;
    return this.refuse(m);
  }

  private refuse(m: ContextMeterView): undefined {
    this.notSent.push(m);
    return undefined;
  }

  /** ChatController.summarize: the same model summarizes the older turns; the summary goes before the turns kept. */
  async summarize(): Promise<boolean> {
    const { plan, budget = this.w.reserve } = this.meter();
    if (!plan) return false;
    const req = summaryRequest({ summarize: plan.summarize, window: this.w.window, reserveHint: Math.min(this.w.reserve, Math.max(128, budget)) });
    const r = await this.request('compact', req.messages, [], req.maxTokens, estimatePromptTokens(req.messages));
    if (r.ended !== 'done' || !r.text.trim()) return false;
    this.turns.splice(plan.keepFrom, 0, summaryTurn(`s${++this.ids}`, r.text.trim(), plan.keepFrom, this.model));
    this.last = undefined;
    this.compactions++;
    return true;
  }

  private async request(source: SentRequest['source'], messages: ChatMessage[], tools: ToolDefinition[], maxTokens: number | undefined, estimated: number): Promise<ChatResult> {
    const settings = { model: this.model, stream: true, maxTokens, tools: tools.length ? tools : undefined };
    const { result } = await chatAndLearn(this.store, this.opts, settings, messages);
    this.requests.push({ source, estimated, result });
    return result;
  }
}
