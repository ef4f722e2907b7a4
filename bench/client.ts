// Client benchmark: 20,000 small chunks at full speed, read three ways in one run: Parley's client,
// a bare fetch + eventsource-parser loop (the floor), and the official openai SDK. Prints medians and ratios.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser } from 'eventsource-parser';
import OpenAI from 'openai';
import { streamChat } from '../src/core/client';
import { resolveEndpoint } from '../src/core/endpoint';

const CHUNKS = 20_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

/** The whole SSE body, built once: the server only writes it, so the clients are what is measured. */
function body(): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < CHUNKS; i++) {
    parts.push(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}\n\n`);
  }
  parts.push('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n');
  parts.push('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":20000,"total_tokens":20005}}\n\n');
  parts.push('data: [DONE]\n\n');
  return Buffer.from(parts.join(''));
}

const EXPECTED = 'tok '.repeat(CHUNKS);
const REQUEST = { model: 'm', messages: [{ role: 'user' as const, content: 'go' }], stream: true as const, stream_options: { include_usage: true } };

interface Sample {
  firstMs: number;
  totalMs: number;
  heapMb: number;
}

type Reader = (base: string, onFirst: () => void) => Promise<string>;

const readers: Record<string, Reader> = {
  async floor(base, onFirst) {
    const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(REQUEST) });
    let text = '';
    let first = true;
    const parser = createParser({
      onEvent(e) {
        if (e.data === '[DONE]') return;
        const delta = JSON.parse(e.data).choices?.[0]?.delta?.content;
        if (delta) {
          if (first) {
            first = false;
            onFirst();
          }
          text += delta;
        }
      },
    });
    const decoder = new TextDecoder();
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    return text;
  },

  async parley(base, onFirst) {
    const stream = streamChat({ endpoint: resolveEndpoint(base), maxRetries: 0 }, REQUEST);
    let text = '';
    let first = true;
    for await (const e of stream) {
      if (e.type === 'text') {
        if (first) {
          first = false;
          onFirst();
        }
        text += e.text;
      }
    }
    const r = await stream.result;
    if (r.ended !== 'done') throw new Error(`parley ended ${r.ended}`);
    return text;
  },

  async sdk(base, onFirst) {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'bench', maxRetries: 0 });
    const stream = await client.chat.completions.create(REQUEST);
    let text = '';
    let first = true;
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta?.content;
      if (d) {
        if (first) {
          first = false;
          onFirst();
        }
        text += d;
      }
    }
    return text;
  },
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function measure(name: string, base: string): Promise<Sample> {
  (globalThis as { gc?: () => void }).gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  let peak = heap0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 2);
  const t0 = performance.now();
  let first = 0;
  const text = await readers[name](base, () => (first = performance.now() - t0));
  const totalMs = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  if (text !== EXPECTED) throw new Error(`${name} read ${text.length} characters, expected ${EXPECTED.length}`);
  return { firstMs: first, totalMs, heapMb: (peak - heap0) / 1024 / 1024 };
}

async function main(): Promise<void> {
  const payload = body();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(payload);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const names = ['floor', 'parley', 'sdk'];
  const samples: Record<string, Sample[]> = { floor: [], parley: [], sdk: [] };
  // Warm-up, then interleaved rounds so that machine noise hits every way alike.
  for (const n of names) await measure(n, base);
  for (let round = 0; round < ROUNDS; round++) {
    for (const n of names) samples[n].push(await measure(n, base));
  }
  server.close();
  const floorTotal = median(samples.floor.map((s) => s.totalMs));
  const floorFirst = median(samples.floor.map((s) => s.firstMs));
  console.log(`Client benchmark: ${CHUNKS.toLocaleString('en-US')} content chunks from a local server, ${ROUNDS} interleaved rounds, medians`);
  console.log('                     first delta (ms)   total (ms)   total vs floor   peak heap growth (MB)');
  const results: Record<string, unknown> = {};
  for (const n of names) {
    const first = median(samples[n].map((s) => s.firstMs));
    const total = median(samples[n].map((s) => s.totalMs));
    const heap = median(samples[n].map((s) => s.heapMb));
    results[n] = { firstMs: first, totalMs: total, heapMb: heap, ratioToFloor: total / floorTotal };
    console.log(`  ${n.padEnd(18)} ${first.toFixed(1).padStart(16)} ${total.toFixed(1).padStart(12)} ${(total / floorTotal).toFixed(2).padStart(15)}x ${heap.toFixed(1).padStart(22)}`);
  }
  const parleyTotal = median(samples.parley.map((s) => s.totalMs));
  const sdkTotal = median(samples.sdk.map((s) => s.totalMs));
  const vsFloor = parleyTotal / floorTotal;
  const vsSdk = sdkTotal / parleyTotal;
  console.log(`  first delta vs floor: parley ${(median(samples.parley.map((s) => s.firstMs)) / floorFirst).toFixed(2)}x`);
  console.log(`Targets: Parley within 1.15x of the floor: ${vsFloor.toFixed(2)}x, ${vsFloor <= 1.15 ? 'met' : 'missed'}; ` +
    `at least 3x faster than the SDK: ${vsSdk.toFixed(2)}x, ${vsSdk >= 3 ? 'met' : 'missed'}.`);
  console.log('Peak heap growth is the largest rise of heapUsed over the run, sampled every 2 ms (after a GC when --expose-gc is given).');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/client.json', JSON.stringify({ at: new Date().toISOString(), chunks: CHUNKS, rounds: ROUNDS, results }, null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
