// History at its limits (issue 27): 1,000 conversations, one of 2,000 turns, one with 50 MB of images. Times
// HistoryStore's save, list and load on a temporary folder, and the size of what it keeps in global state. By hand:
// `node bench/history.mjs`. Prints figures from one run, never checked against a limit (these machines are noisy).
import * as esbuild from 'esbuild';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(ROOT, 'out', 'bench', 'history.js');
// Bundled with its lazily loaded image store inlined; damaged files (durability.js, which needs VS Code) never occur here.
const inlineImages = {
  name: 'inline-history-images',
  setup(build) {
    build.onResolve({ filter: /^\.\/historyImages\.js$/ }, () => ({ path: join(ROOT, 'src', 'vscode', 'historyImages.ts') }));
  },
};
await esbuild.build({
  entryPoints: [join(ROOT, 'src', 'vscode', 'history.ts')], outfile, bundle: true, platform: 'node', format: 'cjs',
  target: 'node20', external: ['vscode', './durability.js'], plugins: [inlineImages], logLevel: 'warning',
});
const { HistoryStore } = createRequire(import.meta.url)(outfile);

/** A stand-in for VS Code's Memento that says how many bytes it holds. */
class Memento {
  values = new Map();
  get(k) { return this.values.get(k); }
  update(k, v) { if (v === undefined) this.values.delete(k); else this.values.set(k, v); return Promise.resolve(); }
  bytes() { return Buffer.byteLength(JSON.stringify([...this.values])); }
}

const ms = (t0) => `${(performance.now() - t0).toFixed(1)} ms`;
const mb = (n) => `${(n / 1024 / 1024).toFixed(1)} MB`;
async function time(what, fn) {
  const t0 = performance.now();
  const r = await fn();
  console.log(`  ${what}: ${ms(t0)}`);
  return r;
}

function turns(n, text = 'A question of about this length, and an answer that goes on for a while longer than that.') {
  return Array.from({ length: n }, (_, i) => ({ id: `t${i}`, role: i % 2 ? 'assistant' : 'user', text: `${text} ${i}`, status: 'done', ...(i % 2 ? { usage: { prompt: 100, completion: 50, total: 150, estimated: false } } : {}) }));
}

const conv = (id, t, title = `Conversation ${id}`) => ({ id, title, createdAt: 1, updatedAt: Date.now() - Number.parseInt(id.slice(-4), 16), turns: t });

const dir = mkdtempSync(join(tmpdir(), 'parley-bench-history-'));
try {
  const state = new Memento();
  const store = new HistoryStore({ fsPath: dir }, state);
  const folder = join(dir, 'conversations');

  console.log('1,000 conversations of 6 turns');
  await time('saving them (one after another)', async () => { for (let i = 0; i < 1000; i++) await store.save(conv(`c${i.toString(16).padStart(15, '0')}`, turns(6))); });
  const list = await time('list(), first', () => store.list());
  await time('list(), again', () => store.list());
  console.log(`  listed: ${list.length}`);
  for (let i = 0; i < 1000; i += 2) rmSync(join(folder, `c${i.toString(16).padStart(15, '0')}.entry.json`));
  const repaired = await time('list() with 500 entries missing (each made again from its conversation)', () => store.list());
  console.log(`  listed: ${repaired.length}`);

  console.log('One conversation of 2,000 turns');
  const long = conv('long000000000000', turns(2000));
  await time('save', () => store.save(long));
  console.log(`  file: ${mb(statSync(join(folder, 'long000000000000.json')).size)}`);
  await time('load', () => store.load(long.id));
  await time('list() of 1,001', () => store.list());

  console.log('One conversation with 50 MB of images (10 images of 5 MB, as data URLs)');
  const image = (i) => `data:image/png;base64,${Buffer.alloc(5 * 1024 * 1024, i).toString('base64')}`;
  const withImages = conv('imgs000000000000', turns(20));
  for (let i = 0; i < 20; i += 2) withImages.turns[i].images = [{ name: `shot${i}.png`, dataUrl: image(i) }];
  await time('first save (writes the images once)', () => store.save(withImages));
  await time('a later save (what each save while a reply streams costs)', () => store.save(withImages));
  console.log(`  conversation file: ${mb(statSync(join(folder, 'imgs000000000000.json')).size)}`);
  const loaded = await time('load (images read back)', () => store.load(withImages.id));
  if (loaded.turns[2].images?.[0]?.dataUrl !== image(2)) throw new Error('the images did not come back whole');
  await time('a save of the loaded conversation', () => store.save(loaded));
  await time('list() of 1,002', () => store.list());

  await store.setOpen(withImages.id);
  console.log(`Global state kept by the history: ${state.bytes()} bytes (${[...state.values.keys()].join(', ')})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
