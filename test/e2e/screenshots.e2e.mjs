// The panel in a light theme with a rendered answer, and the usage report (by model, endpoint and day; estimated
// share; $0 for a model priced at 0 against "no price set"), which survives a reload: screenshots for the README,
// checked as they are taken.
import { DEFAULT_TIMEOUT_MS, hidden, step, visible, waitFor } from './harness.mjs';

export const title = 'Light theme and the usage report';

/** A second model on the endpoint: a local one, priced at 0, whose server (like Ollama) reports no usage. */
const LOCAL_MODEL = 'local-llama';
const LOCAL_ANSWER = 'A local model answers, and its server reports no usage: Parley estimates the tokens.';

/**
 * The demo endpoint, plus LOCAL_MODEL in its model list; requests for LOCAL_MODEL get a short stream with no usage
 * chunk, even when stream_options.include_usage asks for one.
 */
function respond(request, res) {
  if (request.method === 'GET' && /\/models$/.test(request.path)) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: ['parley-demo', LOCAL_MODEL].map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'parley-demo' })) }));
    return true;
  }
  if (request.json?.model !== LOCAL_MODEL) return false;
  const chunk = (delta, finish = null) => ({ id: 'chatcmpl-local', object: 'chat.completion.chunk', created: 1_700_000_000, model: LOCAL_MODEL, choices: [{ index: 0, delta, finish_reason: finish }] });
  if (!request.json.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-local', object: 'chat.completion', created: 1_700_000_000, model: LOCAL_MODEL, choices: [{ index: 0, message: { role: 'assistant', content: LOCAL_ANSWER }, finish_reason: 'stop' }] }));
    return true;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const c of [chunk({ role: 'assistant', content: '' }), ...LOCAL_ANSWER.split(/(?<=,|:)/).map((content) => chunk({ content })), chunk({}, 'stop')]) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end('data: [DONE]\n\n');
  return true;
}

export const workbench = {
  workspace: 'basic',
  settings: { 'workbench.colorTheme': 'Default Light Modern', 'parley.pricing': { [LOCAL_MODEL]: { input: 0, output: 0 } } },
  endpoint: { respond },
};

export const timeoutMs = 90_000;

/** What the tests learn on the way: the tokens of each request, as the status bar showed them. */
const seen = { demoTokens: 0, localTokens: 0 };

async function ask(wb, text) {
  const chat = wb.chatFrame();
  const box = chat.getByRole('combobox', { name: 'Message Parley' });
  const replies = chat.locator('article[aria-label="Parley"]');
  const before = await replies.count();
  await step(`asking "${text}"`, async () => {
    await box.fill(text);
    await box.press('Enter');
  });
  await waitFor(`a new reply to "${text}"`, async () => (await replies.count()) > before);
  const reply = replies.nth(before);
  await hidden(chat.getByRole('button', { name: 'Stop' }), 'the end of the answer', 30_000);
  return reply;
}

/** The last request's tokens from the usage item's label ("Parley usage: last request ≈1,234 tokens (estimated)"). */
async function lastRequestTokens(wb, { estimated }) {
  const pattern = estimated ? /^Parley usage: last request ≈([\d,]+) tokens\b/ : /^Parley usage: last request ([\d,]+) tokens$/;
  const label = await waitFor(`the usage item to show the last request${estimated ? ' as an estimate (≈)' : ''}`, async () => {
    const l = await wb.statusBarItem('Parley usage').first().locator('[aria-label]').first().getAttribute('aria-label', { timeout: 500 });
    return pattern.test(l ?? '') && l;
  });
  return Number(label.match(pattern)[1].replace(/,/g, ''));
}

/**
 * Runs Show Usage and waits for a Markdown preview to show the report with `allTimeRequests` requests all-time;
 * returns the report's text and tables (rows keyed by column heading).
 */
async function showUsage(wb, allTimeRequests, timeoutMs = DEFAULT_TIMEOUT_MS) {
  await wb.runCommand('Parley: Show Usage');
  const allTime = new RegExp(`All time: [\\d,]+ tokens in ${allTimeRequests} requests?, of which \\d+% estimated`);
  const body = await waitFor(`a Markdown preview showing the usage report with ${allTimeRequests} requests all-time`, async () => {
    for (let i = 0; i < (await wb.markdownPreviews().count()); i++) {
      const b = wb.markdownPreviewFrame(i).locator('.markdown-body');
      if (allTime.test(await b.innerText({ timeout: 500 }).catch(() => ''))) return b;
    }
    return undefined;
  }, timeoutMs);
  return step('reading the usage report', () =>
    body.evaluate((el) => {
      const tables = {};
      for (const h2 of el.querySelectorAll('h2')) {
        const table = h2.nextElementSibling?.tagName === 'TABLE' ? h2.nextElementSibling : undefined;
        if (!table) continue;
        const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
        tables[h2.textContent.trim()] = [...table.querySelectorAll('tbody tr')].map((tr) => Object.fromEntries([...tr.cells].map((td, i) => [heads[i], td.textContent.trim()])));
      }
      return { text: el.innerText, tables };
    }));
}

/** The report's day key, as the extension makes it (local time; same machine, same time zone). */
const dayOf = (at) => {
  const d = new Date(at);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};
const num = (s) => Number(String(s).replace(/,/g, ''));
const share = (part, whole) => `${Math.round((part / whole) * 100)}%`;

function expectRow(rows, key, value, expected, where) {
  const row = rows?.find((r) => r[key] === value);
  if (!row) throw new Error(`${where}: no row for ${value} in ${JSON.stringify(rows)}`);
  for (const [k, v] of Object.entries(expected)) {
    if (row[k] !== String(v)) throw new Error(`${where}, ${value}: ${k} is "${row[k]}", expected "${v}" (row ${JSON.stringify(row)})`);
  }
  return row;
}

export const tests = {
  async 'a streamed answer with a code block renders in the light theme'(wb) {
    const chat = await wb.openParleyView();
    await visible(chat.getByText('Demo endpoint', { exact: true }), 'the "Demo endpoint" badge in the panel header');
    const reply = await ask(wb, 'How do I greet someone in TypeScript?');
    await visible(reply.locator('pre code .hljs-keyword').first(), 'the highlighted code block of the answer');
    const bg = await reply.evaluate((el) => getComputedStyle(el.ownerDocument.body).backgroundColor);
    const [r, g, b] = (bg.match(/\d+/g) ?? []).map(Number);
    if (!(r > 200 && g > 200 && b > 200)) throw new Error(`the panel background is ${bg}, not a light theme`);
    seen.demoTokens = await lastRequestTokens(wb, { estimated: false });
    await wb.screenshot('panel-light-code-block');
  },

  async 'a model picked with Select Model is used; its server sends no usage, so the tokens are estimated'(wb) {
    await wb.runCommand('Parley: Select Model');
    const widget = wb.page.locator('.quick-input-widget');
    await step(`typing ${LOCAL_MODEL} into the model list`, () => widget.locator('.quick-input-box input').fill(LOCAL_MODEL));
    await visible(widget.locator('.monaco-list-row.focused', { hasText: LOCAL_MODEL }), `${LOCAL_MODEL} selected in the model list`);
    await wb.page.keyboard.press('Enter');
    await hidden(widget, 'the model list');
    // The header's model control: a drop-down once the endpoint's models are known, else a button.
    const control = wb.chatFrame().locator('header').locator('select[aria-label="Model"], button.model-btn');
    await waitFor(`${LOCAL_MODEL} as the model in the panel header`, async () => {
      const el = control.first();
      const shown = (await el.evaluate((e) => e.tagName, undefined, { timeout: 500 })) === 'SELECT' ? await el.inputValue({ timeout: 500 }) : await el.innerText({ timeout: 500 });
      return shown.trim().startsWith(LOCAL_MODEL);
    });
    const before = wb.endpoint.requests.length;
    const reply = await ask(wb, 'Hello, local model');
    await visible(reply.getByText(LOCAL_ANSWER), "the local model's answer");
    const sent = wb.endpoint.requests.slice(before).find((r) => r.json?.messages);
    if (sent?.json.model !== LOCAL_MODEL) throw new Error(`the question went to model ${sent?.json.model}, not ${LOCAL_MODEL}`);
    seen.localTokens = await lastRequestTokens(wb, { estimated: true });
  },

  async 'Show Usage opens a read-only report by model, endpoint and day, with the estimated share and prices'(wb) {
    if (!seen.demoTokens || !seen.localTokens) throw new Error('the two earlier requests did not run');
    const tabsBefore = await wb.editorTabs();
    const dayBefore = dayOf(Date.now());
    const report = await showUsage(wb, 2, 30_000);
    const total = seen.demoTokens + seen.localTokens;
    const estimated = share(seen.localTokens, total);
    for (const line of [`This window: ${total.toLocaleString('en-US')} tokens in 2 requests`, `All time: ${total.toLocaleString('en-US')} tokens in 2 requests, of which ${estimated} estimated`]) {
      if (!report.text.includes(line)) throw new Error(`the report lacks "${line}":\n${report.text}`);
    }
    const { 'By model': byModel, 'By endpoint': byEndpoint, 'By day': byDay } = report.tables;
    // parley-demo reported its usage and has no price; the local model's tokens are estimated, and priced at 0.
    expectRow(byModel, 'Model', 'parley-demo', { Requests: 1, Total: seen.demoTokens.toLocaleString('en-US'), Estimated: '0%', Cost: 'no price set' }, 'By model');
    expectRow(byModel, 'Model', LOCAL_MODEL, { Requests: 1, Total: seen.localTokens.toLocaleString('en-US'), Estimated: '100%', Cost: '$0' }, 'By model');
    if (byModel.length !== 2) throw new Error(`By model has ${byModel.length} rows, expected 2`);
    expectRow(byEndpoint, 'Endpoint', `127.0.0.1:${wb.endpoint.port}`, { Requests: 2, Total: total.toLocaleString('en-US'), Estimated: estimated }, 'By endpoint');
    // A day's cost is known only when every model used that day has a price: parley-demo has none.
    const today = byDay?.find((r) => r.Day === dayBefore || r.Day === dayOf(Date.now()));
    if (!today) throw new Error(`By day has no row for today (${dayBefore}): ${JSON.stringify(byDay)}`);
    expectRow(byDay, 'Day', today.Day, { Requests: 2, Total: total.toLocaleString('en-US'), Estimated: estimated, Cost: 'no price set' }, 'By day');
    if (num(byModel[0].Prompt) + num(byModel[0].Completion) !== num(byModel[0].Total)) throw new Error(`prompt and completion do not add up: ${JSON.stringify(byModel[0])}`);

    // A read-only document shown as a preview: no Untitled editor to save or discard.
    const tabs = await wb.editorTabs();
    const active = tabs.find((t) => t.active);
    if (active?.label !== 'Preview Parley Usage.md') throw new Error(`the active tab is "${active?.label}", expected "Preview Parley Usage.md"`);
    const untitled = tabs.filter((t) => /untitled/i.test(`${t.label} ${t.resource}`));
    if (untitled.length) throw new Error(`Show Usage left an untitled editor: ${untitled.map((t) => t.label).join(', ')}`);
    if (tabs.length !== tabsBefore.length + 1) throw new Error(`Show Usage opened ${tabs.length - tabsBefore.length} tabs (${tabs.map((t) => t.label).join(', ')}), expected only the preview`);
    await wb.page.mouse.move(800, 450);
    await wb.screenshot('usage-report');
  },

  async 'the all-time totals survive a reload of the window'(wb) {
    const total = seen.demoTokens + seen.localTokens;
    if (!seen.demoTokens || !seen.localTokens) throw new Error('the two earlier requests did not run');
    const allTime = `All time: ${total.toLocaleString('en-US')} tokens in 2 requests`;
    // Close the report first: a Markdown preview of it that the reload restores can show "An unexpected error
    // occurred while restoring the Markdown preview" (a known bug, not fixed yet: see the closing note of stop 9).
    await wb.runCommand('View: Close All Editors');
    await waitFor('the editors to close', async () => (await wb.editorTabs()).length === 0);
    await wb.reload();
    const chat = await wb.openParleyView();
    await visible(chat.getByRole('combobox', { name: 'Message Parley' }), "the chat view's composer after the reload", 45_000);
    const report = await showUsage(wb, 2);
    if (!report.text.includes(allTime)) throw new Error(`after the reload the report lacks "${allTime}":\n${report.text}`);
    if (!report.text.includes('This window: 0 tokens in 0 requests')) throw new Error(`after the reload, this window's totals are not empty:\n${report.text}`);
    expectRow(report.tables['By model'], 'Model', 'parley-demo', { Requests: 1, Total: seen.demoTokens.toLocaleString('en-US') }, 'By model after the reload');
  },
};
