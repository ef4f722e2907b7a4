// What the tests of Parley's own code against the real llama-server share: the servers test/llama/servers.mjs started,
// client options for them as the extension makes them, and a proxy that counts the requests reaching a server.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import { TextCallFilter } from '../../src/core/textToolCalls';

/** The servers of servers.mjs: base URLs without /v1, the key they want, and what each script of `tiny` replies. */
export interface LlamaServers {
  key: string;
  /** Model `tiny` (its own length 32,768) at -c 2048. */
  single: string;
  /** Model `tiny` at -c 262144. */
  stop: string;
  /** Router mode: `tiny-a` (its own 4,096, -c 2048 by a preset) and `tiny-b` (its own 8,192, no -c). */
  router: string;
  /** Model `tiny-fim` (`tiny` with Qwen2.5-Coder's FIM tokens) at -c 8192: it answers /infill. */
  infill: string;
  /** `tiny`'s scripts: the reply (`text`), and for one that never ends the part it repeats (`loop`). */
  expected: Record<string, { text: string; loop: string }>;
  /** What `tiny-fim` answers a fill-in-the-middle prompt, and in how many tokens (its end-of-generation token not counted). */
  fim: { text: string; pieces: number };
}

/** The running servers; throws, saying how to start them, outside `npm run test:llama`. */
export function llamaServers(): LlamaServers {
  const raw = process.env.PARLEY_LLAMA_SERVERS;
  if (!raw) throw new Error('No llama-server is running for these tests: run them with `npm run test:llama` (mocha --require test/llama/servers.mjs).');
  return JSON.parse(raw) as LlamaServers;
}

/**
 * Client options for a server's OpenAI API (`{url}/v1`) as the extension makes them (requester.clientOptions) with
 * the default settings: 60 s for the headers, 300 s of silence, 2 retries, tool calls written as text read.
 */
export function clientOptions(url: string, apiKey: string | undefined, extra: Partial<ClientOptions> = {}): ClientOptions {
  return {
    endpoint: resolveEndpoint(`${url}/v1`), apiKey, requestTimeoutMs: 60_000, idleTimeoutMs: 300_000, maxRetries: 2,
    textToolCalls: (names) => new TextCallFilter(names), ...extra,
  };
}

/**
 * GET {url}{path} with the key, as JSON; throws on a status other than 200. Sent again when the server closed the
 * kept-alive connection before any answer, as Parley's own GETs are (llama.cpp's router mode does that now and then).
 */
export async function getJson(url: string, path: string, key: string): Promise<unknown> {
  let r: Response;
  for (let tries = 1; ; tries++) {
    try {
      r = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
      break;
    } catch (e) {
      if (tries >= 3 || !/other side closed/.test(String((e as { cause?: { message?: string } }).cause?.message))) throw e;
    }
  }
  if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

/** A proxy in front of a server that passes every request through, byte for byte, and counts them. */
export interface CountingProxy {
  /** http://127.0.0.1:PORT, to use in place of the server's URL. */
  url: string;
  /** How many requests `METHOD /path` (without the query) went through. */
  count(method: string, path: string): number;
  close(): Promise<void>;
}

export async function countingProxy(target: string): Promise<CountingProxy> {
  const to = new URL(target);
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const key = `${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const upstream = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    // A client that hangs up closes the upstream request too, as it would close a direct one.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (method, path) => counts.get(`${method} ${path}`) ?? 0,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
