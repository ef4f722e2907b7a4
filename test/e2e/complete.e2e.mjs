// Inline completions (issue 36) as a person meets them: typing in an editor shows ghost text from a loopback server
// that answers as llama.cpp's /infill does; Tab accepts it, Escape dismisses it, typing through it sends nothing, and
// after 100 fast keystrokes no request is left open at the server (each earlier one was closed by the client).
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { hidden, step, visible, waitFor } from './harness.mjs';

export const title = 'Inline completions (ghost text) from a completion model';

const MODEL = 'qwen2.5-coder:1.5b-base';

/**
 * The loopback llama.cpp: POST /infill answers `content` (or holds the answer while `hold` is set), in llama.cpp's shape
 * (test/fixtures/completion/llamacpp-infill.json); every request is recorded with how it ended.
 */
const infill = { content: 'a + b;', hold: false, requests: [] };
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (b) => (body += b));
  req.on('end', () => {
    if (req.url !== '/infill') {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end('{"error":{"message":"File Not Found","type":"not_found_error","code":404}}');
      return;
    }
    const rec = { prefix: JSON.parse(body).input_prefix, answered: false, closedEarly: false, at: Date.now(), closedAt: 0 };
    infill.requests.push(rec);
    res.on('close', () => {
      if (!res.writableFinished) [rec.closedEarly, rec.closedAt] = [true, Date.now()];
    });
    rec.answer = () => {
      if (rec.closedEarly || rec.answered) return;
      rec.answered = true;
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ index: 0, content: infill.content, tokens: [], id_slot: 0, stop: true, model: MODEL, tokens_predicted: 4, tokens_evaluated: 30, stop_type: 'word', stopping_word: '\n', tokens_cached: 29 }));
    };
    // Held requests are answered only when the test says so: only the client can end one before that.
    if (!infill.hold) rec.answer();
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const serverUrl = `http://127.0.0.1:${server.address().port}`;
// The run ends the process when its files are done; the server must not keep it alive.
server.unref();

export const workbench = {
  workspace: 'basic',
  settings: () => ({
    'parley.endpoints': [{ name: 'Local llama', baseUrl: serverUrl, model: MODEL }],
    'parley.completion.endpoint': 'Local llama',
    'parley.completion.model': MODEL,
  }),
};

export const timeoutMs = 90_000;

/** The ghost text shown in the active editor ('' when none). */
async function ghostText(wb) {
  return wb.activeEditor().locator('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text').evaluateAll((els) => els.map((e) => e.textContent ?? '').join('').replace(/\u00a0/g, ' ')).catch(() => '');
}

/** A new file in the workspace with `text`, opened, the cursor at its end. */
async function openNew(wb, name, text) {
  // Parley starts when a person first uses it (here its view; nothing starts it eagerly), and its completions with it:
  // the status item says they are there.
  await wb.openParleyView();
  await visible(wb.statusBarItem('Parley completions'), 'the completions status item');
  writeFileSync(join(wb.folder, 'src', name), text);
  await wb.openFile(`src/${name}`);
  await step('clicking into the editor', () => wb.activeEditor().locator('.view-lines').click());
  await wb.page.keyboard.press('Control+End');
}

export const tests = {
  async 'typing shows ghost text from the server; Tab accepts it'(wb) {
    await openNew(wb, 'add.ts', 'function add(a: number, b: number) {\n');
    await wb.page.keyboard.type('  return ', { delay: 60 });
    await waitFor('the ghost text "a + b;"', async () => (await ghostText(wb)).includes('a + b;'));
    await visible(wb.statusBarItem('Parley completions on'), 'the completions status item, on');
    await wb.screenshot('complete-ghost-text');
    await wb.page.keyboard.press('Tab');
    await waitFor('the line accepted', async () => (await wb.activeEditorText()).includes('return a + b;'));
    await hidden(wb.activeEditor().locator('.ghost-text-decoration'), 'the ghost text, once accepted');
  },

  async 'Escape dismisses the ghost text and inserts nothing'(wb) {
    await openNew(wb, 'total.ts', '');
    await wb.page.keyboard.type('const total = ', { delay: 60 });
    await waitFor('the ghost text', async () => (await ghostText(wb)).includes('a + b;'));
    await wb.page.keyboard.press('Escape');
    await waitFor('the ghost text gone', async () => !(await ghostText(wb)).includes('a + b;'));
    const text = await wb.activeEditorText();
    if (text.trim() !== 'const total =') throw new Error(`the editor holds ${JSON.stringify(text)}, expected only what was typed`);
  },

  async 'typing through the suggestion sends nothing; the rest stays shown'(wb) {
    await openNew(wb, 'sum.ts', '');
    await wb.page.keyboard.type('const sum = ', { delay: 60 });
    await waitFor('the ghost text', async () => (await ghostText(wb)).includes('a + b;'));
    const sent = infill.requests.length;
    await wb.page.keyboard.type('a + ', { delay: 120 });
    await waitFor('the rest of the suggestion, "b;"', async () => (await ghostText(wb)).trim() === 'b;');
    if (infill.requests.length !== sent) throw new Error(`typing through the suggestion sent ${infill.requests.length - sent} request(s)`);
    await wb.page.keyboard.press('Tab');
    await waitFor('the whole line', async () => (await wb.activeEditorText()).includes('const sum = a + b;'));
  },

  async 'after 100 fast keystrokes no request is left open at the server'(wb) {
    infill.hold = true;
    infill.content = 'z';
    await openNew(wb, 'keys.ts', '');
    const first = infill.requests.length;
    const mine = () => infill.requests.slice(first);
    // Ten bursts of ten keys; after each burst a pause until its request has gone out (the server holds its answer).
    for (let burst = 0; burst < 10; burst++) {
      const before = infill.requests.length;
      await wb.page.keyboard.type('abcdefghij', { delay: 15 });
      await waitFor(`a request after burst ${burst + 1}`, () => infill.requests.length > before);
    }
    // Settled: no request has come for a second and a half after the last keystroke's.
    let seen = -1;
    let since = Date.now();
    await waitFor('the requests to settle', () => {
      if (mine().length !== seen) [seen, since] = [mine().length, Date.now()];
      return Date.now() - since > 1500;
    }, 20_000);
    const open = mine().filter((r) => !r.closedEarly);
    if (mine().length < 10) throw new Error(`only ${mine().length} requests reached the server`);
    // Every request before the last was closed by the client; the last one may still wait for its answer (VS Code may
    // also have given up on it, which closes it too).
    if (open.some((r) => r !== mine().at(-1))) throw new Error(`earlier request(s) left open: ${JSON.stringify(open.map((r) => r.prefix.length))}`);
    const last = mine().at(-1);
    console.log(`      (${mine().length} requests; the last ${last.closedEarly ? `closed by the client after ${last.closedAt - last.at} ms` : 'still open, answered now'})`);
    infill.hold = false;
    for (const r of open) r.answer();
    if (mine().some((r) => !r.closedEarly && !r.answered)) throw new Error('a request is still open at the server');
    infill.content = 'a + b;';
  },
};
