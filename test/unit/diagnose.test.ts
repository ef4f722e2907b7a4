// Test Connection's diagnosis against real local servers: what it measures, and the cause it names for each failure.
import * as assert from 'node:assert/strict';
import { diagnose, reportMarkdown, reportSummary, type DiagnoseOptions, type DiagnosisReport } from '../../src/core/diagnose';
import { resolveEndpoint } from '../../src/core/endpoint';
import {
  PARAM_PROFILES,
  closedPortUrl,
  knownModels,
  lmStudio,
  openAiCompatible,
  reasoningUnder,
  rejectsParam,
  requiresKey,
  withQuirkServer,
  type QuirkProfile,
} from '../support/quirks';
import { llamaCppRouter, serveRoutes } from '../support/localServers';
import type { RecordedRequest } from '../support/server';
import type { ServerResponse } from 'node:http';

const KEY = 'sk-proj-TESTKEY0123456789abcdefSECRET';

function run(base: string, extra: Partial<DiagnoseOptions> = {}): Promise<DiagnosisReport> {
  return diagnose({ endpoint: resolveEndpoint(base), model: 'test-model', timeoutMs: 5_000, ...extra });
}

const ids = (r: DiagnosisReport) => r.causes.map((c) => c.id);

describe('diagnose: a server that works', function () {
  this.timeout(15_000);

  it('reports the URL, the models, and what the one-token stream did', async () => {
    await withQuirkServer({ name: 'ok', description: 'compliant', handler: openAiCompatible({ models: ['test-model', 'other-model'] }) }, async (server) => {
      const r = await run(server.origin, { apiKey: KEY });
      assert.equal(r.ok, true, JSON.stringify(r.chat.error));
      assert.equal(r.url, resolveEndpoint(server.origin).url);
      assert.equal(r.key, 'present');
      assert.deepEqual(r.models.ids, ['test-model', 'other-model']);
      assert.equal(r.models.modelListed, true);
      assert.equal(r.chat.status, 200);
      assert.match(r.chat.contentType ?? '', /^text\/event-stream/);
      assert.equal(typeof r.chat.ttfbMs, 'number');
      assert.ok(r.chat.chunks > 0);
      assert.equal(r.chat.sawDone, true);
      assert.equal(r.chat.sawUsage, true);
      assert.deepEqual(r.chat.dropped, []);
      assert.deepEqual(r.causes, []);

      // One models request and one chat request, both carrying the key to its own origin; the chat asks for one token.
      const chats = server.requests.filter((q) => q.method === 'POST');
      assert.equal(chats.length, 1);
      const body = chats[0].json as Record<string, unknown>;
      assert.equal(body.stream, true);
      assert.equal(body.max_tokens, 1);
      for (const q of server.requests) assert.equal(q.headers.authorization, `Bearer ${KEY}`);

      const md = reportMarkdown(r);
      assert.ok(md.includes(r.url));
      assert.match(md, /API key: present/);
      assert.match(md, /HTTP status: 200/);
      assert.match(md, /`\[DONE\]`: yes/);
      assert.match(md, /Usage chunk: yes/);
      assert.match(md, /`other-model`/);
      assert.ok(!md.includes(KEY), 'the report never contains the key');
      assert.ok(!reportSummary(r).includes(KEY));
    });
  });

  it('names the model\'s window: the server\'s figure, none said, or not until the model is loaded (router mode)', async () => {
    await withQuirkServer({ name: 'plain', description: 'no window in the list', handler: openAiCompatible({ models: ['test-model'] }) }, async (server) => {
      const r = await run(server.origin);
      assert.deepEqual(r.models.window, {});
      assert.match(reportMarkdown(r), /^- Window of `test-model`: the server does not say \(a contextWindow setting, in the profile or parley\.contextWindow, tells Parley\)\.$/m);
      assert.match(reportSummary(r), / window=unknown /);
    });
    const routerModels = llamaCppRouter.models([{ id: 'test-model', loaded: false }, { id: 'coder', loaded: false, args: ['-c', '8192'] }]);
    const router = openAiCompatible({ models: ['test-model'] }, () => false);
    const handler = (req: RecordedRequest, res: ServerResponse) => {
      const answered = serveRoutes('llama.cpp', {
        '/v1/models': () => ({ body: routerModels }),
        '/props': () => ({ status: 400, body: llamaCppRouter.notLoaded }),
      })(req, res);
      if (!answered) void router(req, res);
    };
    await withQuirkServer({ name: 'router', description: 'llama.cpp router mode', handler }, async (server) => {
      const r = await run(server.origin);
      assert.equal(r.ok, true, JSON.stringify(r.chat.error));
      assert.deepEqual(r.models.window, { kind: 'llama.cpp', loaded: false });
      assert.match(reportMarkdown(r), /^- Window of `test-model`: not known until the server loads the model; Parley reads it then\.$/m);
      const coder = await run(server.origin, { model: 'coder' });
      assert.match(reportMarkdown(coder), /^- Window of `coder`: 8,192 tokens, what the server runs it at \(the server's model list\)\.$/m);
    });
  });

  it('says plainly when [DONE] and usage do not come', async () => {
    await withQuirkServer({ name: 'bare', description: 'no done, no usage', handler: openAiCompatible({ done: false, usage: 'never' }) }, async (server) => {
      const r = await run(server.origin);
      assert.equal(r.ok, true, JSON.stringify(r.chat.error));
      assert.equal(r.chat.sawDone, false);
      assert.equal(r.chat.sawUsage, false);
      const md = reportMarkdown(r);
      assert.match(md, /`\[DONE\]`: no/);
      assert.match(md, /Usage chunk: no/);
      assert.match(md, /API key: absent/);
    });
  });

  for (const form of ['reasoning_content', 'reasoning', 'reasoning_details', 'think_tag'] as const) {
    it(`names the reasoning field: ${form}`, async () => {
      await withQuirkServer(reasoningUnder(form), async (server) => {
        const r = await run(server.origin);
        assert.equal(r.ok, true, JSON.stringify(r.chat.error));
        assert.equal(r.chat.reasoningField, form);
        assert.match(reportMarkdown(r), form === 'think_tag' ? /Reasoning field: `<think>` tags/ : new RegExp(`Reasoning field: \`${form}\``));
      });
    });
  }

  for (const param of ['stream_options', 'max_tokens', 'temperature'] as const) {
    it(`reports that ${param} had to be dropped, and returns the adaptation`, async () => {
      await withQuirkServer(PARAM_PROFILES[param], async (server) => {
        const r = await run(server.origin, { settings: { temperature: 0.3 } });
        assert.equal(r.ok, true, JSON.stringify(r.chat.error));
        assert.deepEqual(r.chat.dropped, [param]);
        assert.equal(r.chat.status, 200);
        if (param === 'max_tokens') assert.equal(r.adaptations.maxCompletionTokens, true);
        else assert.ok(r.adaptations.drop?.includes(param));
        assert.match(reportMarkdown(r), new RegExp(`Parameters dropped: \`${param}\``));
      });
    });
  }

  it('needs no retry when the adaptation is already known', async () => {
    await withQuirkServer(PARAM_PROFILES.stream_options, async (server) => {
      const r = await run(server.origin, { adaptations: { drop: ['stream_options'] } });
      assert.equal(r.ok, true);
      assert.deepEqual(r.chat.dropped, []);
      assert.equal(server.requests.filter((q) => q.method === 'POST').length, 1);
    });
  });
});

describe('diagnose: names the cause of each failure', function () {
  this.timeout(20_000);

  it('nothing listening: the server is not running', async () => {
    const r = await run(await closedPortUrl());
    assert.equal(r.ok, false);
    assert.equal(r.chat.status, undefined);
    assert.equal(ids(r)[0], 'not-running');
    assert.match(reportMarkdown(r), /server is running/);
  });

  it('nothing listening on localhost: also suggests 127.0.0.1', async () => {
    const r = await run(await closedPortUrl('localhost'));
    assert.equal(r.ok, false);
    assert.ok(ids(r).includes('not-running'), ids(r).join());
    assert.ok(ids(r).includes('use-127'), ids(r).join());
    assert.match(reportMarkdown(r), /127\.0\.0\.1 instead of localhost/);
  });

  it('LM Studio’s 200 "Unexpected endpoint" at a doubled /v1: remove it', async () => {
    await withQuirkServer(lmStudio(), async (server) => {
      const r = await run(`${server.origin}/v1/v1`, { model: 'qwen2.5-7b-instruct' });
      assert.equal(r.ok, false);
      assert.equal(r.chat.status, 200, 'LM Studio says 200');
      assert.equal(ids(r)[0], 'remove-v1');
      assert.match(r.causes[0].fix, new RegExp(`${escape(server.origin)}/v1\\b`));
      assert.ok(r.probes.some((p) => p.ok && p.url === `${server.origin}/v1/models`), JSON.stringify(r.probes));
    });
  });

  it('LM Studio’s 200 "Unexpected endpoint (POST /chat/completions)" without /v1: add /v1', async () => {
    await withQuirkServer(lmStudio(), async (server) => {
      // A full URL pasted into parley.baseUrl is used as is.
      const r = await run(`${server.origin}/chat/completions`, { model: 'qwen2.5-7b-instruct' });
      assert.equal(r.ok, false);
      assert.equal(r.chat.status, 200);
      const post = server.requests.find((q) => q.method === 'POST');
      assert.equal(post?.path, '/chat/completions');
      assert.equal(ids(r)[0], 'add-v1');
      assert.match(reportMarkdown(r), /Add \/v1/);
    });
  });

  it('a 404 under another path prefix (".../api" on a server at /v1): points at the URL that answers', async () => {
    await withQuirkServer({ name: 'v1-only', description: 'serves /v1 only, 404 elsewhere', handler: openAiCompatible() }, async (server) => {
      const r = await run(`${server.origin}/api`);
      assert.equal(r.url, `${server.origin}/api/v1/chat/completions`);
      assert.equal(r.ok, false);
      assert.equal(r.chat.status, 404);
      assert.equal(ids(r)[0], 'wrong-path');
      assert.equal(r.causes[0].fix, `Set parley.baseUrl to ${server.origin}/v1`);
    });
  });

  it('a doubled slash before chat/completions (an endpoint built by hand): remove the trailing slash', async () => {
    await withQuirkServer(lmStudio(), async (server) => {
      const root = `${server.origin}/v1/`;
      const endpoint = { url: `${root}/chat/completions`, modelsUrl: `${root}/models`, base: root, origin: server.origin };
      const r = await diagnose({ endpoint, model: 'qwen2.5-7b-instruct', timeoutMs: 5_000 });
      assert.equal(r.ok, false);
      assert.equal(ids(r)[0], 'trailing-slash');
      assert.match(r.causes[0].fix, new RegExp(`${escape(server.origin)}/v1$`));
    });
  });

  it('a server that never answers: timeout, and it says which setting to raise', async () => {
    const silent: QuirkProfile = { name: 'silent', description: 'never answers', handler: () => new Promise<void>(() => undefined) };
    await withQuirkServer(silent, async (server) => {
      const r = await run(server.origin, { timeoutMs: 300 });
      assert.equal(r.ok, false);
      assert.equal(r.chat.error?.kind, 'timeout');
      assert.deepEqual(ids(r), ['timeout']);
      assert.match(reportMarkdown(r), /parley\.requestTimeoutSeconds/);
    });
  });

  it('401 without a key: set one', async () => {
    await withQuirkServer(requiresKey(KEY), async (server) => {
      const r = await run(server.origin, { keyMissing: true });
      assert.equal(r.ok, false);
      assert.equal(r.chat.status, 401);
      assert.equal(ids(r)[0], 'missing-key');
      assert.match(reportMarkdown(r), /Set API Key/);
      assert.match(reportMarkdown(r), /API key: absent/);
    });
  });

  it('401 with a wrong key the server echoes in full: the key is wrong, and the report does not contain it', async () => {
    const wrong = 'sk-wrong-0123456789abcdefghijklmnop';
    await withQuirkServer(requiresKey(KEY, { echoKey: 'full' }), async (server) => {
      const r = await run(server.origin, { apiKey: wrong });
      assert.equal(r.ok, false);
      assert.equal(ids(r)[0], 'wrong-key');
      const md = reportMarkdown(r);
      assert.ok(!md.includes(wrong), 'the echoed key is redacted');
      assert.ok(!JSON.stringify(r).includes(wrong), 'nowhere in the report object either');
    });
  });

  /** The report's "2. Models" section. */
  const modelsSection = (md: string) => md.slice(md.indexOf('## 2. Models'), md.indexOf('## 3.'));

  it('a wrong key refused on the model list and the chat (401): one story, the key, never "no models endpoint"', async () => {
    await withQuirkServer(requiresKey(KEY), async (server) => {
      const r = await run(server.origin, { apiKey: 'sk-wrong-0123456789abcdefghijklmnop' });
      assert.equal(r.models.outcome, 'failed');
      assert.equal(r.models.error?.status, 401);
      assert.deepEqual(ids(r), ['wrong-key']);
      const section = modelsSection(reportMarkdown(r));
      assert.doesNotMatch(section, /no models endpoint|not a problem/);
      assert.match(section, /^ {2}The server refused the key, as it did the chat request: see the likely fix above\.$/m);
    });
  });

  it('no key, refused on both (401): the likely fix sets one, and the model list points to it', async () => {
    await withQuirkServer(requiresKey(KEY), async (server) => {
      const r = await run(server.origin, { keyMissing: true });
      assert.deepEqual(ids(r), ['missing-key']);
      const section = modelsSection(reportMarkdown(r));
      assert.doesNotMatch(section, /no models endpoint/);
      assert.match(section, /see the likely fix above/);
    });
  });

  it('a key sent in a profile header (api-key) refused with 403: the fix names Set Header Secret too', async () => {
    // A gateway that takes its key in an `api-key` header, as Azure OpenAI does, and answers a wrong one with 403.
    const handler = (req: RecordedRequest, res: ServerResponse) => {
      if (req.headers['api-key'] !== KEY) {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: '403', message: 'Access denied due to invalid subscription key.' } }));
        return;
      }
      void openAiCompatible()(req, res);
    };
    await withQuirkServer({ name: 'header-key', description: 'key in an api-key header', handler }, async (server) => {
      const r = await run(server.origin, { headers: { 'api-key': 'wrong-header-secret' } });
      assert.equal(r.models.error?.status, 403);
      assert.deepEqual(ids(r), ['missing-key']);
      assert.match(r.causes[0].fix, /"Parley: Set API Key".*"Parley: Set Header Secret"/);
      const md = reportMarkdown(r);
      assert.doesNotMatch(modelsSection(md), /no models endpoint/);
      assert.ok(!md.includes('wrong-header-secret'), 'the header secret is not in the report');
    });
  });

  it('a key the server takes for chat but refuses for its model list (403): says so, and not to set it again', async () => {
    const handler = (req: RecordedRequest, res: ServerResponse) => {
      if (req.method === 'GET' && req.path === '/v1/models') {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'This key may not list models.', type: 'permission_error' } }));
        return;
      }
      void openAiCompatible()(req, res);
    };
    await withQuirkServer({ name: 'no-list-scope', description: '403 on /models only', handler }, async (server) => {
      const r = await run(server.origin, { apiKey: KEY });
      assert.equal(r.ok, true);
      assert.equal(r.models.error?.status, 403);
      assert.deepEqual(ids(r), []);
      const section = modelsSection(reportMarkdown(r));
      assert.doesNotMatch(section, /no models endpoint|Set API Key/);
      assert.match(section, /^ {2}The server took this key for the chat request below but refused it for its model list/m);
      // The same with no key stored: the profile sends it in a header the chat request carried too.
      const viaHeader = modelsSection(reportMarkdown(await run(server.origin, { headers: { 'api-key': 'k-123' } })));
      assert.doesNotMatch(viaHeader, /no models endpoint|Set API Key/);
      assert.match(viaHeader, /^ {2}The server took this key for the chat request below but refused it for its model list/m);
    });
  });

  it('a model list refused (401) while the chat request fails otherwise (500): the model list says what to do itself', async () => {
    const handler = (req: RecordedRequest, res: ServerResponse) => {
      res.writeHead(req.method === 'GET' ? 401 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: req.method === 'GET' ? 'Unauthorized' : 'Internal error' } }));
    };
    await withQuirkServer({ name: 'list-401-chat-500', description: '401 on /models, 500 on chat', handler }, async (server) => {
      const r = await run(server.origin, { apiKey: KEY });
      assert.equal(r.ok, false);
      assert.ok(!ids(r).includes('wrong-key'));
      assert.match(modelsSection(reportMarkdown(r)), /^ {2}The server refused the key for its model list\. Run "Parley: Set API Key" and enter a valid key for `http:\/\/127\.0\.0\.1:\d+`\.$/m);
    });
  });

  it('a server with no models endpoint (404): that alone is not a problem', async () => {
    await withQuirkServer(knownModels(['test-model'], { models: false }), async (server) => {
      const r = await run(server.origin, { apiKey: KEY });
      assert.equal(r.ok, true);
      assert.equal(r.models.error?.status, 404);
      assert.match(modelsSection(reportMarkdown(r)), /Some servers have no models endpoint; that alone is not a problem\./);
    });
  });

  it('no key set, and the server needs none: says so', async () => {
    await withQuirkServer({ name: 'open', description: 'no key', handler: openAiCompatible() }, async (server) => {
      const r = await run(server.origin, { keyMissing: true });
      assert.equal(r.ok, true);
      assert.deepEqual(ids(r), ['no-key-needed']);
      assert.equal(server.requests.every((q) => q.headers.authorization === undefined), true);
    });
  });

  it('model 404 and a list without it: the model is not in the list, with the closest names', async () => {
    await withQuirkServer(knownModels(['gpt-4o-mini', 'gpt-4o', 'o3-mini']), async (server) => {
      const r = await run(server.origin, { model: 'gpt-4o-mni' });
      assert.equal(r.ok, false);
      assert.equal(r.chat.status, 404);
      assert.equal(r.models.modelListed, false);
      assert.equal(ids(r)[0], 'model-not-in-list');
      assert.equal(r.models.closest?.[0], 'gpt-4o-mini');
      assert.match(r.causes[0].fix, /"gpt-4o-mini"/);
    });
  });

  it('a plain-text 500 for a model the list lacks: the model is named first, and the status is said once', async () => {
    // Seen with llama.cpp-style proxies: an unknown model is answered "500 Internal Server Error", in plain text.
    const plain500: QuirkProfile = {
      name: 'plain-500',
      description: 'lists two models; any other model gets a plain-text 500',
      handler: openAiCompatible({ models: ['gpt-4o-mini', 'gpt-4o'] }, (req, res) => {
        if ((req.json as { model?: string }).model !== 'gpt-4o-mini' && (req.json as { model?: string }).model !== 'gpt-4o') {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('Internal Server Error');
          return true;
        }
        return false;
      }),
    };
    await withQuirkServer(plain500, async (server) => {
      const r = await run(server.origin, { model: 'gpt-4o-mni' });
      assert.equal(r.ok, false);
      assert.equal(r.chat.status, 500);
      assert.equal(r.models.modelListed, false);
      assert.equal(ids(r)[0], 'model-not-in-list', ids(r).join());
      assert.match(r.causes[0].fix, /"gpt-4o-mni" is not in the server's model list/);
      assert.match(r.causes[0].fix, /"gpt-4o-mini"/, 'with the closest name');
      assert.ok(ids(r).includes('server-error'), 'the server error stays as a second possibility');
      const md = reportMarkdown(r);
      const errorLine = md.split('\n').find((l) => l.startsWith('- Error:')) ?? '';
      assert.equal(errorLine.match(/HTTP 500/g)?.length, 1, `the status once: ${errorLine}`);
      assert.ok(md.indexOf('is not in the server') < md.indexOf('The server failed while answering'), 'the model fix comes first');
    });
  });

  it('model 404 from a server without a models list: the model is unknown', async () => {
    await withQuirkServer(knownModels(['llama3.2:latest'], { models: false, unknownModel: 'ollama' }), async (server) => {
      const r = await run(server.origin, { model: 'qwen3' });
      assert.equal(r.ok, false);
      assert.equal(r.models.outcome, 'failed');
      assert.equal(ids(r)[0], 'model-not-found');
    });
  });

  it('an Ollama model named without its :latest tag is in the list', async () => {
    await withQuirkServer(knownModels(['llama3.2:latest'], { unknownModel: 'ollama' }), async (server) => {
      const r = await run(server.origin, { model: 'llama3.2' });
      assert.equal(r.ok, true);
      assert.equal(r.models.modelListed, true);
    });
  });

  it('what the test costs is handed to onBilled: the answered request once, with the server\'s usage; a refused one not', async () => {
    const billed: Array<{ total: number; estimated: boolean; ms: number }> = [];
    const onBilled: DiagnoseOptions['onBilled'] = (u, ms) => billed.push({ total: u.total_tokens, estimated: u.estimated === true, ms });
    await withQuirkServer({ name: 'ok', description: 'compliant', handler: openAiCompatible({ models: ['test-model'] }) }, async (server) => {
      await run(server.origin, { onBilled });
    });
    assert.equal(billed.length, 1);
    assert.equal(billed[0].estimated, false, 'the server sent its usage');
    assert.ok(billed[0].total > 0 && billed[0].ms >= 0);
    billed.length = 0;
    await withQuirkServer(rejectsParam('stream_options', { style: 'groq' }), async (server) => {
      await run(server.origin, { onBilled });
      assert.equal(server.requests.filter((q) => q.method === 'POST').length, 2, 'refused, then sent again without it');
    });
    assert.equal(billed.length, 1, 'the refusal cost nothing; the answer is counted (estimated: no usage chunk)');
    assert.equal(billed[0].estimated, true);
    billed.length = 0;
    await withQuirkServer(requiresKey(KEY), async (server) => {
      await run(server.origin, { apiKey: 'sk-wrong', onBilled });
    });
    assert.deepEqual(billed, [], 'a rejected key is not billed');
  });

  it('Groq refusing stream_options: dropped, and no usage chunk comes', async () => {
    await withQuirkServer(rejectsParam('stream_options', { style: 'groq' }), async (server) => {
      const r = await run(server.origin);
      assert.equal(r.ok, true);
      assert.deepEqual(r.chat.dropped, ['stream_options']);
      assert.equal(r.chat.sawUsage, false);
      assert.match(reportMarkdown(r), /Usage chunk: no/);
    });
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
