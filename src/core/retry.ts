// fetchWithRetry(): a chat POST until it has a 2xx response, retrying 408/409/429/5xx and lost connections with backoff.
import { errorFromResponse, ParleyError } from './errors';
import { DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT, failedFetch, MAX_ERROR_BODY, readText, secretsOf, send, type Attempt, type ClientOptions, type RequestAbort, type ResponseInfo } from './transport';
import { sleep } from './sleep';

/** Backoff between retries: from 0.5 s, never more than 8 s. */
const MIN_BACKOFF = 500;
const MAX_BACKOFF = 8000;

/** How a request ended before it had a body to read: cancelled, or an error (with the response, when it was an HTTP one). */
interface Unsent {
  ended: 'cancelled' | 'error';
  error?: ParleyError;
  /** The error response, when the request failed with one. */
  response?: ResponseInfo;
}

/** One try: a response to read, or how it failed and whether trying again may help. */
type Try = { attempt: Attempt } | (Unsent & { retry?: boolean; headers?: Headers });

const CANCELLED: Unsent = { ended: 'cancelled' };

/** Failures that the same request meets again: out of quota, too long for the window, an image the model cannot take. */
const FINAL_KINDS = new Set<ParleyError['kind']>(['quota', 'context_length', 'no_image_input']);

function retryable(status: number, err?: ParleyError): boolean {
  if (err && FINAL_KINDS.has(err.kind)) return false;
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

/**
 * POSTs `payload` to the chat URL until a 2xx response comes, at most 1 + maxRetries times. Retries connection
 * failures and 408/409/429/5xx (not one FINAL_KINDS names), after retry-after when the server gives one, else backoffMs.
 * Nothing of a body has been read when it returns, so a retry never throws away text.
 */
export async function fetchWithRetry(opts: ClientOptions, payload: string, req: RequestAbort, model: string | undefined): Promise<Attempt | Unsent> {
  const maxRetries = Math.max(0, opts.maxRetries ?? 2);
  for (let n = 0; ; n++) {
    const t = await tryOnce(opts, payload, req, model);
    if ('attempt' in t) return t.attempt;
    if (t.ended === 'cancelled' || !t.retry || n >= maxRetries) return { ended: t.ended, error: t.error, response: t.response };
    const failure = t.error as ParleyError;
    let delay: number | undefined;
    if (t.headers) failure.retryAfterMs = delay = retryAfterMs(t.headers);
    const wait = delay ?? backoffMs(n);
    opts.onRetry?.({ attempt: n + 1, delayMs: wait, reason: failure.message });
    opts.log?.(`retry ${n + 1}/${maxRetries} in ${wait} ms: ${failure.kind}${failure.status ? ` ${failure.status}` : ''}`);
    if (!(await sleep(wait, req.signal))) return CANCELLED;
  }
}

/** One POST, within the header timeout; an error response's body is read (64 KB at most) for its message. */
async function tryOnce(opts: ClientOptions, payload: string, req: RequestAbort, model: string | undefined): Promise<Try> {
  const url = opts.endpoint.url;
  const headerTimeout = opts.requestTimeoutMs ?? DEFAULT_HEADER_TIMEOUT;
  const idleTimeout = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT;
  const stopTimer = headerTimeout > 0 ? req.after(headerTimeout, 'headers') : undefined;
  let attempt: Attempt;
  try {
    attempt = await send(opts, 'POST', url, payload, req.signal);
  } catch (e) {
    if (req.why === 'cancelled') return CANCELLED;
    if (req.why === 'headers') {
      return { ended: 'error', error: new ParleyError('timeout', `No response from ${new URL(url).host} within ${Math.round(headerTimeout / 1000)} s (request timeout).`, { timeout: 'headers', url }) };
    }
    if (e instanceof ParleyError) return { ended: 'error', error: e };
    const failure = failedFetch(e, url);
    // A server that answered with something that is not HTTP answers the same way again: no retry.
    return { ended: 'error', error: failure, retry: failure.kind === 'connection' };
  } finally {
    stopTimer?.();
  }
  const r = attempt.response;
  if (r.ok) return { attempt };
  const text = await readText(r, MAX_ERROR_BODY, idleTimeout > 0 ? idleTimeout : headerTimeout).catch(() => '');
  if (req.why === 'cancelled') return CANCELLED;
  const contentType = r.headers.get('content-type');
  const error = errorFromResponse(r.status, contentType, text, { url, model, secrets: secretsOf(opts) });
  return { ended: 'error', error, retry: retryable(r.status, error), headers: r.headers, response: { status: r.status, contentType, ttfbMs: attempt.ttfbMs } };
}
