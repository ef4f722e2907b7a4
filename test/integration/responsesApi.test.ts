// The Responses API in the real VS Code (issue 39): a gateway refuses one model on /chat/completions in GitHub Copilot's
// words; the panel's turn is answered on /v1/responses with a streamed tool round and usage, the next request goes
// there directly, VS Code's chat (vscode.lm) gets its answer there too, Test Connection says which API answered, and
// Reset Endpoint Adaptations forgets it.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import { SUMMARY_INSTRUCTION } from '../../src/core/compaction';
import { Log } from '../../src/vscode/log';
import { Requester } from '../../src/vscode/requester';
import type { UsageRecord } from '../../src/core/usageLedger';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';
import { parley, userSettings, waitFor, writeJson } from './helpers';

const MODEL = 'gpt-5.3-codex';
/** GitHub Copilot's refusal (test/fixtures/responses/SOURCES.md). */
const REFUSAL = readFileSync(path.resolve(__dirname, '../../../test/fixtures/responses/copilot-error-400-unsupported-api-for-model.json'), 'utf8');

/** Responses API events as OpenAI streams them (test/fixtures/responses/openai-tool-call.sse is a recording of the same shape). */
function writeEvents(res: ServerResponse, events: Array<Record<string, unknown>>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  res.end(events.map((e, i) => `event: ${String(e.type)}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join(''));
}

const created = { type: 'response.created', response: { id: 'resp_1', object: 'response', status: 'in_progress', model: MODEL, output: [], usage: null } };
const completed = (input: number, output: number) => ({
  type: 'response.completed',
  response: { id: 'resp_1', object: 'response', status: 'completed', model: MODEL, output: [], usage: { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: input + output } },
});

/** A reply that calls read_file on tools/notes.md, its arguments in two deltas. */
function callNotes(res: ServerResponse): void {
  const item = { id: 'fc_1', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_notes', name: 'read_file' };
  writeEvents(res, [
    created,
    { type: 'response.output_item.added', output_index: 0, item },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: '{"path":"tools/' },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: 'notes.md"}' },
    { type: 'response.output_item.done', output_index: 0, item: { ...item, status: 'completed', arguments: '{"path":"tools/notes.md"}' } },
    completed(120, 12),
  ]);
}

/** A reply of text, with a reasoning summary first. */
function answer(res: ServerResponse, text: string): void {
  writeEvents(res, [
    created,
    { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
    { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Reading the notes.' },
    { type: 'response.output_item.added', output_index: 1, item: { id: 'msg_1', type: 'message', status: 'in_progress', content: [], role: 'assistant' } },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: text.slice(0, 5) },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: text.slice(5) },
    completed(300, 8),
  ]);
}

const inputOf = (r: RecordedRequest) => (r.json as { input: Array<Record<string, unknown>> }).input;

suite('The Responses API: learnt from a refusal, used by every route', function () {
  this.timeout(60_000);
  let api: TestApi;
  let server: TestServer;
  let records: UsageRecord[] = [];
  let recording: vscode.Disposable | undefined;

  suiteSetup(async () => {
    api = await parley();
    await api.requester.resetAdaptations();
    server = await startTestServer((req, res) => {
      if (req.method === 'GET') return writeJson(res, 200, { data: [{ id: MODEL }, { id: 'gpt-4.1' }] });
      if (req.path === '/v1/chat/completions') {
        res.writeHead(400, { 'content-type': 'application/json' });
        return void res.end(REFUSAL);
      }
      if (req.path !== '/v1/responses') return writeJson(res, 404, { error: { message: 'no such route' } });
      const body = req.json as { text?: { format?: { type?: string } }; instructions?: string };
      if (body.text?.format?.type === 'json_object') return answer(res, JSON.stringify({ language: 'python', filename: 'add.py', code: 'def add(a, b):\n    return a + b\n' }));
      if (body.instructions?.startsWith(SUMMARY_INSTRUCTION)) return answer(res, 'SUMMARY: the notes mention a needle.');
      const input = inputOf(req);
      const last = input[input.length - 1];
      if (last?.type === 'function_call_output') return answer(res, 'The notes mention a needle.');
      if (last?.role === 'user' && JSON.stringify(last.content).includes('notes')) return callNotes(res);
      return answer(res, 'Hello there.');
    });
    recording = api.usage.onDidRecord((r) => records.push(r));
    await userSettings({ baseUrl: server.url, model: MODEL, 'tools.askBeforeReading': false, 'tools.enabled': true });
    await waitFor('the settings snapshot', () => api.settings.current.model === MODEL && api.settings.current.baseUrl === server.url);
  });

  suiteTeardown(async () => {
    recording?.dispose();
    await userSettings({ baseUrl: undefined, model: undefined, 'tools.askBeforeReading': undefined, 'tools.enabled': undefined, 'compaction.keepTurns': undefined });
    await api.requester.resetAdaptations();
    await server?.close();
  });

  setup(() => {
    records = [];
  });

  test('the panel: refused on chat completions, answered on /v1/responses with a tool round and usage; the next turn goes there directly', async () => {
    await api.chat.newChat();
    server.requests.length = 0;
    await api.chat.send('What do the notes say?', []);
    const turn = api.chat.current.turns[api.chat.current.turns.length - 1];
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.text, 'The notes mention a needle.');
    assert.equal(turn.reasoning, 'Reading the notes.');
    assert.equal(turn.requests, 2);
    assert.deepEqual(turn.usage, { prompt: 420, completion: 20, total: 440, estimated: false }, 'both Responses requests counted from their usage');
    const posts = server.requests.filter((r) => r.method === 'POST');
    assert.deepEqual(posts.map((r) => r.path), ['/v1/chat/completions', '/v1/responses', '/v1/responses'], 'refused once, then the tool round on /v1/responses');
    assert.equal(posts[1].json.store, false);
    assert.deepEqual(inputOf(posts[2]).slice(-2), [
      { type: 'function_call', call_id: 'call_notes', name: 'read_file', arguments: '{"path":"tools/notes.md"}' },
      { type: 'function_call_output', call_id: 'call_notes', output: inputOf(posts[2]).slice(-1)[0].output },
    ]);
    assert.match(String(inputOf(posts[2]).slice(-1)[0].output), /needle/, 'the tool result went back as function_call_output');
    assert.equal(records.filter((r) => r.model === MODEL).reduce((n, r) => n + r.total, 0), 440, 'the usage store counted both');
    const target = await api.requester.target();
    assert.equal(target.kind, 'ready');
    // (With what else the reply taught: it came with reasoning, so the panel offers a reasoning effort.)
    if (target.kind === 'ready') assert.equal(api.requester.adaptations(target)?.api, 'responses', 'remembered for this origin and model');

    server.requests.length = 0;
    await api.chat.send('Say hello.', []);
    assert.equal(api.chat.current.turns[api.chat.current.turns.length - 1].text, 'Hello there.');
    assert.deepEqual(server.requests.filter((r) => r.method === 'POST').map((r) => r.path), ['/v1/responses'], 'the second request goes straight to /v1/responses');
  });

  test('the Parley log names /v1/responses for a request sent there, not the chat URL', async () => {
    const lines: string[] = [];
    const sink = { info: (l: string) => void lines.push(l), warn: (l: string) => void lines.push(l), error: (l: string) => void lines.push(l), show: () => {}, dispose: () => {} };
    // The extension's own state: what the first test learnt (this model is served on /v1/responses) holds here too.
    const requester = new Requester(api.context.globalState, api.keys, new Log(() => 'info', sink), api.usage, api.settings);
    const t = await requester.target();
    assert.equal(t.kind, 'ready');
    if (t.kind !== 'ready') return;
    server.requests.length = 0;
    const out = await requester.run(t, { messages: [{ role: 'user', content: 'Say hello.' }], source: 'chat' });
    assert.equal(out.result.text, 'Hello there.');
    assert.deepEqual(server.requests.filter((r) => r.method === 'POST').map((r) => r.path), ['/v1/responses']);
    assert.ok(lines.some((l) => l.startsWith(`POST ${server.origin}/v1/responses model=${MODEL} `)), lines.join('\n'));
  });

  test("VS Code's chat (vscode.lm): the same model answered on /v1/responses", async () => {
    const model = await waitFor("Parley's model in vscode.lm", async () => (await vscode.lm.selectChatModels({ vendor: 'parley', id: MODEL }))[0], 20_000);
    server.requests.length = 0;
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('Say hello.')], { justification: 'Parley integration test' });
    let text = '';
    for await (const p of response.stream) if (p instanceof vscode.LanguageModelTextPart) text += p.value;
    assert.equal(text, 'Hello there.');
    assert.deepEqual(server.requests.filter((r) => r.method === 'POST').map((r) => r.path), ['/v1/chat/completions', '/v1/responses']);
  });

  test('Generate Code (JSON mode, sent as text.format) and compaction go to /v1/responses too', async () => {
    const posts = () => server.requests.filter((r) => r.method === 'POST');
    server.requests.length = 0;
    await vscode.commands.executeCommand('parley.generateCode', 'a python add function');
    assert.deepEqual(posts().map((r) => r.path), ['/v1/responses']);
    assert.deepEqual(posts()[0].json.text, { format: { type: 'json_object' } });
    assert.equal(vscode.window.activeTextEditor?.document.getText(), 'def add(a, b):\n    return a + b\n');

    await userSettings({ 'compaction.keepTurns': 1 });
    await waitFor('the settings snapshot', () => api.settings.current.compaction.keepTurns === 1);
    server.requests.length = 0;
    await api.chat.compact();
    assert.deepEqual(posts().map((r) => r.path), ['/v1/responses'], 'the summary request');
    assert.ok(api.chat.current.turns.some((t) => t.summaryOf !== undefined && t.text === 'SUMMARY: the notes mention a needle.'), 'the summary is in the conversation');
  });

  test('Test Connection says the model is served on the Responses API; Reset Endpoint Adaptations forgets it', async () => {
    await vscode.commands.executeCommand('parley.testConnection');
    const doc = await waitFor('the Test Connection report', () =>
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'parley-report' && d.getText().startsWith('# Parley: Test Connection') && d.getText().includes(server.origin)));
    assert.match(doc.getText(), /- API: the Responses API, `POST http:\/\/127\.0\.0\.1:\d+\/v1\/responses`/);
    assert.match(doc.getText(), /the connection works/);
    await vscode.commands.executeCommand('parley.resetAdaptations');
    const target = await api.requester.target();
    if (target.kind === 'ready') assert.equal(api.requester.adaptations(target), undefined);
  });
});
