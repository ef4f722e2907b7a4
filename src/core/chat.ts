// chat(): one chat request, composed of its stages: fetchWithRetry, the body read as SSE events or as one JSON completion, the finish.
import { errorFromResponse, ParleyError, withoutSecrets } from './errors';
import { fetchWithRetry } from './retry';
import { SSE_LINE, SSE_START, SseDecoder } from './sse';
import { Accumulator } from './stream';
import { estimateUsage } from './tokenEstimate';
import { connectionFailure, DEFAULT_IDLE_TIMEOUT, MAX_ERROR_BODY, readChunks, RequestAbort, secretsOf, type ClientOptions, type ReplyReader, type ResponseInfo, type ResponsesApi } from './transport';
import type { ChatMessage, ChatResult, EndState, StreamEvent, ToolDefinition } from './types';

/**
 * The most read of a body that is not an event stream (one JSON completion, or whatever a wrong base URL serves).
 * A long completion with logprobs stays well under it; a download does not, and is not read whole.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** `body` as a request for one JSON completion: `stream: false`, and no stream_options. */
export function unstreamed(body: Record<string, unknown>): Record<string, unknown> {
  const b: Record<string, unknown> = { ...body, stream: false };
  delete b.stream_options;
  return b;
}

/** Where a request's output goes: its events as they are decided (one batch per network read, `end` last), and the response once known. */
interface ChatSink {
  events(events: StreamEvent[]): void;
  response?(info: ResponseInfo | undefined): void;
}

/**
 * Runs one chat request (streamed or not) to the end, handing events to `sink`. Never throws. `req` is the
 * request's one abort controller (by default one hooked to opts.signal); chat() ends it in `finally`, which
 * releases the socket however the request ended. With `api`, the same request goes to the Responses API, its body
 * translated, and its reply read back into the same events.
 */
export async function chat(opts: ClientOptions, body: Record<string, unknown>, sink: ChatSink, req = new RequestAbort(opts.signal), api?: ResponsesApi): Promise<ChatResult> {
  if (api) opts = api.at(opts);
  const turn = new ChatRequest(opts, body, sink, req, api);
  try {
    if (req.why === 'cancelled') return turn.finish('cancelled');
    const sent = await fetchWithRetry(opts, JSON.stringify(api ? api.body(body) : body), req, turn.model);
    if ('ended' in sent) {
      if (sent.response) turn.report(sent.response);
      return turn.finish(sent.ended, sent.error);
    }
    const { response, ttfbMs } = sent;
    const contentType = response.headers.get('content-type');
    turn.report({ status: response.status, contentType, ttfbMs });
    opts.log?.(`HTTP ${response.status} ${contentType ?? ''} after ${ttfbMs} ms`, 'info');
    if (!response.body) return turn.finish('error', new ParleyError('protocol', `${turn.host} answered with an empty body.`, { status: response.status, url: turn.url }));
    return await turn.read(response, contentType);
  } catch (e) {
    if (req.why === 'cancelled') return turn.finish('cancelled');
    return turn.finish('error', e instanceof ParleyError ? e : new ParleyError('protocol', `Unexpected failure: ${e instanceof Error ? e.message : String(e)}`, { url: turn.url }));
  } finally {
    req.dispose();
  }
}

/** One request's state once it is sent: the accumulator, the body read so far, and how it ends. */
class ChatRequest {
  readonly url: string;
  readonly host: string;
  readonly model: string | undefined;
  private readonly secrets: string[];
  private readonly acc: ReplyReader;
  private readonly out: StreamEvent[] = [];
  private reported = false;
  private error: ParleyError | undefined;
  /** The body as text while it is not (yet) known as an event stream, and until an event stream's first event. */
  private whole = '';

  constructor(private readonly opts: ClientOptions, private readonly body: Record<string, unknown>, private readonly sink: ChatSink, private readonly req: RequestAbort, api?: ResponsesApi) {
    this.url = opts.endpoint.url;
    this.host = new URL(this.url).host;
    this.model = typeof body.model === 'string' ? body.model : undefined;
    this.secrets = secretsOf(opts);
    // A call written as text is read only when tools were offered, and not told not to be called.
    const names = new Set(Array.isArray(body.tools) && body.tool_choice !== 'none' ? (body.tools as ToolDefinition[]).map((t) => t.function?.name) : []);
    const read = opts.textToolCalls;
    const ctx = { url: this.url, model: this.model, secrets: this.secrets, textCalls: read && names.size ? () => read(names) : undefined };
    this.acc = api ? api.reader(ctx) : new Accumulator(ctx);
  }

  report(info: ResponseInfo | undefined): void {
    if (this.reported) return;
    this.reported = true;
    this.sink.response?.(info);
  }

  /** The result, after the events still held and the `end` event. Every error leaves here without the request's key. */
  finish(ended: EndState, error?: ParleyError): ChatResult {
    // Whichever message quoted the server's bytes, the request's key is not in it.
    if (error) withoutSecrets(error, this.secrets);
    const events: StreamEvent[] = [];
    this.acc.flush(events);
    const messages = (Array.isArray(this.body.messages) ? this.body.messages : []) as ChatMessage[];
    const usage = this.acc.usage ?? estimateUsage(messages, this.acc.allOutput());
    if (events.length) this.sink.events(events);
    this.sink.events([{ type: 'end', state: ended, error }]);
    this.report(undefined);
    return this.acc.result(ended, usage, error);
  }

  /** Reads the body to its end (or to [DONE], an error, or the size limit) and finishes. */
  async read(response: Response, contentType: string | null): Promise<ChatResult> {
    const labelled = /text\/event-stream/i.test(contentType ?? '');
    let sse: SseDecoder | undefined;
    let tooLarge = false;
    try {
      ({ sse, tooLarge } = await this.readBody(response, labelled));
    } catch (e) {
      return this.broken(e);
    }
    if (this.req.why === 'cancelled') return this.finish('cancelled');
    if (this.error) return this.finish('error', this.error);
    if (tooLarge) {
      return this.finish('error', new ParleyError(
        'protocol',
        `${this.host} sent a response larger than ${MAX_BODY_BYTES / 1024 / 1024} MB that is not an event stream (${contentType ?? 'no content type'}); Parley stopped reading it. Check that parley.baseUrl is the server's API address, not a download.`,
        { status: response.status, url: this.url },
      ));
    }
    const acc = this.acc;
    // Labelled text/event-stream, but not one SSE line: read it as what it is (a JSON body, an HTML page).
    const notSse = acc.chunks === 0 && !acc.sawDone && this.whole.trim() !== '' && !SSE_LINE.test(this.whole.trimStart());
    if (!sse || notSse) return this.readJson(response.status, contentType);
    return this.finish(acc.endState());
  }

  /**
   * The read loop. The content type says whether the body is an event stream; when it does not, the first
   * non-blank bytes do. Events go to the sink once per network read. Returns the SSE decoder when it was one.
   */
  private async readBody(response: Response, labelled: boolean): Promise<{ sse?: SseDecoder; tooLarge: boolean }> {
    const status = response.status;
    const decoder = new TextDecoder();
    const idleTimeout = this.opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT;
    let stopIdle: (() => void) | undefined;
    const armIdle = () => {
      if (idleTimeout <= 0) return;
      stopIdle?.();
      stopIdle = this.req.after(idleTimeout, 'idle');
    };
    let sse = labelled ? new SseDecoder() : undefined;
    let decided = labelled;
    // Bytes read while the body is not (yet) an event stream: a plain body stops at MAX_BODY_BYTES.
    let plainBytes = 0;
    try {
      for await (const bytes of readChunks(response.body as ReadableStream<Uint8Array>, armIdle)) {
        if (!sse && (plainBytes += bytes.byteLength) > MAX_BODY_BYTES) return { tooLarge: true };
        const text = decoder.decode(bytes, { stream: true });
        if (!decided) {
          this.whole += text;
          const lead = this.whole.trimStart();
          if (lead.length === 0) continue;
          // A server that says nothing useful in its content type: sniff.
          if (SSE_START.test(lead)) sse = new SseDecoder();
          decided = lead.length > 8 || sse !== undefined;
          // Its events go out with the next read's.
          if (sse) this.take(sse.feed(this.whole), status);
        } else if (sse) {
          // Until the first event, keep the raw text: a body labelled event-stream may be a JSON error or HTML.
          if (this.acc.chunks === 0 && !this.acc.sawDone && this.whole.length < MAX_ERROR_BODY) this.whole += text;
          this.take(sse.feed(text), status);
          this.emit();
          if (this.error || this.acc.sawDone) return { sse, tooLarge: false };
        } else {
          this.whole += text;
        }
      }
    } finally {
      stopIdle?.();
    }
    const tail = decoder.decode();
    if (!sse) {
      this.whole += tail;
      return { tooLarge: false };
    }
    this.take(sse.feed(tail), status);
    const { whole, cut } = sse.end();
    this.take(whole, status);
    this.take(cut, status, true);
    this.emit();
    return { sse, tooLarge: false };
  }

  /** Hands SSE events to the accumulator, in order, until one is [DONE] or an error; `cut` as in Accumulator.event. */
  private take(events: readonly { data: string; event?: string }[], status: number, cut = false): void {
    for (const ev of events) {
      if (this.error || this.acc.sawDone) return;
      this.error = this.acc.event(ev, status, this.out, cut);
    }
  }

  private emit(): void {
    if (this.out.length) this.sink.events(this.out.splice(0));
  }

  /** The finish when reading the body failed: stopped, gone silent, or the connection broke. The text so far is kept. */
  private broken(e: unknown): ChatResult {
    if (this.req.why === 'cancelled') return this.finish('cancelled');
    const url = this.url;
    if (this.req.why === 'idle') {
      const idleTimeout = this.opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT;
      return this.finish('error', new ParleyError('timeout', `The stream from ${this.host} went silent for ${Math.round(idleTimeout / 1000)} s (stream idle timeout); the text so far is kept.`, { timeout: 'idle', url }));
    }
    const { why, reached } = connectionFailure(e);
    return reached
      ? this.finish('error', new ParleyError('protocol', `The response from ${this.host} broke mid-reply: ${why}; the text so far is kept.`, { url }))
      : this.finish('error', new ParleyError('connection', `The connection to ${this.host} broke mid-reply: ${why}; the text so far is kept.`, { url }));
  }

  /** One JSON completion (stream: false, or a server that ignored stream: true), or an error body. */
  private readJson(status: number, contentType: string | null): ChatResult {
    const ctx = { url: this.url, model: this.model, secrets: this.secrets };
    let json: unknown;
    try {
      json = JSON.parse(this.whole);
    } catch {
      return this.finish('error', errorFromResponse(status, contentType, this.whole, ctx));
    }
    // The events of a completion that turns out to be an error are not handed out.
    const e = this.acc.chunk(json, this.out);
    if (e) return this.finish('error', e);
    // A whole Response of the Responses API has no choices: its reader saw it end.
    if (!this.acc.sawDone && !Array.isArray((json as { choices?: unknown }).choices)) return this.finish('error', errorFromResponse(status, contentType, this.whole, ctx));
    this.acc.sawDone = true;
    this.emit();
    return this.finish('done');
  }
}
