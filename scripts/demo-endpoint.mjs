// A local OpenAI-compatible server with canned answers, for `npm start` and the UI tests; no model behind it.
//
// It speaks the real protocol on 127.0.0.1: POST /v1/chat/completions (SSE stream with a usage chunk when
// stream_options.include_usage is set, or one JSON response), JSON mode (`response_format: json_object`) answering
// {"language","filename","code"}, and GET /v1/models listing `parley-demo` (Parley's panel says "Demo endpoint" for that model
// on a loopback address). The paths without /v1 work too.
// Run alone: node scripts/demo-endpoint.mjs [port]
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The one model this endpoint offers (DEMO_MODEL in src/core/presets.ts). */
export const DEMO_MODEL = 'parley-demo';

const GREETING = `Hello! This is **Parley's demo endpoint**: a small local server that streams canned answers, so you can try Parley without an API key or a model. Point \`parley.baseUrl\` at a real OpenAI-compatible server (OpenAI, Ollama, LM Studio, vLLM…) for real answers.

Here is some code, to show how answers render:

\`\`\`ts
/** Greets someone, politely. */
export function greet(name: string): string {
  return \`Hello, \${name}!\`;
}
\`\`\`

Ask me to *explain* something, or for a *long* answer to try **Stop**.`;

const EXPLANATION = `This code defines a small, self-contained function. Step by step:

1. It takes its input as a parameter, so it has **no hidden state**.
2. It builds the result with a template string.
3. It returns the result instead of printing it, which keeps it easy to test.

A test for it could look like this:

\`\`\`ts
import * as assert from 'node:assert/strict';
assert.equal(greet('Ada'), 'Hello, Ada!');
\`\`\`

*(A canned explanation from the demo endpoint: it did not read your code.)*`;

const LONG = [
  '# A long answer',
  '',
  'This answer streams slowly and for a while, so that you can press **Stop** in the middle of it.',
  '',
  ...Array.from({ length: 40 }, (_, i) => `${i + 1}. Paragraph ${i + 1} of a long demo answer, streamed a few words at a time so that it takes a while to arrive.`),
  '',
  '```python',
  'def countdown(n: int) -> None:',
  '    while n > 0:',
  '        print(n)',
  '        n -= 1',
  '```',
].join('\n');

/** The canned answer for a conversation: chosen by words in the last user message. */
export function cannedAnswer(messages) {
  const last = [...(messages ?? [])].reverse().find((m) => m?.role === 'user');
  const text = messageText(last).toLowerCase();
  if (/\blong\b|\bstop\b/.test(text)) return LONG;
  if (/\bexplain|what does|explanation\b/.test(text)) return EXPLANATION;
  return GREETING;
}

/** Parley's Generate Code asks for JSON; the code follows the language named in the prompt. */
export function cannedCode(messages) {
  const all = (messages ?? []).map(messageText).join('\n').toLowerCase();
  if (/\bpython\b|\.py\b/.test(all)) {
    return { language: 'python', filename: 'fizzbuzz.py', code: 'def fizzbuzz(n: int) -> str:\n    if n % 15 == 0:\n        return "FizzBuzz"\n    if n % 3 == 0:\n        return "Fizz"\n    if n % 5 == 0:\n        return "Buzz"\n    return str(n)\n' };
  }
  return { language: 'typescript', filename: 'fizzbuzz.ts', code: "export function fizzbuzz(n: number): string {\n  if (n % 15 === 0) return 'FizzBuzz';\n  if (n % 3 === 0) return 'Fizz';\n  if (n % 5 === 0) return 'Buzz';\n  return String(n);\n}\n" };
}

function messageText(m) {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join(' ');
  return '';
}

/** About 4 characters a token: the demo has no tokenizer, and the numbers only need to look plausible. */
const tokens = (s) => Math.max(1, Math.ceil(s.length / 4));

/** Splits text into pieces of a few words, whitespace kept, as a model would stream it. */
function pieces(text) {
  return text.match(/\S+\s*|\s+/g)?.reduce((acc, w, i) => (i % 3 === 0 ? acc.push(w) : (acc[acc.length - 1] += w), acc), []) ?? [];
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function sendError(res, status, message, type = 'invalid_request_error') {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

/**
 * Starts the endpoint. Options, all changeable later on the returned object's `options`:
 * - chunkDelayMs: pause between streamed pieces (default 25).
 * - requireKey: when set, requests without `Authorization: Bearer <requireKey>` get a 401.
 * - respond(request, res): when set and it returns true, it has answered the request itself (scripted tests).
 * Every request is recorded in `requests` as { method, path, headers, json }.
 */
export async function startDemoEndpoint({ port = 0, host = '127.0.0.1', chunkDelayMs = 25, requireKey, respond, log = () => {} } = {}) {
  const options = { chunkDelayMs, requireKey, respond };
  const requests = [];
  const sockets = new Set();
  let counter = 0;

  // A handler that throws (a test's `respond`, a request cut off mid-body) answers 500 or drops the connection; it
  // never becomes an unhandled rejection that ends the process.
  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      log(`request failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) sendError(res, 500, 'The demo endpoint failed on this request.');
      else res.destroy();
    });
  });
  async function handle(req, res) {
    const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/\/+$/, '');
    let body = '';
    for await (const chunk of req) body += chunk;
    let json;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const record = { method: req.method, path, headers: req.headers, json, body };
    requests.push(record);
    log(`${req.method} ${path}`);

    if (options.respond && (await options.respond(record, res))) return;
    if (options.requireKey && req.headers.authorization !== `Bearer ${options.requireKey}`) {
      return sendError(res, 401, 'Incorrect API key provided (demo endpoint).', 'invalid_api_key');
    }
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      return sendJson(res, 200, { object: 'list', data: [{ id: DEMO_MODEL, object: 'model', created: 1_700_000_000, owned_by: 'parley' }] });
    }
    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/chat/completions')) {
      return sendError(res, 404, `Unknown request: ${req.method} ${path} (the demo endpoint serves POST /v1/chat/completions and GET /v1/models)`);
    }
    if (!json || !Array.isArray(json.messages)) return sendError(res, 400, 'The body must be JSON with a messages array.');

    const model = typeof json.model === 'string' && json.model ? json.model : DEMO_MODEL;
    const jsonMode = json.response_format?.type === 'json_object' || json.response_format?.type === 'json_schema';
    const text = jsonMode ? JSON.stringify(cannedCode(json.messages)) : cannedAnswer(json.messages);
    const id = `chatcmpl-demo-${++counter}`;
    const created = Math.floor(Date.now() / 1000);
    // As real servers do, the prompt counts the tool definitions sent with it.
    const usage = { prompt_tokens: tokens(JSON.stringify(json.messages)) + (Array.isArray(json.tools) ? tokens(JSON.stringify(json.tools)) : 0), completion_tokens: tokens(text) };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;

    if (!json.stream) {
      return sendJson(res, 200, {
        id, object: 'chat.completion', created, model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage,
      });
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let closed = false;
    res.on('close', () => (closed = true));
    const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    const chunk = (delta, finish = null) => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] });
    send(chunk({ role: 'assistant', content: '' }));
    for (const piece of pieces(text)) {
      if (options.chunkDelayMs > 0) await new Promise((r) => setTimeout(r, options.chunkDelayMs));
      // The client stopped (Stop button, new request): stop writing, as a real server does.
      if (closed) return;
      send(chunk({ content: piece }));
    }
    send(chunk({}, 'stop'));
    if (json.stream_options?.include_usage) send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
    res.end('data: [DONE]\n\n');
  }
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  const actualPort = server.address().port;
  return {
    /** Base URL to put in `parley.baseUrl`. */
    url: `http://${host}:${actualPort}/v1`,
    port: actualPort,
    options,
    requests,
    /** Stops listening and drops open connections. */
    close: () =>
      new Promise((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const endpoint = await startDemoEndpoint({ port: Number(process.argv[2] || 0), log: (l) => console.log(`[demo-endpoint] ${l}`) });
  console.log(`[demo-endpoint] listening: parley.baseUrl = ${endpoint.url}, parley.model = ${DEMO_MODEL}`);
}
