// Recordings of the real llama-server's bodies (test/fixtures/llama-server/, test/fixtures/completion/): each test
// compares the live body with its recording on the parts that stay the same from run to run, or, with
// PARLEY_LLAMA_RECORD=1, writes the recording from the live server (after a version bump).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';

/** PARLEY_LLAMA_RECORD=1: write the recordings instead of comparing. */
export const RECORD = process.env.PARLEY_LLAMA_RECORD === '1';

/** Keys whose values change from run to run, or with what the server was asked before (its prompt cache). */
const VARIES = new Set(['created', 'timings', 'media_marker', 'id_slot', 'cached_tokens']);

/**
 * The parts of a body that stay the same from one run to the next: creation times, random ids, timings, the random
 * media marker, the slot an idle server picked and the prompt tokens it found cached are blanked; strings go through
 * `scrub`.
 */
export function stable(value, scrub = (s) => s) {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((v) => stable(v, scrub));
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (VARIES.has(k)) out[k] = '<varies>';
      else if (k === 'id' && typeof v === 'string' && (/^chatcmpl-/.test(v) || /^[A-Za-z0-9]{32}$/.test(v))) out[k] = '<varies>';
      else out[k] = stable(v, scrub);
    }
    return out;
  }
  return value;
}

/**
 * Compares a live body with its recording at `path` (or, with PARLEY_LLAMA_RECORD=1, writes the recording) on their
 * stable parts. The recording keeps the body as the server sent it, after `scrub` (machine paths and ports).
 */
export function matchesRecording(path, text, scrub = (s) => s, parse = (t) => JSON.parse(t)) {
  const scrubbed = scrub(text);
  if (RECORD) writeFileSync(path, scrubbed);
  const recorded = readFileSync(path, 'utf8');
  assert.deepEqual(stable(parse(scrubbed), scrub), stable(parse(recorded), scrub), `${path}: the live server differs from the recording (PARLEY_LLAMA_RECORD=1 re-records it)`);
}
