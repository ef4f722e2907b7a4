// Learning what a server refuses: after one 400 for a parameter, the next request goes without it on the first try;
// an error about one tool's declaration teaches nothing.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ADAPTATIONS_STATE, chatAndLearn, stateAdaptationStore } from '../../src/core/adaptations';
import type { ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import type { RequestSettings } from '../../src/core/request';
import type { ToolDefinition } from '../../src/core/types';
import { errorBodies, openAiCompatible, PARAM_PROFILES, startQuirkServer, writeJson, type ErrorAnswer } from '../support/quirks';
import { startTestServer, type TestServer } from '../support/server';
import { MemoryState } from '../support/memoryState';


const MESSAGES = [{ role: 'user' as const, content: 'hi' }];

describe('adaptations: learnt once, kept, used on the first try', function () {
  this.timeout(10_000);
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  for (const param of ['stream_options', 'temperature'] as const) {
    it(`a server that refuses ${param}: the next request (and the next window) goes without it at once`, async () => {
      server = await startQuirkServer(PARAM_PROFILES[param]);
      const opts: ClientOptions = { endpoint: resolveEndpoint(server.origin), maxRetries: 0, requestTimeoutMs: 5_000 };
      const settings: RequestSettings = { model: 'test-model', stream: true, temperature: 0.3 };
      const state = new MemoryState();
      const posts = () => server!.requests.filter((q) => q.method === 'POST').map((q) => q.json as Record<string, unknown>);

      const first = await chatAndLearn(stateAdaptationStore(state), opts, settings, MESSAGES);
      assert.equal(first.result.ended, 'done', JSON.stringify(first.result.error));
      assert.deepEqual(first.dropped, [param]);
      assert.deepEqual(posts().map((b) => param in b), [true, false], 'refused once, then sent without it');

      // The next request, through a store made afresh from the same state (as after a reload).
      server.requests.length = 0;
      const second = await chatAndLearn(stateAdaptationStore(state), opts, settings, MESSAGES);
      assert.equal(second.result.ended, 'done');
      assert.deepEqual(second.dropped, []);
      assert.equal(posts().length, 1, 'one request: no refusal to learn from again');
      assert.equal(param in posts()[0], false, `the first try goes without ${param}`);
      assert.deepEqual(stateAdaptationStore(state).get(server.origin, 'test-model'), { drop: [param] }, 'kept in the state');

      // Kept per origin and model: another model on the same server has not been seen to refuse anything.
      server.requests.length = 0;
      await chatAndLearn(stateAdaptationStore(state), opts, { ...settings, model: 'other-model' }, MESSAGES);
      assert.equal(param in posts()[0], true, 'another model is tried with it first');
    });
  }

  it('the store keeps one entry per origin and model in one state key, and clear() forgets them all', async () => {
    const state = new MemoryState();
    const store = stateAdaptationStore(state);
    await store.set('http://a:1', 'm', { drop: ['tools'] });
    await store.set('http://a:1', 'n', { maxCompletionTokens: true });
    assert.deepEqual(state.get(ADAPTATIONS_STATE, {}), { 'http://a:1 m': { drop: ['tools'] }, 'http://a:1 n': { maxCompletionTokens: true } });
    assert.equal(store.get('http://b:1', 'm'), undefined);
    assert.equal(store.get('http://a:1', 'constructor'), undefined, 'no inherited property counts as learnt');
    await store.clear();
    assert.equal(store.get('http://a:1', 'm'), undefined);
    assert.equal(state.values.has(ADAPTATIONS_STATE), false);
  });
});

describe('adaptations: an error about one tool is not a refusal of tools', function () {
  this.timeout(10_000);
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** A tool declared as some vscode.lm callers do: an array without `items`, which OpenAI refuses. */
  const badTool: ToolDefinition = { type: 'function', function: { name: 'find_files', description: 'Finds files', parameters: { type: 'object', properties: { globs: { type: 'array' } } } } };
  const settings: RequestSettings = { model: 'test-model', stream: true, temperature: 0.3, tools: [badTool] };
  const groqToolUseFailed: ErrorAnswer = {
    status: 400,
    body: JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../test/fixtures/providers/groq-error-400-tool-use-failed.json'), 'utf8')),
  };
  /** Real wordings of errors about one tool (sources in test/support/quirks.ts and test/fixtures/providers/SOURCES.md). */
  const aboutOneTool: Array<[string, ErrorAnswer]> = [
    ['OpenAI: param tools[0].function.parameters, code invalid_function_parameters', errorBodies.openaiInvalidFunctionSchema(0, 'find_files', 'globs')],
    ['OpenAI: param tools[36].parameters', errorBodies.openaiInvalidFunctionSchema(36, 'find_files', 'globs', 'tools[36].parameters')],
    // A gateway that passes the message on without `param`: the message quotes the tool's name, which the caller chose.
    ['the same message without param, for a tool named "temperature"', { status: 400, body: { error: { message: "Invalid schema for function 'temperature': In context=('properties', 'globs'), array schema missing items.", type: 'invalid_request_error' } } }],
    ["Gemini: no param, \"at 'tools[0].function_declarations[0]…'\"", errorBodies.geminiUnknownSchemaField('ref')],
    ['Groq: tool_use_failed (fixture)', groqToolUseFailed],
  ];

  for (const [label, answer] of aboutOneTool) {
    it(`${label}: the error reaches the caller, nothing is retried, nothing is learnt`, async () => {
      server = await startTestServer(openAiCompatible({}, (req, res) => {
        if ((req.json as { tools?: unknown }).tools === undefined) return false;
        writeJson(res, answer.status, answer.body);
        return true;
      }));
      const state = new MemoryState();
      const opts: ClientOptions = { endpoint: resolveEndpoint(server.origin), maxRetries: 0, requestTimeoutMs: 5_000 };
      const out = await chatAndLearn(stateAdaptationStore(state), opts, settings, MESSAGES);
      assert.equal(out.result.ended, 'error');
      assert.equal(out.result.error?.status, 400);
      assert.deepEqual(out.dropped, [], 'nothing dropped');
      assert.equal(server.requests.filter((q) => q.method === 'POST').length, 1, 'not sent again without tools (or temperature)');
      assert.equal(state.values.has(ADAPTATIONS_STATE), false, 'nothing learnt for this origin and model');
    });
  }

  it('a server that refuses tools as a whole (Ollama: "… does not support tools") is still learnt', async () => {
    server = await startTestServer(openAiCompatible({}, (req, res) => {
      if ((req.json as { tools?: unknown }).tools === undefined) return false;
      const e = errorBodies.ollamaDoesNotSupportTools('stablelm2:latest');
      writeJson(res, e.status, e.body);
      return true;
    }));
    const state = new MemoryState();
    const opts: ClientOptions = { endpoint: resolveEndpoint(server.origin), maxRetries: 0, requestTimeoutMs: 5_000 };
    const out = await chatAndLearn(stateAdaptationStore(state), opts, settings, MESSAGES);
    assert.equal(out.result.ended, 'done', JSON.stringify(out.result.error));
    assert.deepEqual(out.dropped, ['tools']);
    assert.deepEqual(stateAdaptationStore(state).get(server.origin, 'test-model'), { drop: ['tools'] });
  });
});
