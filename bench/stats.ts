// What the benchmarks share: a seeded random order, order statistics (a quantile with linear interpolation, the
// median, the middle half), the machine they ran on, the cells of their tables, and the results file each writes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** A seeded generator (mulberry32), so that a run's order can be reproduced. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The q-quantile (0..1) of xs, interpolated between the two nearest samples. */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = q * (s.length - 1);
  const lo = Math.floor(at);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (at - lo);
}

export function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

/** The median and the middle half (25th to 75th percentile). */
export function spread(xs: number[]): { median: number; p25: number; p75: number } {
  return { median: quantile(xs, 0.5), p25: quantile(xs, 0.25), p75: quantile(xs, 0.75) };
}

/** The machine as the benchmarks print it: "Node v22.12.0, <CPU model> x8". */
export function machineLine(): string {
  return `Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} x${cpus().length}`;
}

/**
 * Prints a warning when the machine was busy at the start (load average above half its CPUs); `noisy` says which
 * figures that makes noisy.
 */
export function warnIfBusy(load: number, noisy: string): void {
  if (load > cpus().length / 2) {
    console.log(`Warning: the machine was busy at the start (load average ${load.toFixed(1)} on ${cpus().length} CPUs): ${noisy}.`);
  }
}

/** A ratio as printed: "1.04x". */
export const x2 = (n: number): string => `${n.toFixed(2)}x`;

/** One table row: the first cell left-aligned, the others right-aligned, each to its width. */
export const row = (cells: string[], widths: number[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[0]) : c.padStart(widths[i]))).join('');

/**
 * Writes a benchmark's figures to bench/results/<name>.json, after what every result carries: when, on which Node
 * and CPU, and the machine's load when the run began (a busy machine explains a bad figure).
 */
export function writeResults(name: string, loadAtStart: number, figures: Record<string, unknown>): void {
  mkdirSync('bench/results', { recursive: true });
  const out = {
    at: new Date().toISOString(),
    node: process.version,
    cpu: `${cpus()[0]?.model ?? 'unknown'} x${cpus().length}`,
    loadAverageAtStart: loadAtStart,
    ...figures,
  };
  writeFileSync(`bench/results/${name}.json`, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\nWritten to bench/results/${name}.json`);
}
