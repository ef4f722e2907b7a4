// Local servers' errors in the panel and in Test Connection (issue 34), inside a real VS Code against local servers:
// llama.cpp's overflow offers Compact and retry, an image a text-only model cannot take is refused before sending (or,
// when the list says nothing, said in words after one request), and a profile can turn streaming off for a gateway
// that fails streamed requests, which Test Connection suggests.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ServerResponse } from 'node:http';
import * as vscode from 'vscode';
import { type TestServer } from '../support/server';
import { charsOf, chats, chunk, keptUserSettings, longAnswer, openChatView, parley, type Reply, serverPool, userSettings, waitFor, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import type { UsageRecord } from '../../src/core/usageLedger';
import { SUMMARY_INSTRUCTION } from '../../src/core/compaction';
import type { ChatMessage } from '../../src/core/types';

/** A body from test/fixtures/providers (SOURCES.md says where each comes from). */
const fixture = (name: string) => readFileSync(path.resolve(__dirname, '../../../test/fixtures/providers', name), 'utf8');
/** Every setting the suite changes; each is put back as it was after every test. */
const TOUCHED = ['baseUrl', 'model', 'endpoints', 'endpoint', 'systemPrompt', 'compaction.threshold', 'compaction.keepTurns', 'tools.enabled'];
/** A 1×1 PNG. */
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function json(res: ServerResponse, status: number, body: string | object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

suite('Local servers: errors that say what to do', function () {
  this.timeout(60_000);
  let api: TestApi;
  const kept = keptUserSettings(TOUCHED);
  const pool = serverPool();
  let records: UsageRecord[] = [];
  let recording: vscode.Disposable | undefined;

  /** A server that ends up closed by the suite's teardown. */
  const server = (handler: Reply) => pool.start(handler);

  suiteSetup(async () => {
    api = await parley();
    kept.save();
    recording = api.usage.onDidRecord((r) => records.push(r));
    await openChatView(api);
  });

  setup(async () => {
    records = [];
    await userSettings({ 'tools.enabled': false, systemPrompt: 'Be brief.' });
    await api.chat.newChat();
    api.recorded.posted.length = 0;
  });

  teardown(async () => {
    await api.chat.stop();
    await kept.restore();
    await api.chat.newChat();
  });

  suiteTeardown(async () => {
    recording?.dispose();
    for (const s of pool.started) await s.close();
  });

  function lastTurn() {
    return api.chat.current.turns.at(-1);
  }

  /** Points the Default profile at `s` with `model`, and waits until the window's settings say so. */
  async function use(s: TestServer, model: string): Promise<void> {
    await userSettings({ baseUrl: s.url, model, endpoints: undefined, endpoint: undefined });
    await waitFor(`the settings for ${model}`, () => (api.settings.current.baseUrl === s.url && api.settings.current.model === model) || undefined);
  }

  function composerErrors(): string[] {
    return api.recorded.posted.flatMap((m) => (m.type === 'composerError' ? [m.text] : []));
  }

  test("llama.cpp's overflow (a 400 exceed_context_size_error) is sent once, and its card offers Compact and retry, which works", async () => {
    const limit = 5500;
    let n = 0;
    const s = await server((req, res) => {
      if (req.method === 'GET') return json(res, req.path.endsWith('/models') ? 200 : 404, { data: [{ id: 'tiny' }] });
      const messages = req.json.messages as ChatMessage[];
      if (messages[0]?.role === 'system' && messages[0].content === SUMMARY_INSTRUCTION) return writeSse(res, [chunk('SUMMARY: question 1 was answered.'), chunk('', 'stop')]);
      if (charsOf(messages) > limit) return json(res, 400, fixture('llamacpp-error-400-exceed-context-size.json'));
      return writeSse(res, [chunk(longAnswer(++n)), chunk('', 'stop')]);
    });
    await use(s, 'tiny');
    await userSettings({ 'compaction.threshold': 0, 'compaction.keepTurns': undefined });
    await waitFor('compaction off on its own', () => api.settings.current.compaction.threshold === 0 || undefined);
    for (let i = 1; i <= 4; i++) {
      await api.chat.send(`Question ${i} about the topic`, []);
      assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
    }
    await api.chat.send('Question 5 about the topic', []);
    assert.equal(chats(s).length, 5, 'the overflow was not retried');
    const failed = lastTurn();
    assert.equal(failed?.status, 'error');
    assert.equal(failed?.error?.kind, 'context_length', JSON.stringify(failed?.error));
    assert.equal(failed?.error?.actions[0], 'compactRetry');
    assert.match(String(failed?.error?.detail), /exceeds the available context size \(2048 tokens\)/);

    await api.chat.compactAndRetry();
    const after = chats(s).slice(5);
    assert.equal(after.length, 2, 'a summary request, then the question again');
    assert.equal(after[0].json.messages[0].content, SUMMARY_INSTRUCTION);
    assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
    assert.equal(lastTurn()?.text, longAnswer(5));
  });

  test('an image for a model the server lists as text-only is refused before anything is sent; a vision model gets it', async () => {
    // llama.cpp's router mode (tools/server/server-models.cpp): architecture.input_modalities per model.
    const s = await server((req, res) => {
      if (req.method === 'GET') {
        return json(res, 200, { object: 'list', data: [
          { id: 'text.gguf', object: 'model', owned_by: 'llamacpp', architecture: { input_modalities: ['text'], output_modalities: ['text'] } },
          { id: 'vision.gguf', object: 'model', owned_by: 'llamacpp', architecture: { input_modalities: ['text', 'image'], output_modalities: ['text'] } },
        ] });
      }
      return writeSse(res, [chunk('A dot.'), chunk('', 'stop')]);
    });
    await use(s, 'text.gguf');
    await api.chat.send('what is this?', [{ name: 'dot.png', dataUrl: PNG }]);
    assert.equal(chats(s).length, 0, 'nothing was sent');
    assert.match(composerErrors()[0] ?? '', /^text\.gguf does not take images: the server lists it as text-only\. .*--mmproj.*Nothing was sent\.$/);
    assert.equal(api.chat.current.turns.length, 0, 'no turn was added');

    await use(s, 'vision.gguf');
    await api.chat.send('what is this?', [{ name: 'dot.png', dataUrl: PNG }]);
    assert.equal(chats(s).length, 1);
    assert.equal(lastTurn()?.text, 'A dot.');
  });

  test("an image that reaches a text-only llama.cpp (no model list to ask): one request, and the card says the model takes no images", async () => {
    const s = await server((req, res) => {
      if (req.method === 'GET') return json(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
      return json(res, 500, fixture('llamacpp-error-500-image-input-not-supported.json'));
    });
    await use(s, 'tiny');
    await api.chat.send('what is this?', [{ name: 'dot.png', dataUrl: PNG }]);
    assert.equal(chats(s).length, 1, 'not retried');
    const failed = lastTurn();
    assert.equal(failed?.status, 'error');
    assert.match(String(failed?.error?.title), /^The model "tiny" takes no images \(HTTP 500\)/);
    assert.match(String(failed?.error?.hint), /--mmproj/);
    assert.deepEqual(failed?.error?.actions, ['switchEndpoint', 'retry']);
  });

  /** A gateway as the issue found Portkey 1.15.2: a 500 to every streamed request and to GET /models; whole replies work. */
  function gateway(): Promise<TestServer> {
    return server((req, res) => {
      if (req.method === 'POST' && req.json?.stream === false) {
        return json(res, 200, { id: 'c', object: 'chat.completion', model: 'gw-model', choices: [{ index: 0, message: { role: 'assistant', content: 'Whole reply.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } });
      }
      return json(res, 500, fixture('portkey-error-500-something-went-wrong.json'));
    });
  }

  function report(contains: string) {
    return waitFor(`a Test Connection report for ${contains}`, () =>
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'parley-report' && !d.isUntitled && d.getText().startsWith('# Parley: Test Connection') && d.getText().includes(contains)));
  }

  test('a gateway that fails streamed requests: Test Connection suggests "stream": false; with it, the panel gets whole replies, with their usage', async () => {
    const s = await gateway();
    await userSettings({ endpoints: [{ name: 'Gateway', baseUrl: s.url, model: 'gw-model' }], endpoint: 'Gateway' });
    await waitFor('the Gateway profile', () => api.settings.current.activeProfile === 'Gateway' || undefined);
    await vscode.commands.executeCommand('parley.testConnection');
    const doc = await report(s.origin);
    assert.match(doc.getText(), /Turn streaming off: add "stream": false to the profile "Gateway" in parley\.endpoints/);
    assert.doesNotMatch(doc.getText(), /"status": ?"failure"/, 'the gateway\'s message, not its JSON');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    await userSettings({ endpoints: [{ name: 'Gateway', baseUrl: s.url, model: 'gw-model', stream: false }] });
    await waitFor('streaming off', () => api.settings.current.profiles.find((p) => p.name === 'Gateway')?.stream === false || undefined);
    s.requests.length = 0;
    await api.chat.send('hello', []);
    assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
    assert.equal(lastTurn()?.text, 'Whole reply.');
    assert.deepEqual(chats(s).map((r) => [r.json.stream, 'stream_options' in r.json]), [[false, false]], 'one request, not streamed');
    assert.ok(api.recorded.posted.some((m) => m.type === 'delta' && m.text === 'Whole reply.'), 'the panel was handed the reply');
    const chatRecords = records.filter((r) => r.source === 'chat');
    assert.equal(chatRecords.length, 1);
    assert.deepEqual([chatRecords[0].prompt, chatRecords[0].completion, chatRecords[0].estimated], [11, 3, false], "the server's own usage is counted");

    await vscode.commands.executeCommand('parley.testConnection');
    const works = await waitFor('a report that works', () =>
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'parley-report' && d.getText().includes(s.origin) && d.getText().includes('the connection works')));
    assert.match(works.getText(), /## 3\. A one-token request, not streamed/);
  });
});
