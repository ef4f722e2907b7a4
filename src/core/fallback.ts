// The one fallback loop: a chat request that a server refuses for a parameter is sent again without it (the JSON-mode fallback among them).
import { chat, unstreamed } from './chat';
import type { ClientOptions } from './client';
import { ParleyError } from './errors';
import { buildRequestBody, type Adaptations, type RequestSettings } from './request';
import { RequestAbort, type ResponseInfo, type ResponsesApi } from './transport';
import type { ChatMessage, ChatResult, StreamEvent, Usage } from './types';

export interface FallbackOutcome {
  result: ChatResult;
  /** Set when this request learnt that the model is served on the Responses API. */
  switched?: true;
  /** Parameters dropped (or, for max_tokens, renamed) this time. */
  dropped: string[];
  /** The adaptations to remember for this origin and model. */
  adaptations: Adaptations;
}

/** One request of the fallback loop, reported when it has ended (Test Connection shows the one that counted). */
export interface FallbackAttempt {
  /** The request body that was sent. */
  body: Record<string, unknown>;
  result: ChatResult;
  /** The response that was read (status, content type, time to first byte), when one came. */
  response: ResponseInfo | undefined;
  /** The parameter the server refused, which the next attempt goes without; unset on the last attempt. */
  refused?: string;
}

/** Parameters a server may refuse, and that Parley can do without. */
const ADAPTABLE_PARAMS = [
  'stream_options', 'response_format', 'max_tokens', 'temperature', 'top_p',
  'presence_penalty', 'frequency_penalty', 'tools', 'parallel_tool_calls',
  'tool_choice', 'seed',
  // The panel's reasoning effort (core/reasoningEffort.ts): `reasoning` is OpenRouter's form of it.
  'reasoning_effort', 'reasoning',
] as const;

/**
 * An error about one tool rather than the `tools` field: a path into the list (OpenAI's `param`
 * "tools[0].function.parameters", Mistral's and vLLM's "tools.0.function.parameters", Gemini's "at 'tools[0]…'"), a
 * function's schema (OpenAI's invalid_function_parameters, "Invalid schema for function 'x': … array schema missing
 * items"), or a call that did not match its schema (Groq's tool_use_failed). Its words may quote the tool's own
 * name and description, which the caller chose: nothing is learnt from it.
 */
const INSIDE_A_TOOL = /\btools(?:\s*\[\s*\d+\s*\]|\.\d+)|\bschema for (?:function|tool)\b|\bfunction_declarations\b|\bdid not match schema\b/i;
const TOOL_CODES = new Set(['invalid_function_parameters', 'tool_use_failed']);

function insideATool(error: ParleyError): boolean {
  return TOOL_CODES.has(error.code ?? '') || INSIDE_A_TOOL.test(`${error.param ?? ''} ${error.providerMessage ?? ''} ${error.message}`);
}

/**
 * The parameter a 400/422 refuses as a whole, if Parley sent it: the one `param` names, or, when the server gave no
 * `param`, one named in the message. Never from an error about one tool (see INSIDE_A_TOOL), and never from the words
 * of an error whose `param` names another field: those may quote what was sent.
 */
function rejectedParam(error: ParleyError, body: Record<string, unknown>): string | undefined {
  if (error.kind !== 'bad_request' || (error.status !== 400 && error.status !== 422)) return undefined;
  if (insideATool(error)) return undefined;
  const sent = ADAPTABLE_PARAMS.filter((p) => body[p] !== undefined);
  const param = error.param?.replace(/^body\./, '');
  if (param) return sent.find((p) => param === p || param.startsWith(`${p}.`) || param.startsWith(`${p}[`));
  // xAI names the effort as its own API does: "Model grok-4-latest does not support parameter reasoningEffort."
  const text = `${error.providerMessage ?? ''} ${error.message}`.replace('reasoningEffort', 'reasoning_effort');
  return sent.find((p) => new RegExp(`(^|[^a-z_])${p}([^a-z_]|$)`).test(text));
}

/** The adaptations after a server refused `param`: max_tokens becomes max_completion_tokens, anything else is dropped. */
function adapt(a: Adaptations, param: string): Adaptations {
  if (param === 'max_tokens') return { ...a, maxCompletionTokens: true };
  return { ...a, drop: [...new Set([...(a.drop ?? []), param])] };
}

/** The result of a request that was never sent because a setting is invalid. */
function configResult(e: unknown): ChatResult {
  const error = e instanceof ParleyError ? e : new ParleyError('config', String(e));
  const usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated: true };
  return { text: '', reasoning: '', refusal: '', toolCalls: [], finishReason: null, choices: [], usage, ended: 'error', error, sawDone: false };
}

/**
 * Sends a chat request, learning from a refusal: a 400/422 naming a parameter Parley sent is retried once
 * without it (max_tokens becomes max_completion_tokens). Never throws (unless onEvent does): a bad setting
 * comes back as a `config` error result before anything is sent. Chat, Generate Code and Test Connection all come here;
 * `onEvent` gets a request's events as they come (a non-streamed one's at its end; never `end`), `onAttempt` each request once it ended.
 */
export async function chatWithFallback(
  opts: ClientOptions,
  settings: RequestSettings,
  messages: ChatMessage[],
  adaptations: Adaptations | undefined,
  onEvent?: (e: StreamEvent) => void,
  onAttempt?: (attempt: FallbackAttempt) => void,
): Promise<FallbackOutcome> {
  let ad: Adaptations = { ...(adaptations ?? {}) };
  const dropped: string[] = [];
  // The chat-completions refusal that sent this request to the Responses API.
  let refusal: ChatResult | undefined;
  for (;;) {
    let body: Record<string, unknown>;
    try {
      body = buildRequestBody(settings, messages, ad);
    } catch (e) {
      return { result: configResult(e), dropped, adaptations: ad };
    }
    // A profile's `api` wins over what was learnt: "responses" from the first request, "chat" never anything else.
    const responses = (settings.api ?? ad.api) === 'responses' ? opts.responses?.() : undefined;
    const learnt = ad;
    const api = responses && { ...responses, body: (b: Record<string, unknown>) => responses.body(b, learnt) };
    const { result, response, delivered } = await attempt(opts, body, settings.stream === true, onEvent, api);
    const error = !delivered && result.ended === 'error' ? result.error : undefined;
    // Once, and only before any output: a model the server says it serves on the Responses API only goes there (before
    // any refused parameter: OpenAI's refusal that asks for /v1/responses names `reasoning_effort`).
    if (error && !api && !settings.api && opts.responses?.().refusesChat(error, opts.log)) {
      onAttempt?.({ body, result, response });
      refusal = result;
      ad.api = 'responses';
      continue;
    }
    // One retry per refused parameter, never twice for the same one, and never once the caller has seen output
    // (an error chunk inside a stream that already streamed text is not a refusal of the request). rejectedParam
    // names only ADAPTABLE_PARAMS, so the loop ends after at most one retry for each of them; the Responses API's
    // reasoning summary, refused, is dropped alone.
    const param = error && api && api.summary === error.param ? api.summary : error ? rejectedParam(api ? api.asChat(error) : error, body) : undefined;
    const refused = param !== undefined && !dropped.includes(param) ? param : undefined;
    onAttempt?.({ body, result, response, refused });
    if (refused === undefined) {
      const outcome = { result, dropped, adaptations: ad };
      return api && refusal ? api.settle(outcome, refusal) : outcome;
    }
    opts.log?.(`${opts.endpoint.origin} refused ${refused}; retrying without it`);
    dropped.push(refused);
    ad = adapt(ad, refused);
  }
}

/**
 * One request of the loop: streamed (events to onEvent as they come) or not (one JSON completion, whose events come
 * all at once at its end: a profile with streaming off still shows its reply in the panel and VS Code's chat). An
 * onEvent that throws stops the request, and the throw leaves chatWithFallback, as it did when the loop iterated a
 * ChatStream.
 */
async function attempt(opts: ClientOptions, body: Record<string, unknown>, stream: boolean, onEvent?: (e: StreamEvent) => void, api?: ResponsesApi): Promise<{ result: ChatResult; response: ResponseInfo | undefined; delivered: boolean }> {
  const req = new RequestAbort(opts.signal);
  let response: ResponseInfo | undefined;
  let delivered = false;
  let thrown: { e: unknown } | undefined;
  const sent = stream ? body : unstreamed(body);
  const events = (batch: StreamEvent[]) => {
    if (thrown) return;
    for (const e of batch) {
      if (e.type === 'end') continue;
      // Text held back (a call the model may be writing as text) reached no reader: a retry may still start afresh.
      if (e.type !== 'held') delivered = true;
      try {
        onEvent?.(e);
      } catch (err) {
        thrown = { e: err };
        req.abort('cancelled');
        return;
      }
    }
  };
  const result = await chat(opts, sent, { events, response: (r) => (response = r) }, req, api);
  if (thrown) throw thrown.e;
  return { result, response, delivered };
}
