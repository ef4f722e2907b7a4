// Tool loop benchmark (issue 23: "the loop adds under 10 ms per round beyond tool time and network"). A local server
// answers every request at once: one tool call per round (read_file with a new path each round, so the repeat guard
// never fires), then a short text answer. Two ways, interleaved in random order, in one run:
//   loop:     runToolLoop (src/core/toolLoop.ts) with a host whose request is chatWithFallback against the server and
//             whose tool returns a constant string at once (tool time ~ 0);
//   baseline: the same requests, with the same message lists (built before the clock starts), sent back to back with
//             chatWithFallback, without the loop: the network + client floor.
// Overhead per round = (loop - baseline) / rounds. Prints medians and the ratio loop/baseline, and writes them to
// bench/results/toolLoop.json. Built and run by scripts/bench.mjs. BENCH_TOOL_ROUNDS, BENCH_TOOL_TURNS and
// BENCH_SEED change the run. The 10 ms is reported, never enforced.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import type { ClientOptions } from '../src/core/client';
import { resolveEndpoint } from '../src/core/endpoint';
import { chatWithFallback } from '../src/core/fallback';
import type { RequestSettings } from '../src/core/request';
import { runToolLoop, type RoundCall, type ToolLoopHost, type ToolLoopLimits, type ToolOutcome } from '../src/core/toolLoop';
import type { ChatMessage, ChatResult, ToolCall, ToolDefinition } from '../src/core/types';
import { machineLine, median, random, row, spread, warnIfBusy, writeResults, x2 } from './stats';

/** Rounds of tool calls per turn; a turn is ROUNDS + 1 requests (the last one answers with text). */
const ROUNDS = Number(process.env.BENCH_TOOL_ROUNDS ?? 10);
const TURNS = Number(process.env.BENCH_TOOL_TURNS ?? 300);
const WARMUP_TURNS = 10;
/** Issue 23's budget for the loop's own time per round. Reported, not enforced. */
const BUDGET_MS = 10;

const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', description: 'Reads a file of the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
];
const SETTINGS: RequestSettings = { model: 'm', stream: true, tools: TOOLS };
const LIMITS: ToolLoopLimits = { maxRounds: ROUNDS, maxTurnTokens: Number.MAX_SAFE_INTEGER };
const START: ChatMessage[] = [
  { role: 'system', content: 'You are Parley, a concise and precise programming assistant inside VS Code.' },
  { role: 'user', content: 'Read the files f0.txt onwards and tell me what they say.' },
];
/** What the tool returns, every time: a small file. */
const TOOL_RESULT = 'export const alpha = 1;\nexport const beta = 2;\n'.repeat(4);
const OUTCOME: ToolOutcome = { status: 'done', content: TOOL_RESULT };
const FINAL = 'They all say alpha and beta.';

const callId = (k: number) => `call_${k}`;
const callArgs = (k: number) => JSON.stringify({ path: `f${k}.txt` });

// The server's replies, built once per round number so that answering costs it one write.
const chunk = (choices: unknown[], usage?: unknown) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices, ...(usage ? { usage } : {}) })}\n\n`;
const toolReply = (k: number) =>
  chunk([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: callId(k), type: 'function', function: { name: 'read_file', arguments: callArgs(k) } }] }, finish_reason: null }]) +
  chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]) +
  chunk([], { prompt_tokens: 100 + 60 * k, completion_tokens: 12, total_tokens: 112 + 60 * k }) +
  'data: [DONE]\n\n';
const textReply =
  chunk([{ index: 0, delta: { role: 'assistant', content: FINAL }, finish_reason: null }]) +
  chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]) +
  chunk([], { prompt_tokens: 100 + 60 * ROUNDS, completion_tokens: 8, total_tokens: 108 + 60 * ROUNDS }) +
  'data: [DONE]\n\n';
const REPLIES = [...Array.from({ length: ROUNDS }, (_, k) => Buffer.from(toolReply(k))), Buffer.from(textReply)];

/**
 * The server: in this process (its work is the same for both ways, so it cancels out of the difference). The reply
 * depends on the request: a tool call while the messages carry fewer than ROUNDS tool results, the text answer after.
 * It keeps the bodies it received, so that the two ways can be checked to have sent the very same requests.
 */
function startServer(): Promise<{ server: Server; base: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      received.push(body);
      const { messages } = JSON.parse(body) as { messages: ChatMessage[] };
      let results = 0;
      for (const m of messages) if (m.role === 'tool') results++;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(REPLIES[Math.min(results, ROUNDS)]);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }));
  });
}

/** The host of the loop: requests through chatWithFallback, a tool that answers at once, no reader to stop it. */
class BenchHost implements ToolLoopHost {
  /** Each request's result, for the check after the clock stops (the baseline keeps them the same way). */
  readonly results: ChatResult[] = [];

  constructor(private readonly opts: ClientOptions) {}

  async request(messages: ChatMessage[]): Promise<{ result: ChatResult; tokens: number }> {
    const { result } = await chatWithFallback(this.opts, SETTINGS, messages, undefined);
    this.results.push(result);
    return { result, tokens: result.usage.total_tokens };
  }

  callId(round: number, index: number): string {
    return `bench.${round}.${index}`;
  }

  round(_text: string, _calls: RoundCall[]): void {}

  run(_call: RoundCall): Promise<ToolOutcome> {
    return Promise.resolve(OUTCOME);
  }

  stopped(): boolean {
    return false;
  }
}

/** The message lists of a turn's requests, as the loop builds them: request i carries i calls and their results. */
function messageLists(): ChatMessage[][] {
  const lists: ChatMessage[][] = [];
  const messages = [...START];
  for (let k = 0; k <= ROUNDS; k++) {
    lists.push([...messages]);
    const call: ToolCall = { id: callId(k), type: 'function', function: { name: 'read_file', arguments: callArgs(k) } };
    messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    messages.push({ role: 'tool', tool_call_id: call.id, content: TOOL_RESULT });
  }
  return lists;
}

type Way = 'loop' | 'baseline';
const LABEL: Record<Way, string> = {
  loop: 'runToolLoop + chatWithFallback',
  baseline: 'baseline: chatWithFallback back to back',
};

/** One turn of a way: resolves to the results of its requests, in order. */
type Turn = () => Promise<ChatResult[]>;

function prepare(base: string): Record<Way, Turn> {
  const opts: ClientOptions = { endpoint: resolveEndpoint(base), maxRetries: 0, requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 };
  const lists = messageLists();
  return {
    loop: async () => {
      const host = new BenchHost(opts);
      const end = await runToolLoop(START, host, LIMITS);
      if (end.guard) throw new Error(`the loop ended on its '${end.guard}' guard`);
      if (end.requests !== ROUNDS + 1) throw new Error(`the loop made ${end.requests} requests, expected ${ROUNDS + 1}`);
      return host.results;
    },
    baseline: async () => {
      const results: ChatResult[] = [];
      for (const messages of lists) results.push((await chatWithFallback(opts, SETTINGS, messages, undefined)).result);
      return results;
    },
  };
}

/** Throws, naming the way, unless every request was answered as the server answers it. */
function check(way: Way, results: ChatResult[]): void {
  const problems: string[] = [];
  if (results.length !== ROUNDS + 1) problems.push(`${results.length} requests, expected ${ROUNDS + 1}`);
  results.forEach((r, k) => {
    if (r.ended !== 'done') problems.push(`request ${k + 1} ended '${r.ended}'${r.error ? `: ${r.error.message}` : ''}`);
    else if (k < ROUNDS && (r.toolCalls.length !== 1 || r.toolCalls[0].function.arguments !== callArgs(k))) problems.push(`request ${k + 1} did not bring call ${k}`);
    else if (k === ROUNDS && r.text !== FINAL) problems.push(`the last request's text is ${JSON.stringify(r.text)}`);
  });
  if (problems.length) throw new Error(`${LABEL[way]}: ${problems.join('; ')}`);
}

interface Timing {
  totalMs: number;
  /** User + system CPU of this process during the turn: the server's share included (the same for both ways). */
  cpuMs: number;
}

async function timeOnce(way: Way, turn: Turn, received: string[]): Promise<{ timing: Timing; bodies: string[] }> {
  await new Promise((r) => setImmediate(r));
  received.length = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await turn();
  const totalMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  check(way, results);
  return { timing: { totalMs, cpuMs: (cpu.user + cpu.system) / 1000 }, bodies: [...received] };
}

/**
 * Runs both ways once per pair, in random order: noise that hits the machine for a while hits both, and the way
 * that runs second (with the first one's garbage to collect) is not always the same. Every pair also checks that
 * the loop sent byte for byte the requests the baseline sent.
 */
async function pairs(turns: Record<Way, Turn>, received: string[], warmup: number, count: number, seed: number): Promise<Record<Way, Timing[]>> {
  const samples: Record<Way, Timing[]> = { loop: [], baseline: [] };
  const rand = random(seed);
  for (let p = 0; p < warmup + count; p++) {
    const order: Way[] = rand() < 0.5 ? ['loop', 'baseline'] : ['baseline', 'loop'];
    const bodies = {} as Record<Way, string[]>;
    for (const way of order) {
      const { timing, bodies: b } = await timeOnce(way, turns[way], received);
      bodies[way] = b;
      if (p >= warmup) samples[way].push(timing);
    }
    const differs = bodies.loop.findIndex((b, i) => b !== bodies.baseline[i]);
    if (differs >= 0 || bodies.loop.length !== bodies.baseline.length) {
      throw new Error(`the loop and the baseline sent different requests (first at request ${differs + 1}): the baseline does not measure the same network work`);
    }
  }
  return samples;
}

const f2 = (n: number) => n.toFixed(2);
const f3 = (n: number) => n.toFixed(3);

async function main(): Promise<void> {
  const seed = Number(process.env.BENCH_SEED ?? Date.now() % 1_000_000);
  const load = loadavg()[0];
  const { server, base, received } = await startServer();
  try {
    const samples = await pairs(prepare(base), received, WARMUP_TURNS, TURNS, seed);
    const perRound = (way: Way, key: keyof Timing) => samples[way].map((t) => t[key] / ROUNDS);
    const loopMs = median(perRound('loop', 'totalMs'));
    const baseMs = median(perRound('baseline', 'totalMs'));
    const loopCpu = median(perRound('loop', 'cpuMs'));
    const baseCpu = median(perRound('baseline', 'cpuMs'));
    // Per pair: the same stretch of machine time for both ways, so what hit the machine then cancels out.
    const pairedOverhead = spread(samples.loop.map((t, i) => (t.totalMs - samples.baseline[i].totalMs) / ROUNDS));
    const pairedCpuOverhead = spread(samples.loop.map((t, i) => (t.cpuMs - samples.baseline[i].cpuMs) / ROUNDS));
    const pairedRatio = spread(samples.loop.map((t, i) => t.totalMs / samples.baseline[i].totalMs));
    const overheadMs = loopMs - baseMs;

    console.log(`Tool loop benchmark: turns of ${ROUNDS} rounds of one tool call each, then a text answer (${ROUNDS + 1} requests a turn),`);
    console.log('against a local server (node:http, in this process) that answers every request at once; the tool answers at once too.');
    console.log(`${machineLine()}. Medians of ${TURNS} turns of each way after ${WARMUP_TURNS} warm-up turns,`);
    console.log(`interleaved in pairs in random order (seed ${seed}); every pair checked to have sent the same ${ROUNDS + 1} request bodies.`);
    warnIfBusy(load, 'wall times are noisy');
    const W = [44, 16, 16, 12];
    console.log();
    console.log(row(['per round (a turn / rounds)', 'wall', 'CPU', 'vs baseline'], W));
    console.log(row([`  ${LABEL.loop}`, `${f2(loopMs)} ms`, `${f2(loopCpu)} ms`, x2(loopMs / baseMs)], W));
    console.log(row([`  ${LABEL.baseline}`, `${f2(baseMs)} ms`, `${f2(baseCpu)} ms`, x2(1)], W));
    console.log(row(['  overhead: difference of the medians', `${f3(overheadMs)} ms`, `${f3(loopCpu - baseCpu)} ms`, ''], W));
    console.log(row(['  overhead: median of the paired differences', `${f3(pairedOverhead.median)} ms`, `${f3(pairedCpuOverhead.median)} ms`, ''], W));
    console.log(`  paired differences, middle half: ${f3(pairedOverhead.p25)} to ${f3(pairedOverhead.p75)} ms a round (wall), ` +
      `${f3(pairedCpuOverhead.p25)} to ${f3(pairedCpuOverhead.p75)} ms (CPU)`);
    console.log(`  loop/baseline per pair: median ${x2(pairedRatio.median)}, middle half ${f2(pairedRatio.p25)}-${f2(pairedRatio.p75)}`);
    console.log('  CPU is this process\'s user + system time, the in-process server\'s included (the same work for both ways).');
    const met = pairedOverhead.median < BUDGET_MS;
    console.log(`\nTarget (issue 23), the loop's own time per round beyond tool time and network, under ${BUDGET_MS} ms (not enforced):`);
    console.log(`  ${f3(pairedOverhead.median)} ms per round (median of the paired differences): target ${met ? 'met' : 'missed'}`);

    writeResults('toolLoop', load, {
      rounds: ROUNDS,
      turns: TURNS,
      warmupTurns: WARMUP_TURNS,
      seed,
      perRoundMs: { loop: loopMs, baseline: baseMs, overhead: overheadMs, loopCpu, baselineCpu: baseCpu },
      ratio: loopMs / baseMs,
      paired: { overheadMs: pairedOverhead, cpuOverheadMs: pairedCpuOverhead, ratio: pairedRatio },
      target: { budgetMs: BUDGET_MS, overheadMs: pairedOverhead.median, met },
      samples,
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
