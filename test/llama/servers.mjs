// The real llama-servers that Parley's own code is tested against (test/llama/*.test.ts, bundled to out/test/llama):
// started once by mocha's global set-up (`mocha --require test/llama/servers.mjs`, see `npm run test:llama`), from
// plain JavaScript, because a CJS test bundle cannot load scripts/llama-server.mjs (import.meta.url is empty there).
// Their addresses and the scripted models' replies reach the tests in PARLEY_LLAMA_SERVERS (read by servers.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLlamaServer } from '../../scripts/llama-server.mjs';
import { writeScriptedModel } from '../support/scriptedModel.mjs';

export const LLAMA_SERVERS_ENV = 'PARLEY_LLAMA_SERVERS';
const KEY = 'sk-parley-llama-key';

let dir;
let started = [];

/** What the model with FIM tokens answers a fill-in-the-middle prompt (the fixtures' completions say the same). */
const FIM_REPLY = 'a + b';

/**
 * Four servers, started side by side: `single` runs one model at -c 2048 (the window of the issue), `stop` the same
 * model at 262,144 (a never-ending reply that would stream for minutes), `router` two models from a --models-dir, one
 * given -c 2048 by a preset and one at its own 8,192, and `infill` a model with FIM tokens at -c 8192 (llama.cpp puts
 * other files' chunks into an infill prompt only with room to spare beyond its batch of 2,048).
 */
export async function mochaGlobalSetup() {
  dir = mkdtempSync(join(tmpdir(), 'parley-llama-parley-'));
  const model = writeScriptedModel(join(dir, 'tiny.gguf'));
  const fimModel = writeScriptedModel(join(dir, 'tiny-fim.gguf'), { fim: FIM_REPLY });
  const routerDir = join(dir, 'router');
  const preset = join(dir, 'preset.ini');
  mkdirSync(routerDir);
  writeScriptedModel(join(routerDir, 'tiny-a.gguf'), { contextLength: 4096 });
  writeScriptedModel(join(routerDir, 'tiny-b.gguf'), { contextLength: 8192, scripts: [{ name: 'plain', reply: 'I am model B.' }, { name: 'answer', reply: 'B read it.' }] });
  writeFileSync(preset, '[tiny-a]\nc = 2048\n');
  const results = await Promise.allSettled([
    startLlamaServer({ model: model.file, ctx: 2048, apiKey: KEY }),
    startLlamaServer({ model: model.file, ctx: 262_144, apiKey: KEY }),
    startLlamaServer({ routerModelsDir: routerDir, apiKey: KEY, extraArgs: ['--models-preset', preset] }),
    startLlamaServer({ model: fimModel.file, ctx: 8192, apiKey: KEY }),
  ]);
  started = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    await mochaGlobalTeardown();
    throw failed.reason;
  }
  const [single, stop, router, infill] = started;
  const expected = Object.fromEntries(Object.entries(model.expected).map(([name, r]) => [name, { text: r.text, loop: r.loop }]));
  const fim = { text: fimModel.fim.text, pieces: fimModel.fim.pieces.length };
  process.env[LLAMA_SERVERS_ENV] = JSON.stringify({ key: KEY, single: single.url, stop: stop.url, router: router.url, infill: infill.url, expected, fim });
}

export async function mochaGlobalTeardown() {
  await Promise.all(started.map((s) => s.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
}
