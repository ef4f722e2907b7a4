// The client's public face: streamChat() and complete() (one chat request each, see chat.ts for its stages) and listModels().
import { chat, unstreamed } from './chat';
import { errorFromResponse, ParleyError, withoutSecrets } from './errors';
import { modelListFrom, type ModelInfo } from './modelInfo';
import { failedFetch, readText, RequestAbort, secretsOf, send, type Attempt, type ClientOptions, type ResponseInfo } from './transport';
import type { ChatResult, StreamEvent } from './types';

export { MAX_BODY_BYTES } from './chat';
export type { ClientOptions, ResponseInfo } from './transport';

/** A streamed reply: iterate it for events, or await `result` (which resolves however the stream ends). */
export interface ChatStream extends AsyncIterable<StreamEvent> {
  readonly result: Promise<ChatResult>;
  /** Status, content type and time to first byte of the response that was read, once known. */
  readonly response: Promise<ResponseInfo | undefined>;
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

/**
 * Streams a chat completion. Never throws: failures arrive as the `end` event and in `result`. Iterating is
 * optional and may start late; leaving the loop before the `end` event cancels the request.
 */
export function streamChat(opts: ClientOptions, body: Record<string, unknown>): ChatStream {
  // The request's one controller, made here so that leaving the loop early can abort it.
  const req = new RequestAbort(opts.signal);
  const queue = new EventQueue(() => req.abort('cancelled'));
  let resolveResponse!: (r: ResponseInfo | undefined) => void;
  const response = new Promise<ResponseInfo | undefined>((r) => (resolveResponse = r));
  const sink = { events: (events: StreamEvent[]) => queue.push(events), response: resolveResponse };
  const result = Promise.resolve().then(() => chat(opts, body, sink, req).finally(() => queue.end()));
  return {
    result,
    response,
    [Symbol.asyncIterator]() {
      return queue.iterate();
    },
  };
}

/** A non-streaming completion; the same result type. Never throws. */
export function complete(opts: ClientOptions, body: Record<string, unknown>): Promise<ChatResult> {
  return chat(opts, unstreamed(body), { events: () => undefined });
}

/**
 * The model ids a server lists at GET …/models (OpenAI `data[].id`, or Ollama's `models[].name`). Rejects
 * with a ParleyError only: `cancelled` when opts.signal aborts, `timeout` after requestTimeoutMs (default 15 s),
 * `config` for refused custom headers.
 */
export async function listModels(opts: ClientOptions): Promise<string[]> {
  return (await listModelInfo(opts)).map((m) => m.id);
}

/** The models a server lists at GET …/models, with what it says of each (context window, tools, images). Rejects as listModels. */
export async function listModelInfo(opts: ClientOptions): Promise<ModelInfo[]> {
  const url = opts.endpoint.modelsUrl;
  const req = new RequestAbort(opts.signal);
  const timeoutMs = opts.requestTimeoutMs ?? 15_000;
  const stopTimer = req.after(timeoutMs, 'timeout');
  const secrets = secretsOf(opts);
  const aborted = (): ParleyError | undefined =>
    req.why === 'cancelled' ? new ParleyError('cancelled', `GET ${url} was cancelled.`, { url })
    : req.why === 'timeout' ? new ParleyError('timeout', `GET ${url} got no complete answer within ${Math.round(timeoutMs / 1000)} s.`, { url, timeout: 'headers' })
    : undefined;
  try {
    let attempt: Attempt;
    let text: string;
    try {
      attempt = await send(opts, 'GET', url, undefined, req.signal);
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
    const o = json as { data?: unknown; error?: unknown };
    if (o && o.error !== undefined && o.error !== null && o.data === undefined) throw errorFromResponse(200, 'application/json', text, { url, secrets });
    const list = modelListFrom(json);
    if (!list) throw new ParleyError('protocol', `GET ${url} did not return a model list.`, { url });
    opts.onModelList?.(list);
    return list;
  } catch (e) {
    throw e instanceof ParleyError ? withoutSecrets(e, secrets) : e;
  } finally {
    stopTimer();
    req.dispose();
  }
}
