// Time to first text through VS Code's language model API (Parley as a LanguageModelChatProvider) against Parley's
// own request, on the same local server, in the real VS Code. It needs an extension host, so it runs the measurement
// test of test/integration/lmProvider.test.ts through the integration runner and prints its figures: the medians for a
// reply whole at once and for one that pauses after its first text, and the differences (issue 24's target: within
// 15 ms). A report, never a check.
// `node bench/lmProvider.mjs` (the set-up of `npm test` first: scripts/vscode-host.mjs).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run-integration.mjs'), 'main'], {
  cwd: ROOT,
  env: { ...process.env, PARLEY_TEST_GREP: 'measurement: time to first text', PARLEY_TEST_VERBOSE: '1' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let figures = 0;
let buffered = '';
child.stdout.on('data', (b) => {
  buffered += b.toString();
  const lines = buffered.split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) {
    const at = line.indexOf('[measure]');
    if (at >= 0) {
      figures++;
      console.log(line.slice(at));
    } else if (/passing|failing|✗/.test(line)) {
      console.log(line.trim());
    }
  }
});
child.on('exit', (code) => {
  if (figures === 0) console.error('bench/lmProvider: the measurement printed nothing (see the run above)');
  process.exit(code === 0 && figures > 0 ? 0 : 1);
});
