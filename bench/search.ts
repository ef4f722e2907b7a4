// search_text benchmark (issue 33: "33 s over 5,000 files"). On generated folders of 1,000, 5,000 and 20,000 small
// files, in one run, three ways over the same sorted paths:
//   engine:   what search_text does per local file, 16 at a time (mapOrdered, SEARCH_READ_AHEAD): the link check
//             (realpath), open without following a link, stat, the proof that the open file is the checked path
//             (isOpenedPath), the read (readUpTo), the binary sniff and decode, and the match in the worker (LineSearch),
//             consumed in path order;
//   serial:   the same steps one file after another (how search_text read before issue 33);
//   baseline: plain fs.readFile of every file, 64 at a time, no checks and no matching.
// Prints medians and the ratios engine/baseline and serial/baseline. VS Code's listing (findFiles) and its file
// system API are not in it: on code-server each call through vscode.workspace.fs costs a few ms more, which the 16
// reads in flight overlap. Built and run by scripts/bench.mjs; BENCH_SEARCH_RUNS changes the run count.
import { constants, promises as fs } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';
import { mapOrdered } from '../src/core/orderedPool';
import { compileQuery, decodeText, looksBinary } from '../src/core/toolText';
import { isOpenedPath, readUpTo } from '../src/vscode/tools/localRead';
import { LineSearch } from '../src/vscode/tools/searchEngine';
import { machineLine, median, row, warnIfBusy, writeResults, x2 } from './stats';

const SIZES = [1000, 5000, 20_000];
const RUNS = Number(process.env.BENCH_SEARCH_RUNS ?? 5);
const READ_AHEAD = 16;
const MAX_BYTES = 1024 * 1024;
const BASELINE_IN_FLIGHT = 64;

async function generate(root: string, n: number): Promise<string[]> {
  const files: string[] = [];
  for (let d = 0; d < Math.ceil(n / 100); d++) await fs.mkdir(path.join(root, `d${String(d).padStart(3, '0')}`), { recursive: true });
  for (let i = 0; i < n; i++) files.push(path.join(root, `d${String(Math.floor(i / 100)).padStart(3, '0')}`, `f${String(i).padStart(5, '0')}.ts`));
  for (let i = 0; i < n; i += 500) {
    await Promise.all(files.slice(i, i + 500).map((f, k) => fs.writeFile(f, `// file ${i + k}\nexport const value${i + k} = ${i + k};\n${'const filler = "lorem ipsum dolor";\n'.repeat(20)}${i + k === n - 1 ? 'needle\n' : ''}`)));
  }
  return files.sort();
}

/** One file as search_text handles a local file: checked, opened, proven, read, sniffed, decoded, matched. */
async function searchOne(file: string, search: LineSearch): Promise<number> {
  // Twice, as search_text does: the link check before the read, and the read's own check.
  await fs.realpath(file);
  const real = await fs.realpath(file);
  const h = await fs.open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  let bytes: Uint8Array;
  try {
    const stat = await h.stat();
    if (!(await isOpenedPath(h, stat, real))) throw new Error(`${file} changed`);
    bytes = await readUpTo(h, stat.size, MAX_BYTES + 1);
  } finally {
    await h.close();
  }
  if (looksBinary(bytes)) return 0;
  return (await search.match(decodeText(bytes), 50)).matches.length;
}

async function engine(files: string[]): Promise<number> {
  const search = new LineSearch(compileQuery('needle', false, false), new AbortController().signal);
  let found = 0;
  try {
    for await (const r of mapOrdered(files, READ_AHEAD, (f) => searchOne(f, search), new AbortController().signal)) {
      if (!r.ok) throw r.error;
      found += r.value;
    }
  } finally {
    search.dispose();
  }
  return found;
}

async function serial(files: string[]): Promise<number> {
  const search = new LineSearch(compileQuery('needle', false, false), new AbortController().signal);
  let found = 0;
  try {
    for (const f of files) found += await searchOne(f, search);
  } finally {
    search.dispose();
  }
  return found;
}

/** Plain reads, BASELINE_IN_FLIGHT at a time (all at once runs out of file handles at 20,000). */
async function baseline(files: string[]): Promise<number> {
  let next = 0;
  let bytes = 0;
  const reader = async () => {
    while (next < files.length) bytes += (await fs.readFile(files[next++])).length;
  };
  await Promise.all(Array.from({ length: BASELINE_IN_FLIGHT }, reader));
  return bytes > 0 ? 1 : 0;
}

async function time(f: () => Promise<number>, expect: number): Promise<number> {
  const start = performance.now();
  const found = await f();
  const ms = performance.now() - start;
  if (found !== expect) throw new Error(`found ${found} matches, expected ${expect}`);
  return ms;
}

async function main(): Promise<void> {
  const load = loadavg()[0];
  console.log(`search_text: ${machineLine()}, ${RUNS} runs per size, ${READ_AHEAD} reads in flight`);
  warnIfBusy(load, 'every figure');
  const widths = [8, 12, 12, 14, 16, 16];
  console.log(row(['files', 'engine ms', 'serial ms', 'baseline ms', 'engine/baseline', 'serial/baseline'], widths));
  const figures: Record<string, unknown> = {};
  for (const n of SIZES) {
    const root = await fs.mkdtemp(path.join(tmpdir(), 'parley-bench-search-'));
    try {
      const files = await generate(root, n);
      await baseline(files);
      await engine(files);
      const e: number[] = [];
      const s: number[] = [];
      const b: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        // Interleaved, so a busy moment of the machine falls on all three.
        b.push(await time(() => baseline(files), 1));
        e.push(await time(() => engine(files), 1));
        s.push(await time(() => serial(files), 1));
      }
      const [me, ms, mb] = [median(e), median(s), median(b)];
      console.log(row([String(n), me.toFixed(0), ms.toFixed(0), mb.toFixed(0), x2(me / mb), x2(ms / mb)], widths));
      figures[String(n)] = { engineMs: me, serialMs: ms, baselineMs: mb, engineOverBaseline: me / mb, serialOverBaseline: ms / mb };
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  }
  writeResults('search', load, { runs: RUNS, readAhead: READ_AHEAD, sizes: figures });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
