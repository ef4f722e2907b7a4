// VS Code's language-model messages, tools and options <-> chat-completions ones, as plain data (no 'vscode' import):
// src/vscode/chatProvider.ts turns VS Code's part classes into the `LmPart`s here and back.
import { errorView } from './errorView';
import { ParleyError } from './errors';
import type { RequestSettings } from './request';
import { estimateTokens, TOKENS_PER_IMAGE, TOKENS_PER_MESSAGE } from './tokenEstimate';
import type { ChatMessage, ContentPart, StreamEvent, ToolCall, ToolDefinition } from './types';
import type { ActionId } from '../shared/protocol';

/** One part of a VS Code message, told apart by `kind`; parts Parley cannot send are `other`. */
export type LmPart =
  | { kind: 'text'; value: string }
  | { kind: 'data'; mimeType: string; data: Uint8Array }
  | { kind: 'toolCall'; callId: string; name: string; input: unknown }
  | { kind: 'toolResult'; callId: string; content: LmPart[] }
  | { kind: 'other' };

/** A VS Code message: `assistant`, `system` (VS Code's proposed role 3) or `user`. */
export interface LmMessage {
  role: 'user' | 'assistant' | 'system';
  content: LmPart[];
  name?: string;
}

/** A tool as VS Code offers it. */
export interface LmTool {
  name: string;
  description: string;
  inputSchema?: object;
}

/** A tool call ready for VS Code: arguments parsed into an object. */
export interface LmToolCall {
  callId: string;
  name: string;
  input: object;
}

const utf8 = new TextDecoder();

/** Base64 with btoa (Node and browsers alike), in slices small enough for String.fromCharCode's arguments. */
function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Text a data part holds, when it is text (text/*, JSON); images and markers such as Copilot's cache_control are not. */
function dataText(p: { mimeType: string; data: Uint8Array }): string | undefined {
  return /^text\/|^application\/(?:[\w.+-]*\+)?json$/.test(p.mimeType) ? utf8.decode(p.data) : undefined;
}

/** A tool result's content as the text the model reads. */
function resultText(parts: LmPart[]): string {
  return parts.map((p) => (p.kind === 'text' ? p.value : p.kind === 'data' ? (dataText(p) ?? '') : '')).join('');
}

/** Text and images of a message; a message with no image stays a plain string. */
function contentOf(parts: LmPart[]): string | ContentPart[] {
  const out: ContentPart[] = [];
  for (const p of parts) {
    const text = p.kind === 'text' ? p.value : p.kind === 'data' ? dataText(p) : undefined;
    if (text !== undefined) {
      const last = out[out.length - 1];
      if (last?.type === 'text') last.text += text;
      else out.push({ type: 'text', text });
    } else if (p.kind === 'data' && p.mimeType.startsWith('image/')) {
      out.push({ type: 'image_url', image_url: { url: `data:${p.mimeType};base64,${base64(p.data)}` } });
    }
  }
  if (out.every((p) => p.type === 'text')) return out.map((p) => (p as { text: string }).text).join('');
  return out;
}

/**
 * VS Code's messages as chat-completions messages: assistant tool calls become `tool_calls`, each tool result its own
 * `tool` message (before the user text that came with it, since a `tool` message must follow its call).
 */
export function toChatMessages(messages: readonly LmMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const name = m.name ? { name: m.name } : {};
    if (m.role === 'assistant') {
      const calls: ToolCall[] = [];
      for (const p of m.content) {
        if (p.kind === 'toolCall') calls.push({ id: p.callId, type: 'function', function: { name: p.name, arguments: JSON.stringify(p.input ?? {}) } });
      }
      const content = contentOf(m.content);
      const msg: ChatMessage = { role: 'assistant', content: calls.length > 0 && content === '' ? null : content, ...name };
      if (calls.length > 0) msg.tool_calls = calls;
      out.push(msg);
      continue;
    }
    for (const p of m.content) {
      if (p.kind === 'toolResult') out.push({ role: 'tool', tool_call_id: p.callId, content: resultText(p.content) });
    }
    const rest = m.content.filter((p) => p.kind !== 'toolResult' && p.kind !== 'toolCall');
    const content = contentOf(rest);
    if (content.length > 0 || !m.content.some((p) => p.kind === 'toolResult')) out.push({ role: m.role, content, ...name });
  }
  return out;
}

/** VS Code's tools as function tools; a tool with no schema takes an empty object. */
export function toToolDefinitions(tools: readonly LmTool[] | undefined): ToolDefinition[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} } },
  }));
}

/** `tool_choice` for VS Code's Required mode: the one tool by name, or "required" among several. Auto sends none. */
export function toolChoiceFor(required: boolean, tools: readonly LmTool[] | undefined): RequestSettings['toolChoice'] {
  if (!required || !tools || tools.length === 0) return undefined;
  return tools.length === 1 ? { type: 'function', function: { name: tools[0].name } } : 'required';
}

const isNum = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown) => Number.isInteger(v);
/** Each request field a caller's `modelOptions` may set: the keys it may come under, and the check its value must pass. */
const OPTION_FIELDS: Array<[keyof RequestSettings, string[], (v: unknown) => boolean]> = [
  ['temperature', ['temperature'], isNum],
  ['topP', ['top_p'], isNum],
  ['maxTokens', ['max_tokens', 'max_completion_tokens'], (v) => isInt(v) && (v as number) > 0],
  ['stop', ['stop'], (v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'))],
  ['presencePenalty', ['presence_penalty'], isNum],
  ['frequencyPenalty', ['frequency_penalty'], isNum],
  ['seed', ['seed'], isInt],
];

/**
 * The request fields a caller's `modelOptions` may set, and only when their values have the right type. Anything else
 * (a model, messages, a stream flag, a vendor's own keys) is ignored: the request stays Parley's.
 */
export function settingsFromModelOptions(o: { readonly [name: string]: unknown } | undefined): Partial<RequestSettings> {
  const s: Record<string, unknown> = {};
  for (const [field, keys, ok] of OPTION_FIELDS) {
    const v = keys.map((k) => (o && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined)).find((x) => x !== undefined);
    if (v !== undefined && ok(v)) s[field] = v;
  }
  return s as Partial<RequestSettings>;
}

/** One assembled call with its arguments parsed; `n`: its place in the reply, for the id of a call that came without one. */
function parseToolCall(c: ToolCall, idPrefix: string, n: number): LmToolCall {
  const raw = c.function.arguments.trim();
  let input: unknown;
  try {
    input = raw === '' || raw === 'null' ? {} : JSON.parse(raw);
  } catch {
    input = undefined;
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ParleyError('protocol', `The model called the tool "${c.function.name}" with arguments that are not a JSON object: ${raw.slice(0, 200)}`);
  }
  return { callId: c.id || `${idPrefix}${n}`, name: c.function.name, input };
}

/**
 * The assembled tool calls, each with its arguments parsed. No arguments (null, empty) is `{}`. A call whose arguments
 * are not a JSON object throws a `protocol` ParleyError naming the tool: never dropped in silence. Calls the server
 * sent without an id get `${idPrefix}${n}`.
 */
export function parseToolCalls(calls: readonly ToolCall[], idPrefix: string): LmToolCall[] {
  return calls.map((c, n) => parseToolCall(c, idPrefix, n));
}

/** Whether a call's arguments so far are a whole JSON object, so that no later fragment can belong to them. */
function wholeObject(args: string): boolean {
  try {
    const v: unknown = JSON.parse(args);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * Choice 0's tool calls from a reply's stream events (chat completions and the Responses API alike), each handed on
 * as soon as it is complete rather than all at the end: a call is complete once a later call has begun and its own
 * arguments are a whole JSON object (a server that interleaves calls' fragments is waited for), at a `finish`, and
 * at the end. Calls go out in the order they began, each once. Ids, names and arguments are assembled as core's
 * stream assembles them; a call whose arguments are not a JSON object ends the feed with `error` (nothing after it
 * goes out), as parseToolCalls throws.
 */
export class ToolCallFeed {
  private readonly calls: ToolCall[] = [];
  private readonly byIndex = new Map<number, ToolCall>();
  private sent = 0;
  /**
   * The length of the first call not handed out when its arguments were last found not whole: they are parsed again
   * only once they have grown, and past 4 KB only once they have doubled, so a long broken call and many small
   * fragments around it cost a few parses, not one each (the model's output never blocks the extension host). A long
   * call found whole late goes out at the finish.
   */
  private checked = -1;
  /** Set when a call's arguments were not a JSON object, or a call went on after it was handed out. */
  error: ParleyError | undefined;

  /** `idPrefix`: the ids of calls the server sent without one are `${idPrefix}${n}`, n their place in the reply. */
  constructor(private readonly idPrefix: string) {}

  /** Takes one stream event; returns the calls it completed, in order. */
  event(e: StreamEvent): LmToolCall[] {
    if (e.type === 'finish' && e.choice === 0) return this.take(true);
    if (e.type !== 'tool_call' || e.choice !== 0) return [];
    let c = this.byIndex.get(e.index);
    if (!c) {
      c = { id: '', type: 'function', function: { name: '', arguments: '' } };
      this.byIndex.set(e.index, c);
      this.calls.push(c);
    }
    if (e.id && !c.id) c.id = e.id;
    if (e.name && !c.function.name) c.function.name = e.name;
    if (e.arguments) {
      // A call already handed out cannot change: more of it (past the whitespace a server may add) is the server's fault.
      if (this.calls.indexOf(c) < this.sent && e.arguments.trim() && !this.error) {
        this.error = new ParleyError('protocol', `The server sent more arguments for the tool call "${c.function.name}" after it was complete.`);
      }
      c.function.arguments += e.arguments;
    }
    return this.take(false);
  }

  /** At the end of a reply that ended well: every call not handed out yet. */
  end(): LmToolCall[] {
    return this.take(true);
  }

  private take(all: boolean): LmToolCall[] {
    const out: LmToolCall[] = [];
    while (!this.error && this.sent < this.calls.length) {
      const c = this.calls[this.sent];
      if (!all) {
        const n = c.function.arguments.length;
        if (this.sent === this.calls.length - 1 || n === this.checked || (this.checked > 4096 && n < this.checked * 2)) break;
        if (!wholeObject(c.function.arguments)) {
          this.checked = n;
          break;
        }
      }
      try {
        out.push(parseToolCall(c, this.idPrefix, this.sent));
      } catch (e) {
        this.error = e as ParleyError;
        break;
      }
      this.sent++;
      this.checked = -1;
    }
    return out;
  }
}

/** Parley's token estimate for a string or a message: fast, no tokenizer and no image encoding (see tokenEstimate.ts). */
export function countTokens(x: string | LmMessage): number {
  if (typeof x === 'string') return estimateTokens(x);
  let n = TOKENS_PER_MESSAGE;
  for (const p of x.content) {
    // Tool calls and results are counted by their JSON, which is close to what goes on the wire.
    n += p.kind === 'text' ? estimateTokens(p.value) : p.kind === 'data' ? (p.mimeType.startsWith('image/') ? TOKENS_PER_IMAGE : 0) : estimateTokens(JSON.stringify(p));
  }
  return n;
}

const ACTION_WORDS: Partial<Record<ActionId, string>> = {
  setApiKey: 'Run "Parley: Set API Key".',
  testConnection: 'Run "Parley: Test Connection" to see what the endpoint answers.',
  openSettings: 'Check parley.baseUrl and parley.model in the settings.',
};

/** A failed request in the words of Parley's error card: cause, detail, hint and the fix, on one line. Never the key (core redacts). */
export function errorWords(err: ParleyError, ctx: { model: string; url: string }): string {
  const v = errorView(err, ctx);
  const fix = v.actions.map((a) => ACTION_WORDS[a]).filter(Boolean);
  return ['Parley:', v.title, v.detail ? `(${v.detail})` : '', v.hint ?? '', ...fix].filter(Boolean).join(' ');
}
