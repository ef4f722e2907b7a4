// `@` picker benchmark: a generated tree of 1,000, 5,000 and 20,000 files; for each, the picker's ranking of the whole
// kept list (rankMentionsInSlices, as the host runs it for one keystroke) against reading the same files in parallel
// with plain fs (64 at a time), measured in the same run. Prints medians and ratios, and writes bench/results/mentions.json.
// Built and run by scripts/bench.mjs. BENCH_ROUNDS changes the run. VS Code's own listing (findFiles, once per change)
// is not in it: it runs in VS Code's search process, not in the extension.
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { rankMentionsInSlices } from '../src/core/mentions';
import { machineLine, median, row, warnIfBusy, writeResults } from './stats';

const SIZES = [1_000, 5_000, 20_000];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
/** What a person types: the last file's exact name, a fuzzy query for it, and one letter (most files match). */
const QUERIES = ['zz-last-file.ts', 'zzlastf', 'e'];

const pathOf = (i: number, n: number): string => `packages/pkg${i % 50}/src/part${i % 7}/${i === n - 1 ? 'zz-last-file.ts' : `module-${i}.ts`}`;

async function makeTree(root: string, n: number): Promise<string[]> {
  const paths = Array.from({ length: n }, (_, i) => pathOf(i, n));
  for (const dir of new Set(paths.map((p) => p.slice(0, p.lastIndexOf('/'))))) await mkdir(join(root, dir), { recursive: true });
  for (let i = 0; i < n; i += 500) await Promise.all(paths.slice(i, i + 500).map((p) => writeFile(join(root, p), `export const x = ${p.length};\n`)));
  return paths;
}

/** Reads every file with plain fs, 64 at a time (all at once runs out of file handles at 20,000). */
async function readAll(root: string, files: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) await readFile(join(root, files[next++]));
  };
  await Promise.all(Array.from({ length: 64 }, worker));
}

async function time(run: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await run();
  return performance.now() - t;
}

async function main(): Promise<void> {
  const load = loadavg()[0];
  console.log(machineLine());
  warnIfBusy(load, 'all figures');
  const widths = [10, 22, 16, 16, 10];
  console.log(row(['files', 'query', 'picker ms', 'fs read ms', 'ratio'], widths));
  const figures: Record<string, unknown>[] = [];
  for (const n of SIZES) {
    const root = await mkdtemp(join(tmpdir(), 'parley-bench-mentions-'));
    try {
      const files = await makeTree(root, n);
      for (const q of QUERIES) {
        const picker: number[] = [];
        const read: number[] = [];
        for (let r = 0; r < ROUNDS + 1; r++) {
          const p = await time(async () => {
            const list = await rankMentionsInSlices(q, files, [], 50, () => false);
            if (list?.find((c) => c.kind === 'file')?.path !== files[n - 1] && q !== 'e') throw new Error(`@${q} did not find the last file`);
          });
          const f = await time(() => readAll(root, files));
          // The first round warms both up.
          if (r > 0) {
            picker.push(p);
            read.push(f);
          }
        }
        const pm = median(picker);
        const fm = median(read);
        figures.push({ files: n, query: q, pickerMs: pm, parallelReadMs: fm, ratio: pm / fm });
        console.log(row([String(n), q, pm.toFixed(1), fm.toFixed(1), `${(pm / fm).toPrecision(2)}x`], widths));
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }
  writeResults('mentions', load, { rounds: ROUNDS, figures });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
