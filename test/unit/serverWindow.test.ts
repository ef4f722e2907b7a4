// The window the server really runs: llama.cpp's loaded window (not the training length), router mode's per-model
// /props, Ollama's /api/ps and Modelfile num_ctx, LM Studio's loaded context, vLLM's max_model_len; a smaller
// contextWindow setting wins and a larger one is shown as not applied; a prompt count far below the estimate is a
// dropped prompt. Against a real server on 127.0.0.1 serving each server's bodies.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { listModelInfo } from '../../src/core/client';
import { resolveWindow } from '../../src/core/contextWindow';
import { resolveEndpoint } from '../../src/core/endpoint';
import { modelListFrom, tokenLimits } from '../../src/core/modelInfo';
import { droppedCard, notSentCard, OLLAMA_DEFAULT_CONTEXT, promptDropped, raiseHint, windowNotes, WindowProbe } from '../../src/core/serverWindow';
import { clientOptions } from '../support/client';
import { llamaCppModels, llamaCppProps, llamaCppRouter, lmStudio, ollama, serveRoutes, vllmModels } from '../support/localServers';
import { withServer, type RecordedRequest, type TestServer } from '../support/server';

/** The list and the probe's answer for `model`, as the panel gets them. */
async function windowOf(s: TestServer, model: string) {
  const list = await listModelInfo(clientOptions(s));
  return new WindowProbe(clientOptions(s), list).windowOf(model);
}
const gets = (s: TestServer) => s.requests.map((r) => `${r.method} ${r.path}`);

/** A recorded body from test/fixtures/windows, as it is. */
const fixture = (name: string): unknown => JSON.parse(readFileSync(resolve(__dirname, '../../../test/fixtures/windows', name), 'utf8'));

describe('the window the server runs: llama.cpp (issue 34, item 1)', () => {
  it('the recorded bodies of a real llama-server, as they are: -c 2048 in /v1/models and /props; router mode per model', async () => {
    assert.deepEqual(modelListFrom(fixture('llamacpp-v1-models.json')), [{ id: 'tiny', contextLength: 2048, modelMax: 32_768, server: 'llama.cpp', imageInput: false }]);
    // Router mode: a model not loaded has no meta, so no window; a loaded one its child's n_ctx.
    assert.deepEqual(modelListFrom(fixture('llamacpp-router-v1-models-one-loaded.json')), [
      { id: 'tiny-a', server: 'llama.cpp', loaded: false, imageInput: false },
      { id: 'tiny-b', contextLength: 8192, server: 'llama.cpp', loaded: true, imageInput: false },
    ]);
    let list = 'llamacpp-router-v1-models-unloaded.json';
    await withServer((req, res) => {
      const q = new URL(req.path, 'http://x').searchParams;
      void serveRoutes('llama.cpp', {
        '/v1/models': () => ({ body: fixture(list) }),
        '/props': () => (!q.get('model') ? { body: fixture('llamacpp-router-props.json') }
          : q.get('model') === 'tiny-b' && list.endsWith('one-loaded.json') ? { body: llamaCppProps(8192, 'tiny-b') }
          : { status: 400, body: llamaCppRouter.notLoaded }),
      })(req, res);
    }, async (s) => {
      assert.deepEqual(await windowOf(s, 'tiny-b'), { kind: 'llama.cpp', loaded: false }, 'not loaded yet: unknown, never the router\'s 0');
      list = 'llamacpp-router-v1-models-one-loaded.json';
      assert.deepEqual(await windowOf(s, 'tiny-b'), { window: 8192, from: 'llama.cpp\'s /props', kind: 'llama.cpp', loaded: true });
      assert.deepEqual(await windowOf(s, 'tiny-a'), { kind: 'llama.cpp', loaded: false });
    });
  });

  it('-c 2048 is the window, not the model\'s training length of 32,768: in the list, the meter and VS Code\'s chat', () => {
    const [m] = modelListFrom(llamaCppModels(2048, 32_768)) ?? [];
    assert.equal(m.contextLength, 2048, 'meta.n_ctx, the window loaded');
    assert.equal(m.modelMax, 32_768, 'meta.n_ctx_train is only the model\'s maximum');
    assert.deepEqual(resolveWindow(m, {}), { window: 2048, source: 'server', reserve: 1024, serverWindow: 2048 });
    // VS Code's chat was told 28,672 (32,768 less the 4,096 reply): now the window less half of it for the reply.
    assert.deepEqual(tokenLimits(m, {}), { maxInputTokens: 1024, maxOutputTokens: 1024 });
  });

  it('an older build that lists only n_ctx_train leaves the window to /props', () => {
    const [m] = modelListFrom({ data: [{ id: 'old.gguf', object: 'model', owned_by: 'llamacpp', meta: { vocab_type: 1, n_vocab: 32_000, n_ctx_train: 32_768, n_embd: 4096 } }] }) ?? [];
    assert.deepEqual(m, { id: 'old.gguf', modelMax: 32_768, server: 'llama.cpp' });
  });

  it('parley.contextWindow lowers the server\'s window; a larger one is not applied, and the tooltip says why', () => {
    const [m] = modelListFrom(llamaCppModels(2048)) ?? [];
    const lowered = resolveWindow(m, { contextWindow: 1500 });
    assert.deepEqual(lowered, { window: 1500, source: 'profile', reserve: 750, serverWindow: 2048 });
    assert.deepEqual(tokenLimits(m, { contextWindow: 1500 }), { maxInputTokens: 750, maxOutputTokens: 750 });
    assert.match(windowNotes({ kind: 'llama.cpp', window: 2048 }, lowered, 'tiny.gguf').join('\n'), /your contextWindow setting, smaller than the 2,048 tokens the server runs/);

    const larger = resolveWindow(m, { contextWindow: 65_536 });
    assert.deepEqual(larger, { window: 2048, source: 'server', reserve: 1024, serverWindow: 2048, unapplied: 65_536 });
    assert.deepEqual(tokenLimits(m, { contextWindow: 65_536 }), { maxInputTokens: 1024, maxOutputTokens: 1024 });
    const notes = windowNotes({ kind: 'llama.cpp', window: 2048, from: 'llama.cpp\'s /props', modelMax: 32_768 }, larger, 'tiny.gguf');
    assert.deepEqual(notes, [
      'Window: what llama.cpp runs (llama.cpp\'s /props)',
      'Your contextWindow setting (65,536) is not applied: the server runs this model at 2,048 tokens, and a longer prompt would fail or lose its start.',
      'The model itself takes up to 32,768 tokens.',
    ]);
    // Without a server figure the setting is the window, as before.
    assert.deepEqual(resolveWindow({ id: 'x' }, { contextWindow: 4096 }), { window: 4096, source: 'profile', reserve: 2048 });
  });

  it('asks /props for one slot\'s window: -c 4096 with two slots runs 2,048 per request', async () => {
    await withServer((req, res) => void serveRoutes('llama.cpp', {
      '/v1/models': () => ({ body: llamaCppModels(4096) }),
      '/props': () => ({ body: llamaCppProps(2048) }),
    })(req, res), async (s) => {
      assert.deepEqual(await windowOf(s, 'tiny.gguf'), { window: 2048, from: 'llama.cpp\'s /props', modelMax: 32_768, kind: 'llama.cpp', loaded: true });
      assert.deepEqual(gets(s), ['GET /v1/models', 'GET /props?model=tiny.gguf&autoload=false']);
    });
  });
});

describe('the window the server runs: llama.cpp router mode (issue 34, item 3)', () => {
  const routerModels = llamaCppRouter.models([
    { id: 'qwen-small', loaded: true, nCtx: 4096 },
    { id: 'coder', loaded: false, args: ['-c', '8192'] },
    { id: 'plain', loaded: false },
  ]);
  function router(req: RecordedRequest, res: import('node:http').ServerResponse): void {
    const q = new URL(req.path, 'http://x').searchParams;
    serveRoutes('llama.cpp', {
      '/v1/models': () => ({ body: routerModels }),
      '/props': () => {
        const model = q.get('model');
        if (!model) return { body: llamaCppRouter.props };
        // autoload=false: an unloaded model is not loaded just to be asked (else the router would start it).
        if (model !== 'qwen-small') return q.get('autoload') === 'false' ? { status: 400, body: llamaCppRouter.notLoaded } : { status: 500, body: { error: 'loaded a model to answer /props' } };
        return { body: llamaCppProps(4096, 'qwen-small') };
      },
    })(req, res);
  }

  it('a loaded model\'s window comes from /props?model=, never from the router\'s own n_ctx 0', async () => {
    await withServer(router, async (s) => {
      // The recorded entry's model is trained at 8,192; the router runs this one at 4,096.
      assert.deepEqual(await windowOf(s, 'qwen-small'), { window: 4096, from: 'llama.cpp\'s /props', modelMax: 8192, kind: 'llama.cpp', loaded: true });
    });
  });

  it('a model not loaded has no meta: its preset\'s -c, else unknown until it is loaded; /props never loads it', async () => {
    await withServer(router, async (s) => {
      assert.deepEqual(await windowOf(s, 'coder'), { window: 8192, from: 'the server\'s model list', kind: 'llama.cpp', loaded: false });
      const plain = await windowOf(s, 'plain');
      assert.deepEqual(plain, { kind: 'llama.cpp', loaded: false });
      assert.match(windowNotes(plain, resolveWindow({ contextLength: plain.window }, {}), 'plain').join('\n'), /llama\.cpp has not loaded plain yet: Parley reads its window once the model is loaded/);
      for (const r of s.requests.filter((x) => x.path.startsWith('/props'))) assert.match(r.path, /[?&]autoload=false/, r.path);
    });
  });
});

describe('the window the server runs: Ollama, LM Studio, vLLM', () => {
  function ollamaServer(req: RecordedRequest, res: import('node:http').ServerResponse): void {
    serveRoutes('ollama', {
      '/v1/models': () => ({ body: ollama.models(['qwen2.5-coder:7b', 'llama3.2:latest', 'mine:latest']) }),
      '/api/ps': () => ({ body: ollama.ps([{ name: 'qwen2.5-coder:7b', contextLength: 4096 }]) }),
      '/api/show': (r) => {
        const model = (r.json as { model?: string }).model;
        if (model === 'mine:latest') return { body: ollama.show(200_000, 131_072) };
        if (model === 'llama3.2' || model === 'llama3.2:latest') return { body: ollama.show(undefined, 131_072) };
        return { status: 404, body: { error: `model '${model}' not found` } };
      },
    })(req, res);
  }

  it('Ollama: a loaded model\'s context_length from /api/ps', async () => {
    await withServer(ollamaServer, async (s) => {
      assert.deepEqual(await windowOf(s, 'qwen2.5-coder:7b'), { kind: 'ollama', window: 4096, from: 'Ollama (/api/ps: the model as loaded)', loaded: true });
      // Ollama's list names the official models' owner `library`: no other server's endpoints are asked.
      assert.deepEqual(gets(s), ['GET /v1/models', 'GET /api/ps']);
    });
  });

  it('Ollama: a model not loaded runs at its Modelfile\'s num_ctx (at most its own length), else at Ollama\'s default', async () => {
    await withServer(ollamaServer, async (s) => {
      assert.deepEqual(await windowOf(s, 'mine:latest'), { kind: 'ollama', loaded: false, window: 131_072, from: 'Ollama (num_ctx in the model\'s Modelfile)' });
      const untagged = await windowOf(s, 'llama3.2');
      assert.deepEqual(untagged, { kind: 'ollama', loaded: false, modelMax: 131_072 });
      assert.match(windowNotes(untagged, resolveWindow({}, {}), 'llama3.2').join('\n'), /Ollama has not loaded llama3\.2 yet.*Ollama's default window \(4,096 tokens on most machines; OLLAMA_CONTEXT_LENGTH changes it\)/);
      // VS Code's chat needs a number: Ollama's default, not 32,768.
      assert.equal(OLLAMA_DEFAULT_CONTEXT, 4096);
      assert.deepEqual(tokenLimits({}, {}, OLLAMA_DEFAULT_CONTEXT), { maxInputTokens: 2048, maxOutputTokens: 2048 });
    });
  });

  it('LM Studio: loaded_context_length from its own table; a model not loaded is unknown, with its maximum', async () => {
    await withServer((req, res) => void serveRoutes('lmstudio', {
      '/v1/models': () => ({ body: lmStudio.models(['qwen3-8b', 'gemma-3-4b']) }),
      '/api/v0/models': () => ({ body: lmStudio.v0([{ id: 'qwen3-8b', loaded: 4096, max: 131_072 }, { id: 'gemma-3-4b', max: 32_768 }]) }),
    })(req, res), async (s) => {
      assert.deepEqual(await windowOf(s, 'qwen3-8b'), { kind: 'lmstudio', window: 4096, from: 'LM Studio (the model as loaded)', modelMax: 131_072, loaded: true });
      assert.deepEqual(await windowOf(s, 'gemma-3-4b'), { kind: 'lmstudio', modelMax: 32_768, loaded: false });
      assert.equal(s.requests.some((r) => r.path === '/api/ps'), false, 'LM Studio\'s answer to /props is not llama.cpp\'s, and its kind is known from the list');
    });
    // Its /api/v0 list read as a model list: the maximum is not the window.
    assert.deepEqual(modelListFrom(lmStudio.v0([{ id: 'a', max: 32_768 }])), [{ id: 'a', modelMax: 32_768, server: 'lmstudio', loaded: false, imageInput: false }]);
  });

  describe('LM Studio\'s REST API v1 (0.4 and later): /api/v1/models, then /api/v0/models, then nothing', () => {
    const v0Body = lmStudio.v0([{ id: 'qwen3-8b', loaded: 4096, max: 131_072 }]);
    const lmServer = (routes: Parameters<typeof serveRoutes>[1]) => (req: RecordedRequest, res: import('node:http').ServerResponse) =>
      void serveRoutes('lmstudio', { '/v1/models': () => ({ body: lmStudio.models(['qwen3-8b', 'gemma-3-270m-it-qat']) }), ...routes })(req, res);

    it('v1 only: the documented body as it is, the loaded instance\'s context_length, sent with the model list\'s headers', async () => {
      await withServer(lmServer({ '/api/v1/models': () => ({ body: fixture('lmstudio-api-v1-models.json') }) }), async (s) => {
        const opts = clientOptions(s, { apiKey: 'lm-token', headers: { 'x-team': 'blue' } });
        const w = await new WindowProbe(opts, await listModelInfo(opts)).windowOf('gemma-3-270m-it-qat');
        assert.deepEqual(w, { kind: 'lmstudio', window: 4096, from: 'LM Studio (the model as loaded)', modelMax: 32_768, loaded: true });
        assert.deepEqual(gets(s), ['GET /v1/models', 'GET /api/v1/models']);
        for (const q of s.requests) {
          assert.equal(q.headers.authorization, 'Bearer lm-token');
          assert.equal(q.headers['x-team'], 'blue');
        }
      });
    });

    it('v1: a model not loaded is unknown, with its maximum; v0 is not asked', async () => {
      await withServer(lmServer({ '/api/v1/models': () => ({ body: lmStudio.v1([{ key: 'qwen3-8b', max: 131_072 }]) }), '/api/v0/models': () => ({ body: v0Body }) }), async (s) => {
        assert.deepEqual(await windowOf(s, 'qwen3-8b'), { kind: 'lmstudio', modelMax: 131_072, loaded: false });
        assert.deepEqual(gets(s), ['GET /v1/models', 'GET /api/v1/models']);
      });
    });

    it('a model loaded twice: the instance named, else the smaller window (a prompt that fits it fits either)', async () => {
      await withServer(lmServer({ '/api/v1/models': () => ({ body: lmStudio.v1([{ key: 'qwen3-8b', loaded: [16_384, 8192], max: 131_072 }]) }) }), async (s) => {
        assert.equal((await windowOf(s, 'qwen3-8b:2')).window, 8192);
        assert.equal((await windowOf(s, 'qwen3-8b')).window, 16_384, 'the key names the first instance');
      });
      await withServer(lmServer({ '/api/v1/models': () => ({ body: { models: [{ key: 'qwen3-8b', max_context_length: 131_072, loaded_instances: [{ id: 'a', config: { context_length: 16_384 } }, { id: 'b', config: { context_length: 8192 } }] }] } }) }), async (s) => {
        assert.equal((await windowOf(s, 'qwen3-8b')).window, 8192);
      });
    });

    it('v0 only (before 0.4, /api/v1/models answered 200 "Unexpected endpoint"): v0\'s loaded_context_length', async () => {
      await withServer(lmServer({ '/api/v0/models': () => ({ body: v0Body }) }), async (s) => {
        assert.deepEqual(await windowOf(s, 'qwen3-8b'), { kind: 'lmstudio', window: 4096, from: 'LM Studio (the model as loaded)', modelMax: 131_072, loaded: true });
        assert.deepEqual(gets(s), ['GET /v1/models', 'GET /api/v1/models', 'GET /api/v0/models']);
      });
    });

    it('both: v1 is read, and v0 is not asked', async () => {
      await withServer(lmServer({
        '/api/v1/models': () => ({ body: lmStudio.v1([{ key: 'qwen3-8b', loaded: [8192], max: 131_072 }]) }),
        '/api/v0/models': () => ({ body: v0Body }),
      }), async (s) => {
        assert.equal((await windowOf(s, 'qwen3-8b')).window, 8192);
        assert.deepEqual(gets(s), ['GET /v1/models', 'GET /api/v1/models']);
      });
    });

    it('v1 says the model is loaded but gives no window, and v0 does not name it: still loaded (v0 does not undo it)', async () => {
      await withServer(lmServer({
        '/api/v1/models': () => ({ body: { models: [{ key: 'qwen3-8b', max_context_length: 131_072, loaded_instances: [{ id: 'qwen3-8b', config: {} }] }] } }),
        '/api/v0/models': () => ({ body: lmStudio.v0([{ id: 'other-model', loaded: 4096, max: 8192 }]) }),
      }), async (s) => {
        const w = await windowOf(s, 'qwen3-8b');
        assert.equal(w.window, undefined);
        assert.equal(w.loaded, true);
      });
    });

    it('malformed: v1 unreadable falls back to v0; both unreadable (or failing) give no window, quietly', async () => {
      const broken = [
        { status: 200, body: { models: 'qwen3-8b' } },
        { status: 200, body: { models: [{ key: 'qwen3-8b', loaded_instances: [{ id: 'qwen3-8b', config: { context_length: '8192' } }], max_context_length: -1 }] } },
        { status: 500, body: { error: 'internal' } },
        { status: 200, body: [1, 2] },
      ];
      for (const v1 of broken) {
        await withServer(lmServer({ '/api/v1/models': () => v1, '/api/v0/models': () => ({ body: v0Body }) }), async (s) => {
          assert.equal((await windowOf(s, 'qwen3-8b')).window, 4096, JSON.stringify(v1.body));
        });
        await withServer(lmServer({ '/api/v1/models': () => v1, '/api/v0/models': () => ({ body: { data: 'none' } }) }), async (s) => {
          const w = await windowOf(s, 'qwen3-8b');
          assert.equal(w.window, undefined, JSON.stringify(v1.body));
          assert.equal(w.kind, 'lmstudio');
        });
      }
    });
  });

  it('vLLM: max_model_len is what it runs; nothing more is asked', async () => {
    await withServer((req, res) => void serveRoutes('vllm', { '/v1/models': () => ({ body: vllmModels('Qwen/Qwen2.5-7B-Instruct', 8192) }) })(req, res), async (s) => {
      assert.deepEqual(await windowOf(s, 'Qwen/Qwen2.5-7B-Instruct'), { window: 8192, from: 'the server\'s model list', kind: 'vllm' });
      assert.deepEqual(gets(s), ['GET /v1/models']);
    });
  });

  it('a model of no namespace Ollama knows: llama.cpp\'s /props and LM Studio\'s tables are asked, then /api/ps', async () => {
    await withServer((req, res) => void serveRoutes('ollama', {
      '/v1/models': () => ({ body: { object: 'list', data: [{ id: 'hf.co/bartowski/Qwen:Q4_K_M', object: 'model', created: 1_750_000_000, owned_by: 'bartowski' }] } }),
      '/api/ps': () => ({ body: ollama.ps([{ name: 'hf.co/bartowski/Qwen:Q4_K_M', contextLength: 8192 }]) }),
    })(req, res), async (s) => {
      assert.equal((await windowOf(s, 'hf.co/bartowski/Qwen:Q4_K_M')).window, 8192);
      assert.deepEqual(gets(s), ['GET /v1/models', 'GET /props?model=hf.co%2Fbartowski%2FQwen%3AQ4_K_M&autoload=false', 'GET /api/v1/models', 'GET /api/v0/models', 'GET /api/ps']);
    });
  });

  it('a reverse proxy\'s path prefix is kept: /ollama/v1 asks /ollama/api/ps', async () => {
    await withServer((req, res) => {
      const path = req.path.replace(/^\/ollama/, '');
      void serveRoutes('ollama', {
        '/v1/models': () => ({ body: ollama.models(['qwen2.5-coder:7b']) }),
        '/api/ps': () => ({ body: ollama.ps([{ name: 'qwen2.5-coder:7b', contextLength: 8192 }]) }),
      })({ ...req, path }, res);
    }, async (s) => {
      const opts = clientOptions(s, { endpoint: resolveEndpoint(`${s.url}/ollama/v1`) });
      const w = await new WindowProbe(opts, await listModelInfo(opts)).windowOf('qwen2.5-coder:7b');
      assert.equal(w.window, 8192);
      assert.ok(s.requests.some((r) => r.path === '/ollama/api/ps'));
    });
  });
});

describe('silent truncation: a prompt count far below the estimate', () => {
  it('with the window known: the estimate did not fit, the count does, and is 20 % short or more', () => {
    // Ollama at 4,096 cut a 6,000-token prompt to 3,900.
    assert.equal(promptDropped({ expected: 6000, actual: 3900, window: 4096 }), true);
    assert.equal(promptDropped({ expected: 3500, actual: 2000, window: 4096 }), false, 'a prompt that fit is never called cut');
    assert.equal(promptDropped({ expected: 4300, actual: 4000, window: 4096 }), false, 'within the estimate\'s noise');
  });

  it('without a window: under half the estimate, and 256 tokens or more short', () => {
    assert.equal(promptDropped({ expected: 6000, actual: 2900 }), true);
    assert.equal(promptDropped({ expected: 6000, actual: 3100 }), false);
    assert.equal(promptDropped({ expected: 400, actual: 150 }), false, 'a short prompt is within the noise');
    assert.equal(promptDropped({ expected: 6000, actual: 0 }), false, 'no count is no evidence');
  });

  it('says how to raise each server\'s window, with a size that fits (at most the model\'s own)', () => {
    assert.match(raiseHint({ kind: 'llama.cpp' }, 2300), /-c 4096 \(--ctx-size/);
    assert.match(raiseHint({ kind: 'ollama' }, 6000), /OLLAMA_CONTEXT_LENGTH=8192 .*PARAMETER num_ctx 8192 in the model's Modelfile/);
    assert.match(raiseHint({ kind: 'lmstudio', modelMax: 32_768 }, 40_000), /at most 32,768 tokens, so only a shorter conversation fits/);
    assert.match(raiseHint({ kind: 'vllm' }, 9000), /--max-model-len \(16384\)/);
    assert.match(raiseHint({}, 9000), /larger window on the server/);
  });

  it('the cards: a prompt not sent (Compact and retry, or Retry once the window is raised), and one the server cut', () => {
    const m = { used: 6010, reserve: 2048, window: 4096, serverWindow: 4096, corrected: false, threshold: 85, compactable: 0 };
    const alone = notSentCard(m, { kind: 'ollama' }, 'qwen2.5-coder:7b', 4);
    assert.deepEqual(alone.actions, ['retry']);
    assert.equal(alone.title, 'This conversation no longer fits the model\'s window: about 6,010 tokens and 2,048 for the reply, of the 4,096 tokens the server runs qwen2.5-coder:7b at. Nothing was sent.');
    assert.match(alone.hint ?? '', /^There is nothing older to summarize \(the last 4 questions are kept word for word\): start a new chat, or shorten the question\. To give the model more room, set OLLAMA_CONTEXT_LENGTH=8192/);
    const older = notSentCard({ ...m, compactable: 2 }, { kind: 'ollama' }, 'qwen2.5-coder:7b', 4);
    assert.deepEqual(older.actions, ['compactRetry']);
    // Past a smaller setting only: the setting's window, and nothing about the server.
    const budget = notSentCard({ ...m, used: 1400, reserve: 750, window: 1500, compactable: 2 }, { kind: 'ollama' }, 'q', 4);
    assert.match(budget.title, /of 1,500\. Nothing was sent\.$/);
    assert.equal(budget.hint?.includes('OLLAMA_CONTEXT_LENGTH'), false);

    const cut = droppedCard({ expected: 6010, actual: 3900, window: 4096, reserve: 2048, compactable: false }, { kind: 'ollama' }, 'qwen2.5-coder:7b');
    assert.equal(cut.title, 'The server dropped part of the prompt: it read 3,900 tokens where Parley sent about 6,010, and it runs qwen2.5-coder:7b at 4,096. This reply did not see the start of the conversation.');
    assert.deepEqual(cut.actions, []);
    assert.deepEqual(droppedCard({ expected: 6010, actual: 2000, reserve: 2048, compactable: true }, { kind: 'lmstudio' }, 'q').actions, ['compact']);
  });
});
