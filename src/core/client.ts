// fetch, redirects, retries, timeouts and cancellation; streamChat(), complete(), chatWithFallback() and listModels().
import { createParser } from 'eventsource-parser';
import type { Endpoint } from './endpoint';
import { errorFromResponse, errorFromWire, ParleyError, wireError, withoutSecrets } from './errors';
import { redact } from './redact';
import { validateHeaders } from './headers';
import { buildRequestBody, type Adaptations, type RequestSettings } from './request';
import { Accumulator } from './stream';
import type { ChatMessage, ChatResult, StreamEvent, Usage } from './types';
import { estimateUsage } from './tokenEstimate';

export interface ClientOptions {
  endpoint: Endpoint;
  /** Sent only as `Authorization: Bearer` to endpoint.origin; never logged, never in errors. */
  apiKey?: string;
  /**
   * Extra request headers. Authorization, Host, Content-Length and Cookie, invalid names, control characters and
   * non-Latin-1 values are refused before any request, as a `config` error (see validateHeaders).
   */
  headers?: Record<string, string>;
  /** Wait for response headers (default 60 s). */
  requestTimeoutMs?: number;
  /** Longest silence between body bytes, SSE comments included (default 300 s; 0 = off). */
  idleTimeoutMs?: number;
  /** Retries of 408/409/429/5xx/connection errors before any body byte is handed out (default 2). */
  maxRetries?: number;
  signal?: AbortSignal;
  /** Request log lines. Never given the key or message content. `info` marks the lines worth keeping by default. */
  log?: (line: string, level?: 'info' | 'debug') => void;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

/** A streamed reply: iterate it for events, or await `result` (which resolves however the stream ends). */
export interface ChatStream extends AsyncIterable<StreamEvent> {
  readonly result: Promise<ChatResult>;
  /** Status, content type and time to first byte of the response that was read, once known. */
  readonly response: Promise<{ status: number; contentType: string | null; ttfbMs: number } | undefined>;
}

const DEFAULT_HEADER_TIMEOUT = 60_000;
const DEFAULT_IDLE_TIMEOUT = 300_000;
const MAX_ERROR_BODY = 64 * 1024;
/**
 * The most read of a body that is not an event stream (one JSON completion, or whatever a wrong base URL serves).
 * A long completion with logprobs stays well under it; a download does not, and is not read whole.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_REDIRECTS = 5;
/** Backoff between retries: from 0.5 s, never more than 8 s. */
const MIN_BACKOFF = 500;
const MAX_BACKOFF = 8000;

/** Why the internal controller was aborted. */
type AbortWhy = 'cancelled' | 'headers' | 'idle' | 'done';

class Aborted extends Error {
  constructor(readonly why: AbortWhy) {
    super(why);
  }
}

function retryable(status: number, err?: ParleyError): boolean {
  if (err?.kind === 'quota') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Delay from retry-after-ms, then retry-after (seconds or HTTP date), when within 0..60 s. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0 && v <= 60_000) return v;
  }
  const ra = headers.get('retry-after');
  if (ra !== null && ra.trim() !== '') {
    const secs = Number(ra);
    if (Number.isFinite(secs)) return secs >= 0 && secs <= 60 ? secs * 1000 : undefined;
    const date = Date.parse(ra);
    if (!Number.isNaN(date)) {
      const v = date - now;
      return v >= 0 && v <= 60_000 ? v : v < 0 ? 0 : undefined;
    }
  }
  return undefined;
}

/**
 * The wait before retry `attempt + 1` (attempt counts from 0): exponential from 0.5 s, at most 8 s, with jitter.
 * Wait n is drawn from [1, 2] × 0.5·2ⁿ s: the first is 0.5–1 s, each range starts where the previous one ended,
 * and from [4, 8] s on it stays there, jitter included, so clients that failed together still spread out.
 * `random` returns a number in [0, 1) (default Math.random).
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const n = Math.max(0, Math.floor(Number.isFinite(attempt) ? attempt : 0));
  const low = Math.min(MAX_BACKOFF / 2, MIN_BACKOFF * 2 ** n);
  const x = random();
  const r = x >= 0 && x <= 1 ? x : 0;
  return Math.min(MAX_BACKOFF, Math.max(MIN_BACKOFF, Math.round(low + r * low)));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Aborted('cancelled'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Aborted('cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** `scheme://host:port` of a URL, for messages (the URL itself when it does not parse). */
function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url;
  }
}

/** What fetch's failure says about the connection: why, and whether the server was reached at all. */
function connectionFailure(e: unknown): { why: string; reached: boolean } {
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

/** The error for a request whose fetch failed before any response: `connection` (retried), or `protocol` when the server was reached. */
function failedFetch(e: unknown, url: string): ParleyError {
  const { why, reached } = connectionFailure(e);
  return reached
    ? new ParleyError('protocol', `${originOf(url)} was reached, but ${why}. Check that parley.baseUrl points at an OpenAI-compatible server, not a proxy or another service.`, { url })
    : new ParleyError('connection', `Cannot reach ${originOf(url)}: ${why}.`, { url });
}

interface Attempt {
  response: Response;
  ttfbMs: number;
}

/**
 * One request with its own redirect handling: same-origin 307/308 are followed with the key; a redirect
 * to another origin is refused, so the key (and the prompt) never go there.
 */
async function send(opts: ClientOptions, method: 'GET' | 'POST', url: string, body: string | undefined, signal: AbortSignal): Promise<Attempt> {
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
    const response = await fetch(current, { method, headers: h, body, signal, redirect: 'manual' });
    if (response.status < 300 || response.status >= 400 || !response.headers.get('location')) {
      return { response, ttfbMs: Date.now() - started };
    }
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
    if (hop >= MAX_REDIRECTS) throw new ParleyError('protocol', `Too many redirects from ${url}.`, { url });
    opts.log?.(`redirect ${response.status} -> ${location}`);
    current = location;
  }
}

/**
 * Reads at most `limit` bytes of a body as text. With `idleMs` > 0, a body that goes silent that long is
 * cut off there (a server that sends error headers and then hangs must not hang the request).
 */
async function readText(response: Response, limit: number, idleMs = 0): Promise<string> {
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

/**
 * An async queue the producer pushes to and the iterator drains; no promise per event. Events are kept from
 * the start, so an iterator that begins late (after awaiting `response`, say) still sees every event.
 */
class EventQueue {
  private items: StreamEvent[] = [];
  private head = 0;
  private ended = false;
  private wake: (() => void) | undefined;

  /** Called when the consumer leaves the loop before the end (break, return, throw). */
  constructor(private readonly onEarlyExit: () => void) {}

  push(events: StreamEvent[]): void {
    if (events.length === 0) return;
    for (const e of events) this.items.push(e);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *iterate(): AsyncGenerator<StreamEvent> {
    let finished = false;
    try {
      for (;;) {
        while (this.head < this.items.length) {
          const e = this.items[this.head];
          this.items[this.head++] = undefined as unknown as StreamEvent;
          yield e;
        }
        this.items = [];
        this.head = 0;
        if (this.ended) {
          finished = true;
          return;
        }
        await new Promise<void>((r) => (this.wake = r));
      }
    } finally {
      // Like openai-node: leaving the loop early aborts the request (the result then ends `cancelled`).
      if (!finished && !this.ended) this.onEarlyExit();
    }
  }
}

/** Runs one chat request (streamed or not) to the end, feeding events to `emit`. Never throws. */
async function run(opts: ClientOptions, body: Record<string, unknown>, emit: (events: StreamEvent[]) => void, onResponse: (r: { status: number; contentType: string | null; ttfbMs: number } | undefined) => void): Promise<ChatResult> {
  const url = opts.endpoint.url;
  const model = typeof body.model === 'string' ? body.model : undefined;
  const secrets = opts.apiKey ? [opts.apiKey] : [];
  const acc = new Accumulator({ url, model, secrets });
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ChatMessage[];
  const controller = new AbortController();
  let why: AbortWhy | undefined;
  const abort = (w: AbortWhy) => {
    if (!why) why = w;
    controller.abort(new Aborted(w));
  };
  // A function, so TypeScript does not narrow a value that callbacks change.
  const reason = (): AbortWhy | undefined => why;
  const onUserAbort = () => abort('cancelled');
  if (opts.signal?.aborted) why = 'cancelled';
  opts.signal?.addEventListener('abort', onUserAbort, { once: true });
  const maxRetries = Math.max(0, opts.maxRetries ?? 2);
  const headerTimeout = opts.requestTimeoutMs ?? DEFAULT_HEADER_TIMEOUT;
  const idleTimeout = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT;
  let reported = false;
  const report = (r: { status: number; contentType: string | null; ttfbMs: number } | undefined) => {
    if (!reported) {
      reported = true;
      onResponse(r);
    }
  };

  const finish = (ended: ChatResult['ended'], error?: ParleyError): ChatResult => {
    // Every error leaves here: whichever message quoted the server's bytes, the request's key is not in it.
    if (error) withoutSecrets(error, secrets);
    const events: StreamEvent[] = [];
    acc.flush(events);
    const usage: Usage = acc.usage ?? estimateUsage(messages, acc.allOutput());
    if (events.length) emit(events);
    emit([{ type: 'end', state: ended, error }]);
    report(undefined);
    return acc.result(ended, usage, error);
  };

  try {
    if (reason() === 'cancelled') return finish('cancelled');
    const payload = JSON.stringify(body);
    let attempt: Attempt | undefined;
    for (let n = 0; ; n++) {
      const headerTimer = headerTimeout > 0 ? setTimeout(() => abort('headers'), headerTimeout) : undefined;
      let failure: ParleyError | undefined;
      let delay: number | undefined;
      try {
        attempt = await send(opts, 'POST', url, payload, controller.signal);
      } catch (e) {
        if (reason() === 'cancelled') return finish('cancelled');
        if (reason() === 'headers') {
          return finish('error', new ParleyError('timeout', `No response from ${new URL(url).host} within ${Math.round(headerTimeout / 1000)} s (request timeout).`, { timeout: 'headers', url }));
        }
        if (e instanceof ParleyError) return finish('error', e);
        failure = failedFetch(e, url);
        // A server that answered with something that is not HTTP answers the same way again: no retry.
        if (failure.kind !== 'connection') return finish('error', failure);
      } finally {
        clearTimeout(headerTimer);
      }
      if (attempt && !attempt.response.ok) {
        const r = attempt.response;
        const text = await readText(r, MAX_ERROR_BODY, idleTimeout > 0 ? idleTimeout : headerTimeout).catch(() => '');
        if (reason() === 'cancelled') return finish('cancelled');
        failure = errorFromResponse(r.status, r.headers.get('content-type'), text, { url, model, secrets });
        if (!retryable(r.status, failure) || n >= maxRetries) {
          report({ status: r.status, contentType: r.headers.get('content-type'), ttfbMs: attempt.ttfbMs });
          return finish('error', failure);
        }
        delay = retryAfterMs(r.headers);
        failure.retryAfterMs = delay;
        attempt = undefined;
      }
      if (!failure && attempt) break;
      if (!failure) return finish('error', new ParleyError('connection', `Cannot reach ${url}.`, { url }));
      if (n >= maxRetries) return finish('error', failure);
      const wait = delay ?? backoffMs(n);
      opts.onRetry?.({ attempt: n + 1, delayMs: wait, reason: failure.message });
      opts.log?.(`retry ${n + 1}/${maxRetries} in ${wait} ms: ${failure.kind}${failure.status ? ` ${failure.status}` : ''}`);
      try {
        await sleep(wait, controller.signal);
      } catch {
        return finish('cancelled');
      }
    }

    const response = attempt.response;
    const contentType = response.headers.get('content-type');
    report({ status: response.status, contentType, ttfbMs: attempt.ttfbMs });
    opts.log?.(`HTTP ${response.status} ${contentType ?? ''} after ${attempt.ttfbMs} ms`, 'info');
    if (!response.body) return finish('error', new ParleyError('protocol', `${new URL(url).host} answered with an empty body.`, { status: response.status, url }));

    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const armIdle = () => {
      if (idleTimeout <= 0) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => abort('idle'), idleTimeout);
    };
    const isSse = /text\/event-stream/i.test(contentType ?? '');
    let error: ParleyError | undefined;
    let whole = '';
    let sseMode = isSse;
    let decided = isSse;
    const events: StreamEvent[] = [];
    // Set at EOF, while a last event that lacks its blank line is flushed out of the parser: EOF may have cut it mid-line.
    let atEof = false;
    // Whether the text fed last ended in CR: a line end the parser still holds (a CRLF may follow).
    let heldCR = false;
    // Bytes read while the body is not (yet) an event stream, and whether that passed MAX_BODY_BYTES.
    let plainBytes = 0;
    let tooLarge = false;
    const parser = createParser({
      onEvent(ev) {
        if (error || acc.sawDone) return;
        const data = ev.data;
        if (data === '[DONE]') {
          acc.sawDone = true;
          return;
        }
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch {
          // A stream cut short, not a malformed one: the broken event is dropped, and the end state (incomplete
          // unless every choice had finished) says what happened. An `event: error` is still an error.
          if (atEof && ev.event !== 'error') return;
          // An `event: error` inside the stream is the server's own error, whatever the HTTP status said.
          if (ev.event === 'error') error = errorFromWire(response.status, { message: redact(data.trim().slice(0, 300), secrets) || 'error event' }, { url, model, secrets });
          else error = new ParleyError('protocol', `${new URL(url).host} sent a stream chunk that is not JSON: ${redact(data.slice(0, 120), secrets)}`, { url });
          return;
        }
        const e = acc.chunk(json, events);
        if (e) error = e;
        else if (ev.event === 'error') error = errorFromWire(response.status, wireError(json) ?? { message: redact(data.slice(0, 300), secrets) }, { url, model, secrets });
      },
    });
    const feed = (t: string) => {
      if (!t) return;
      parser.feed(t);
      heldCR = t.endsWith('\r');
    };
    try {
      armIdle();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        armIdle();
        if (!sseMode && (plainBytes += value.byteLength) > MAX_BODY_BYTES) {
          tooLarge = true;
          break;
        }
        const text = decoder.decode(value, { stream: true });
        if (!decided) {
          whole += text;
          const lead = whole.trimStart();
          if (lead.length === 0) continue;
          // A server that says nothing useful in its content type: sniff.
          sseMode = /^(data|event|id|retry)\s*:|^:/.test(lead);
          decided = lead.length > 8 || sseMode;
          if (!decided) continue;
          if (sseMode) feed(whole);
          continue;
        }
        if (sseMode) {
          // Until the first event, keep the raw text: a body labelled event-stream may be a JSON error or HTML.
          if (acc.chunks === 0 && !acc.sawDone && whole.length < MAX_ERROR_BODY) whole += text;
          feed(text);
          if (events.length) {
            emit(events.splice(0));
          }
          if (error || acc.sawDone) break;
        } else {
          whole += text;
        }
      }
      const tail = decoder.decode();
      if (sseMode) {
        feed(tail);
        // A held CR ends its line as it is (an LF after it changes nothing): an event the body did end is read as usual.
        if (heldCR) parser.feed('\n');
        // A last event without its blank line still counts, when it is whole.
        atEof = true;
        parser.feed('\n\n');
        if (events.length) emit(events.splice(0));
      } else {
        whole += tail;
      }
    } catch (e) {
      if (reason() === 'cancelled') return finish('cancelled');
      if (reason() === 'idle') {
        return finish('error', new ParleyError('timeout', `The stream from ${new URL(url).host} went silent for ${Math.round(idleTimeout / 1000)} s (stream idle timeout); the text so far is kept.`, { timeout: 'idle', url }));
      }
      const { why, reached } = connectionFailure(e);
      return reached
        ? finish('error', new ParleyError('protocol', `The response from ${new URL(url).host} broke mid-reply: ${why}; the text so far is kept.`, { url }))
        : finish('error', new ParleyError('connection', `The connection to ${new URL(url).host} broke mid-reply: ${why}; the text so far is kept.`, { url }));
    } finally {
      clearTimeout(idleTimer);
      if (acc.sawDone || error || tooLarge) await reader.cancel().catch(() => undefined);
      reader.releaseLock?.();
    }
    if (reason() === 'cancelled') return finish('cancelled');
    if (error) return finish('error', error);
    if (tooLarge) {
      return finish('error', new ParleyError(
        'protocol',
        `${new URL(url).host} sent a response larger than ${MAX_BODY_BYTES / 1024 / 1024} MB that is not an event stream (${contentType ?? 'no content type'}); Parley stopped reading it. Check that parley.baseUrl is the server's API address, not a download.`,
        { status: response.status, url },
      ));
    }
    if (sseMode && acc.chunks === 0 && !acc.sawDone && whole.trim() !== '' && !/^(data|event|id|retry)\s*:|^:/m.test(whole.trimStart())) {
      // Labelled text/event-stream, but not one SSE line: read it as what it is (a JSON body, an HTML page).
      sseMode = false;
    }
    if (!sseMode) {
      // One JSON completion (stream: false, or a server that ignored stream: true), or an error body.
      let json: unknown;
      try {
        json = JSON.parse(whole);
      } catch {
        return finish('error', errorFromResponse(response.status, contentType, whole, { url, model, secrets }));
      }
      const e = acc.chunk(json, events);
      if (e) return finish('error', e);
      if (!Array.isArray((json as { choices?: unknown }).choices)) {
        return finish('error', errorFromResponse(response.status, contentType, whole, { url, model, secrets }));
      }
      acc.sawDone = true;
      if (events.length) emit(events.splice(0));
      return finish('done');
    }
    return finish(acc.endState());
  } catch (e) {
    if (reason() === 'cancelled') return finish('cancelled');
    return finish('error', e instanceof ParleyError ? e : new ParleyError('protocol', `Unexpected failure: ${e instanceof Error ? e.message : String(e)}`, { url }));
  } finally {
    opts.signal?.removeEventListener('abort', onUserAbort);
    // Releases the socket whatever happened.
    abort('done');
  }
}

/**
 * Streams a chat completion. Never throws: failures arrive as the `end` event and in `result`. Iterating is
 * optional and may start late; leaving the loop before the `end` event cancels the request.
 */
export function streamChat(opts: ClientOptions, body: Record<string, unknown>): ChatStream {
  const stop = new AbortController();
  const queue = new EventQueue(() => stop.abort());
  let resolveResponse!: (r: { status: number; contentType: string | null; ttfbMs: number } | undefined) => void;
  const response = new Promise<{ status: number; contentType: string | null; ttfbMs: number } | undefined>((r) => (resolveResponse = r));
  const signal = opts.signal ? anySignal([opts.signal, stop.signal]) : stop.signal;
  const result = Promise.resolve().then(() =>
    run({ ...opts, signal }, body, (events) => queue.push(events), resolveResponse).finally(() => queue.end()),
  );
  return {
    result,
    response,
    [Symbol.asyncIterator]() {
      return queue.iterate();
    },
  };
}

/** A signal that aborts when any of `signals` does (AbortSignal.any is Node 20.3+ and recent browsers only). */
function anySignal(signals: AbortSignal[]): AbortSignal {
  const any = (AbortSignal as unknown as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (any) return any(signals);
  const c = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      c.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}

/** A non-streaming completion; the same result type. Never throws. */
export function complete(opts: ClientOptions, body: Record<string, unknown>): Promise<ChatResult> {
  const b: Record<string, unknown> = { ...body, stream: false };
  delete b.stream_options;
  return run(opts, b, () => undefined, () => undefined);
}

export interface FallbackOutcome {
  result: ChatResult;
  /** Parameters dropped (or, for max_tokens, renamed) this time. */
  dropped: string[];
  /** The adaptations to remember for this origin and model. */
  adaptations: Adaptations;
}

/** Parameters a server may refuse, and that Parley can do without. */
export const ADAPTABLE_PARAMS = [
  'stream_options', 'response_format', 'max_tokens', 'temperature', 'top_p',
  'presence_penalty', 'frequency_penalty', 'tools', 'parallel_tool_calls',
] as const;

/** The parameter a 400/422 names, if Parley sent it: by `param`, or by name in the message. */
export function rejectedParam(error: ParleyError, body: Record<string, unknown>): string | undefined {
  if (error.kind !== 'bad_request' || (error.status !== 400 && error.status !== 422)) return undefined;
  const sent = ADAPTABLE_PARAMS.filter((p) => body[p] !== undefined);
  const param = error.param?.replace(/^body\./, '');
  if (param) {
    const hit = sent.find((p) => param === p || param.startsWith(`${p}.`) || param.startsWith(`${p}[`));
    if (hit) return hit;
  }
  const text = `${error.providerMessage ?? ''} ${error.message}`;
  return sent.find((p) => new RegExp(`(^|[^a-z_])${p}([^a-z_]|$)`).test(text));
}

/** The adaptations after a server refused `param`: max_tokens becomes max_completion_tokens, anything else is dropped. */
export function adapt(a: Adaptations, param: string): Adaptations {
  if (param === 'max_tokens') return { ...a, maxCompletionTokens: true };
  return { ...a, drop: [...new Set([...(a.drop ?? []), param])] };
}

/**
 * Sends a chat request, learning from a refusal: a 400/422 naming a parameter Parley sent is retried once
 * without it (max_tokens becomes max_completion_tokens). Never throws: a bad setting comes back as a
 * `config` error result before anything is sent.
 */
export async function chatWithFallback(
  opts: ClientOptions,
  settings: RequestSettings,
  messages: ChatMessage[],
  adaptations: Adaptations | undefined,
  onEvent?: (e: StreamEvent) => void,
): Promise<FallbackOutcome> {
  let ad: Adaptations = { ...(adaptations ?? {}) };
  const dropped: string[] = [];
  for (let round = 0; ; round++) {
    let body: Record<string, unknown>;
    try {
      body = buildRequestBody(settings, messages, ad);
    } catch (e) {
      const error = e instanceof ParleyError ? e : new ParleyError('config', String(e));
      const usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated: true };
      return {
        result: { text: '', reasoning: '', refusal: '', toolCalls: [], finishReason: null, choices: [], usage, ended: 'error', error, sawDone: false },
        dropped,
        adaptations: ad,
      };
    }
    let result: ChatResult;
    let delivered = false;
    if (settings.stream) {
      const s = streamChat(opts, body);
      for await (const e of s) {
        if (e.type === 'end') continue;
        delivered = true;
        onEvent?.(e);
      }
      result = await s.result;
    } else {
      result = await complete(opts, body);
    }
    // One retry per refused parameter, never twice for the same one, and never once the caller has seen output
    // (an error chunk inside a stream that already streamed text is not a refusal of the request).
    const param = !delivered && result.ended === 'error' && result.error ? rejectedParam(result.error, body) : undefined;
    if (!param || dropped.includes(param) || round >= ADAPTABLE_PARAMS.length) return { result, dropped, adaptations: ad };
    opts.log?.(`${opts.endpoint.origin} refused ${param}; retrying without it`);
    dropped.push(param);
    ad = adapt(ad, param);
  }
}

/**
 * The model ids a server lists at GET …/models (OpenAI `data[].id`, or Ollama's `models[].name`). Rejects
 * with a ParleyError only: `cancelled` when opts.signal aborts, `timeout` after requestTimeoutMs (default 15 s),
 * `config` for refused custom headers.
 */
export async function listModels(opts: ClientOptions): Promise<string[]> {
  const url = opts.endpoint.modelsUrl;
  if (opts.signal?.aborted) throw new ParleyError('cancelled', `GET ${url} was cancelled.`, { url });
  const controller = new AbortController();
  let why: 'cancelled' | 'timeout' | undefined;
  const onAbort = () => {
    why ??= 'cancelled';
    controller.abort();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const timeoutMs = opts.requestTimeoutMs ?? 15_000;
  const timer = setTimeout(() => {
    why ??= 'timeout';
    controller.abort();
  }, timeoutMs);
  const secrets = opts.apiKey ? [opts.apiKey] : [];
  const aborted = (): ParleyError | undefined =>
    why === 'cancelled' ? new ParleyError('cancelled', `GET ${url} was cancelled.`, { url })
    : why === 'timeout' ? new ParleyError('timeout', `GET ${url} got no complete answer within ${Math.round(timeoutMs / 1000)} s.`, { url, timeout: 'headers' })
    : undefined;
  try {
    let attempt: Attempt;
    let text: string;
    try {
      attempt = await send(opts, 'GET', url, undefined, controller.signal);
      text = await readText(attempt.response, 4 * 1024 * 1024);
    } catch (e) {
      if (e instanceof ParleyError) throw e;
      throw aborted() ?? failedFetch(e, url);
    }
    const status = attempt.response.status;
    const contentType = attempt.response.headers.get('content-type');
    if (!attempt.response.ok) throw errorFromResponse(status, contentType, text, { url, secrets });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw errorFromResponse(status, contentType, text, { url, secrets });
    }
    const o = json as { data?: unknown; models?: unknown; error?: unknown };
    if (o && o.error !== undefined && o.error !== null && o.data === undefined) throw errorFromResponse(200, 'application/json', text, { url, secrets });
    const list = Array.isArray(o?.data) ? o.data : Array.isArray(o?.models) ? o.models : Array.isArray(json) ? (json as unknown[]) : undefined;
    if (!list) throw new ParleyError('protocol', `GET ${url} did not return a model list.`, { url });
    const ids: string[] = [];
    for (const m of list) {
      const id = typeof m === 'string' ? m : (m as { id?: unknown; name?: unknown })?.id ?? (m as { name?: unknown })?.name;
      if (typeof id === 'string' && id) ids.push(id);
    }
    return ids;
  } catch (e) {
    throw e instanceof ParleyError ? withoutSecrets(e, secrets) : e;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
