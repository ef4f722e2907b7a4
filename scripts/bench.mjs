// `npm run bench`: the client benchmark (Parley vs a bare fetch + eventsource-parser loop vs the openai SDK), then
// the render benchmark in Chromium. Each prints ratios against a baseline measured in the same run.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './vscode-host.mjs';

await esbuild.build({
  entryPoints: [join(ROOT, 'bench', 'client.ts')],
  outfile: join(ROOT, 'out', 'bench', 'client.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
});

let failed = false;
const run = (args) => {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) failed = true;
};
console.log('━━ client ━━');
run(['--expose-gc', join(ROOT, 'out', 'bench', 'client.js')]);
if (existsSync(join(ROOT, 'bench', 'render.mjs'))) {
  console.log('\n━━ render ━━');
  run([join(ROOT, 'bench', 'render.mjs')]);
}
process.exit(failed ? 1 : 0);
