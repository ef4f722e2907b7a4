// The wire: one request's abort controller, send() with its redirect rule, bodies read as bytes or as text, and fetch failures in words.
import type { Endpoint } from './endpoint';
import { ParleyError } from './errors';
import { validateHeaders } from './headers';
import type { Adaptations } from './request';
import type { Accumulator } from './stream';
import type { TextCallFilter } from './textToolCalls';
import type { ChatResult, ModelInfo } from './types';

/** How to reach an endpoint, and the limits of one request. */
export interface ClientOptions {
  endpoint: Endpoint;
  /** Sent only as `Authorization: Bearer` to endpoint.origin; never logged, never in errors. */
  apiKey?: string;
  /**
   * Extra request headers. Credentials (Authorization, cookies…), what fetch derives or manages itself (Host,
   * Content-Length, Connection, Transfer-Encoding…), names differing only in case, invalid names, control characters
   * and non-Latin-1 values are refused before any request, as a `config` error (see validateHeaders).
   */
  headers?: Record<string, string>;
  /** Wait for response headers (default 60 s). */
  requestTimeoutMs?: number;
  /** Longest silence between body bytes, SSE comments included (default 300 s; 0 = off). */
  idleTimeoutMs?: number;
  /** Retries of 408/409/429/5xx/connection errors before any body byte is handed out (default 2). */
  maxRetries?: number;
  /** The caller's stop signal (one per user action); aborting it closes the socket. */
  signal?: AbortSignal;
  /** Request log lines. Never given the key or message content. `info` marks the lines worth keeping by default. */
  log?: (line: string, level?: 'info' | 'debug') => void;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  /**
   * Reads the tool calls a model writes as text (core/textToolCalls.ts), in a request that offered tools with these
   * names; without it such text stays text. Handed in, so that the reader loads only when tools are offered.
   */
  textToolCalls?: (names: ReadonlySet<string>) => TextCallFilter;
  /** Told each model list GET /models answered (listModelInfo), so that the prices it gives are learnt. */
  onModelList?: (list: ModelInfo[]) => void;
  /**
   * The Responses API (core/responses.ts): handed in, so that it loads only when a model turns out to need it (or a
   * profile says so). Without it every request goes to chat completions.
   */
  responses?: () => ResponsesApi;
}

/** What reads a reply into events and a result: stream.ts's Accumulator, or the Responses API's reader around one. */
export type ReplyReader = Pick<Accumulator, 'event' | 'chunk' | 'flush' | 'endState' | 'result' | 'allOutput' | 'usage' | 'chunks' | 'sawDone'>;

/** The Responses API, as the client uses it (core/responses.ts): what a refusal means, where a request goes, its body and its reader. */
export interface ResponsesApi {
  /** Whether a chat-completions refusal says that the model is served on the Responses API only (said in the log when it does). */
  refusesChat(error: ParleyError, log?: ClientOptions['log']): boolean;
  /** The options with the endpoint's URL `{base}/responses`, beside the chat completions URL. */
  at(opts: ClientOptions): ClientOptions;
  /** A chat-completions request body as a Responses request body (`ad`: what was learnt, such as a refused summary). */
  body(chat: Record<string, unknown>, ad?: Adaptations): Record<string, unknown>;
  /** The Responses field of the reasoning summaries: a refusal of it drops it alone (`reasoning.summary`). */
  readonly summary: string;
  /** A refusal of the Responses API with its `param` in chat-completions words (`text.format` is `response_format`), so it is learnt the same way. */
  asChat(error: ParleyError): ParleyError;
  /** The reader of a reply. */
  reader(ctx: ConstructorParameters<typeof Accumulator>[0]): ReplyReader;
  /** How a request that went to the Responses API after `refusal` ends: whether the switch is remembered, which result counts. */
  settle<T extends { result: ChatResult; adaptations: Adaptations }>(outcome: T, refusal: ChatResult): T & { switched?: true };
}

/**
 * The request's own secrets, for redacting what it quotes of the server: its key, when it has one, and every custom
 * header value of 8 characters or more. A header may carry a token (a gateway's key) written in plain text in the
 * settings, and nothing tells a token from any other value; short values (`1`, `true`, a version) are left alone,
 * since redacting them would blank out ordinary words in the server's message.
 */
export function secretsOf(opts: Pick<ClientOptions, 'apiKey' | 'headers'>): string[] {
  const fromHeaders = Object.values(opts.headers ?? {}).filter((v) => v.length >= 8);
  return opts.apiKey ? [opts.apiKey, ...fromHeaders] : fromHeaders;
}

/** Wait for response headers, by default. */
export const DEFAULT_HEADER_TIMEOUT = 60_000;
/** Longest silence between body bytes, by default. */
export const DEFAULT_IDLE_TIMEOUT = 300_000;
/** The most read of an error body. */
export const MAX_ERROR_BODY = 64 * 1024;
const MAX_REDIRECTS = 5;

/** Why a request's controller was aborted: the caller, a timeout (headers, idle, or listModels' whole-request one), or its own end. */
type AbortWhy = 'cancelled' | 'headers' | 'idle' | 'timeout' | 'done';

/**
 * The one AbortController of a request. The caller's signal, the timeouts, an early exit from the caller's loop
 * and the request's own end all abort it, and `why` keeps the first reason. Its signal is what fetch gets, so
 * whichever of them comes first closes the socket. `dispose()` unhooks it from the caller's signal.
 */
export class RequestAbort {
  private readonly controller = new AbortController();
  private reason: AbortWhy | undefined;
  readonly signal = this.controller.signal;
  private readonly onCaller = () => this.abort('cancelled');

  constructor(private readonly caller?: AbortSignal) {
    // A caller that stopped already gets no abort event: abort now, so that fetch never starts a request.
    if (caller?.aborted) this.abort('cancelled');
    else caller?.addEventListener('abort', this.onCaller, { once: true });
  }

  /** The first reason the request was aborted for, if it was. */
  get why(): AbortWhy | undefined {
    return this.reason;
  }

  abort(why: AbortWhy): void {
    this.reason ??= why;
    this.controller.abort();
  }

  /** Aborts with `why` after `ms`; returns the function that cancels that. */
  after(ms: number, why: AbortWhy): () => void {
    const t = setTimeout(() => this.abort(why), ms);
    return () => clearTimeout(t);
  }

  /** Ends the request (releasing the socket, whatever happened) and unhooks the caller's signal. */
  dispose(): void {
    this.caller?.removeEventListener('abort', this.onCaller);
    this.abort('done');
  }
}

/** What a response was, for Test Connection and the log. */
export interface ResponseInfo {
  status: number;
  contentType: string | null;
  ttfbMs: number;
}

/** A response, and how long its headers took. */
export interface Attempt {
  response: Response;
  ttfbMs: number;
}

/** `scheme://host:port` of a URL, for messages (the URL itself when it does not parse). */
export function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url;
  }
}

/** What fetch's failure says about the connection: why, and whether the server was reached at all. */
export function connectionFailure(e: unknown): { why: string; reached: boolean } {
  const cause = (e as { cause?: { code?: string; message?: string; name?: string } })?.cause;
  const code = cause?.code ?? '';
  const message = cause?.message ?? (e instanceof Error ? e.message : String(e));
  // The server answered, but not in HTTP/1.1: llhttp's parse errors (HPE_…), or undici's "bad response" for an
  // informational (1xx) answer it cannot use. Retrying the same request gets the same answer.
  if (cause?.name === 'HTTPParserError' || /^HPE_/.test(code)) return { why: `its response is not valid HTTP (${message})`, reached: true };
  if (code === 'UND_ERR_SOCKET' && /bad response/i.test(message)) return { why: 'it sent an informational (1xx) response, such as 100 Continue, that was not asked for', reached: true };
  const why =
    code === 'ECONNREFUSED' ? 'connection refused (is the server running?)'
    : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'host name not found'
    : code === 'ECONNRESET' ? 'connection reset'
    : /certificate|CERT|SSL|TLS/i.test(`${code} ${message}`) ? `TLS problem: ${message}`
    : message;
  return { why, reached: false };
}

/** Whether fetch failed because the server closed the connection before any answer (a stale kept-alive one). */
function closedBeforeAnswer(e: unknown): boolean {
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  return (cause?.code === 'UND_ERR_SOCKET' && /other side closed/i.test(cause.message ?? '')) || cause?.code === 'ECONNRESET';
}

/** Tries of a GET whose kept-alive connection turned out closed: each takes another idle connection, or a new one. */
const STALE_CONNECTION_TRIES = 3;

/**
 * fetch, with a GET sent again when the server closed the kept-alive connection it went on before any answer
 * (llama.cpp's router mode does now and then, with no `Connection: close`): a GET changes nothing on the server. A
 * POST is left to the chat's own retries.
 */
async function fetchOnLiveConnection(url: string, init: RequestInit & { signal: AbortSignal }): Promise<Response> {
  for (let tries = 1; ; tries++) {
    try {
      return await fetch(url, init);
    } catch (e) {
      if (init.method !== 'GET' || init.signal.aborted || tries >= STALE_CONNECTION_TRIES || !closedBeforeAnswer(e)) throw e;
    }
  }
}

/** The error for a request whose fetch failed before any response: `connection` (retried), or `protocol` when the server was reached. */
export function failedFetch(e: unknown, url: string): ParleyError {
  const { why, reached } = connectionFailure(e);
  return reached
    ? new ParleyError('protocol', `${originOf(url)} was reached, but ${why}. Check that parley.baseUrl points at an OpenAI-compatible server, not a proxy or another service.`, { url })
    : new ParleyError('connection', `Cannot reach ${originOf(url)}: ${why}.`, { url });
}

/**
 * One request with its own redirect handling: same-origin 307/308 are followed with the key; a redirect
 * to another origin is refused, so the key (and the prompt) never go there.
 */
export async function send(opts: ClientOptions, method: 'GET' | 'POST', url: string, body: string | undefined, signal: AbortSignal): Promise<Attempt> {
  // Every request passes here: refused custom headers never reach the wire.
  validateHeaders(opts.headers);
  const started = Date.now();
  const headers: Record<string, string> = { accept: method === 'POST' ? 'text/event-stream, application/json' : 'application/json', ...opts.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let current = url;
  for (let hop = 0; ; hop++) {
    const sameOrigin = new URL(current).origin === opts.endpoint.origin;
    const h = { ...headers };
    if (opts.apiKey && sameOrigin) h.authorization = `Bearer ${opts.apiKey}`;
    const response = await fetchOnLiveConnection(current, { method, headers: h, body, signal, redirect: 'manual' });
    if (response.status < 300 || response.status >= 400 || !response.headers.get('location')) {
      return { response, ttfbMs: Date.now() - started };
    }
    const location = await redirectTarget(opts, method, url, current, response);
    if (hop >= MAX_REDIRECTS) throw new ParleyError('protocol', `Too many redirects from ${url}.`, { url });
    opts.log?.(`redirect ${response.status} -> ${location}`);
    current = location;
  }
}

/** Where a redirect goes, when Parley may follow it; throws a `protocol` error when it may not. */
async function redirectTarget(opts: ClientOptions, method: string, url: string, current: string, response: Response): Promise<string> {
  const raw = response.headers.get('location') as string;
  let location: string;
  try {
    location = new URL(raw, current).href;
  } catch {
    await response.body?.cancel().catch(() => undefined);
    throw new ParleyError('protocol', `${originOf(url)} was reached, but it answered ${response.status} with a redirect to an address that is not a URL (${JSON.stringify(raw.slice(0, 100))}). Check parley.baseUrl.`, { status: response.status, url });
  }
  await response.body?.cancel().catch(() => undefined);
  const target = new URL(location);
  if (target.origin !== opts.endpoint.origin) {
    throw new ParleyError(
      'protocol',
      `The server redirected to another origin (${target.origin}). Parley does not follow it, so your key and prompt stay with ${opts.endpoint.origin}. If the server moved, update parley.baseUrl.`,
      { status: response.status, url },
    );
  }
  if (response.status !== 307 && response.status !== 308 && method === 'POST') {
    throw new ParleyError('protocol', `The server answered ${response.status} (redirect to ${location}), which would turn the request into a GET. Update parley.baseUrl to ${location.replace(/\/chat\/completions.*$/, '')}.`, { status: response.status, url });
  }
  return location;
}

/**
 * A body's bytes, one network read at a time; `beforeRead` runs before each read (it re-arms the idle timeout).
 * Leaving the loop early cancels the body; a read that fails, or the end of the body, leaves nothing to cancel.
 */
export async function* readChunks(body: ReadableStream<Uint8Array>, beforeRead: () => void): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let over = false;
  try {
    for (;;) {
      beforeRead();
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch (e) {
        over = true;
        throw e;
      }
      if (r.done) {
        over = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!over) await reader.cancel().catch(() => undefined);
    reader.releaseLock?.();
  }
}

/**
 * Reads at most `limit` bytes of a body as text. With `idleMs` > 0, a body that goes silent that long is
 * cut off there (a server that sends error headers and then hangs must not hang the request).
 */
export async function readText(response: Response, limit: number, idleMs = 0): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let silent = false;
  const arm = () => {
    if (idleMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      silent = true;
      reader.cancel().catch(() => undefined);
    }, idleMs);
  };
  try {
    arm();
    for (;;) {
      const { done, value } = await reader.read();
      if (done || silent) break;
      arm();
      bytes += value.byteLength;
      text += decoder.decode(value, { stream: true });
      if (bytes >= limit) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } catch (e) {
    if (!silent) throw e;
  } finally {
    clearTimeout(timer);
    reader.releaseLock?.();
  }
  return text + decoder.decode();
}
