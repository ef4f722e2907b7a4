// Issue 7 end to end: the client against servers that differ from OpenAI the way real ones do.
import * as assert from 'node:assert/strict';
import { complete, streamChat } from '../../src/core/client';
import { chatWithFallback } from '../../src/core/fallback';
import { buildRequestBody, type RequestSettings } from '../../src/core/request';
import type { ChatMessage, ChatResult, StreamEvent } from '../../src/core/types';
import { clientOptions } from '../support/client';
import { allWays, wayLabel, type TestServer } from '../support/server';
import {
  PARAM_PROFILES,
  QUIRK_PARAMS,
  REASONING_FORMS,
  reasoningUnder,
  rejectsParam,
  withQuirkServer,
  type QuirkParam,
  type QuirkProfile,
  type RejectionStyle,
} from '../support/quirks';

const MESSAGES: ChatMessage[] = [{ role: 'user', content: 'Hi' }];

/** Every parameter the fallback knows, so each profile finds the one it refuses. */
const FULL: RequestSettings = {
  model: 'test-model',
  stream: true,
  temperature: 0.5,
  topP: 0.9,
  maxTokens: 64,
  presencePenalty: 0.1,
  frequencyPenalty: 0.2,
  responseFormat: { type: 'json_object' },
  tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } } }],
  // Sent only when set: set here, so the profile that refuses it sees it.
  parallelToolCalls: true,
} as RequestSettings;

type Json = Record<string, unknown>;
const bodies = (s: TestServer) => s.requests.map((r) => r.json as Json);

function without(o: Json, keys: string[]): Json {
  const c = { ...o };
  for (const k of keys) delete c[k];
  return c;
}

/** The first request carries the parameter; the retry differs only by leaving it out (or renaming max_tokens). */
function assertRetriedWithout(param: QuirkParam, first: Json, retry: Json): void {
  assert.notEqual(first[param], undefined, `the first request should carry ${param}`);
  assert.equal(retry[param], undefined, `the retry should not carry ${param}`);
  if (param === 'max_tokens') {
    assert.equal(retry.max_completion_tokens, first.max_tokens, 'max_tokens is sent again as max_completion_tokens');
    assert.deepEqual(without(retry, ['max_completion_tokens']), without(first, ['max_tokens']));
  } else if (param === 'tools') {
    // parallel_tool_calls means nothing without tools, and OpenAI refuses it alone ("only allowed when 'tools' are specified").
    assert.deepEqual(retry, without(first, ['tools', 'parallel_tool_calls']), 'tools go with parallel_tool_calls, nothing else changes');
  } else {
    assert.deepEqual(retry, without(first, [param]), 'nothing else changes');
  }
}

describe('quirks: capability fallback against real servers’ rejections', function () {
  this.timeout(15_000);

  const cases: { param: QuirkParam; profile: QuirkProfile }[] = [
    ...QUIRK_PARAMS.map((param) => ({ param, profile: PARAM_PROFILES[param] })),
    // The same parameters as other real servers refuse them.
    ...(
      [
        ['stream_options', 'groq'],
        ['presence_penalty', 'openai'],
        ['frequency_penalty', 'mistral'],
        ['tools', 'mistral'],
        ['tools', 'openai'],
        ['temperature', 'mistral'],
      ] as [QuirkParam, RejectionStyle][]
    ).map(([param, style]) => ({ param, profile: rejectsParam(param, { style }) })),
  ];

  for (const { param, profile } of cases) {
    it(`${profile.description}: the first request recovers with one retry, the second needs none`, async () => {
      await withQuirkServer(profile, async (server) => {
        const client = clientOptions(server);
        const first = await chatWithFallback(client, FULL, MESSAGES, undefined);

        assert.equal(server.requests.length, 2, 'exactly one retry');
        const [a, b] = bodies(server);
        assertRetriedWithout(param, a, b);
        assert.equal(first.result.ended, 'done', first.result.error?.message);
        assert.equal(first.result.text, 'OK');
        assert.deepEqual(first.dropped, [param]);
        if (param === 'max_tokens') assert.equal(first.adaptations.maxCompletionTokens, true);
        else assert.ok(first.adaptations.drop?.includes(param), `adaptations remember ${param}`);

        server.requests.length = 0;
        const second = await chatWithFallback(client, FULL, MESSAGES, first.adaptations);
        assert.equal(server.requests.length, 1, 'the second request goes right the first time');
        assert.deepEqual(bodies(server)[0], b, 'and is the request that worked');
        assert.equal(second.result.ended, 'done');
        assert.equal(second.result.text, 'OK');
        assert.deepEqual(second.dropped, []);
        assert.deepEqual(second.adaptations, first.adaptations);
      });
    });
  }

  it('without stream_options and without usage from the server, usage is estimated and marked', async () => {
    await withQuirkServer(rejectsParam('stream_options', { style: 'groq' }), async (server) => {
      const r = await chatWithFallback(clientOptions(server), FULL, MESSAGES, undefined);
      assert.deepEqual(r.dropped, ['stream_options']);
      assert.equal(r.result.usage.estimated, true);
      assert.ok(r.result.usage.total_tokens > 0);
    });
  });

  it('without stream_options, usage the server sends anyway (Mistral) is used as is', async () => {
    await withQuirkServer(PARAM_PROFILES.stream_options, async (server) => {
      const r = await chatWithFallback(clientOptions(server), FULL, MESSAGES, undefined);
      assert.deepEqual(r.dropped, ['stream_options']);
      assert.equal(r.result.usage.estimated ?? false, false);
      assert.equal(r.result.usage.total_tokens, 12);
    });
  });

  it('a server that refuses two parameters costs one retry each, and the adaptations hold both', async () => {
    const both: QuirkProfile = {
      name: 'two',
      description: 'refuses stream_options and max_tokens',
      handler: (req, res) => {
        const body = req.json as Json;
        if (body.stream_options !== undefined) return PARAM_PROFILES.stream_options.handler(req, res);
        return PARAM_PROFILES.max_tokens.handler(req, res);
      },
    };
    await withQuirkServer(both, async (server) => {
      const client = clientOptions(server);
      const first = await chatWithFallback(client, FULL, MESSAGES, undefined);
      assert.equal(first.result.text, 'OK');
      assert.deepEqual([...first.dropped].sort(), ['max_tokens', 'stream_options']);
      assert.equal(server.requests.length, 3);
      server.requests.length = 0;
      const second = await chatWithFallback(client, FULL, MESSAGES, first.adaptations);
      assert.equal(second.result.text, 'OK');
      assert.equal(server.requests.length, 1);
      const sent = bodies(server)[0];
      assert.equal(sent.stream_options, undefined);
      assert.equal(sent.max_tokens, undefined);
      assert.equal(sent.max_completion_tokens, 64);
    });
  });

  it('a 400 that names no parameter Parley sent is not retried', async () => {
    const profile: QuirkProfile = {
      name: 'other-400',
      description: 'refuses messages[0].role',
      handler: (_req, res) => {
        const text = JSON.stringify({
          error: {
            message: "Unsupported value: 'messages[0].role' does not support 'system' with this model.",
            type: 'invalid_request_error',
            param: 'messages[0].role',
            code: 'unsupported_value',
          },
        });
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(text);
      },
    };
    await withQuirkServer(profile, async (server) => {
      const r = await chatWithFallback(clientOptions(server), FULL, MESSAGES, undefined);
      assert.equal(server.requests.length, 1);
      assert.equal(r.result.ended, 'error');
      assert.equal(r.result.error?.kind, 'bad_request');
      assert.deepEqual(r.dropped, []);
    });
  });
});

describe('quirks: reasoning under every name', function () {
  this.timeout(15_000);
  const THOUGHT = 'The user wants a short answer.';

  for (const form of REASONING_FORMS) {
    it(`${reasoningUnder(form).description}: streamed reasoning goes to reasoning, the answer stays clean, read every way`, async () => {
      const ways = allWays(REASONING_FORMS.indexOf(form) + 21);
      const results: ChatResult[] = [];
      for (const way of ways) {
        await withQuirkServer(reasoningUnder(form, { way }, THOUGHT), async (server) => {
          const at = wayLabel(way);
          const settings: RequestSettings = { model: 'test-model', stream: true };
          const stream = streamChat(clientOptions(server), buildRequestBody(settings, MESSAGES));
          const events: StreamEvent[] = [];
          for await (const e of stream) events.push(e);
          const r = await stream.result;
          results.push(r);

          assert.equal(r.ended, 'done', `${at}: ${r.error?.message}`);
          assert.equal(r.reasoning.trim(), THOUGHT, at);
          assert.equal(r.text.trim(), 'OK', at);
          assert.doesNotMatch(r.text, /think>|<th/, at);
          assert.equal(r.reasoningField, form, at);
          const kinds = events.filter((e) => e.type === 'reasoning' || e.type === 'text').map((e) => e.type);
          // Whole, every delta may arrive in one read and be merged into one event per kind.
          assert.ok(kinds.length >= 2, `${at}: ${kinds.join(',')}`);
          assert.ok(kinds.lastIndexOf('reasoning') < kinds.indexOf('text'), `${at}: reasoning comes before the answer: ${kinds.join(',')}`);
          const streamedText = events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
          assert.doesNotMatch(streamedText, /think>|<th/, `${at}: no tag fragment is ever shown as answer text`);
        });
      }
      for (let i = 1; i < ways.length; i++) assert.deepEqual(results[i], results[0], `${wayLabel(ways[i])} differs from whole`);
    });

    it(`${reasoningUnder(form).description}: the same without streaming`, async () => {
      await withQuirkServer(reasoningUnder(form, {}, THOUGHT), async (server) => {
        const r = await complete(clientOptions(server), buildRequestBody({ model: 'test-model', stream: false }, MESSAGES));
        assert.equal(r.reasoning.trim(), THOUGHT);
        assert.equal(r.text.trim(), 'OK');
        assert.equal(r.reasoningField, form);
      });
    });
  }
});
