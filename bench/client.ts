// Client benchmark: one local server streams 20,000 small content chunks, read three ways in one run: Parley's
// streamChat, a bare fetch + eventsource-parser loop (the floor) and the official openai SDK. Prints medians and
// ratios against the floor, and writes them to bench/results/client.json. Built and run by scripts/bench.mjs.
// BENCH_ROUNDS, BENCH_PACED_ROUNDS and BENCH_SEED change the run; `--repeat <way> <n>` reads one way n times, for
// `node --cpu-prof out/bench/client.js --repeat parley 300`. `--memory` is the child mode main() starts.
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { createParser } from 'eventsource-parser';
import OpenAI from 'openai';
import { streamChat } from '../src/core/client';
import { resolveEndpoint } from '../src/core/endpoint';
import { chatWithFallback } from '../src/core/fallback';
import { responsesApi } from '../src/core/responses';
import { machineLine, median, random, row, spread, warnIfBusy, writeResults, x2 } from './stats';

const CHUNKS = 20_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25);
const WARMUP_ROUNDS = 2;
const PACED_ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 5);
const MEMORY_RUNS = 5;
const EXPECTED = 'tok '.repeat(CHUNKS);
const REQUEST = { model: 'm', messages: [{ role: 'user' as const, content: 'go' }], stream: true as const, stream_options: { include_usage: true } };

/**
 * The three ways, plus `bytes`: fetch reading the body and dropping it, to show what the transport alone costs; and the
 * Responses API's case (issue 39): the same text streamed as `response.output_text.delta` events, read by Parley's
 * request (the fallback loop with the model served there, as the panel sends it) against its own floor, fetch +
 * eventsource-parser reading those events.
 */
const WAYS = ['floor', 'parley', 'sdk', 'bytes', 'responsesFloor', 'responses'] as const;
type Way = (typeof WAYS)[number];
const LABEL: Record<Way, string> = {
  floor: 'floor: fetch + eventsource-parser',
  parley: 'Parley streamChat',
  sdk: 'openai SDK',
  bytes: '(fetch only, no parsing)',
  responsesFloor: 'Responses floor: fetch + parser',
  responses: 'Parley on the Responses API',
};

/** What a way read: checked against what the server sent, after the clock has stopped. */
interface Received {
  text: string;
  /** Parley only: result.text, which must equal the text its events carried. */
  resultText?: string;
  finish: string | null | undefined;
  completionTokens: number | undefined;
}

/** Reads one reply. Calls onFirst at the first non-empty content delta. */
type Reader = (onFirst: () => void) => Promise<Received>;

/** Feeds a response's body to an eventsource-parser, as it arrives: the floors' whole read loop. */
async function feedAll(res: Response, parser: ReturnType<typeof createParser>): Promise<void> {
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
}

/** Each way's reader for a server root. The set-up here (endpoint, SDK client) is not timed: a caller does it once. */
const prepare: Record<Way, (base: string) => Reader> = {
  floor: (base) => async (onFirst) => {
    const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(REQUEST) });
    const got: Received = { text: '', finish: undefined, completionTokens: undefined };
    let first = true;
    const parser = createParser({
      onEvent(e) {
        if (e.data === '[DONE]') return;
        const json = JSON.parse(e.data);
        const choice = json.choices[0];
        const content = choice?.delta?.content;
        if (content) {
          if (first) {
            first = false;
            onFirst();
          }
          got.text += content;
        }
        if (choice?.finish_reason) got.finish = choice.finish_reason;
        if (json.usage) got.completionTokens = json.usage.completion_tokens;
      },
    });
    await feedAll(res, parser);
    return got;
  },

  parley: (base) => {
    const endpoint = resolveEndpoint(base);
    return async (onFirst) => {
      const stream = streamChat({ endpoint, maxRetries: 0 }, REQUEST);
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
      if (r.ended !== 'done') throw new Error(`Parley's stream ended '${r.ended}'${r.error ? `: ${r.error.message}` : ''}`);
      return { text, resultText: r.text, finish: r.finishReason, completionTokens: r.usage.estimated ? undefined : r.usage.completion_tokens };
    };
  },

  responsesFloor: (base) => async (onFirst) => {
    const res = await fetch(`${base}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'go', stream: true, store: false }) });
    const got: Received = { text: '', finish: undefined, completionTokens: undefined };
    let first = true;
    const parser = createParser({
      onEvent(e) {
        const json = JSON.parse(e.data);
        if (json.type === 'response.output_text.delta') {
          if (first) {
            first = false;
            onFirst();
          }
          got.text += json.delta;
        } else if (json.type === 'response.completed') {
          got.finish = 'stop';
          got.completionTokens = json.response.usage.output_tokens;
        }
      },
    });
    await feedAll(res, parser);
    return got;
  },

  responses: (base) => {
    const opts = { endpoint: resolveEndpoint(base), maxRetries: 0, responses: () => responsesApi };
    const settings = { model: 'm', stream: true, api: 'responses' as const };
    return async (onFirst) => {
      let text = '';
      let first = true;
      const { result: r } = await chatWithFallback(opts, settings, [REQUEST.messages[0]], undefined, (e) => {
        if (e.type !== 'text') return;
        if (first) {
          first = false;
          onFirst();
        }
        text += e.text;
      });
      if (r.ended !== 'done') throw new Error(`Parley's Responses request ended '${r.ended}'${r.error ? `: ${r.error.message}` : ''}`);
      return { text, resultText: r.text, finish: r.finishReason, completionTokens: r.usage.estimated ? undefined : r.usage.completion_tokens };
    };
  },

  sdk: (base) => {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'bench', maxRetries: 0 });
    return async (onFirst) => {
      const stream = await client.chat.completions.create(REQUEST);
      const got: Received = { text: '', finish: undefined, completionTokens: undefined };
      let first = true;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        const content = choice?.delta?.content;
        if (content) {
          if (first) {
            first = false;
            onFirst();
          }
          got.text += content;
        }
        if (choice?.finish_reason) got.finish = choice.finish_reason;
        if (chunk.usage) got.completionTokens = chunk.usage.completion_tokens;
      }
      return got;
    };
  },

  bytes: (base) => async (onFirst) => {
    const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(REQUEST) });
    const reader = res.body!.getReader();
    let first = true;
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      if (first) {
        first = false;
        onFirst();
      }
    }
    // Not read, so not checked: stands in for the expected values.
    return { text: EXPECTED, finish: 'stop', completionTokens: CHUNKS };
  },
};

/** Throws, naming the way, unless it received the full text, the finish reason and the usage the server sent. */
function check(way: Way, got: Received): void {
  const problems: string[] = [];
  if (got.text !== EXPECTED) {
    let at = 0;
    while (at < got.text.length && got.text[at] === EXPECTED[at]) at++;
    problems.push(`text is ${got.text.length} characters, expected ${EXPECTED.length}; first difference at ${at}`);
  }
  if (got.resultText !== undefined && got.resultText !== got.text) problems.push(`result.text (${got.resultText.length} characters) differs from the text events (${got.text.length})`);
  if (got.finish !== 'stop') problems.push(`finish reason ${JSON.stringify(got.finish)}, expected "stop"`);
  if (got.completionTokens !== CHUNKS) problems.push(`usage.completion_tokens ${got.completionTokens}, expected ${CHUNKS}`);
  if (problems.length) throw new Error(`${LABEL[way]} did not receive what the server sent: ${problems.join('; ')}`);
}

/** Present in the memory children, which are started with --expose-gc. */
const gc = (globalThis as { gc?: () => void }).gc;

interface Timing {
  firstMs: number;
  totalMs: number;
  /** User + system CPU of this whole process (GC threads included) during the run; the server is another process. */
  cpuMs: number;
}

async function timeOnce(way: Way, read: Reader): Promise<Timing> {
  // No forced GC here: a full GC throws away optimized code whose maps died with it (V8 "weak objects"), so every
  // read would start half-cold, which is not how an extension host runs. Random order spreads GC debt instead.
  await new Promise((r) => setImmediate(r));
  let firstMs = NaN;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const got = await read(() => (firstMs = performance.now() - t0));
  const totalMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  check(way, got);
  return { firstMs, totalMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

interface Memory {
  /** Bytes allocated on the JS heap during one read: what was freed by each GC, plus the growth left at the end. */
  allocatedMb: number;
  /** Highest heapUsed during the read (just before a GC, or at the end) above heapUsed after a full GC at its start. */
  peakHeapMb: number;
  /** Peak resident set of the whole child process (Node, the bundle, the warm-up and the measured reads). */
  maxRssMb: number;
}

const MB = 1024 * 1024;

/** Child mode: one warm-up read, then MEMORY_RUNS reads under the GC profiler. Prints one JSON line. */
async function memoryChild(way: Way, base: string): Promise<void> {
  if (!gc) throw new Error('memory mode needs --expose-gc');
  const read = prepare[way](base);
  check(way, await read(() => undefined));
  const allocated: number[] = [];
  const peaks: number[] = [];
  for (let i = 0; i < MEMORY_RUNS; i++) {
    gc();
    const start = getHeapStatistics().used_heap_size;
    const profiler = new GCProfiler();
    profiler.start();
    const got = await read(() => undefined);
    const end = getHeapStatistics().used_heap_size;
    const { statistics } = profiler.stop();
    check(way, got);
    let freed = 0;
    let peak = end;
    for (const s of statistics) {
      freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
      peak = Math.max(peak, s.beforeGC.heapStatistics.usedHeapSize);
    }
    allocated.push((freed + end - start) / MB);
    peaks.push((peak - start) / MB);
  }
  const m: Memory = { allocatedMb: median(allocated), peakHeapMb: median(peaks), maxRssMb: process.resourceUsage().maxRSS / 1024 };
  process.stdout.write(`${JSON.stringify(m)}\n`);
}

function runChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited with ${code}`))));
  });
}

async function startServer(): Promise<{ base: string; bodyBytes: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'bench', 'server.mjs'), String(CHUNKS)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const info = await new Promise<{ port: number; bytes: number }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.on('exit', (code) => reject(new Error(`bench/server.mjs exited with ${code}`)));
  });
  return { base: `http://127.0.0.1:${info.port}`, bodyBytes: info.bytes, child };
}

/**
 * Runs every way once per round, in a new random order each round: the way before a read leaves garbage for it
 * to collect (the SDK leaves 80 MB), and a fixed or rotated order would always hand it to the same way.
 */
async function rounds(base: string, warmup: number, count: number, seed: number): Promise<Record<Way, Timing[]>> {
  const readers = Object.fromEntries(WAYS.map((w) => [w, prepare[w](base)])) as Record<Way, Reader>;
  const samples = Object.fromEntries(WAYS.map((w) => [w, []])) as unknown as Record<Way, Timing[]>;
  const rand = random(seed);
  for (let r = 0; r < warmup + count; r++) {
    const order = [...WAYS];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const way of order) {
      const t = await timeOnce(way, readers[way]);
      if (r >= warmup) samples[way].push(t);
    }
  }
  return samples;
}


/** Per-round ratios a/b: machine noise that hits a whole round cancels out. Median and interquartile range. */
function paired(a: Timing[], b: Timing[]): { median: number; p25: number; p75: number } {
  const ratios = a.map((t, i) => t.totalMs / b[i].totalMs);
  return spread(ratios);
}

interface Summary {
  firstMs: number;
  totalMs: number;
  cpuMs: number;
  totalMinMs: number;
  totalMaxMs: number;
}

function summarize(samples: Timing[]): Summary {
  const totals = samples.map((s) => s.totalMs);
  return {
    firstMs: median(samples.map((s) => s.firstMs)),
    totalMs: median(totals),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    totalMinMs: Math.min(...totals),
    totalMaxMs: Math.max(...totals),
  };
}

const f1 = (n: number) => n.toFixed(1);

async function main(): Promise<void> {
  const seed = Number(process.env.BENCH_SEED ?? Date.now() % 1_000_000);
  // Before the first read, so that it counts other work on the machine rather than this benchmark's own.
  const load = loadavg()[0];
  const { base, bodyBytes, child: server } = await startServer();
  try {
    const paced = `${base}/paced`;
    const full = await rounds(base, WARMUP_ROUNDS, ROUNDS, seed);
    const pacedSamples = await rounds(paced, 1, PACED_ROUNDS, seed + 1);
    // Memory: one child process per way, one after another, so each has the machine and its own heap to itself.
    const memory = {} as Record<Way, Memory>;
    for (const way of WAYS) {
      memory[way] = JSON.parse(await runChild(['--expose-gc', __filename, '--memory', way, base]));
    }

    const fullSum = Object.fromEntries(WAYS.map((w) => [w, summarize(full[w])])) as Record<Way, Summary>;
    const pacedSum = Object.fromEntries(WAYS.map((w) => [w, summarize(pacedSamples[w])])) as Record<Way, Summary>;
    const fl = fullSum.floor;
    const W = [36, 14, 12, 12, 14, 10];

    console.log(`Client benchmark: ${CHUNKS.toLocaleString('en-US')} content chunks (${(Buffer.byteLength(EXPECTED) / 1024).toFixed(0)} KB of text, ` +
      `${(bodyBytes / MB).toFixed(1)} MB of SSE) from a local server in its own process`);
    console.log(`${machineLine()}. Medians of ${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up rounds, each round every way once in random order (seed ${seed}).`);
    warnIfBusy(load, 'wall times are noisy; CPU times less so');
    console.log('\nFull speed: the server writes the whole body at once, so each network read holds hundreds of chunks.');
    console.log(row(['', 'first delta', 'total', 'CPU', 'total range', 'vs floor'], W));
    for (const w of WAYS) {
      const s = fullSum[w];
      // The Responses API's ways against their own floor (the same text in that API's events).
      const floor = w.startsWith('responses') ? fullSum.responsesFloor : fl;
      console.log(row([`  ${LABEL[w]}`, `${f1(s.firstMs)} ms`, `${f1(s.totalMs)} ms`, `${f1(s.cpuMs)} ms`, `${f1(s.totalMinMs)}-${f1(s.totalMaxMs)}`, x2(s.totalMs / floor.totalMs)], W));
    }
    console.log(`  first delta vs floor: Parley ${x2(fullSum.parley.firstMs / fl.firstMs)}, SDK ${x2(fullSum.sdk.firstMs / fl.firstMs)}. ` +
      'Parley hands out the deltas of one network read as one event,');
    console.log('  so its first delta comes after the whole first read is parsed; the floor and the SDK call back at the first chunk.');
    console.log('  CPU is the reading process\'s user + system time, GC and other threads included (the server is another process).');

    const pf = pacedSum.floor;
    console.log(`\nPaced: the server writes one chunk per turn of its event loop (a few chunks per read, as from a server that flushes`);
    console.log(`every token). Wall time is then the server's; the reader's CPU time is what tells the clients apart. ${PACED_ROUNDS} rounds.`);
    console.log(row(['', 'first delta', 'total', 'CPU', 'CPU vs floor', ''], W));
    for (const w of WAYS) {
      const s = pacedSum[w];
      console.log(row([`  ${LABEL[w]}`, `${f1(s.firstMs)} ms`, `${f1(s.totalMs)} ms`, `${f1(s.cpuMs)} ms`, x2(s.cpuMs / pf.cpuMs), ''], W));
    }

    const mf = memory.floor;
    console.log(`\nMemory, full speed: each way in its own child process (--expose-gc), one warm-up read, then the median of ${MEMORY_RUNS} reads.`);
    console.log(row(['', 'allocated', 'vs floor', 'peak heap', 'vs floor', 'peak RSS'], W));
    for (const w of WAYS) {
      const m = memory[w];
      console.log(row([`  ${LABEL[w]}`, `${f1(m.allocatedMb)} MB`, x2(m.allocatedMb / mf.allocatedMb), `${f1(m.peakHeapMb)} MB`, x2(m.peakHeapMb / mf.peakHeapMb), `${f1(m.maxRssMb)} MB`], W));
    }
    console.log('  allocated: JS heap bytes allocated during one read (freed by each GC, from v8.GCProfiler, plus what is left at the end).');
    console.log('  peak heap: highest heapUsed during the read (before each GC, and at the end) above heapUsed after a full GC at its start;');
    console.log('             it includes garbage not yet collected, so it tracks the young generation as much as what a client keeps.');
    console.log('  peak RSS:  the child\'s whole-life peak resident set (Node, the bundle with all three clients, 1 + 5 reads).');
    console.log('  Network buffers are outside the JS heap and are the same for every way.');

    const vsFloor = fullSum.parley.totalMs / fl.totalMs;
    const vsSdk = fullSum.sdk.totalMs / fullSum.parley.totalMs;
    const pairedFloor = paired(full.parley, full.floor);
    const pairedSdk = paired(full.sdk, full.parley);
    const perRound = (p: { median: number; p25: number; p75: number }, best: number) =>
      `per round: median ${x2(p.median)}, middle half ${p.p25.toFixed(2)}-${p.p75.toFixed(2)}; fastest reads: ${x2(best)}`;
    const pacedVsFloor = pacedSum.parley.cpuMs / pf.cpuMs;
    const responsesVsFloor = fullSum.responses.totalMs / fullSum.responsesFloor.totalMs;
    const pairedResponses = paired(full.responses, full.responsesFloor);
    const pacedVsSdk = pacedSum.sdk.cpuMs / pacedSum.parley.cpuMs;
    const targets = {
      parleyWithin115xOfFloor: { ratio: vsFloor, met: vsFloor <= 1.15 },
      parleyAtLeast3xFasterThanSdk: { ratio: vsSdk, met: vsSdk >= 3 },
      responsesWithin115xOfItsFloor: { ratio: responsesVsFloor, met: responsesVsFloor <= 1.15 },
    };
    console.log('\nTargets (issue 2), full-speed total time, ratio of the medians above (not enforced):');
    console.log(`  Parley within 1.15x of the floor:       ${x2(vsFloor)}  target ${targets.parleyWithin115xOfFloor.met ? 'met' : 'missed'}   (${perRound(pairedFloor, fullSum.parley.totalMinMs / fl.totalMinMs)})`);
    console.log(`  Parley at least 3x faster than the SDK: ${x2(vsSdk)}  target ${targets.parleyAtLeast3xFasterThanSdk.met ? 'met' : 'missed'}   (${perRound(pairedSdk, fullSum.sdk.totalMinMs / fullSum.parley.totalMinMs)})`);
    console.log(`  (paced, CPU: Parley ${x2(pacedVsFloor)} of the floor, the SDK ${x2(pacedVsSdk)} of Parley)`);
    console.log(`  Responses API within 1.15x of its floor: ${x2(responsesVsFloor)}  target ${targets.responsesWithin115xOfItsFloor.met ? 'met' : 'missed'}   (${perRound(pairedResponses, fullSum.responses.totalMinMs / fullSum.responsesFloor.totalMinMs)}; issue 39; ` +
      `paced CPU ${x2(pacedSum.responses.cpuMs / pacedSum.responsesFloor.cpuMs)})`);

    writeResults('client', load, {
      chunks: CHUNKS,
      bodyBytes,
      rounds: ROUNDS,
      seed,
      warmupRounds: WARMUP_ROUNDS,
      pacedRounds: PACED_ROUNDS,
      memoryRuns: MEMORY_RUNS,
      fullSpeed: fullSum,
      paced: pacedSum,
      memory,
      ratios: {
        fullSpeedTotalVsFloor: Object.fromEntries(WAYS.map((w) => [w, fullSum[w].totalMs / fl.totalMs])),
        fullSpeedFirstDeltaVsFloor: Object.fromEntries(WAYS.map((w) => [w, fullSum[w].firstMs / fl.firstMs])),
        pacedCpuVsFloor: Object.fromEntries(WAYS.map((w) => [w, pacedSum[w].cpuMs / pf.cpuMs])),
        allocatedVsFloor: Object.fromEntries(WAYS.map((w) => [w, memory[w].allocatedMb / mf.allocatedMb])),
        sdkVsParleyTotal: vsSdk,
        perRoundParleyVsFloor: pairedFloor,
        perRoundSdkVsParley: pairedSdk,
        responsesVsItsFloor: responsesVsFloor,
        perRoundResponsesVsItsFloor: pairedResponses,
      },
      targets,
      samples: { fullSpeed: full, paced: pacedSamples },
    });
  } finally {
    server.stdin?.end();
    server.kill();
  }
}

/** Profiling mode: reads `count` times one way only, e.g. `node --cpu-prof out/bench/client.js --repeat parley 200`. */
async function repeat(way: Way, count: number): Promise<void> {
  const { base, child: server } = await startServer();
  try {
    const read = prepare[way](base);
    const t0 = performance.now();
    for (let i = 0; i < count; i++) check(way, await read(() => undefined));
    console.log(`${LABEL[way]}: ${count} reads, ${f1((performance.now() - t0) / count)} ms each`);
  } finally {
    server.stdin?.end();
    server.kill();
  }
}

const arg = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv.slice(i + 1) : undefined;
};
const memoryArgs = arg('--memory');
const repeatArgs = arg('--repeat');
(memoryArgs ? memoryChild(memoryArgs[0] as Way, memoryArgs[1])
  : repeatArgs ? repeat(repeatArgs[0] as Way, Number(repeatArgs[1] ?? 100))
  : main()
).catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
