// The Responses API (POST …/responses): a chat-completions request translated to it, and its events (or one whole
// Response) read back into the chat events the rest of Parley knows. Loaded on first use: dist/responses.js.
import type { Endpoint } from './endpoint';
import { errorFromWire, isRecord, wireError, type ParleyError } from './errors';
import { Accumulator } from './stream';
import type { Adaptations } from './request';
import { originOf, type ClientOptions, type ReplyReader, type ResponsesApi } from './transport';
import type { ChatMessage, ChatResult, ContentPart, StreamEvent, ToolDefinition } from './types';

/**
 * A chat-completions refusal that says the model is served on the Responses API only, in each server's own words:
 * GitHub Copilot's API, 400 `unsupported_api_for_model` "model \"gpt-5.3-codex\" is not accessible via the
 * /chat/completions endpoint" (farion1231/cc-switch#1681, ericc-ch/copilot-api#208); OpenAI's -pro models, 404 "This
 * model is only supported in v1/responses and not in v1/chat/completions." (simonw/llm#1169, ogx-ai/ogx#5846);
 * OpenAI's o1-pro and Codex models, 404 "This is not a chat model and thus not supported in the v1/chat/completions
 * endpoint. Did you mean to use v1/completions?" (chatboxai/chatbox#2173, egoist/chatwise-releases#1256); Azure
 * OpenAI's Codex deployments, 400 `OperationNotSupported` "The chatCompletion operation does not work with the specified
 * model, gpt-5.1-codex." (langchain-ai/langchain-azure#228, anomalyco/opencode#9035); sub2api, 400 "Unsupported legacy
 * protocol: /v1/chat/completions is not supported. Please use /v1/responses." (Wei-Shaw/sub2api#885); OpenAI's gpt-5.4
 * and later with tools, 400 naming `reasoning_effort` "… Please use /v1/responses instead." (pipecat-ai/pipecat#4043)
 * and "Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. To use
 * function tools, use /v1/responses or set reasoning_effort to 'none'." (GoogleChromeLabs/webmcp-tools#417,
 * Wei-Shaw/sub2api#6740): asked before any refused parameter is dropped (fallback.ts). Two of them are
 * also said of models no API serves (an old completion model, a deployment of the wrong kind): their Responses request
 * is refused too, and then the chat refusal is what the user sees (fallback.ts).
 */
const RESPONSES_ONLY = /not accessible via the \/chat\/completions|only supported in v1\/responses|not a chat model and thus not supported in the v1\/chat\/completions|chatCompletion operation does not work with the specified model|use \/?v1\/responses|use the responses api/i;

/** Whether a chat-completions refusal (an HTTP error, not one inside a reply) says the model needs the Responses API. */
export function refusesChat(e: ParleyError, log?: ClientOptions['log']): boolean {
  if (e.inResponse !== undefined || (e.kind !== 'bad_request' && e.kind !== 'not_found')) return false;
  const says = e.code === 'unsupported_api_for_model' || RESPONSES_ONLY.test(`${e.providerMessage ?? ''} ${e.message}`);
  if (says) log?.(`${e.url ? originOf(e.url) : 'The server'} serves the model on the Responses API only; asking there`, 'info');
  return says;
}

/**
 * How a request that went to the Responses API after a chat refusal ends. Once the Responses API answered (or refused
 * one of the request's own fields by name: the route is there), the switch is remembered (`switched`). Refused there
 * too as a whole, not found or a bad request naming no field (no such route, or a model no API serves), the chat
 * refusal is the result, since its words say more, and nothing is remembered; a request stopped before any output, or
 * any other failure (the key, a rate limit, the server), is the result, and the next request asks chat completions again.
 */
export function settle<T extends { result: ChatResult; adaptations: Adaptations }>(outcome: T, refusal: ChatResult): T & { switched?: true } {
  const r = outcome.result;
  const e = r.error;
  const answered = r.text || r.toolCalls.length || (r.ended !== 'error' && r.ended !== 'cancelled');
  if (answered || (e?.kind === 'bad_request' && e.param)) return { ...outcome, switched: true };
  const refused = e?.kind === 'not_found' || e?.kind === 'bad_request';
  return { ...outcome, result: r.ended === 'error' && refused ? refusal : r, adaptations: { ...outcome.adaptations, api: undefined } };
}

/** `{base}/responses`: the chat completions URL with its last two segments replaced, query (Azure's api-version) kept. */
export function responsesUrl(endpoint: Endpoint): string {
  const u = new URL(endpoint.url);
  u.pathname = u.pathname.replace(/\/chat\/completions$/, '') + '/responses';
  return u.href;
}

/** Chat-completions fields the Responses API has no place for, or gets under another name (below). */
const CHAT_ONLY = new Set([
  'messages', 'stream_options', 'max_tokens', 'max_completion_tokens', 'response_format', 'reasoning_effort', 'verbosity',
  'tools', 'tool_choice', 'stop', 'seed', 'n', 'logprobs', 'top_logprobs', 'logit_bias',
]);

/** The Responses API's fields whose refusal is learnt as a chat-completions parameter's: the name that one has. */
const CHAT_PARAM: Record<string, string> = { text: 'response_format', reasoning: 'reasoning_effort' };

/**
 * A refusal with its `param` (`text.format`, `reasoning.effort`) in chat-completions words, in place. A refusal of
 * `reasoning.summary` (OpenAI, for an organization not verified) is left as it is: fallback.ts drops the summary alone.
 */
export function asChat(e: ParleyError): ParleyError {
  if (e.param === SUMMARY) return e;
  const top = e.param?.split('.')[0];
  if (top && Object.prototype.hasOwnProperty.call(CHAT_PARAM, top)) e.param = CHAT_PARAM[top];
  return e;
}

/** The Responses field of the reasoning summaries Parley asks for; a refusal of it is learnt as a drop of this name. */
export const SUMMARY = 'reasoning.summary';

/** OpenAI refuses a `max_output_tokens` under 16 (braintrustdata/lingua#186, vectorize-io/hindsight#58). */
const MIN_OUTPUT_TOKENS = 16;

/**
 * A chat-completions body as a Responses body. `store: false` always: Parley keeps the conversation itself, and sends
 * it whole each time. A reasoning effort becomes `reasoning.effort`, with summaries asked for (`summary: "auto"`) only
 * then, since a model that takes no reasoning refuses the field. Fields with no Responses counterpart (stop, seed, n)
 * are left out; any other field (a profile's extraBody: `include`, `reasoning`, `text`…) goes as it is.
 */
export function toResponsesBody(chat: Record<string, unknown>, ad?: Adaptations): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(chat)) if (!CHAT_ONLY.has(k)) body[k] = v;
  const messages = (Array.isArray(chat.messages) ? chat.messages : []) as ChatMessage[];
  // The leading system messages are the instructions; a later one stays in its place.
  let lead = 0;
  while (messages[lead]?.role === 'system') lead++;
  const instructions = messages.slice(0, lead).map((m) => textOf(m.content)).filter(Boolean).join('\n\n');
  if (instructions) body.instructions = instructions;
  body.input = messages.slice(lead).flatMap(inputItems);
  const max = chat.max_completion_tokens ?? chat.max_tokens;
  if (typeof max === 'number') body.max_output_tokens = Math.max(MIN_OUTPUT_TOKENS, max);
  const format = chat.response_format;
  if (isRecord(format)) {
    const schema = isRecord(format.json_schema) ? format.json_schema : {};
    body.text = { ...(isRecord(chat.text) ? chat.text : {}), format: format.type === 'json_schema' ? { type: 'json_schema', ...schema } : { type: format.type } };
  }
  if (typeof chat.reasoning_effort === 'string') {
    const summary = ad?.drop?.includes(SUMMARY) ? {} : { summary: 'auto' };
    body.reasoning = { ...summary, ...(isRecord(chat.reasoning) ? chat.reasoning : {}), effort: chat.reasoning_effort };
  }
  // Chat completions' `verbosity` is the Responses API's `text.verbosity`.
  if (typeof chat.verbosity === 'string') body.text = { ...(isRecord(body.text) ? body.text : {}), verbosity: chat.verbosity };
  // `strict: false` unless the tool says otherwise: the Responses API makes a schema strict where it can (every
  // property required), which chat completions never does.
  if (Array.isArray(chat.tools)) body.tools = (chat.tools as ToolDefinition[]).map((t) => ({ type: 'function', strict: false, ...t.function }));
  const choice = chat.tool_choice;
  if (choice !== undefined) body.tool_choice = isRecord(choice) && isRecord(choice.function) ? { type: 'function', name: choice.function.name } : choice;
  body.store = false;
  return body;
}

/** The text of a message's content: a string, or its text parts joined. */
function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** One chat message as Responses input items: a message, an assistant's calls, or a call's output. */
function inputItems(m: ChatMessage): Record<string, unknown>[] {
  if (m.role === 'tool') return [{ type: 'function_call_output', call_id: m.tool_call_id ?? '', output: textOf(m.content) }];
  const items: Record<string, unknown>[] = [];
  if (m.role === 'user' && Array.isArray(m.content)) items.push({ role: 'user', content: m.content.map(userPart) });
  else if (m.content !== null && textOf(m.content) !== '') items.push({ role: m.role, content: textOf(m.content) });
  for (const c of m.tool_calls ?? []) items.push({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments });
  return items;
}

function userPart(p: ContentPart): Record<string, unknown> {
  return p.type === 'text' ? { type: 'input_text', text: p.text } : { type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' };
}

/** Responses usage (`input_tokens`, `output_tokens`, their details) in chat-completions words, for the accumulator. */
function chatUsage(u: unknown): Record<string, unknown> | undefined {
  if (!isRecord(u)) return undefined;
  const input = isRecord(u.input_tokens_details) ? u.input_tokens_details : {};
  const output = isRecord(u.output_tokens_details) ? u.output_tokens_details : {};
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    total_tokens: u.total_tokens,
    ...(typeof input.cached_tokens === 'number' ? { prompt_tokens_details: { cached_tokens: input.cached_tokens } } : {}),
    ...(typeof output.reasoning_tokens === 'number' ? { completion_tokens_details: { reasoning_tokens: output.reasoning_tokens } } : {}),
  };
}

/** Why an incomplete response stopped, as a chat finish reason: `max_output_tokens` is `length`. */
function finishOf(r: Record<string, unknown>, calls: boolean): string {
  const reason = isRecord(r.incomplete_details) ? r.incomplete_details.reason : undefined;
  if (reason === 'max_output_tokens') return 'length';
  if (typeof reason === 'string') return reason;
  return calls ? 'tool_calls' : 'stop';
}

/** One function call of the reply, by its item id: its place among the calls, and the arguments seen so far. */
interface Call {
  index: number;
  args: string;
}

/**
 * Reads a Responses reply (its events, or one whole Response) into the events and result of a chat reply, by handing
 * the chat-completions chunk each event means to stream.ts's Accumulator: text, refusals, reasoning summaries (the
 * Thinking block), function calls by index with their call_id, usage, the finish, and errors as the same ParleyErrors.
 */
export class ResponsesReader implements ReplyReader {
  private readonly acc: Accumulator;
  private readonly calls = new Map<string, Call>();
  /** Message items whose text came as deltas: their `output_item.done` repeats it. */
  private readonly streamed = new Set<string>();
  private lastStreamed: unknown;
  /** A text or refusal delta came with no item id: a message item's end cannot be told apart from it, so it adds nothing. */
  private anonymous = false;
  private readonly textChunk = { choices: [{ index: 0, delta: { content: '' } }] };
  chunks = 0;

  constructor(private readonly ctx: ConstructorParameters<typeof Accumulator>[0]) {
    this.acc = new Accumulator(ctx);
  }

  get usage() {
    return this.acc.usage;
  }
  get sawDone(): boolean {
    return this.acc.sawDone;
  }
  set sawDone(v: boolean) {
    this.acc.sawDone = v;
  }

  event(ev: { data: string; event?: string }, status: number, out: StreamEvent[], cut: boolean): ParleyError | undefined {
    let json: unknown;
    try {
      json = JSON.parse(ev.data);
    } catch {
      // `[DONE]` (some gateways end with it), a cut event, a broken one: as on chat completions.
      return this.acc.event(ev, status, out, cut);
    }
    const e = this.take(json, status, out);
    if (e || ev.event !== 'error') return e;
    // An `event: error` whose data is not the Responses API's own error event: a gateway's `{error: {...}}`.
    return errorFromWire(status, wireError(json) ?? { message: ev.data.slice(0, 300) }, this.ctx);
  }

  chunk(json: unknown, out: StreamEvent[]): ParleyError | undefined {
    return this.take(json, 200, out);
  }

  /** One event, or a whole Response. */
  private take(json: unknown, status: number, out: StreamEvent[]): ParleyError | undefined {
    if (!isRecord(json)) return undefined;
    this.chunks++;
    if (json.object === 'response') return this.whole(json, status, out);
    const type = typeof json.type === 'string' ? json.type : '';
    const delta = typeof json.delta === 'string' ? json.delta : '';
    const item = isRecord(json.item) ? json.item : undefined;
    switch (type) {
      case 'response.output_text.delta':
        if (json.item_id !== this.lastStreamed && typeof json.item_id === 'string') this.streamed.add((this.lastStreamed = json.item_id));
        else if (typeof json.item_id !== 'string') this.anonymous = true;
        return this.text(delta, out);
      case 'response.refusal.delta':
        if (typeof json.item_id === 'string') this.streamed.add(json.item_id);
        else this.anonymous = true;
        return this.delta({ refusal: delta }, out);
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return this.delta({ reasoning: delta }, out);
      case 'response.reasoning_summary_part.added':
        // Summary parts are paragraphs of one Thinking block.
        return typeof json.summary_index === 'number' && json.summary_index > 0 ? this.delta({ reasoning: '\n\n' }, out) : undefined;
      case 'response.output_item.added':
        return item?.type === 'function_call' ? this.call(item, out) : undefined;
      case 'response.function_call_arguments.delta':
        return this.args(String(json.item_id ?? ''), delta, out);
      case 'response.output_item.done':
        return item ? this.itemDone(item, out) : undefined;
      case 'response.created':
      case 'response.in_progress':
        return isRecord(json.response) ? this.acc.chunk({ model: json.response.model }, out) : undefined;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        return isRecord(json.response) ? this.end(json.response, status, out) : undefined;
      case 'error':
        return errorFromWire(status, wireError(json) ?? { message: 'error event' }, this.ctx);
      default:
        // A gateway's chat-style error chunk (`{error: {...}}`) inside the stream.
        return json.error !== undefined && json.error !== null ? errorFromWire(status, wireError(json) ?? { message: 'error' }, this.ctx) : undefined;
    }
  }

  private delta(d: Record<string, unknown>, out: StreamEvent[]): ParleyError | undefined {
    return this.acc.chunk({ choices: [{ index: 0, delta: d }] }, out);
  }

  /** A text delta, the event a reply has most of: one chunk object, reused (the accumulator keeps none of it). */
  private text(content: string, out: StreamEvent[]): ParleyError | undefined {
    this.textChunk.choices[0].delta.content = content;
    return this.acc.chunk(this.textChunk, out);
  }

  /** A function call starts: its place among the calls, its call_id and name (and arguments, when sent whole). */
  private call(item: Record<string, unknown>, out: StreamEvent[]): ParleyError | undefined {
    const key = String(item.id ?? item.call_id ?? this.calls.size);
    const c: Call = { index: this.calls.size, args: typeof item.arguments === 'string' ? item.arguments : '' };
    this.calls.set(key, c);
    return this.delta({ tool_calls: [{ index: c.index, id: item.call_id, type: 'function', function: { name: item.name, arguments: c.args } }] }, out);
  }

  private args(id: string, part: string, out: StreamEvent[]): ParleyError | undefined {
    const c = this.calls.get(id);
    if (!c || !part) return undefined;
    c.args += part;
    return this.delta({ tool_calls: [{ index: c.index, function: { arguments: part } }] }, out);
  }

  /** An item's end: what its deltas did not bring (a call whose arguments came whole, a message sent in one piece). */
  private itemDone(item: Record<string, unknown>, out: StreamEvent[]): ParleyError | undefined {
    if (item.type === 'function_call') {
      const c = this.calls.get(String(item.id ?? item.call_id));
      if (!c) return this.call(item, out);
      const all = typeof item.arguments === 'string' ? item.arguments : '';
      return all.startsWith(c.args) && all.length > c.args.length ? this.args(String(item.id ?? item.call_id), all.slice(c.args.length), out) : undefined;
    }
    if (item.type === 'message' && !this.anonymous && !this.streamed.has(String(item.id))) return this.message(item, out);
    return undefined;
  }

  /** A whole message item: its text and refusal parts. */
  private message(item: Record<string, unknown>, out: StreamEvent[]): ParleyError | undefined {
    for (const p of Array.isArray(item.content) ? item.content : []) {
      if (!isRecord(p)) continue;
      const e = p.type === 'output_text' && typeof p.text === 'string' ? this.delta({ content: p.text }, out)
        : p.type === 'refusal' && typeof p.refusal === 'string' ? this.delta({ refusal: p.refusal }, out) : undefined;
      if (e) return e;
    }
    return undefined;
  }

  /** `response.completed`, `.incomplete` or `.failed`: usage, the finish, or the error; the reply is over. */
  private end(r: Record<string, unknown>, status: number, out: StreamEvent[]): ParleyError | undefined {
    this.acc.sawDone = true;
    const usage = chatUsage(r.usage);
    if (r.status === 'failed' || isRecord(r.error)) {
      if (usage) this.acc.chunk({ usage }, out);
      return errorFromWire(status, wireError({ error: r.error }) ?? { message: 'The response failed.' }, this.ctx);
    }
    return this.acc.chunk({ usage, choices: [{ index: 0, delta: {}, finish_reason: finishOf(r, this.calls.size > 0) }] }, out);
  }

  /** A whole Response: its output items in order, then its end. */
  private whole(r: Record<string, unknown>, status: number, out: StreamEvent[]): ParleyError | undefined {
    if (typeof r.model === 'string') this.acc.chunk({ model: r.model }, out);
    for (const item of Array.isArray(r.output) ? r.output : []) {
      if (!isRecord(item)) continue;
      const e = item.type === 'reasoning' ? this.summary(item, out) : this.itemDone(item, out);
      if (e) return e;
    }
    return this.end(r, status, out);
  }

  private summary(item: Record<string, unknown>, out: StreamEvent[]): ParleyError | undefined {
    const parts = (Array.isArray(item.summary) ? item.summary : []).map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : '')).filter(Boolean);
    return parts.length ? this.delta({ reasoning: parts.join('\n\n') }, out) : undefined;
  }

  flush(out: StreamEvent[]): void {
    this.acc.flush(out);
  }
  endState() {
    return this.acc.endState();
  }
  result(...a: Parameters<Accumulator['result']>) {
    return this.acc.result(...a);
  }
  allOutput(): string {
    return this.acc.allOutput();
  }
}

/** The Responses API as the client takes it (ClientOptions.responses). */
export const responsesApi: ResponsesApi = {
  refusesChat,
  at: (opts) => ({ ...opts, endpoint: { ...opts.endpoint, url: responsesUrl(opts.endpoint) } }),
  body: toResponsesBody,
  summary: SUMMARY,
  reader: (ctx) => new ResponsesReader(ctx),
  settle,
  asChat,
};
