// Screenshots of the chat panel in the dark and light themes: setup card, a reply streaming with a code block,
// an error card, a reply that used tools (a card open) and a tool call waiting for approval. Usage: node test/webview-harness/screenshots.mjs [outdir] (default test/webview-harness/screenshots).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { buildWebview } from './build.mjs';
import { CHROMIUM, startHarness } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(process.argv[2] ?? join(here, 'screenshots'));
mkdirSync(outdir, { recursive: true });

const header = { model: 'gpt-4o-mini', endpoint: 'api.openai.com', demo: false, models: [], profile: 'Default', profiles: [] };
const setup = {
  reason: 'No API key for https://api.openai.com',
  origin: 'https://api.openai.com',
  actions: ['setApiKey', 'markNoKey', 'testConnection'],
  presets: [
    ['openai', 'OpenAI', true], ['openrouter', 'OpenRouter', true], ['groq', 'Groq', true], ['deepseek', 'DeepSeek', true],
    ['mistral', 'Mistral', true], ['ollama', 'Ollama (local)', false], ['lmstudio', 'LM Studio (local)', false], ['custom', 'Custom', true],
  ].map(([id, label, needsKey]) => ({ id, label, baseUrl: '', model: '', needsKey })),
};
const question = { id: 'u1', role: 'user', text: 'How do I debounce a function in TypeScript?', status: 'done' };
const answer = 'Wrap the function and restart a timer on every call; only the last call within the delay runs.\n\n' +
  '```typescript\nexport function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number) {\n' +
  '  let timer: ReturnType<typeof setTimeout> | undefined;\n  return (...args: A) => {\n    clearTimeout(timer);\n' +
  '    timer = setTimeout(() => fn(...args), ms);\n  };\n}\n```\n\nUse it for **resize** and **input** handlers, where only the final value matters.';

const toolQuestion = { id: 'u1', role: 'user', text: 'Why does the build fail?', status: 'done' };
const readFile = {
  id: 'call_1', name: 'read_file', summary: 'src/build.ts', arguments: '{"path":"src/build.ts","startLine":1,"endLine":40}',
  status: 'done', ms: 12, result: 'import { build } from \'esbuild\';\n\nexport async function bundle(entry: string) {\n  await build({ entryPoints: [entry], outdir: \'dist\' });\n}\n',
};
const toolSteps = [
  { text: 'Let me look at the build script and the errors first.', calls: [
    readFile,
    { id: 'call_2', name: 'get_diagnostics', summary: 'workspace', arguments: '{}', status: 'done', ms: 48, result: 'src/build.ts:4:33 error TS2322' },
  ] },
  { text: '', calls: [
    { id: 'call_3', name: 'read_file', summary: '.env', arguments: '{"path":".env"}', status: 'failed', ms: 1, result: 'Refused: .env matches parley.tools.exclude.' },
    { id: 'call_4', name: 'github_create_issue', summary: 'Build fails on outdir', arguments: '{"title":"Build fails on outdir"}', status: 'denied' },
  ] },
];
const toolAnswer = '`outdir` is set, but `entryPoints` gets a **string** where esbuild expects an array. Pass `[entry]` and the error goes.';
const toolHeader = { ...header, model: 'gpt-4.1' };

const scenes = {
  setup: [{ type: 'snapshot', conversation: { id: 'c', title: '', turns: [] }, generating: false, header, setup, pendingContext: [] }],
  streaming: [
    { type: 'snapshot', conversation: { id: 'c', title: 'Debounce', turns: [question] }, generating: true, header: { ...header, demo: true, endpoint: '127.0.0.1:11434', model: 'qwen2.5-coder' }, pendingContext: [] },
    { type: 'turnStart', turn: { id: 'a1', role: 'assistant', text: '', status: 'streaming', model: 'qwen2.5-coder', reasoningStartedAt: Date.now() - 3000 } },
    { type: 'delta', turnId: 'a1', reasoning: 'The user wants a generic debounce helper.' },
    { type: 'delta', turnId: 'a1', text: answer.slice(0, answer.indexOf('  };')) },
  ],
  error: [
    { type: 'snapshot', conversation: { id: 'c', title: 'Debounce', turns: [question, {
      id: 'a1', role: 'assistant', text: '', status: 'error', model: 'gpt-4o-mini',
      error: { kind: 'auth', title: 'The server rejected the API key (401)', detail: 'Incorrect API key provided: sk-proj-****…****. You can find your API key at https://platform.openai.com/account/api-keys.', hint: 'Keys are stored per endpoint; this one is for api.openai.com.', actions: ['setApiKey', 'retry'] },
    }] }, generating: false, header, pendingContext: [{ id: 'x', path: 'src/util/debounce.ts', startLine: 1, endLine: 18, language: 'typescript', truncated: false }] },
  ],
  tools: [
    { type: 'snapshot', conversation: { id: 'c', title: 'Build', turns: [toolQuestion, {
      id: 'a1', role: 'assistant', text: toolAnswer, status: 'done', model: 'gpt-4.1', steps: toolSteps, requests: 3,
      usage: { prompt: 5210, completion: 342, total: 5552, estimated: false },
    }] }, generating: false, header: toolHeader, pendingContext: [] },
    { type: 'tools', enabled: true, available: true },
  ],
  approval: [
    { type: 'snapshot', conversation: { id: 'c', title: 'Build', turns: [toolQuestion] }, generating: true, header: toolHeader, pendingContext: [] },
    { type: 'tools', enabled: true, available: true },
    { type: 'turnStart', turn: { id: 'a1', role: 'assistant', text: '', status: 'streaming', model: 'gpt-4.1' } },
    { type: 'delta', turnId: 'a1', text: 'Let me look at the build script and the errors first.' },
    { type: 'turnSteps', turnId: 'a1', steps: [toolSteps[0]] },
    { type: 'delta', turnId: 'a1', text: 'The error is in `bundle`. I can file an issue for it.' },
    { type: 'turnSteps', turnId: 'a1', steps: [toolSteps[0], { text: 'The error is in `bundle`. I can file an issue for it.', calls: [
      { id: 'a1.2.0', wireId: 'call_4', name: 'github_create_issue', summary: 'title: Build fails on outdir, body: npm run build exits 1…', arguments: '{"title":"Build fails on outdir","body":"npm run build exits 1: outdir is not set."}', status: 'waiting',
        question: [{ name: 'title', value: 'Build fails on outdir' }, { name: 'body', value: 'npm run build exits 1: outdir is not set.' }] },
    ] }] },
  ],
};

/** What to do in a scene once its messages are in: open the first tool card. */
const after = { tools: (page) => page.click('.tool-line') };

const work = mkdtempSync(join(tmpdir(), 'parley-shots-'));
const dist = await buildWebview({ outdir: work });
const harness = await startHarness({ distDir: dist });
const browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: CHROMIUM.args });
try {
  for (const theme of ['dark', 'light']) {
    for (const [name, messages] of Object.entries(scenes)) {
      const page = await browser.newPage({ viewport: { width: 400, height: 640 }, deviceScaleFactor: 1 });
      await page.goto(`${harness.url}?theme=${theme}`);
      await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'));
      await page.evaluate((ms) => { for (const m of ms) window.__host(m); }, messages);
      // Streamed text shows at the reply's next update (at most 128 ms on).
      await page.waitForTimeout(300);
      // A language's first block is highlighted in idle tasks just after it shows; a streaming fence stays plain.
      await page.waitForFunction(() => Array.from(document.querySelectorAll('.blk:not(.open) > .code-block:not([data-lang=""]) code')).every((c) => c.querySelector('span')));
      await after[name]?.(page);
      const file = join(outdir, `${theme}-${name}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      await page.close();
    }
  }
} finally {
  await browser.close();
  await harness.close();
  rmSync(work, { recursive: true, force: true });
}
