// A scripted model for the tool-card UI tests (tools*.e2e.mjs): asked with `tools`, it writes a short text and
// calls two built-in tools in parallel; asked again with their results, it answers in Markdown. Used as the demo
// endpoint's `respond` option; anything else (the model list) falls through to the demo endpoint.
import { DEFAULT_TIMEOUT_MS, hidden, step, visible, waitFor } from './harness.mjs';

/** The calls the model makes, in order: id, tool, arguments (as the model sends them), the card's main argument. */
export const CALLS = [
  { id: 'call_list_1', name: 'list_directory', args: '{"path": "."}', summary: '.' },
  { id: 'call_read_2', name: 'read_file', args: '{"path": "src/greet.ts"}', summary: 'src/greet.ts' },
];

export const FIRST_TEXT = 'Let me look at the project.';

export const FINAL_TEXT = [
  'The project is small: `src/greet.ts` exports two functions.',
  '',
  '- **`greet(name)`** returns `Hello, <name>!`.',
  '- **`shout(name)`** returns the same greeting in capitals.',
  '',
  'There is also `src/stats.py`, and a README that says what the folder is for.',
].join('\n');

/** Chat requests (the ones with messages) the endpoint received. */
export const chatRequests = (wb) => wb.endpoint.requests.filter((r) => Array.isArray(r.json?.messages));

/** Writes an SSE stream of chunks, a pause between them, then the usage chunk when asked for, then [DONE]. */
async function stream(request, res, deltas, finish) {
  const id = `chatcmpl-tools-${Date.now()}`;
  const model = request.json.model;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta, finishReason = null) => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let closed = false;
  res.on('close', () => (closed = true));
  for (const delta of deltas) {
    await new Promise((r) => setTimeout(r, 20));
    if (closed) return;
    res.write(`data: ${JSON.stringify(chunk(delta))}\n\n`);
  }
  res.write(`data: ${JSON.stringify(chunk({}, finish))}\n\n`);
  if (request.json.stream_options?.include_usage) {
    const prompt = Math.ceil(JSON.stringify(request.json.messages).length / 4);
    const completion = Math.ceil(JSON.stringify(deltas).length / 8);
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

/** Splits text into pieces of a few characters, as a model streams it. */
const pieces = (text, size) => text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];

/** The demo endpoint's `respond`: the first request of a turn gets the two calls, the one with their results the answer. */
export async function respond(request, res) {
  const messages = request.json?.messages;
  if (request.method !== 'POST' || !Array.isArray(messages)) return false;
  if (messages.some((m) => m.role === 'tool')) {
    await stream(request, res, [{ role: 'assistant', content: '' }, ...pieces(FINAL_TEXT, 24).map((content) => ({ content }))], 'stop');
    return true;
  }
  if (!Array.isArray(request.json.tools) || !request.json.tools.length) return false;
  await stream(request, res, [
    { role: 'assistant', content: '' },
    ...pieces(FIRST_TEXT, 10).map((content) => ({ content })),
    // Both calls start (id and name), then each one's arguments arrive in two pieces, as real servers send them.
    ...CALLS.map((c, index) => ({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] })),
    ...CALLS.flatMap((c, index) => [c.args.slice(0, 6), c.args.slice(6)].map((part) => ({ tool_calls: [{ index, function: { arguments: part } }] }))),
  ], 'tool_calls');
  return true;
}

/** Types a question into the composer and sends it with Enter; returns the new reply's article. */
export async function ask(wb, text) {
  const chat = wb.chatFrame();
  const box = chat.getByRole('combobox', { name: 'Message Parley' });
  const replies = chat.locator('article[aria-label="Parley"]');
  await visible(box, 'the composer');
  const before = await replies.count();
  await step(`asking "${text}"`, async () => {
    await box.fill(text);
    await box.press('Enter');
  });
  await waitFor(`a new reply to "${text}"`, async () => (await replies.count()) > before);
  return replies.nth(before);
}

/** The reply's tool cards, as the reader sees them: name, main argument, status word, status class, open or not. */
export function readCards(reply) {
  return step('reading the tool cards', () => reply.locator('.tool-card').evaluateAll((cards) => cards.map((c) => ({
    name: c.querySelector('.tool-name')?.textContent ?? '',
    arg: c.querySelector('.tool-arg')?.textContent ?? '',
    status: c.querySelector('.tool-status')?.textContent ?? '',
    statusClass: [...c.classList].find((k) => k.startsWith('status-')) ?? '',
    ms: c.querySelector('.tool-ms')?.textContent ?? '',
    open: c.querySelector('details')?.open ?? false,
  }))));
}

/** Waits until the card at `index` shows `status` (its status class, e.g. "done", "denied"). */
export async function cardStatus(reply, index, status, timeoutMs = DEFAULT_TIMEOUT_MS) {
  await visible(reply.locator('.tool-card').nth(index).and(reply.locator(`.tool-card.status-${status}`)), `tool card ${index + 1} with status "${status}"`, timeoutMs);
}

/** Waits for the reply to end: no Stop button, and its footer (Copy) drawn. */
export async function replyDone(wb, reply) {
  await hidden(wb.chatFrame().getByRole('button', { name: 'Stop' }), 'the end of the turn (the Stop button gone)', 30_000);
  await visible(reply.getByRole('button', { name: 'Copy reply' }), "the reply's footer");
}

/**
 * Checks the second request of the turn: it carries the assistant message with both calls, then one `tool` message
 * per call with its tool_call_id, in order. Returns the tool messages' contents by call id.
 */
export function checkSecondRequest(requests) {
  if (requests.length !== 2) throw new Error(`the endpoint got ${requests.length} chat requests in the turn, expected 2`);
  const [first, second] = requests;
  const offered = (first.json.tools ?? []).map((t) => t.function?.name);
  for (const c of CALLS) if (!offered.includes(c.name)) throw new Error(`the first request did not offer ${c.name}: tools were [${offered.join(', ')}]`);
  const messages = second.json.messages;
  const at = messages.findIndex((m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length);
  if (at < 0) throw new Error(`the second request has no assistant message with tool_calls: ${JSON.stringify(messages.map((m) => m.role))}`);
  const assistant = messages[at];
  const ids = assistant.tool_calls.map((c) => c.id);
  if (JSON.stringify(ids) !== JSON.stringify(CALLS.map((c) => c.id))) throw new Error(`the assistant message's calls are [${ids.join(', ')}], expected [${CALLS.map((c) => c.id).join(', ')}]`);
  assistant.tool_calls.forEach((c, i) => {
    if (c.function?.name !== CALLS[i].name) throw new Error(`call ${c.id} is named ${c.function?.name}, expected ${CALLS[i].name}`);
    if (JSON.parse(c.function.arguments).path !== JSON.parse(CALLS[i].args).path) throw new Error(`call ${c.id} went back with arguments ${c.function.arguments}, expected ${CALLS[i].args}`);
  });
  const tools = messages.slice(at + 1);
  const toolIds = tools.map((m) => `${m.role}:${m.tool_call_id}`);
  if (JSON.stringify(toolIds) !== JSON.stringify(CALLS.map((c) => `tool:${c.id}`))) {
    throw new Error(`after the assistant message the second request has [${toolIds.join(', ')}], expected one tool message per call, in order`);
  }
  return Object.fromEntries(tools.map((m) => [m.tool_call_id, typeof m.content === 'string' ? m.content : JSON.stringify(m.content)]));
}

/** The footer's usage text must end with "· 2 requests". */
export async function expectTwoRequests(reply) {
  const usage = reply.locator('.turn-footer .usage');
  const text = await waitFor("the footer's usage to count 2 requests", async () => {
    const t = (await usage.first().innerText({ timeout: 500 })).trim();
    return /· 2 requests$/.test(t) && t;
  });
  if (!/^[\d,]+ tokens · 2 requests$/.test(text)) throw new Error(`the footer says "${text}", expected "<n> tokens · 2 requests"`);
  return text;
}
