// The one engine search_text matches with: the model's regular expression runs in a worker thread, within a time
// budget per search, so no pattern can block the extension host; Stop ends the worker at once.
import { Worker } from 'node:worker_threads';
import workerSource from 'parley:search-worker';
import type { LineMatch } from '../../core/lineMatch';

/** Most time one search may spend matching (file reading not counted), summed over its files. */
export const SEARCH_TIME_LIMIT_MS = 5000;

/** What the worker is started with: the search's regular expression. */
export interface SearchWorkerData {
  source: string;
  flags: string;
}

/** One file's text to match, at most `max` matching lines. */
export interface SearchJob {
  id: number;
  text: string;
  max: number;
}

/** The worker's answer to a job: the matching lines, or why matching failed. */
export type SearchReply = { id: number; matches: LineMatch[]; longLines: number } | { id: number; error: string };

/** One file's matching lines, and how many of its lines were longer than lineMatch's MAX_LINE_CHARS. */
export interface FileMatches {
  matches: LineMatch[];
  longLines: number;
}

/** The search spent its time budget: the pattern is too slow (catastrophic backtracking, or too much text). */
export class SearchTooSlowError extends Error {
  override readonly name = 'SearchTooSlowError';
}

/** The worker failed (out of memory, a crash): the search cannot go on. */
export class SearchFailedError extends Error {
  override readonly name = 'SearchFailedError';
}

interface Pending {
  resolve(m: FileMatches): void;
  reject(e: unknown): void;
}

/**
 * One search: a worker thread started on first use with the regular expression, fed one file's text per `match()`.
 * Jobs may be queued (the worker takes them in turn); the budget counts the time the worker has work. When the budget
 * is spent or `signal` aborts, the worker is terminated and every pending and later `match()` rejects: with
 * SearchTooSlowError, or with the signal's reason. dispose() ends the worker; call it when the search is done.
 */
export class LineSearch {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure?: unknown;
  private spentMs = 0;
  private busySince = 0;
  private timer?: ReturnType<typeof setTimeout>;
  private readonly onAbort = () => this.fail(this.signal.reason);

  constructor(
    private readonly re: RegExp,
    private readonly signal: AbortSignal,
    private readonly budgetMs = SEARCH_TIME_LIMIT_MS,
  ) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The lines of one file's text that match, at most `max`. */
  match(text: string, max: number): Promise<FileMatches> {
    if (this.signal.aborted) this.fail(this.signal.reason);
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const worker = (this.worker ??= this.start());
    const id = ++this.nextId;
    return new Promise<FileMatches>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.clockOn();
      const job: SearchJob = { id, text, max };
      worker.postMessage(job);
    });
  }

  /** Ends the worker (pending matches reject). The search's results stay valid. */
  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.fail(new SearchFailedError('The search was disposed.'));
  }

  private start(): Worker {
    const data: SearchWorkerData = { source: this.re.source, flags: this.re.flags };
    // The worker's code is in this bundle as a string (esbuild.mjs): no file to find beside it, in any host.
    const w = new Worker(workerSource, { eval: true, workerData: data });
    w.on('message', (r: SearchReply) => this.settle(r));
    w.on('error', (e) => this.fail(new SearchFailedError(`The search's worker failed: ${e.message}`)));
    w.on('exit', (code) => {
      if (this.worker === w) this.fail(new SearchFailedError(`The search's worker stopped (exit code ${code}).`));
    });
    // A worker waiting for work must not keep the process alive.
    w.unref();
    return w;
  }

  private settle(r: SearchReply): void {
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (this.pending.size === 0) this.clockOff();
    if ('error' in r) p.reject(new SearchFailedError(`Matching failed: ${r.error}`));
    else p.resolve({ matches: r.matches, longLines: r.longLines });
  }

  private clockOn(): void {
    this.busySince = performance.now();
    this.timer = setTimeout(() => {
      this.fail(new SearchTooSlowError(`Matching took longer than ${this.budgetMs / 1000} s.`));
    }, Math.max(0, this.budgetMs - this.spentMs));
  }

  private clockOff(): void {
    clearTimeout(this.timer);
    this.spentMs += performance.now() - this.busySince;
  }

  private fail(e: unknown): void {
    if (this.failure === undefined) this.failure = e;
    clearTimeout(this.timer);
    const w = this.worker;
    this.worker = undefined;
    void w?.terminate();
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }
}
