// Parsed chunks -> typed events, and the accumulator that gives the final result.
// Servers differ: choices may be empty, deltas missing, roles repeated, tool calls indexed or not,
// reasoning under several names or inline in <think> tags. Everything from the wire is read defensively.
import { errorFromWire, isRecord, ParleyError, wireError } from './errors';
import { redact } from './redact';
import type { TextCallFilter } from './textToolCalls';
import type { ChatResult, ChoiceResult, EndState, ReasoningField, StreamEvent, ToolCall, Usage } from './types';

const OPEN = '<think>';
const CLOSE = '</think>';

/** Splits leading `<think>…</think>` out of content, even when the tags arrive split across chunks. */
class ThinkSplitter {
  // 'gap': just past </think>, where the blank lines before the answer are dropped, whichever chunk brings them.
  private mode: 'start' | 'think' | 'gap' | 'answer' = 'start';
  private held = '';
  /** Reasoning came in its own field before any answer: the answer's leading blank lines go, as after </think>. */
  afterReasoning = false;

  /** Feeds content; returns the text and reasoning parts it can already decide on. */
  feed(chunk: string): { text: string; reasoning: string } {
    if (this.mode === 'answer') return { text: chunk, reasoning: '' };
    if (this.mode === 'gap') return { text: this.afterThink(chunk), reasoning: '' };
    this.held += chunk;
    let text = '';
    let reasoning = '';
    if (this.mode === 'start') {
      const lead = this.held.trimStart();
      if (lead.length === 0) return { text, reasoning };
      if (lead.startsWith(OPEN)) {
        this.mode = 'think';
        this.held = lead.slice(OPEN.length);
      } else if (OPEN.startsWith(lead)) {
        return { text, reasoning }; // could still become <think>
      } else {
        this.mode = 'answer';
        text = this.afterReasoning ? lead : this.held;
        this.held = '';
        return { text, reasoning };
      }
    }
    // mode === 'think'
    const end = this.held.indexOf(CLOSE);
    if (end >= 0) {
      reasoning = this.held.slice(0, end);
      const rest = this.held.slice(end + CLOSE.length);
      this.held = '';
      this.mode = 'gap';
      return { text: this.afterThink(rest), reasoning };
    }
    // Hold back what could be the start of </think>.
    let keep = 0;
    for (let k = Math.min(CLOSE.length - 1, this.held.length); k > 0; k--) {
      if (CLOSE.startsWith(this.held.slice(-k))) {
        keep = k;
        break;
      }
    }
    reasoning = this.held.slice(0, this.held.length - keep);
    this.held = this.held.slice(this.held.length - keep);
    return { text, reasoning };
  }

  private afterThink(chunk: string): string {
    const text = chunk.replace(/^\s+/, '');
    if (text) this.mode = 'answer';
    return text;
  }

  /** Past any <think> block: content is answer text, with nothing held back. */
  get answering(): boolean {
    return this.mode === 'answer';
  }

  /** At the end: whatever is held goes where it belongs. */
  flush(): { text: string; reasoning: string } {
    const held = this.held;
    this.held = '';
    if (this.mode === 'think') return { text: '', reasoning: held };
    return { text: this.mode === 'start' && this.afterReasoning ? held.trimStart() : held, reasoning: '' };
  }
}

/**
 * Adds a text or reasoning delta to a batch, merged into the batch's last event when that is the same kind
 * for the same choice: a network read often holds hundreds of chunks, and one event per read is what a
 * renderer needs (and costs one await instead of hundreds).
 */
function pushDelta(out: StreamEvent[], type: 'text' | 'reasoning', choice: number, text: string): void {
  const last = out[out.length - 1];
  if (last !== undefined && last.type === type && last.choice === choice) last.text += text;
  else out.push({ type, choice, text });
}

/** Whether text ends in the first half of a surrogate pair. */
function endsHalf(s: string): boolean {
  const last = s.charCodeAt(s.length - 1);
  return last >= 0xd800 && last <= 0xdbff;
}

/**
 * One kind of text's trailing high surrogate, held back until its pair arrives: a server that cuts text by UTF-16
 * units sends 😀 as `\ud83d` in one chunk and `\ude00` in the next, and no event (nor a pacer step or a panel update
 * after it) may carry half a character.
 */
class HalfHold {
  private held = '';

  /** Whether a half character waits for its pair. */
  get holding(): boolean {
    return this.held !== '';
  }

  /** What was held, then `part`, less a trailing high surrogate kept for next time; `final` (end of input) keeps nothing. */
  take(part: string, final: boolean): string {
    // The usual delta: nothing held and nothing to hold, so no new string (this runs for every delta).
    if (this.held === '' && (final || !endsHalf(part))) return part;
    const s = this.held + part;
    if (final || !endsHalf(s)) {
      this.held = '';
      return s;
    }
    this.held = s.slice(-1);
    return s.slice(0, -1);
  }
}

interface ToolState {
  call: ToolCall;
}

class ChoiceState {
  text = '';
  reasoning = '';
  refusal = '';
  finishReason: string | null = null;
  /** A high surrogate held back from each kind of text until its pair arrives. */
  readonly heldText = new HalfHold();
  readonly heldReasoning = new HalfHold();
  readonly heldRefusal = new HalfHold();
  readonly think = new ThinkSplitter();
  /** Set when tools were offered: holds back a tool call the model writes as text. */
  readonly calls: TextCallFilter | undefined;
  readonly tools: ToolState[] = [];
  readonly byIndex = new Map<number, ToolState>();
  readonly byId = new Map<string, ToolState>();

  constructor(readonly index: number, calls?: () => TextCallFilter) {
    this.calls = calls?.();
  }

  result(): ChoiceResult {
    return {
      index: this.index,
      text: this.text,
      reasoning: this.reasoning,
      refusal: this.refusal,
      toolCalls: this.tools.map((t) => ({ id: t.call.id, type: 'function', function: { name: t.call.function.name, arguments: t.call.function.arguments } })),
      finishReason: this.finishReason,
    };
  }
}

function isCompleteJson(s: string): boolean {
  if (!s.trim()) return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

function readUsage(v: unknown): Usage | undefined {
  if (!isRecord(v)) return undefined;
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
  if (v.prompt_tokens === undefined && v.completion_tokens === undefined && v.total_tokens === undefined) return undefined;
  const u: Usage = {
    prompt_tokens: n(v.prompt_tokens),
    completion_tokens: n(v.completion_tokens),
    total_tokens: n(v.total_tokens) || n(v.prompt_tokens) + n(v.completion_tokens),
  };
  if (isRecord(v.completion_tokens_details) && typeof v.completion_tokens_details.reasoning_tokens === 'number') {
    u.completion_tokens_details = { reasoning_tokens: v.completion_tokens_details.reasoning_tokens };
  }
  if (isRecord(v.prompt_tokens_details) && typeof v.prompt_tokens_details.cached_tokens === 'number') {
    u.prompt_tokens_details = { cached_tokens: v.prompt_tokens_details.cached_tokens };
  }
  return u;
}

/**
 * Accumulates chunks (or one whole completion) into events and a result. Feed each parsed `data:` JSON to
 * `chunk()`; it returns the events that chunk produced, or a ParleyError when the chunk carried an error.
 */
export class Accumulator {
  private readonly choices = new Map<number, ChoiceState>();
  usage: Usage | undefined;
  model: string | undefined;
  reasoningField: ReasoningField | undefined;
  sawDone = false;
  /** Bytes of body handed to the parser: retries stop once this is non-zero. */
  chunks = 0;

  /** `textCalls`: when the request offered tools, a reader of the calls a model writes as text, one per choice. */
  constructor(private readonly ctx: { url: string; model?: string; secrets?: readonly string[]; textCalls?: () => TextCallFilter }) {}

  private choice(index: number): ChoiceState {
    let c = this.choices.get(index);
    if (!c) {
      c = new ChoiceState(index, this.ctx.textCalls);
      this.choices.set(index, c);
    }
    return c;
  }

  /**
   * Handles one SSE event of a reply that came with HTTP `status`: `[DONE]`, a JSON chunk, or an `event: error`.
   * Pushes its events onto `out`; returns the error it carried. `cut`: the end of the body completed this event,
   * so it may be cut short, and one that is not JSON is dropped rather than called malformed.
   */
  event(ev: { data: string; event?: string }, status: number, out: StreamEvent[], cut: boolean): ParleyError | undefined {
    const { url, model, secrets = [] } = this.ctx;
    const data = ev.data;
    if (data === '[DONE]') {
      this.sawDone = true;
      return undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      // A stream cut short, not a malformed one: the broken event is dropped, and the end state (incomplete
      // unless every choice had finished) says what happened. An `event: error` is still an error.
      if (cut && ev.event !== 'error') return undefined;
      // An `event: error` inside the stream is the server's own error, whatever the HTTP status said.
      if (ev.event === 'error') return errorFromWire(status, { message: redact(data.trim().slice(0, 300), secrets) || 'error event' }, { url, model, secrets });
      return new ParleyError('protocol', `${new URL(url).host} sent a stream chunk that is not JSON: ${redact(data.slice(0, 120), secrets)}`, { url });
    }
    const e = this.chunk(json, out);
    if (e) return e;
    if (ev.event === 'error') return errorFromWire(status, wireError(json) ?? { message: redact(data.slice(0, 300), secrets) }, { url, model, secrets });
    return undefined;
  }

  /** Handles one streamed chunk. Pushes its events onto `out`; returns an error if the chunk was one. */
  chunk(json: unknown, out: StreamEvent[]): ParleyError | undefined {
    if (!isRecord(json)) return undefined;
    this.chunks++;
    if (typeof json.model === 'string' && json.model) this.model = json.model;
    const u = readUsage(json.usage) ?? (isRecord(json.x_groq) ? readUsage(json.x_groq.usage) : undefined);
    if (u) {
      this.usage = u;
      out.push({ type: 'usage', usage: u });
    }
    const choices = Array.isArray(json.choices) ? json.choices : [];
    for (let pos = 0; pos < choices.length; pos++) {
      const ch = choices[pos];
      if (!isRecord(ch)) continue;
      const index = typeof ch.index === 'number' ? ch.index : pos;
      const delta = isRecord(ch.delta) ? ch.delta : isRecord(ch.message) ? ch.message : undefined;
      if (delta) this.delta(index, delta, out);
      if (typeof ch.finish_reason === 'string' && ch.finish_reason) {
        const c = this.choice(index);
        c.finishReason = ch.finish_reason;
        out.push({ type: 'finish', choice: index, reason: ch.finish_reason });
      }
    }
    // An error chunk may also carry the billed usage and a finish reason: both are taken first.
    if (json.error !== undefined && json.error !== null) {
      const w = wireError(json);
      if (w) return errorFromWire(200, w, this.ctx);
    }
    return undefined;
  }

  private reasoningFrom(c: ChoiceState, field: ReasoningField, part: string, out: StreamEvent[], final = false): void {
    if (part) this.reasoningField ??= field;
    if (part && field !== 'think_tag') c.think.afterReasoning = true;
    const text = c.heldReasoning.take(part, final);
    if (!text) return;
    c.reasoning += text;
    pushDelta(out, 'reasoning', c.index, text);
  }

  private delta(index: number, d: Record<string, unknown>, out: StreamEvent[]): void {
    const c = this.choice(index);
    if (typeof d.reasoning_content === 'string') this.reasoningFrom(c, 'reasoning_content', d.reasoning_content, out);
    else if (typeof d.reasoning === 'string') this.reasoningFrom(c, 'reasoning', d.reasoning, out);
    if (Array.isArray(d.reasoning_details)) {
      for (const r of d.reasoning_details) {
        if (isRecord(r)) {
          const t = typeof r.text === 'string' ? r.text : typeof r.summary === 'string' ? r.summary : '';
          // Some servers send both `reasoning` and `reasoning_details` with the same text: take one.
          if (t && !(typeof d.reasoning === 'string' && d.reasoning.length > 0)) this.reasoningFrom(c, 'reasoning_details', t, out);
        }
      }
    }
    if (typeof d.content === 'string' && d.content.length > 0) this.content(c, d.content, out);
    if (typeof d.refusal === 'string' && d.refusal) this.refusal(c, d.refusal, out);
    if (Array.isArray(d.tool_calls)) {
      for (let pos = 0; pos < d.tool_calls.length; pos++) {
        const tc = d.tool_calls[pos];
        if (isRecord(tc)) this.toolCall(c, tc, pos, d.tool_calls.length, out);
      }
    }
  }

  /** Answer text (or <think> reasoning in it); `final` lets out a held half character, at the end of input. */
  private content(c: ChoiceState, part: string, out: StreamEvent[], final = false): void {
    const content = c.heldText.take(part, final);
    if (!content) return;
    if (c.think.answering) return this.answer(c, content, out);
    const { text, reasoning } = c.think.feed(content);
    if (reasoning) this.reasoningFrom(c, 'think_tag', reasoning, out);
    this.answer(c, text, out);
  }

  /** Answer text, less any tool call written as text (held back until the end decides). */
  private answer(c: ChoiceState, part: string, out: StreamEvent[]): void {
    const text = c.calls && part ? c.calls.feed(part) : part;
    if (text.length < part.length) out.push({ type: 'held', choice: c.index, text: part.slice(text.length) });
    if (!text) return;
    c.text += text;
    pushDelta(out, 'text', c.index, text);
  }

  private refusal(c: ChoiceState, part: string, out: StreamEvent[], final = false): void {
    const text = c.heldRefusal.take(part, final);
    if (!text) return;
    c.refusal += text;
    out.push({ type: 'refusal', choice: c.index, text });
  }

  /** Tool calls are assembled by index, else by id, else by position; only `arguments` is concatenated. */
  private toolCall(c: ChoiceState, tc: Record<string, unknown>, pos: number, count: number, out: StreamEvent[]): void {
    const id = typeof tc.id === 'string' && tc.id.length > 0 ? tc.id : undefined;
    const fn = isRecord(tc.function) ? tc.function : {};
    const name = typeof fn.name === 'string' && fn.name.length > 0 ? fn.name : undefined;
    const args = typeof fn.arguments === 'string' ? fn.arguments : isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : '';
    let state: ToolState | undefined;
    if (typeof tc.index === 'number') {
      state = c.byIndex.get(tc.index);
      // A different id at a known index is a new call (some servers number every call 0).
      if (state && id !== undefined && state.call.id && state.call.id !== id) state = c.byId.get(id);
      if (!state) {
        state = { call: { id: id ?? '', type: 'function', function: { name: name ?? '', arguments: '' } } };
        c.byIndex.set(tc.index, state);
        if (id !== undefined) c.byId.set(id, state);
        c.tools.push(state);
      }
    } else if (id !== undefined) {
      state = c.byId.get(id);
      if (!state) {
        state = { call: { id, type: 'function', function: { name: name ?? '', arguments: '' } } };
        c.byId.set(id, state);
        c.tools.push(state);
      }
    } else {
      // No index and no id: a delta listing several calls continues them by position; a lone entry continues
      // the latest call. A name starts a new call when that call has another name or complete JSON arguments.
      state = count > 1 ? c.tools[pos] : c.tools[c.tools.length - 1];
      if (state && name !== undefined && state.call.function.name && (state.call.function.name !== name || isCompleteJson(state.call.function.arguments))) {
        state = undefined;
      }
      if (!state) {
        state = { call: { id: '', type: 'function', function: { name: name ?? '', arguments: '' } } };
        c.tools.push(state);
      }
    }
    if (id !== undefined && !state.call.id) state.call.id = id;
    if (name !== undefined && !state.call.function.name) state.call.function.name = name;
    state.call.function.arguments += args;
    const index = c.tools.indexOf(state);
    out.push({ type: 'tool_call', choice: c.index, index, id, name, arguments: args || undefined });
  }

  /** At end of input: flushes text held back by the <think> splitter. */
  flush(out: StreamEvent[]): void {
    for (const c of this.choices.values()) {
      // A half character whose pair never came is let out as it is: the text is what the server sent.
      if (c.heldText.holding) this.content(c, '', out, true);
      if (c.heldReasoning.holding) this.reasoningFrom(c, this.reasoningField ?? 'reasoning', '', out, true);
      if (c.heldRefusal.holding) this.refusal(c, '', out, true);
      const { text, reasoning } = c.think.flush();
      if (reasoning) this.reasoningFrom(c, 'think_tag', reasoning, out);
      this.answer(c, text, out);
      // Calls written as text count only in a reply without real tool_calls; else what was held is text.
      const written = c.calls?.end(c.tools.length === 0);
      if (!written) continue;
      for (const call of written.calls) {
        c.tools.push({ call });
        out.push({ type: 'tool_call', choice: c.index, index: c.tools.length - 1, name: call.function.name, arguments: call.function.arguments });
      }
      if (written.text) {
        c.text += written.text;
        pushDelta(out, 'text', c.index, written.text);
      }
    }
  }

  /**
   * How the input ended, when it ended without error or cancel: `done` after [DONE], or when every choice that
   * appeared got its finish_reason. With n > 1, EOF after only some choices finished cuts the others short.
   */
  endState(): EndState {
    if (this.sawDone) return 'done';
    if (this.choices.size === 0) return 'incomplete';
    for (const c of this.choices.values()) if (c.finishReason === null) return 'incomplete';
    return 'done';
  }

  /** The result so far. `usage` is filled in by the caller when the server sent none. */
  result(ended: EndState, usage: Usage, error?: ParleyError): ChatResult {
    const choices = [...this.choices.values()].sort((a, b) => a.index - b.index).map((c) => c.result());
    const first = choices.find((c) => c.index === 0) ?? choices[0] ?? { index: 0, text: '', reasoning: '', refusal: '', toolCalls: [], finishReason: null };
    const r: ChatResult = {
      text: first.text,
      reasoning: first.reasoning,
      refusal: first.refusal,
      toolCalls: first.toolCalls,
      finishReason: first.finishReason,
      choices,
      usage,
      ended,
      sawDone: this.sawDone,
    };
    if (error) r.error = error;
    if (this.model) r.model = this.model;
    if (this.reasoningField) r.reasoningField = this.reasoningField;
    return r;
  }

  /** All text and reasoning received, for estimating completion tokens. */
  allOutput(): string {
    let s = '';
    for (const c of this.choices.values()) {
      s += c.text + c.reasoning + c.refusal;
      for (const t of c.tools) s += t.call.function.name + t.call.function.arguments;
    }
    return s;
  }
}
