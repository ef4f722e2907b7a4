// A real HTTP server on 127.0.0.1 for tests: it records every request and whether the client hung up early,
// and writes scripted bytes (whole, byte by byte, or split at random points, mid-line and mid-character).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json?: any;
  /** The client closed the connection before the response ended (Stop, abort, timeout). */
  clientClosedEarly: boolean;
}

export interface TestServer {
  /** http://127.0.0.1:PORT */
  url: string;
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** Resolves with the next request whose connection the client closes early (or one that already did). */
  waitForClose(timeoutMs?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** Starts a server on 127.0.0.1 with a free port. */
export async function startTestServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const closeWaiters: Array<(r: RecordedRequest) => void> = [];
  const unclaimedCloses: RecordedRequest[] = [];

  // A request cut off mid-body (a test that aborts) drops its connection; it never becomes an unhandled rejection.
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => res.destroy());
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: { ...req.headers },
      body,
      json,
      clientClosedEarly: false,
    };
    requests.push(rec);
    res.on('close', () => {
      if (!res.writableFinished) {
        rec.clientClosedEarly = true;
        const w = closeWaiters.shift();
        if (w) w(rec);
        else unclaimedCloses.push(rec);
      }
    });
    try {
      await handler(rec, res);
    } catch (e) {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`test handler failed: ${String(e)}`);
      } else {
        res.destroy();
      }
    }
  }
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    origin,
    port,
    requests,
    waitForClose(timeoutMs = 5000) {
      const already = unclaimedCloses.shift();
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`the server saw no early close within ${timeoutMs} ms`)), timeoutMs);
        closeWaiters.push((r) => {
          clearTimeout(t);
          resolve(r);
        });
      });
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs `fn` against a server started for it with `handler`, and closes the server however `fn` ends. */
export async function withServer<T>(handler: Handler, fn: (s: TestServer) => Promise<T>): Promise<T> {
  const s = await startTestServer(handler);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** What a slow stream (writeSlowly) wrote: chunks handed to the socket, and how many of them when the client closed it. */
export interface SlowCount {
  written: number;
  /** Set when the client closed the connection before the stream's end. */
  closedAfter?: number;
}

/**
 * Writes an SSE stream slowly: each of `chunks` once the one before was flushed and `pauseMs` passed, then `tail`
 * and [DONE]. Stops when the client closes the connection, noting in `count` how many chunks it had written by then.
 * The pause only paces the stream (a real server's tokens come one by one); tests assert on the counts.
 */
export async function writeSlowly(res: ServerResponse, chunks: readonly object[], tail: readonly object[], count: SlowCount, pauseMs = 2): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.on('close', () => {
    if (!res.writableFinished) count.closedAfter ??= count.written;
  });
  for (const c of chunks) {
    if (res.destroyed) return;
    count.written++;
    await flush(res, Buffer.from(`data: ${JSON.stringify(c)}\n\n`));
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  if (!res.destroyed) res.end(sse([...tail]));
}

/** An SSE body: objects become `data: JSON`, strings are written raw (comments, `event:` lines, odd framing). */
export function sse(events: Array<object | string>, opts: { done?: boolean; eol?: '\n' | '\r\n' | '\r' } = {}): string {
  const eol = opts.eol ?? '\n';
  let out = '';
  for (const e of events) out += typeof e === 'string' ? e.replace(/\n/g, eol) : `data: ${JSON.stringify(e)}${eol}${eol}`;
  if (opts.done !== false) out += `data: [DONE]${eol}${eol}`;
  return out;
}

export type SplitMode = 'whole' | 'bytewise' | 'random';

/**
 * Piece sizes of a random split: small (1–24 bytes, so nearly every line and many characters are cut), large
 * (1 byte to 4 KB, whole events and runs of events in one read, as a real network delivers them), or mixed.
 */
export type PieceSizes = 'small' | 'large' | 'mixed';

/** One way of delivering a body; `seed` and `pieces` apply to random splits only. */
export interface Way {
  mode: SplitMode;
  seed?: number;
  pieces?: PieceSizes;
}

/**
 * The ways every stream test delivers a body: whole, byte by byte, and three random splits (small, large and
 * mixed pieces, each from its own seed derived from `seed`). A failing random split is reproduced from its label.
 */
export function allWays(seed: number): Way[] {
  return [
    { mode: 'whole' },
    { mode: 'bytewise' },
    { mode: 'random', seed, pieces: 'small' },
    { mode: 'random', seed: seed + 1, pieces: 'large' },
    { mode: 'random', seed: seed + 2, pieces: 'mixed' },
  ];
}

/** A way's name for test titles and assertion messages: "whole", "bytewise", "random small (seed 7)". */
export function wayLabel(w: Way): string {
  return w.mode === 'random' ? `random ${w.pieces ?? 'small'} (seed ${w.seed ?? 1})` : w.mode;
}

/** A small deterministic PRNG, so a failing random split can be reproduced from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function flush(res: ServerResponse, piece: Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(piece, () => setImmediate(resolve));
  });
}

/** The size of the next random piece. */
function pieceSize(rand: () => number, pieces: PieceSizes): number {
  const small = () => 1 + Math.floor(rand() * 24);
  const large = () => 1 + Math.floor(rand() * 4096);
  if (pieces === 'small') return small();
  if (pieces === 'large') return large();
  return rand() < 0.5 ? small() : large();
}

/** Writes a body in pieces (each flushed separately) the way `w` says, then ends the response. */
export async function writeWay(res: ServerResponse, body: string | Buffer, { mode, seed = 1, pieces = 'small' }: Way): Promise<void> {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  if (mode === 'whole') {
    res.end(bytes);
    return;
  }
  const rand = mulberry32(seed);
  let i = 0;
  while (i < bytes.length && !res.destroyed) {
    const n = mode === 'bytewise' ? 1 : pieceSize(rand, pieces);
    await flush(res, bytes.subarray(i, i + n));
    i += n;
  }
  if (!res.destroyed) res.end();
}
