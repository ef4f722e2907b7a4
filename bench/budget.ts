// Spend budget benchmark: what a `parley.budget` limit costs a request. Two parts, each against a baseline measured in
// the same run, in interleaved pairs in random order:
//   check: the request path as Requester.run takes it (BudgetGuard.check, chatAndLearn against a local server that
//          answers a short reply at once, the usage record appended to this window's log, the reservation released,
//          BudgetGuard.crossed), with four limits set (day and month, dollars and tokens, far from reached) against
//          the same path with no limit. The usage folder is real, in a temporary folder: a busy user's records over
//          30 days (and a year) in 3 windows' logs, and in one log per window per day (each extension host has a log
//          of its own, so a window reloaded daily leaves a new one).
//   watch: a reply of 2,000 deltas read through the same stream code, under the watch a blocking limit far away
//          gives it, against the same reply with no watch; at full speed and paced (a delta per server write).
// The server is bench/server.mjs in its own process, so CPU figures are the reading process's. Prints medians, p90
// and ratios, and writes them to bench/results/budget.json. Built and run by scripts/bench.mjs. BENCH_BUDGET_ROUNDS,
// BENCH_BUDGET_PER_DAY, BENCH_BUDGET_WATCH_ROUNDS and BENCH_SEED change the run; `--quick` runs the 30-day ledgers only.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as vscode from 'vscode';
import { chatAndLearn, memoryAdaptationStore } from '../src/core/adaptations';
import type { BudgetLimit } from '../src/core/budgetSettings';
import type { ClientOptions } from '../src/core/transport';
import { resolveEndpoint } from '../src/core/endpoint';
import { readProfiles } from '../src/core/profiles';
import type { RequestSettings } from '../src/core/request';
import type { ChatMessage, StreamEvent } from '../src/core/types';
import { recordFrom, type Price, type UsageRecord } from '../src/core/usageLedger';
import { usageLine } from '../src/core/usageLog';
import { BudgetGuard, type GuardedRequest } from '../src/vscode/budgetGuard';
import { UsageStore } from '../src/vscode/usageStore';
import { machineLine, quantile, random, row, spread, warnIfBusy, writeResults, x2 } from './stats';

const SHORT_REPLY = 60;
const LONG_REPLY = 2_000;
const ROUNDS = Number(process.env.BENCH_BUDGET_ROUNDS ?? 150);
const WARMUP = 10;
const WATCH_ROUNDS = Number(process.env.BENCH_BUDGET_WATCH_ROUNDS ?? 40);
/** Requests a day across all windows: a busy user's chat, tool rounds, inline completions and VS Code's chat. */
const PER_DAY = Number(process.env.BENCH_BUDGET_PER_DAY ?? 600);
const QUICK = process.argv.includes('--quick');

/** Models in the ledger, by ledger host, with their prices (dollars per million tokens). */
const PRICING: Record<string, Price> = {
  m: { input: 1, output: 2 },
  'gpt-4o': { input: 2.5, output: 10, cached: 1.25 },
  'anthropic/claude-sonnet-4': { input: 3, output: 15 },
  'qwen2.5-coder:7b': { input: 0, output: 0 },
};
const KINDS: Array<{ share: number; host: string; model: string; source: UsageRecord['source']; prompt: number; completion: number }> = [
  { share: 0.25, host: 'api.openai.com', model: 'gpt-4o', source: 'chat', prompt: 6000, completion: 600 },
  { share: 0.1, host: 'OpenRouter (openrouter.ai)', model: 'anthropic/claude-sonnet-4', source: 'chat', prompt: 12000, completion: 900 },
  { share: 0.52, host: '127.0.0.1:11434', model: 'qwen2.5-coder:7b', source: 'complete', prompt: 900, completion: 40 },
  { share: 0.1, host: 'api.openai.com', model: 'gpt-4o', source: 'vscode-chat', prompt: 3000, completion: 400 },
  { share: 0.03, host: 'api.openai.com', model: 'gpt-4o', source: 'compact', prompt: 20000, completion: 1200 },
];

/** Every limit far from reached: nothing is blocked or warned about, every request takes the whole path. */
const LIMITS: BudgetLimit[] = [
  { period: 'day', unit: 'dollars', amount: 1e6, action: 'block', source: 'user' },
  { period: 'month', unit: 'dollars', amount: 1e7, action: 'block', source: 'user' },
  { period: 'day', unit: 'tokens', amount: 1e12, action: 'block', source: 'user' },
  { period: 'month', unit: 'tokens', amount: 1e13, action: 'warn', source: 'user' },
];

interface Ledger {
  label: string;
  days: number;
  /** Windows' logs a day: 0 for the same 3 logs all along. */
  logsPerDay: number;
}

const LEDGERS: Ledger[] = [
  { label: '30 days, 3 logs', days: 30, logsPerDay: 0 },
  { label: '30 days, 3 logs a day', days: 30, logsPerDay: 3 },
  ...(QUICK ? [] : [
    { label: '365 days, 3 logs', days: 365, logsPerDay: 0 },
    { label: '365 days, 3 logs a day', days: 365, logsPerDay: 3 },
  ]),
];

/** Writes a busy user's records over `days` days, ending now, into the usage folder's logs; returns how many and the bytes. */
async function writeLedger(dir: string, l: Ledger, rand: () => number): Promise<{ records: number; files: number; bytes: number }> {
  await fs.mkdir(dir, { recursive: true });
  const fixed = [randomUUID(), randomUUID(), randomUUID()];
  const files = new Map<string, string[]>();
  const now = Date.now();
  let records = 0;
  for (let d = l.days - 1; d >= 0; d--) {
    const names = l.logsPerDay === 0 ? fixed : Array.from({ length: l.logsPerDay }, () => randomUUID());
    for (let i = 0; i < PER_DAY; i++) {
      // Today's records all lie before now, so that the day's limits count them.
      const at = d === 0 ? now - 1 - Math.floor(rand() * 8 * 3600_000) : now - d * 86_400_000 + Math.floor((rand() - 0.5) * 16 * 3600_000);
      let pick = rand();
      const kind = KINDS.find((k) => (pick -= k.share) < 0) ?? KINDS[0];
      const scale = 0.5 + rand();
      const prompt = Math.round(kind.prompt * scale);
      const completion = Math.round(kind.completion * scale);
      const r: UsageRecord = { at, model: kind.model, host: kind.host, prompt, completion, total: prompt + completion, estimated: rand() < 0.05, durationMs: Math.round(2000 * scale), source: kind.source };
      if (kind.source === 'chat' || kind.source === 'compact') r.id = randomUUID();
      if (kind.model === 'gpt-4o' && rand() < 0.5) r.cached = Math.round(prompt / 2);
      const name = names[Math.floor(rand() * names.length)];
      if (!files.has(name)) files.set(name, []);
      files.get(name)!.push(usageLine(r));
      records++;
    }
  }
  let bytes = 0;
  for (const [name, lines] of files) {
    const text = lines.join('');
    bytes += Buffer.byteLength(text);
    await fs.writeFile(join(dir, `${name}.jsonl`), text);
  }
  return { records, files: files.size, bytes };
}

/** In-memory global state, as VS Code's Memento. */
function memoryState(): vscode.Memento {
  const data = new Map<string, unknown>();
  return {
    keys: () => [...data.keys()],
    get: <T>(key: string, fallback?: T) => (data.has(key) ? (data.get(key) as T) : fallback),
    update: (key: string, value: unknown) => {
      if (value === undefined) data.delete(key);
      else data.set(key, value);
      return Promise.resolve();
    },
  } as vscode.Memento;
}

function startServer(chunks: number): Promise<{ base: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'bench', 'server.mjs'), String(chunks)], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ base: `http://127.0.0.1:${(JSON.parse(out.slice(0, nl)) as { port: number }).port}`, child });
    });
    child.on('exit', (code) => reject(new Error(`bench/server.mjs exited with ${code}`)));
  });
}

type Way = 'limited' | 'none';
const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are Parley, a concise and precise programming assistant inside VS Code.' },
  { role: 'user', content: 'Explain what this function does and suggest a better name.\n\n' + 'function f(a, b) { return a.filter((x) => b.includes(x)); }\n'.repeat(20) },
];

/** One request's path through the pieces Requester.run strings together, for a way (`limited`: LIMITS set). */
class Path {
  private readonly usage: UsageStore;
  private readonly guard: BudgetGuard;
  private readonly learnt = memoryAdaptationStore();
  private readonly host: string;
  private readonly opts: ClientOptions;
  private readonly settings: GuardedRequest['settings'];

  constructor(storage: string, private readonly base: string, readonly chunks: number, private readonly maxOutputTokens?: number) {
    this.usage = new UsageStore({ fsPath: storage } as vscode.Uri, memoryState());
    this.guard = new BudgetGuard(this.usage, memoryState());
    const endpoint = resolveEndpoint(`${base}/v1`);
    this.host = new URL(base).host;
    this.opts = { endpoint, maxRetries: 0, requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 };
    const { profiles } = readProfiles({ baseUrl: `${base}/v1`, model: 'm' }, []);
    this.settings = { budget: [], pricing: PRICING, profiles, model: 'm', profile: profiles[0] };
  }

  /** Reads every log once, as the window's first request or status bar render does; not timed. */
  async open(): Promise<void> {
    await this.usage.ledger();
  }

  /** Sends one request; resolves to the time of the budget's check and of the whole path, with the reply checked. */
  async run(way: Way): Promise<{ checkMs: number; totalMs: number; cpuMs: number }> {
    const settings = { ...this.settings, budget: way === 'limited' ? LIMITS : [] };
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const d = await this.guard.check({ settings, messages: MESSAGES, maxOutputTokens: this.maxOutputTokens, stream: {}, host: this.host, source: 'chat' });
    const checkMs = performance.now() - t0;
    if (d.kind === 'block') throw new Error(`a request was blocked: ${d.words}`);
    if (way === 'limited' && !d.watch) throw new Error('a request under a blocking limit was not watched');
    let text: string;
    try {
      const request: RequestSettings = { model: 'm', stream: true, maxTokens: this.maxOutputTokens };
      const outcome = await chatAndLearn(this.learnt, { ...this.opts, signal: d.watch?.signal }, request, MESSAGES, d.watch ? (e: StreamEvent) => d.watch!.onEvent(e) : undefined);
      const r = d.watch?.result(outcome.result) ?? outcome.result;
      if (r.ended !== 'done') throw new Error(`the reply ended '${r.ended}'${r.error ? `: ${r.error.message}` : ''}`);
      text = r.text;
      await this.usage.record(recordFrom(r.usage, { model: 'm', host: this.host, durationMs: 1, source: 'chat', at: Date.now(), id: randomUUID() }));
    } finally {
      await d.release?.();
    }
    if (way === 'limited' && (await this.guard.crossed(settings)).length > 0) throw new Error('a threshold was crossed');
    const totalMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (text !== 'tok '.repeat(this.chunks)) throw new Error(`the reply's text is not the server's (${text.length} characters)`);
    return { checkMs, totalMs, cpuMs: (cpu.user + cpu.system) / 1000 };
  }

  /** Only the reply, read under the watch `guard.check` gives (`limited`), or with none: the check is not timed. */
  async stream(way: Way, paced: boolean): Promise<{ totalMs: number; cpuMs: number }> {
    const settings = { ...this.settings, budget: way === 'limited' ? LIMITS : [] };
    const d = await this.guard.check({ settings, messages: MESSAGES, maxOutputTokens: this.maxOutputTokens, stream: {}, host: this.host, source: 'chat' });
    if (d.kind === 'block' || (way === 'limited' && !d.watch)) throw new Error('a request under a blocking limit was not watched');
    const opts = { ...this.opts, endpoint: resolveEndpoint(`${this.base}${paced ? '/paced' : ''}/v1`) };
    await new Promise((r) => setImmediate(r));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    try {
      const request: RequestSettings = { model: 'm', stream: true, maxTokens: this.maxOutputTokens };
      const outcome = await chatAndLearn(this.learnt, { ...opts, signal: d.watch?.signal }, request, MESSAGES, d.watch ? (e: StreamEvent) => d.watch!.onEvent(e) : undefined);
      const r = d.watch?.result(outcome.result) ?? outcome.result;
      const totalMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      if (r.ended !== 'done' || r.text.length !== 4 * this.chunks) throw new Error(`the reply ended '${r.ended}' with ${r.text.length} characters${r.error ? `: ${r.error.message}` : ''}`);
      return { totalMs, cpuMs: (cpu.user + cpu.system) / 1000 };
    } finally {
      await d.release?.();
    }
  }

  dispose(): void {
    this.usage.dispose();
  }
}

/** Runs `once` for both ways per pair, in random order, and keeps the samples after the warm-up. */
async function pairs<T>(once: (way: Way) => Promise<T>, warmup: number, count: number, rand: () => number): Promise<Record<Way, T[]>> {
  const out: Record<Way, T[]> = { limited: [], none: [] };
  for (let p = 0; p < warmup + count; p++) {
    const order: Way[] = rand() < 0.5 ? ['limited', 'none'] : ['none', 'limited'];
    for (const way of order) {
      const t = await once(way);
      if (p >= warmup) out[way].push(t);
    }
  }
  return out;
}

const f2 = (n: number) => n.toFixed(2);
const f3 = (n: number) => n.toFixed(3);
const p90 = (xs: number[]) => quantile(xs, 0.9);

interface CheckFigures {
  ledger: Ledger;
  records: number;
  files: number;
  megabytes: number;
  checkMs: { limited: number; limitedP90: number; none: number };
  requestMs: { limited: number; none: number; limitedP90: number; noneP90: number };
  extraMs: { median: number; p90: number; p25: number; p75: number };
  ratio: { median: number; p25: number; p75: number };
  extraCpuMs: number;
}

async function checkPart(root: string, base: string, l: Ledger, rand: () => number): Promise<CheckFigures> {
  const storage = join(root, `check-${l.days}-${l.logsPerDay}`);
  const written = await writeLedger(join(storage, 'usage'), l, rand);
  const path = new Path(storage, base, SHORT_REPLY);
  try {
    await path.open();
    const rounds = l.days > 30 ? Math.max(20, Math.round(ROUNDS / 3)) : ROUNDS;
    const s = await pairs((way) => path.run(way), WARMUP, rounds, rand);
    const extra = s.limited.map((t, i) => t.totalMs - s.none[i].totalMs);
    const ratio = s.limited.map((t, i) => t.totalMs / s.none[i].totalMs);
    const med = (w: Way, k: 'checkMs' | 'totalMs' | 'cpuMs') => quantile(s[w].map((t) => t[k]), 0.5);
    return {
      ledger: l,
      records: written.records,
      files: written.files,
      megabytes: written.bytes / 1e6,
      checkMs: { limited: med('limited', 'checkMs'), limitedP90: p90(s.limited.map((t) => t.checkMs)), none: med('none', 'checkMs') },
      requestMs: { limited: med('limited', 'totalMs'), none: med('none', 'totalMs'), limitedP90: p90(s.limited.map((t) => t.totalMs)), noneP90: p90(s.none.map((t) => t.totalMs)) },
      extraMs: { ...spread(extra), p90: p90(extra) },
      ratio: spread(ratio),
      extraCpuMs: quantile(s.limited.map((t, i) => t.cpuMs - s.none[i].cpuMs), 0.5),
    };
  } finally {
    path.dispose();
  }
}

interface WatchFigures {
  label: string;
  wallMs: Record<Way, number>;
  cpuMs: Record<Way, number>;
  wallRatio: { median: number; p25: number; p75: number };
  cpuRatio: { median: number; p25: number; p75: number };
}

async function watchPart(root: string, base: string, label: string, paced: boolean, maxOutputTokens: number | undefined, rand: () => number): Promise<WatchFigures> {
  const storage = join(root, `watch-${paced}-${maxOutputTokens}`);
  await writeLedger(join(storage, 'usage'), LEDGERS[0], rand);
  const path = new Path(storage, base, LONG_REPLY, maxOutputTokens);
  try {
    await path.open();
    const s = await pairs((way) => path.stream(way, paced), 3, WATCH_ROUNDS, rand);
    const med = (w: Way, k: 'totalMs' | 'cpuMs') => quantile(s[w].map((t) => t[k]), 0.5);
    return {
      label,
      wallMs: { limited: med('limited', 'totalMs'), none: med('none', 'totalMs') },
      cpuMs: { limited: med('limited', 'cpuMs'), none: med('none', 'cpuMs') },
      wallRatio: spread(s.limited.map((t, i) => t.totalMs / s.none[i].totalMs)),
      cpuRatio: spread(s.limited.map((t, i) => t.cpuMs / s.none[i].cpuMs)),
    };
  } finally {
    path.dispose();
  }
}

function printCheck(figures: CheckFigures[]): void {
  console.log(`\nThe request path (check, a ${SHORT_REPLY}-delta reply from the local server, the usage record, release, crossed), ` +
    `${ROUNDS} pairs on the 30-day ledgers, ${Math.max(20, Math.round(ROUNDS / 3))} on the year's:`);
  const W = [26, 18, 8, 20, 12, 12, 12, 10];
  console.log(row(['ledger', 'records (MB)', 'logs', 'check (p90)', 'no limit', 'request', 'extra', 'ratio'], W));
  for (const c of figures) {
    console.log(row([
      `  ${c.ledger.label}`, `${c.records.toLocaleString('en-US')} (${c.megabytes.toFixed(1)})`, String(c.files),
      `${f2(c.checkMs.limited)} (${f2(c.checkMs.limitedP90)})`, f3(c.checkMs.none), `${f2(c.requestMs.none)}`, `${f2(c.extraMs.median)}`, x2(c.ratio.median),
    ], W));
  }
  console.log('  check: BudgetGuard.check with the four limits, median ms (p90); no limit: the same call with none set.');
  console.log('  request: the whole path with no limit, median ms; extra: median of the paired differences (limits - none), ms;');
  console.log('  ratio: median of the paired ratios (limits / none).');
  for (const c of figures) {
    console.log(`  ${c.ledger.label}: extra p90 ${f2(c.extraMs.p90)} ms, middle half ${f2(c.extraMs.p25)} to ${f2(c.extraMs.p75)} ms; ` +
      `ratio middle half ${f2(c.ratio.p25)}-${f2(c.ratio.p75)}; extra CPU ${f2(c.extraCpuMs)} ms; request with limits p90 ${f2(c.requestMs.limitedP90)} ms, none p90 ${f2(c.requestMs.noneP90)} ms`);
  }
}

function printWatch(figures: WatchFigures[]): void {
  console.log(`\nThe stream watch: a ${LONG_REPLY.toLocaleString('en-US')}-delta reply read under the watch of a blocking limit far away vs no watch, ${WATCH_ROUNDS} pairs each:`);
  const W = [46, 12, 12, 12, 12, 12, 12];
  console.log(row(['reply', 'wall', 'no limit', 'ratio', 'CPU', 'no limit', 'ratio'], W));
  for (const w of figures) {
    console.log(row([`  ${w.label}`, `${f2(w.wallMs.limited)} ms`, `${f2(w.wallMs.none)} ms`, x2(w.wallRatio.median), `${f2(w.cpuMs.limited)} ms`, `${f2(w.cpuMs.none)} ms`, x2(w.cpuRatio.median)], W));
  }
  console.log('  Medians; ratios are medians of the paired ratios. CPU is this process\'s user + system time (the server is another process).');
  for (const w of figures) console.log(`  ${w.label}: wall ratio middle half ${f2(w.wallRatio.p25)}-${f2(w.wallRatio.p75)}, CPU ratio middle half ${f2(w.cpuRatio.p25)}-${f2(w.cpuRatio.p75)}`);
}

async function main(): Promise<void> {
  const seed = Number(process.env.BENCH_SEED ?? Date.now() % 1_000_000);
  const load = loadavg()[0];
  const rand = random(seed);
  const root = await fs.mkdtemp(join(tmpdir(), 'parley-bench-budget-'));
  const short = await startServer(SHORT_REPLY);
  const long = await startServer(LONG_REPLY);
  try {
    console.log(`Spend budget benchmark. ${machineLine()}, load average ${load.toFixed(2)} at the start; seed ${seed}.`);
    console.log(`Ledgers: ${PER_DAY} requests a day (chat, tool rounds, inline completions, VS Code's chat) in the real usage folder format,`);
    console.log(`in a temporary folder; limits: ${LIMITS.map((l) => `${l.period} ${l.unit} (${l.action})`).join(', ')}, none near.`);
    warnIfBusy(load, 'wall times are noisy');
    const checks: CheckFigures[] = [];
    for (const l of LEDGERS) checks.push(await checkPart(root, short.base, l, rand));
    printCheck(checks);
    const watches = [
      await watchPart(root, long.base, 'full speed, 4,096 reserved (never grows)', false, undefined, rand),
      await watchPart(root, long.base, 'paced, 4,096 reserved (never grows)', true, undefined, rand),
      await watchPart(root, long.base, 'paced, max output 1,000 (grows 3 times)', true, 1000, rand),
    ];
    printWatch(watches);
    writeResults('budget', load, { seed, perDay: PER_DAY, rounds: ROUNDS, watchRounds: WATCH_ROUNDS, loadAverageAtEnd: loadavg()[0], check: checks, watch: watches });
  } finally {
    short.child.stdin?.end();
    short.child.kill();
    long.child.stdin?.end();
    long.child.kill();
    await fs.rm(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.stack ?? e.message : e);
  process.exit(1);
});
