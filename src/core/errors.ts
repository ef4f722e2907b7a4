// Typed errors, built from an HTTP status and body. They never carry the API key or the Authorization header.
import { redact } from './redact';

export type ErrorKind =
  | 'config'
  | 'auth'
  | 'not_found'
  | 'rate_limit'
  | 'quota'
  | 'context_length'
  /** The model takes no images, and the request carried one. */
  | 'no_image_input'
  | 'bad_request'
  | 'server'
  | 'connection'
  | 'timeout'
  | 'protocol'
  /** Not sent: a blocking spend limit (`parley.budget`) would be crossed. */
  | 'budget'
  | 'cancelled';

export interface ErrorDetails {
  status?: number;
  code?: string;
  param?: string;
  providerMessage?: string;
  retryAfterMs?: number;
  timeout?: 'headers' | 'idle';
  url?: string;
  /** Set when the error came inside a successful (2xx) response: that response's HTTP status. */
  inResponse?: number;
}

/** Every failure the core reports. `message` is words for a person; `providerMessage` the server's own (redacted). */
export class ParleyError extends Error {
  readonly kind: ErrorKind;
  status?: number;
  code?: string;
  param?: string;
  providerMessage?: string;
  retryAfterMs?: number;
  timeout?: 'headers' | 'idle';
  url?: string;
  inResponse?: number;

  constructor(kind: ErrorKind, message: string, details: ErrorDetails = {}) {
    // A safety net: whatever built the message, key-shaped tokens and keys in query strings do not survive.
    super(redact(message, []));
    this.name = 'ParleyError';
    this.kind = kind;
    Object.assign(this, details);
    if (this.url !== undefined) this.url = redact(this.url, []);
    if (this.providerMessage !== undefined) this.providerMessage = redact(this.providerMessage, []);
  }

  override toString(): string {
    return `ParleyError [${this.kind}${this.status ? ` ${this.status}` : ''}]: ${this.message}`;
  }
}

/**
 * How a message names an error's status: `HTTP 401`, or, for an error inside a successful response, where it came
 * from (`status 401, inside an HTTP 200 response`), so that the words never name a status the error does not have.
 */
export function statusWords(status: number | undefined, inResponse?: number): string {
  if (inResponse === undefined) return status === undefined ? 'no HTTP status' : `HTTP ${status}`;
  return status !== undefined && status !== inResponse ? `status ${status}, inside an HTTP ${inResponse} response` : `inside an HTTP ${inResponse} response`;
}

/**
 * Takes every exact secret out of the text an error carries (message, providerMessage, url), in place. The
 * constructor's net catches key-shaped tokens only; a key of any other shape is caught here, where the request's
 * keys are known. Returns the same error.
 */
export function withoutSecrets(e: ParleyError, secrets: readonly string[]): ParleyError {
  if (secrets.length === 0) return e;
  e.message = redact(e.message, secrets);
  if (e.providerMessage !== undefined) e.providerMessage = redact(e.providerMessage, secrets);
  if (e.url !== undefined) e.url = redact(e.url, secrets);
  return e;
}

/** The server's error, as found in a body: `{error: {...}}`, `{error: "text"}`, or a bare `{message, ...}`. */
export interface WireError {
  message: string;
  type?: string;
  code?: string;
  param?: string;
  /** Numeric status some servers put in `code` or `status`. */
  status?: number;
}

/**
 * Pydantic/FastAPI validation details (Mistral, vLLM): `[{loc: ['body', 'stream_options'], msg, type, input}]`.
 * Gives the messages without `input` (which echoes what was sent) and the first location as `param`.
 */
function validationDetail(v: unknown): { message: string; param?: string } | undefined {
  if (typeof v === 'string') {
    // Mistral's older 422 puts the whole document in a string.
    if (!/^\s*[[{]/.test(v)) return undefined;
    try {
      v = JSON.parse(v);
    } catch {
      return undefined;
    }
  }
  if (isRecord(v) && Array.isArray(v.detail)) v = v.detail;
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const parts: string[] = [];
  let param: string | undefined;
  for (const d of v) {
    if (!isRecord(d)) continue;
    const loc = Array.isArray(d.loc) ? d.loc.filter((x) => typeof x === 'string' || typeof x === 'number').map(String) : [];
    const path = (loc[0] === 'body' ? loc.slice(1) : loc).join('.');
    param ??= path || undefined;
    const msg = typeof d.msg === 'string' ? d.msg : typeof d.message === 'string' ? d.message : '';
    parts.push(path ? `${path}: ${msg || (typeof d.type === 'string' ? d.type : 'invalid')}` : msg);
  }
  return parts.length ? { message: parts.join('; '), param } : undefined;
}

/** A JSON object: not null, not an array. What a parsed body's parts are checked with before their fields are read. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads the error out of a parsed body, whatever shape the server chose. */
export function wireError(body: unknown): WireError | undefined {
  if (!isRecord(body)) return undefined;
  const b = body;
  let e: unknown = b.error;
  // A bare `{message, type|code|status}`: vLLM's `{object: "error", …}`, Portkey's `{status: "failure", message}`.
  if (e === undefined && (b.object === 'error' || b.object === 'Error' || (typeof b.message !== 'undefined' && b.choices === undefined && (b.type !== undefined || b.code !== undefined || b.status !== undefined)))) e = b;
  if (e === undefined && typeof b.detail === 'string') e = { message: b.detail };
  if (e === undefined && Array.isArray(b.detail)) e = { detail: b.detail };
  if (typeof e === 'string') {
    const v = validationDetail(e);
    if (v) return { message: v.message, param: v.param };
    // `{error: "TypeError", message: "Cannot read properties of null…", status: 500}`: the name alone says little.
    const more = typeof b.message === 'string' && b.message.trim() && b.message !== e ? b.message : undefined;
    const status = typeof b.status === 'number' ? b.status : typeof b.status_code === 'number' ? b.status_code : undefined;
    return status === undefined ? { message: more ? `${e}: ${more}` : e } : { message: more ? `${e}: ${more}` : e, status };
  }
  if (!isRecord(e)) return undefined;
  const o = e;
  const detail = validationDetail(o.message) ?? validationDetail(o.detail);
  const message = detail
    ? detail.message
    : typeof o.message === 'string' ? o.message
    : o.message !== undefined && o.message !== null ? JSON.stringify(o.message)
    : typeof o.msg === 'string' ? o.msg
    : JSON.stringify(o);
  const code = typeof o.code === 'string' ? o.code : undefined;
  const status = typeof o.code === 'number' ? o.code : typeof o.status === 'number' ? o.status : typeof o.status_code === 'number' ? o.status_code : undefined;
  return {
    message,
    type: typeof o.type === 'string' ? o.type : undefined,
    code,
    param: typeof o.param === 'string' && o.param ? o.param : detail?.param,
    status,
  };
}

/**
 * A request too long for the window, in each server's words (each test/fixtures/providers file of that name says where
 * its wording comes from): OpenAI, Azure, vLLM and Mistral ("maximum context length"), llama.cpp ("exceeds the
 * available context size", "larger than the max context size"), LM Studio ("greater than the context length", "context
 * length of only"), Ollama ("longer than the context length"), TGI ("`inputs` tokens + `max_new_tokens` must be <=",
 * "`inputs` must have less than"), and an old vLLM's negative max_tokens (the prompt alone overran the window).
 */
const CONTEXT_LENGTH = /context[_ ]length|maximum context|context window|context size|too many tokens|prompt is too long|reduce the length of the (?:messages|prompt)|exceeds the (?:model's )?(?:maximum|max)|`?inputs`? tokens \+ `?max_new_tokens`? must be <=|`?inputs`? must have less than \d+ tokens|max_tokens must be at least 1, got -\d/i;
const CONTEXT_CODE = /context_length|exceed_context_size/i;

/**
 * An image sent to a model that takes none: llama.cpp without a projector ("image input is not supported - hint: …
 * mmproj", a 500), vLLM ("… is not a multimodal model", "At most 0 image(s) may be provided"), OpenAI ("image_url is
 * only supported by certain models"), OpenRouter ("No endpoints found that support image input"), and the plain
 * "does not support images/vision" of other servers.
 */
const NO_IMAGE_INPUT = /image input is not supported|(?:does not|doesn't) support (?:image|vision|multimodal)|not a multimodal model|at most 0 image|image_url is only supported by certain models|no endpoints found that support image input/i;

/** Strips tags and collapses space, for showing a short excerpt of an HTML error page. */
export function htmlExcerpt(text: string, max = 200): string {
  const plain = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > max ? plain.slice(0, max - 1) + '…' : plain;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * A typed error from a server's error object, whatever HTTP status carried it (200 included). An error inside a
 * 2xx response (a stream chunk, an `event: error`, a 200 body) is said to be one: its `status` is the one the
 * body gives (401 for a rejected key), else the HTTP status, and its message never names another.
 */
export function errorFromWire(status: number, w: WireError, ctx: { url: string; model?: string; secrets?: readonly string[] }): ParleyError {
  const provider = redact(w.message, ctx.secrets ?? []);
  // A status inside the body counts only when it is one (Mistral puts 3001 in `code`).
  const inner = w.status !== undefined && w.status >= 100 && w.status <= 599 ? w.status : undefined;
  const inBand = status < 400;
  const effective = inBand ? inner ?? status : status;
  const details: ErrorDetails = { status: effective, code: w.code, param: w.param, providerMessage: provider, url: ctx.url };
  if (inBand) details.inResponse = status;
  const where = (st: number) => statusWords(st, details.inResponse);
  const host = hostOf(ctx.url);
  const code = `${w.code ?? ''} ${w.type ?? ''}`;
  if (/insufficient_quota|billing|quota/i.test(code) || (effective === 429 && /quota|credit|billing/i.test(provider))) {
    return new ParleyError('quota', `Out of quota at ${host}: ${provider}`, details);
  }
  if (CONTEXT_CODE.test(code) || CONTEXT_LENGTH.test(provider)) {
    return new ParleyError('context_length', `The request is too long for the model's context: ${provider}`, details);
  }
  if (NO_IMAGE_INPUT.test(provider)) {
    return new ParleyError('no_image_input', `${ctx.model ? `The model "${ctx.model}"` : 'The model'} takes no images (${where(effective)}): ${provider}`, details);
  }
  if (effective === 401 || effective === 403 || /invalid_api_key|authentication|unauthori[sz]ed/i.test(code)) {
    const st = effective === 401 || effective === 403 ? effective : 401;
    return new ParleyError('auth', `${host} rejected the API key (${where(st)}): ${provider}`, { ...details, status: st });
  }
  if (effective === 404 || /model_not_found|not_found/i.test(code) || /unexpected endpoint|unknown (?:url|endpoint|route)/i.test(provider)) {
    const what = ctx.model && (/model/i.test(provider) || /model/i.test(code)) ? `The model "${ctx.model}" was not found` : `Not found: ${ctx.url}`;
    return new ParleyError('not_found', `${what} (${where(effective)}): ${provider}`, details);
  }
  if (effective === 429 || /rate_limit/i.test(code)) {
    return new ParleyError('rate_limit', `Rate limited by ${host}: ${provider}`, details);
  }
  if (effective === 400 || effective === 422 || effective === 413) {
    return new ParleyError('bad_request', `${host} refused the request (${where(effective)}${w.param ? `, parameter ${w.param}` : ''}): ${provider}`, details);
  }
  if (effective >= 500 || effective === 408 || effective === 409 || /server_error/i.test(code)) {
    return new ParleyError('server', `${host} failed (${where(effective)}): ${provider}`, details);
  }
  if (inBand) {
    // An error the server put inside a response that had begun as a success: its own failure, said as such.
    return new ParleyError('server', `${host} reported an error (${where(effective)}): ${provider}`, details);
  }
  return new ParleyError('bad_request', `${host} answered with an error (${where(effective)}): ${provider}`, details);
}

/** A typed error from a non-OK (or error-carrying) HTTP response. */
export function errorFromResponse(
  status: number,
  contentType: string | null,
  bodyText: string,
  ctx: { url: string; model?: string; secrets?: readonly string[] },
): ParleyError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const w = wireError(parsed);
  if (w) return errorFromWire(status, w, ctx);
  const looksHtml = /html/i.test(contentType ?? '') || /^\s*<(!doctype|html|head|body)/i.test(bodyText);
  const text = redact(looksHtml ? htmlExcerpt(bodyText) : bodyText.trim().slice(0, 300), ctx.secrets ?? []);
  const host = hostOf(ctx.url);
  if (status >= 400) {
    const e = errorFromWire(status, { message: text || `HTTP ${status}` }, ctx);
    if (looksHtml) e.message = `${host} answered HTTP ${status} with an HTML page (a proxy or a wrong URL?): ${text}`;
    return e;
  }
  return new ParleyError(
    'protocol',
    looksHtml
      ? `${host} answered with an HTML page instead of a chat completion (a proxy or a wrong URL?): ${text}`
      : `${host} answered with something that is not a chat completion: ${text || '(empty body)'}`,
    { status, providerMessage: text, url: ctx.url },
  );
}
