// Parley as a LanguageModelChatProvider in the real VS Code, used the way VS Code's chat and other extensions use it:
// through vscode.lm, against a local server. Models listed, text streamed, tool calls whole for every recorded quirk,
// tool results and images sent right, cancel closes the socket, a 401 without the key, usage counted. The last test
// is a measurement, not a check: time to first text through vscode.lm against Parley's own request.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServerResponse } from 'node:http';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import type { ChatMessage } from '../../src/core/types';
import { ParleyChatProvider } from '../../src/vscode/chatProvider';
import { errorBodies } from '../support/quirks';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';
import { chats, chunk, parley, usageChunk, userSettings, waitFor, writeJson, writeSse } from './helpers';
import { pricingOnly } from '../support/pricing';

type Reply = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;
const messagesOf = (r: RecordedRequest) => (r.json as { messages: ChatMessage[] }).messages;
const KEY = 'sk-lmprovider-SECRET-0123456789';

suite('VS Code chat: Parley as a language model provider', function () {
  this.timeout(60_000);
  let api: TestApi;
  let server: TestServer;
  let reply: Reply = (_req, res) => writeSse(res, [chunk('ok', 'stop')]);
  let model: vscode.LanguageModelChat;
  /** The next GET /models is never answered: only the client can end it. */
  let holdNextModels = false;

  suiteSetup(async () => {
    api = await parley();
    server = await startTestServer(async (req, res) => {
      if (req.method === 'GET' && holdNextModels) {
        holdNextModels = false;
        return;
      }
      if (req.method === 'GET') return writeJson(res, 200, { data: [{ id: 'test-model', context_length: 65536 }, { id: 'other-model' }] });
      await reply(req, res);
    });
    await userSettings({ baseUrl: server.url, model: 'test-model' });
    model = await waitFor('Parley\'s models in vscode.lm', async () => {
      const found = await vscode.lm.selectChatModels({ vendor: 'parley', id: 'test-model' });
      return found[0];
    }, 20_000);
  });

  suiteTeardown(async () => {
    await server?.close();
  });

  setup(() => {
    server.requests.length = 0;
  });

  async function send(messages: vscode.LanguageModelChatMessage[], options: vscode.LanguageModelChatRequestOptions = {}, token?: vscode.CancellationToken) {
    const response = await model.sendRequest(messages, { justification: 'Parley integration test', ...options }, token);
    const parts: unknown[] = [];
    for await (const p of response.stream) parts.push(p);
    return parts;
  }
  const texts = (parts: unknown[]) => parts.filter((p): p is vscode.LanguageModelTextPart => p instanceof vscode.LanguageModelTextPart).map((p) => p.value);
  const calls = (parts: unknown[]) => parts.filter((p): p is vscode.LanguageModelToolCallPart => p instanceof vscode.LanguageModelToolCallPart);

  test('selectChatModels finds the endpoint\'s models, with the window the server reports', async () => {
    const models = await vscode.lm.selectChatModels({ vendor: 'parley' });
    assert.deepEqual(models.map((m) => m.id).sort(), ['other-model', 'test-model']);
    const m = models.find((x) => x.id === 'test-model');
    assert.equal(m?.maxInputTokens, 65536 - 4096);
    assert.equal(m?.vendor, 'parley');
    // No window reported: the stated default.
    assert.equal(models.find((x) => x.id === 'other-model')?.maxInputTokens, 32768 - 4096);
  });

  test('sendRequest streams the text, with the chosen model, through Parley\'s request', async () => {
    reply = (_req, res) => writeSse(res, [chunk('Hel'), { ...chunk(''), choices: [{ index: 0, delta: { reasoning_content: 'hidden thoughts' }, finish_reason: null }] }, chunk('lo', 'stop'), usageChunk(7, 2)]);
    const parts = await send([vscode.LanguageModelChatMessage.User('hi')], { modelOptions: { temperature: 0.3, stream: false, model: 'evil' } });
    assert.deepEqual(texts(parts), ['Hel', 'lo']);
    const [req] = chats(server);
    assert.equal(req.json.model, 'test-model');
    assert.equal(req.json.stream, true, 'modelOptions cannot turn streaming off');
    assert.equal(req.json.temperature, 0.3);
    assert.deepEqual(messagesOf(req), [{ role: 'user', content: 'hi' }]);
    assert.equal(texts(parts).join('').includes('hidden'), false, 'reasoning is never mixed into the text');
  });

  /** VS Code's thinking part class, where this VS Code's API has one (1.139, which CI runs, has it; 1.104's typings do not). */
  const Thinking = (vscode as unknown as { LanguageModelThinkingPart?: new (value: string | string[]) => { value: string | string[] } }).LanguageModelThinkingPart;
  const thoughts = (parts: unknown[]) => parts.flatMap((p) => (Thinking && p instanceof Thinking ? [Array.isArray(p.value) ? p.value.join('') : p.value] : []));

  test('reasoning (reasoning_content, reasoning, <think>) reaches the caller as thinking parts where VS Code has them, and never the text, nor the next request', async () => {
    console.log(`[thinking] VS Code ${vscode.version} ${Thinking ? 'has' : 'has no'} LanguageModelThinkingPart: reasoning is ${Thinking ? 'reported in it' : 'left out'}`);
    const delta = (d: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: d, finish_reason: finish }] });
    const ways: Array<[string, object[]]> = [
      ['reasoning_content', [delta({ reasoning_content: 'Weighing ' }), delta({ reasoning_content: 'the options.' }), chunk('The answer.', 'stop')]],
      ['reasoning', [delta({ reasoning: 'Weighing ' }), delta({ reasoning: 'the options.' }), chunk('The answer.', 'stop')]],
      ['<think>', [chunk('<think>Weighing '), chunk('the options.</think>\n\n'), chunk('The answer.', 'stop')]],
    ];
    for (const [field, events] of ways) {
      reply = (_req, res) => writeSse(res, events);
      server.requests.length = 0;
      const parts = await send([vscode.LanguageModelChatMessage.User('Which one?')]);
      assert.equal(texts(parts).join(''), 'The answer.', `${field}: the answer alone is text`);
      // Nothing but text and thinking parts: reasoning is in no other part either.
      assert.deepEqual(parts.filter((p) => !(p instanceof vscode.LanguageModelTextPart) && !(Thinking && p instanceof Thinking)), [], field);
      if (Thinking) {
        assert.equal(thoughts(parts).join(''), 'Weighing the options.', `${field}: the reasoning, whole, in thinking parts`);
        assert.ok(parts.findIndex((p) => p instanceof Thinking) < parts.findIndex((p) => p instanceof vscode.LanguageModelTextPart), `${field}: thinking first, as it came`);
      } else {
        assert.deepEqual(thoughts(parts), [], `${field}: left out`);
      }
      // The next question, with the reply as VS Code's chat keeps it (its parts, thinking among them where there is
      // any): the model gets the answer back, never its reasoning as the answer's text.
      server.requests.length = 0;
      await send([
        vscode.LanguageModelChatMessage.User('Which one?'),
        vscode.LanguageModelChatMessage.Assistant(parts as vscode.LanguageModelTextPart[]),
        vscode.LanguageModelChatMessage.User('Why?'),
      ]);
      assert.deepEqual(messagesOf(chats(server)[0])[1], { role: 'assistant', content: 'The answer.' }, `${field}: the follow-up`);
    }
  });

  test('each tool call reaches the caller as soon as it is complete: the first while the server still holds the stream', async () => {
    const call = (index: number, fn: object, id?: string) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] }, finish_reason: null }] });
    const data = (events: object[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
    // What the caller saw and when the server let go, in order.
    const seen: string[] = [];
    let letGo = () => {};
    const held = new Promise<void>((r) => (letGo = () => {
      if (!seen.includes('released')) seen.push('released');
      r();
    }));
    reply = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(data([call(0, { name: 'weather', arguments: '' }, 'call_1'), call(0, { arguments: '{"location": ' }), call(0, { arguments: '"Paris"}' }),
        call(1, { name: 'llm_version', arguments: '' }, 'call_2'), call(1, { arguments: '{' })]));
      await held;
      res.end(data([call(1, { arguments: '}' }), { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }]) + 'data: [DONE]\n\n');
    };
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('Weather and version?')], { tools, toolMode: vscode.LanguageModelChatToolMode.Auto });
    const reading = (async () => {
      for await (const p of response.stream) {
        if (!(p instanceof vscode.LanguageModelToolCallPart)) continue;
        seen.push(`${p.callId} ${p.name} ${JSON.stringify(p.input)}`);
        letGo();
      }
    })();
    try {
      // The server holds the rest of the stream until the caller has the first call: reported only at the end, it never comes.
      await waitFor('the first tool call while the server holds the stream', () => seen.length > 0, 20_000);
    } finally {
      letGo();
    }
    await reading;
    assert.deepEqual(seen, ['call_1 weather {"location":"Paris"}', 'released', 'call_2 llm_version {}']);
  });

  const fixtures = path.resolve(__dirname, '../../../test/fixtures/providers');
  const quirks = fs.readdirSync(fixtures).filter((f) => /\.(sse|chunks\.jsonl)$/.test(f) && fs.readFileSync(path.join(fixtures, f), 'utf8').includes('tool_calls'));
  const tools: vscode.LanguageModelChatTool[] = [
    { name: 'weather', description: 'The weather', inputSchema: { type: 'object', properties: { location: { type: 'string' } } } },
    { name: 'llm_version', description: 'The version', inputSchema: { type: 'object', properties: {} } },
  ];
  for (const file of quirks) {
    test(`tool calls come whole from ${file}`, async () => {
      const raw = fs.readFileSync(path.join(fixtures, file), 'utf8');
      const body = file.endsWith('.jsonl') ? raw.split('\n').filter((l) => l.trim()).map((l) => `data: ${l}\n\n`).join('') + 'data: [DONE]\n\n' : raw;
      reply = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(body);
      };
      const parts = await send([vscode.LanguageModelChatMessage.User('go')], { tools, toolMode: vscode.LanguageModelChatToolMode.Auto });
      const got = calls(parts);
      assert.ok(got.length >= 1, 'at least one call');
      assert.equal(new Set(got.map((c) => c.callId)).size, got.length, 'distinct call ids');
      for (const c of got) {
        assert.ok(c.name && raw.includes(c.name), `the name from the stream: ${c.name}`);
        assert.equal(typeof c.input, 'object');
      }
      // Whole parts: every call reported after the last text, none in pieces.
      const firstCall = parts.findIndex((p) => p instanceof vscode.LanguageModelToolCallPart);
      assert.equal(parts.slice(firstCall).every((p) => p instanceof vscode.LanguageModelToolCallPart), true);
      const [req] = chats(server);
      assert.deepEqual((req.json.tools as Array<{ function: { name: string } }>).map((t) => t.function.name), ['weather', 'llm_version']);
      assert.equal(req.json.tool_choice, undefined, 'Auto sends no tool_choice');
    });
  }

  test('a tool call the model wrote as text (<tool_call>, Llama JSON, [TOOL_CALLS]) comes as a LanguageModelToolCallPart, with no tags in the text', async () => {
    // Each reply as written, and the text it leaves.
    const written = [
      ['Checking the weather.\n<tool_call>\n{"name": "weather", "arguments": {"location": "Paris"}}\n</tool_call>', 'Checking the weather.\n'],
      ['{"name": "weather", "parameters": {"location": "Paris"}}', ''],
      ['Checking the weather.[TOOL_CALLS][{"name": "weather", "arguments": {"location": "Paris"}}]', 'Checking the weather.'],
    ];
    for (const [text, left] of written) {
      // A few characters per chunk, as a model streams it: the tags arrive in pieces.
      const pieces: object[] = [];
      for (let i = 0; i < text.length; i += 4) pieces.push(chunk(text.slice(i, i + 4)));
      reply = (_req, res) => writeSse(res, [...pieces, chunk('', 'stop')]);
      const parts = await send([vscode.LanguageModelChatMessage.User('Weather in Paris?')], { tools, toolMode: vscode.LanguageModelChatToolMode.Auto });
      assert.deepEqual(calls(parts).map((c) => [c.name, c.input]), [['weather', { location: 'Paris' }]], text);
      assert.ok(calls(parts)[0].callId, 'the call has an id');
      assert.equal(texts(parts).join(''), left, 'the text without the call');
    }
    // Without tools offered, the same text is only text.
    const plain = await send([vscode.LanguageModelChatMessage.User('Weather in Paris?')]);
    assert.deepEqual(calls(plain), []);
    assert.equal(texts(plain).join(''), written[2][0]);
  });

  test('Required mode forces tool_choice; arguments that do not parse are a LanguageModelError', async () => {
    reply = (_req, res) => writeSse(res, [
      { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"location": "Par' } }] }, finish_reason: 'length' }] },
    ]);
    await assert.rejects(send([vscode.LanguageModelChatMessage.User('go')], { tools: tools.slice(0, 1), toolMode: vscode.LanguageModelChatToolMode.Required }), (e: Error) => {
      assert.match(e.message, /tool "weather" with arguments that are not a JSON object/);
      return true;
    });
    assert.deepEqual(chats(server)[0].json.tool_choice, { type: 'function', function: { name: 'weather' } });

    // A whole call before a broken one: the caller gets the whole one, then the error naming the broken one.
    const toolDelta = (index: number, id: string, name: string, args: string, finish: string | null = null) =>
      ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] }, finish_reason: finish }] });
    reply = (_req, res) => writeSse(res, [toolDelta(0, 'c1', 'llm_version', '{}'), toolDelta(1, 'c2', 'weather', '{"location": "Par', 'length')]);
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('go')], { tools, toolMode: vscode.LanguageModelChatToolMode.Auto });
    const got: unknown[] = [];
    await assert.rejects((async () => {
      for await (const p of response.stream) got.push(p);
    })(), /tool "weather" with arguments that are not a JSON object/);
    assert.deepEqual(calls(got).map((c) => [c.callId, c.name, c.input]), [['c1', 'llm_version', {}]]);
  });

  test('a follow-up with tool results sends the right tool messages', async () => {
    reply = (_req, res) => writeSse(res, [chunk('Sunny in Paris.', 'stop')]);
    const parts = await send([
      vscode.LanguageModelChatMessage.User('Weather in Paris?'),
      vscode.LanguageModelChatMessage.Assistant([new vscode.LanguageModelTextPart('Checking.'), new vscode.LanguageModelToolCallPart('call_1', 'weather', { location: 'Paris' })]),
      vscode.LanguageModelChatMessage.User([new vscode.LanguageModelToolResultPart('call_1', [new vscode.LanguageModelTextPart('sunny, 21 °C')])]),
    ], { tools });
    assert.deepEqual(texts(parts), ['Sunny in Paris.']);
    assert.deepEqual(messagesOf(chats(server)[0]), [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"location":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 °C' },
    ]);
  });

  test('an image part arrives as a data URL', async function () {
    const DataPart = (vscode as unknown as { LanguageModelDataPart?: new (data: Uint8Array, mimeType: string) => unknown }).LanguageModelDataPart;
    // Skipped only on a VS Code whose API has no LanguageModelDataPart (it is not in @types/vscode 1.104, the oldest
    // engine Parley supports): there, no caller can send an image part at all. VS Code 1.139, which CI runs, has it.
    if (!DataPart) return this.skip();
    reply = (_req, res) => writeSse(res, [chunk('A dot.', 'stop')]);
    // A real PNG (1x1): VS Code decodes images before they reach a provider, and refuses bytes that are none.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    await send([new vscode.LanguageModelChatMessage(vscode.LanguageModelChatMessageRole.User, [new vscode.LanguageModelTextPart('What is this?'), new DataPart(new Uint8Array(png), 'image/png')] as vscode.LanguageModelTextPart[])]);
    const [msg] = messagesOf(chats(server)[0]);
    assert.equal(msg.role, 'user');
    const content = msg.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    assert.deepEqual(content[0], { type: 'text', text: 'What is this?' });
    assert.equal(content[1].type, 'image_url');
    const url = content[1].image_url?.url ?? '';
    assert.match(url, /^data:image\/png;base64,/);
    // The PNG itself (VS Code may re-encode it, so its signature rather than its exact bytes).
    assert.deepEqual([...Buffer.from(url.split(',')[1], 'base64').subarray(0, 8)], [...png.subarray(0, 8)]);
    console.log(`[image] sent ${png.length} bytes, the server got ${Buffer.from(url.split(',')[1], 'base64').length} bytes${url.endsWith(png.toString('base64')) ? ' (the same bytes)' : ''}`);
  });

  test('cancelling the token closes the socket', async () => {
    reply = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('first'))}\n\n`);
      // Never ends: only the client can close it.
    };
    const cts = new vscode.CancellationTokenSource();
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('long one')], {}, cts.token);
    const closed = server.waitForClose(10_000);
    const seen: string[] = [];
    try {
      for await (const t of response.text) {
        seen.push(t);
        cts.cancel();
      }
    } catch {
      // The stream may end with a cancellation error: either way the socket must close.
    }
    assert.deepEqual(seen, ['first']);
    assert.equal((await closed).clientClosedEarly, true);
  });

  test('cancelling the model list\'s token aborts GET /models: the server sees the connection close, and the list comes back', async () => {
    // A provider of this test's own, with nothing cached, whose GET /models is never ended by a timer before the
    // request's own (parley.requestTimeoutSeconds, 60 s): only the cancel can end it while this test waits.
    const provider = new ParleyChatProvider(api.requester, api.settings, api.keys, api.log, 24 * 3_600_000);
    try {
      holdNextModels = true;
      const cts = new vscode.CancellationTokenSource();
      const listed = provider.provideLanguageModelChatInformation({ silent: true }, cts.token);
      const held = await waitFor('GET /models at the server', () => server.requests.find((r) => r.method === 'GET' && r.path.endsWith('/models')));
      assert.equal(holdNextModels, false, 'the held request is this provider\'s');
      cts.cancel();
      await waitFor('the server to see the held request\'s connection close', () => held.clientClosedEarly, 20_000);
      // Without a list, the configured model alone.
      assert.deepEqual((await listed).map((m) => m.id), ['test-model']);
    } finally {
      holdNextModels = false;
      provider.dispose();
    }
  });

  /** Rejects, as OpenAI does, a request with a tool whose schema has an array without `items`: naming that tool. */
  const openAiSchemaCheck = (req: RecordedRequest, res: ServerResponse): boolean => {
    const tools = ((req.json as { tools?: Array<{ function: { name: string; parameters?: unknown } }> }).tools) ?? [];
    const lacksItems = (v: unknown): boolean => typeof v === 'object' && v !== null &&
      (((v as { type?: unknown }).type === 'array' && !('items' in v)) || Object.values(v).some(lacksItems));
    const i = tools.findIndex((t) => lacksItems(t.function.parameters));
    if (i < 0) return false;
    const e = errorBodies.openaiInvalidFunctionSchema(i, tools[i].function.name, 'globs');
    writeJson(res, e.status, e.body);
    return true;
  };
  const badTool: vscode.LanguageModelChatTool = { name: 'caller_find', description: 'Finds files', inputSchema: { type: 'object', properties: { globs: { type: 'array' } } } };

  test('a caller\'s badly declared tool gets the server\'s error, and the panel still sends its tools afterwards', async () => {
    reply = (req, res) => {
      if (!openAiSchemaCheck(req, res)) writeSse(res, [chunk('ok', 'stop')]);
    };
    try {
      await assert.rejects(send([vscode.LanguageModelChatMessage.User('find them')], { tools: [badTool] }), (e: Error) => {
        assert.match(e.message, /Invalid schema for function 'caller_find'/);
        return true;
      });
      assert.equal(chats(server).length, 1, 'not sent again without tools');
      const t = await api.requester.target();
      assert.ok(t.kind === 'ready');
      assert.equal(api.requester.adaptations(t), undefined, 'the panel learnt nothing');
      assert.equal(api.requester.adaptations(t, 'vscode-chat'), undefined, 'nor did vscode.lm callers');

      // The panel's next question, as the reader sends it: with Parley's tools, answered.
      await api.chat.newChat();
      server.requests.length = 0;
      await api.chat.send('Hello', []);
      const [panel] = chats(server);
      assert.ok(((panel.json as { tools?: unknown[] }).tools ?? []).length > 0, 'the panel sends its tools');
      assert.equal(api.chat.current.turns.at(-1)?.text, 'ok');
    } finally {
      await api.requester.resetAdaptations();
    }
  });

  test('what vscode.lm requests learn stays theirs, in memory; what the panel learns stays the panel\'s', async () => {
    // Ollama's whole-field refusal, for other-model only.
    reply = (req, res) => {
      const body = req.json as { model?: string; tools?: unknown };
      if (body.model === 'other-model' && body.tools !== undefined) {
        const e = errorBodies.ollamaDoesNotSupportTools('other-model');
        return writeJson(res, e.status, e.body);
      }
      writeSse(res, [chunk('ok', 'stop')]);
    };
    const tool: vscode.LanguageModelChatTool = { name: 'caller_tool', description: 'A tool', inputSchema: { type: 'object', properties: {} } };
    const [other] = await vscode.lm.selectChatModels({ vendor: 'parley', id: 'other-model' });
    const t0 = await api.requester.target();
    assert.ok(t0.kind === 'ready');
    const t = { ...t0, settings: { ...t0.settings, model: 'other-model' } };
    const sentTools = () => chats(server).map((r) => (r.json as { tools?: unknown }).tools !== undefined);
    const panelRequest = () => api.requester.run(t, {
      messages: [{ role: 'user', content: 'hi' }], source: 'chat',
      tools: [{ type: 'function', function: { name: 'read_file', description: 'Reads', parameters: { type: 'object', properties: {} } } }],
    });
    const lmRequest = async () => {
      const response = await other.sendRequest([vscode.LanguageModelChatMessage.User('hi')], { tools: [tool] });
      let text = '';
      for await (const x of response.text) text += x;
      return text;
    };
    const provider = new ParleyChatProvider(api.requester, api.settings, api.keys, api.log);
    const toolCalling = async () => (await provider.provideLanguageModelChatInformation({ silent: true }, new vscode.CancellationTokenSource().token))
      .find((m) => m.id === 'other-model')?.capabilities.toolCalling;
    try {
      assert.equal(await lmRequest(), 'ok');
      assert.deepEqual(sentTools(), [true, false], 'refused, then sent without tools');
      server.requests.length = 0;
      assert.equal(await lmRequest(), 'ok');
      assert.deepEqual(sentTools(), [false], 'the next vscode.lm request goes without them at once');
      assert.equal(await toolCalling(), false, 'and VS Code is told the model takes no tools');
      assert.equal(api.requester.adaptations(t), undefined, 'the panel learnt nothing from them');
      assert.equal(api.context.globalState.get<Record<string, unknown>>('parley.adaptations', {})[`${t.endpoint.origin} other-model`], undefined, 'nothing in global state');

      server.requests.length = 0;
      await panelRequest();
      assert.deepEqual(sentTools(), [true, false], 'the panel still tries its tools first');
      assert.deepEqual(api.requester.adaptations(t), { drop: ['tools'] });

      // The reverse: with only the panel's finding, vscode.lm requests try tools first.
      await api.requester.resetAdaptations();
      await panelRequest();
      server.requests.length = 0;
      assert.equal(await toolCalling(), true, 'the panel\'s finding does not hide tools from VS Code');
      assert.equal(await lmRequest(), 'ok');
      assert.deepEqual(sentTools(), [true, false], 'a vscode.lm request tries its tools first');
    } finally {
      provider.dispose();
      await api.requester.resetAdaptations();
    }
  });

  test('a 401 gives a LanguageModelError in the error card\'s words, without the key', async () => {
    await api.keys.set(server.origin, KEY);
    try {
      reply = (_req, res) => writeJson(res, 401, { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } });
      await assert.rejects(send([vscode.LanguageModelChatMessage.User('hi')]), (e: Error) => {
        assert.match(e.message, /rejected the API key/);
        assert.match(e.message, /Parley: Set API Key/);
        assert.equal(JSON.stringify({ m: e.message, s: e.stack, c: (e as { cause?: unknown }).cause }).includes(KEY), false);
        return true;
      });
      assert.equal(chats(server)[0].headers.authorization, `Bearer ${KEY}`, 'the key from SecretStorage for this origin was sent');
    } finally {
      await api.keys.delete(server.origin);
    }
  });

  test('the status bar and the usage report count the request, as VS Code\'s chat', async () => {
    reply = (_req, res) => writeSse(res, [chunk('counted', 'stop'), usageChunk(1234, 56)]);
    const recorded = new Promise((resolve) => {
      const sub = api.usage.onDidRecord((r) => {
        sub.dispose();
        resolve(r);
      });
    });
    await send([vscode.LanguageModelChatMessage.User('count me')]);
    const r = await recorded;
    assert.deepEqual(r, { ...(r as object), model: 'test-model', prompt: 1234, completion: 56, total: 1290, source: 'vscode-chat' });
    assert.equal(api.usageBar.item.text, '$(pulse) 1,290');
    const report = await api.usage.reportText(pricingOnly());
    assert.match(report, /\| VS Code's chat \(vscode\.lm\) \| \d+ \|/);
  });

  test('measurement: time to first text, vscode.lm against Parley\'s own request (printed, not checked)', async () => {
    const target = await api.requester.target();
    assert.equal(target.kind, 'ready');
    if (target.kind !== 'ready') return;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    // Each round: one request through vscode.lm, then one as the panel sends it (the target, that is endpoint, trust
    // and key, resolved for each request, then the request), so that both see the same machine load.
    const measure = async (rounds: number) => {
      const viaLm: number[] = [];
      const viaPanel: number[] = [];
      for (let i = 0; i < rounds; i++) {
        let t0 = performance.now();
        const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('hi')], {});
        for await (const _ of response.text) {
          viaLm.push(performance.now() - t0);
          break;
        }
        t0 = performance.now();
        let first = 0;
        const t = await api.requester.target();
        if (t.kind !== 'ready') throw new Error('no target');
        await api.requester.run(t, { messages: [{ role: 'user', content: 'hi' }], source: 'chat', onEvent: (e) => {
          if (e.type === 'text' && first === 0) first = performance.now() - t0;
        } });
        viaPanel.push(first);
      }
      // The first two rounds warm up (connections, JIT) and are dropped.
      return { lm: median(viaLm.slice(2)), own: median(viaPanel.slice(2)), n: rounds - 2, all: viaLm.length };
    };
    const say = (what: string, r: { lm: number; own: number; n: number }) =>
      console.log(`[measure] ${what}, median of ${r.n}: vscode.lm ${r.lm.toFixed(1)} ms, Parley's own request ${r.own.toFixed(1)} ms, difference ${(r.lm - r.own).toFixed(1)} ms`);

    // A reply that is whole at once: VS Code passes the first part on when the provider returns.
    reply = (_req, res) => writeSse(res, [chunk('first'), chunk(' rest', 'stop')]);
    const whole = await measure(31);
    say('time to first text, reply whole at once', whole);
    // A reply that pauses after its first text, as a real stream does: VS Code's extension host holds a provider's
    // parts for up to 30 ms (a RunOnceScheduler in $startChatRequest) unless 30 are waiting, so this shows that wait.
    reply = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('first'))}\n\n`);
      await new Promise((r) => setTimeout(r, 80));
      res.end(`data: ${JSON.stringify(chunk(' rest', 'stop'))}\n\ndata: [DONE]\n\n`);
    };
    const paused = await measure(15);
    say('time to first text, reply that pauses 80 ms after its first text', paused);
    assert.equal(whole.all, 31);
    assert.equal(paused.all, 15);
  });
});
