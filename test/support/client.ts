// Helpers for tests of the core client against the local test server: client options for a server, chunks as OpenAI
// streams them, and a body served one way or every way (whole, byte by byte, random splits) through streamChat().
import * as assert from 'node:assert/strict';
import { streamChat, type ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import { TextCallFilter } from '../../src/core/textToolCalls';
import type { ChatResult, StreamEvent } from '../../src/core/types';
import { allWays, wayLabel, withServer, writeWay, type TestServer, type Way } from './server';

/** The streamed request body the client tests send. */
export const CHAT_BODY = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } };

/**
 * Client options for `s`: no retries, 5 s for the headers and for each silence in a stream, and tool calls written as
 * text read as the extension reads them.
 */
export function clientOptions(s: TestServer, extra: Partial<ClientOptions> = {}): ClientOptions {
  return { endpoint: resolveEndpoint(s.url), maxRetries: 0, requestTimeoutMs: 5000, idleTimeoutMs: 5000, textToolCalls: (names) => new TextCallFilter(names), ...extra };
}

/** A streamed chunk with `content` (and other delta fields) in its one choice. */
export const chunk = (content: string | null, extra: Record<string, unknown> = {}, finish: string | null = null) => ({
  id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content, ...extra }, finish_reason: finish }],
});

/** A streamed chunk whose one choice has exactly `delta` (no content key unless given). */
export const deltaChunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }],
});

/** What one streamChat() gave: every event it yielded, and its result. */
export interface Streamed {
  events: StreamEvent[];
  result: ChatResult;
}

const EVENT_STREAM = { 'content-type': 'text/event-stream' };

/** Serves `body` the way `way` says (with `status` and `headers`) and streams CHAT_BODY from it. */
export async function streamOneWay(
  body: string | Buffer,
  way: Way,
  { headers = EVENT_STREAM, status = 200, options = {} }: { headers?: Record<string, string>; status?: number; options?: Partial<ClientOptions> } = {},
): Promise<Streamed> {
  return withServer(async (_req, res) => {
    res.writeHead(status, headers);
    await writeWay(res, body, way);
  }, async (s) => {
    const stream = streamChat(clientOptions(s, options), CHAT_BODY);
    const events: StreamEvent[] = [];
    for await (const e of stream) events.push(e);
    return { events, result: await stream.result };
  });
}

/**
 * A runner that serves a body every way of allWays(seed) (whole, byte by byte, random splits with three seeds),
 * checks that every way gave the same result, and returns the whole body's (with the events seen). Each test file
 * keeps its own seed, so its random splits stay the ones it always had.
 */
export function sameEveryWay(seed: number) {
  return async (body: string | Buffer, headers: Record<string, string> = EVENT_STREAM, status = 200): Promise<Streamed> => {
    const ways = allWays(seed);
    const out: Streamed[] = [];
    for (const way of ways) out.push(await streamOneWay(body, way, { headers, status }));
    // The same result whichever way the bytes arrived.
    const strip = (r: ChatResult) => ({ ...r, error: r.error ? { kind: r.error.kind, message: r.error.message.replace(/127\.0\.0\.1:\d+/g, 'HOST') } : undefined });
    for (let i = 1; i < ways.length; i++) assert.deepEqual(strip(out[i].result), strip(out[0].result), `${wayLabel(ways[i])} differs from whole`);
    return out[0];
  };
}
