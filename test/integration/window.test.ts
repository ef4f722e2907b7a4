// The window the server really runs (issue 34), inside a real VS Code against local servers with the bodies of
// llama.cpp (-c 2048, and router mode) and Ollama: the panel's meter and VS Code's chat get the loaded window, not the
// model's training length; parley.contextWindow lowers it and a larger one is shown as not applied; a prompt larger
// than the server's window is not sent; a reply whose prompt was cut by the server gets a card.
import * as assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import type { ContextMeterView } from '../../src/shared/protocol';
import { llamaCppModels, llamaCppProps, llamaCppRouter, ollama, serveRoutes } from '../support/localServers';
import { type RecordedRequest, type TestServer } from '../support/server';
import { chats, chunk, keptUserSettings, openChatView, parley, type Reply, serverPool, usageChunk, userSettings, waitFor, writeSse } from './helpers';

/** Every setting the suite changes; each is put back as it was after every test. */
const TOUCHED = ['baseUrl', 'model', 'endpoints', 'endpoint', 'contextWindow', 'maxTokens', 'tools.enabled', 'systemPrompt', 'compaction.threshold'];

/** A question of about `tokens` tokens by Parley's estimate (four characters of ordinary words each). */
function question(tokens: number): string {
  let out = 'Please read all of this:';
  while (out.length < tokens * 4) out += ' the quick brown fox jumps';
  return out;
}

suite('The window the server runs', function () {
  this.timeout(60_000);
  let api: TestApi;
  const kept = keptUserSettings(TOUCHED);
  const pool = serverPool();

  /** A server that ends up closed by the suite's teardown. */
  const server = (handler: Reply) => pool.start(handler);

  suiteSetup(async () => {
    api = await parley();
    kept.save();
    await openChatView(api);
  });

  setup(async () => {
    // Tools off: their definitions would count against the small windows below.
    await userSettings({ 'tools.enabled': false, endpoints: undefined, endpoint: undefined, contextWindow: undefined, maxTokens: undefined, systemPrompt: 'Be brief.', 'compaction.threshold': undefined });
    await api.chat.newChat();
  });

  teardown(async () => {
    await api.chat.stop();
    await kept.restore();
    await api.chat.newChat();
  });

  suiteTeardown(async () => {
    for (const s of pool.started) await s.close();
  });

  /** Points Parley at `s` with `model`, and waits until the settings and the model list are the new ones. */
  async function use(s: TestServer, model: string, extra: Record<string, unknown> = {}): Promise<void> {
    await userSettings({ baseUrl: `${s.url}/v1`, model, ...extra });
    await waitFor('the new settings', () => (api.settings.current.model === model && api.settings.current.baseUrl === `${s.url}/v1`) || undefined);
    await api.chat.views.refreshModels(true);
  }

  /** Asks for the meter until one matches `check` (a meter from before a settings change may still arrive). */
  async function meterWhere(what: string, check: (m: ContextMeterView) => boolean): Promise<ContextMeterView> {
    return waitFor(what, async () => {
      api.recorded.posted.length = 0;
      await api.chat.room.postMeter();
      const m = api.recorded.posted.find((p) => p.type === 'meter');
      return m?.type === 'meter' && m.meter && check(m.meter) ? m.meter : undefined;
    });
  }

  const lastTurn = () => api.chat.current.turns.at(-1);
  const answer = (text: string, prompt: number) => (_req: RecordedRequest, res: ServerResponse) => writeSse(res, [chunk(text), chunk('', 'stop'), usageChunk(prompt, 5)]);

  test('llama.cpp -c 2048: the meter shows 2,048, not the model\'s 32,768; parley.contextWindow lowers it; a larger one is not applied, and says why', async () => {
    const s = await server((req, res) => {
      if (!serveRoutes('llama.cpp', { '/v1/models': () => ({ body: llamaCppModels(2048, 32_768) }), '/props': () => ({ body: llamaCppProps(2048) }) })(req, res)) answer('ok', 20)(req, res);
    });
    await use(s, 'tiny.gguf');
    const m = await meterWhere('a meter with the window llama.cpp runs, 2,048', (x) => x.window === 2048);
    assert.equal(m.window, 2048, 'the window loaded (-c), not n_ctx_train');
    assert.equal(m.windowSource, 'server');
    assert.equal(m.reserve, 1024);
    assert.ok(m.windowNotes?.includes('The model itself takes up to 32,768 tokens.'), JSON.stringify(m.windowNotes));

    await userSettings({ contextWindow: 1500 });
    const lowered = await meterWhere('a meter with the smaller setting', (x) => x.window === 1500);
    assert.equal(lowered.windowSource, 'profile');
    assert.equal(lowered.serverWindow, 2048);

    await userSettings({ contextWindow: 65_536 });
    const larger = await meterWhere('a meter with the setting not applied', (x) => x.window === 2048 && (x.windowNotes ?? []).some((n) => n.includes('not applied')));
    assert.equal(larger.windowSource, 'server');
    assert.match(larger.windowNotes!.join('\n'), /Your contextWindow setting \(65,536\) is not applied: the server runs this model at 2,048 tokens/);
  });

  test('VS Code\'s chat is told the window llama.cpp runs, lowered by a smaller parley.contextWindow', async () => {
    const s = await server((req, res) => {
      if (!serveRoutes('llama.cpp', { '/v1/models': () => ({ body: llamaCppModels(2048, 32_768) }), '/props': () => ({ body: llamaCppProps(2048) }) })(req, res)) answer('ok', 20)(req, res);
    });
    await use(s, 'tiny.gguf');
    const limits = (window?: number) => waitFor(`vscode.lm's tiny.gguf${window ? ` with contextWindow ${window}` : ''}`, async () => {
      const [m] = await vscode.lm.selectChatModels({ vendor: 'parley', id: 'tiny.gguf' });
      return m && (window === undefined || m.maxInputTokens < 1024) ? m : undefined;
    }, 20_000);
    const m = await limits();
    // Before: 32,768 (n_ctx_train) less the 4,096 reply, 28,672.
    assert.equal(m.maxInputTokens, 1024, 'the 2,048 window less half of it for the reply');
    await userSettings({ contextWindow: 1500 });
    assert.equal((await limits(1500)).maxInputTokens, 750);
  });

  test('llama.cpp router mode: each model\'s window from /props?model=; one not loaded is unknown, then read after its first reply', async () => {
    const loaded = new Set(['qwen-small']);
    const s = await server((req, res) => {
      const q = new URL(req.path, 'http://x').searchParams;
      const handled = serveRoutes('llama.cpp', {
        '/v1/models': () => ({ body: llamaCppRouter.models([{ id: 'qwen-small', loaded: true, nCtx: 4096 }, { id: 'plain', loaded: loaded.has('plain'), nCtx: 2048 }]) }),
        '/props': () => {
          const model = q.get('model');
          if (!model) return { body: llamaCppRouter.props };
          if (!loaded.has(model)) return q.get('autoload') === 'false' ? { status: 400, body: llamaCppRouter.notLoaded } : { status: 500, body: { error: '/props loaded a model' } };
          return { body: llamaCppProps(model === 'plain' ? 2048 : 4096, model) };
        },
      })(req, res);
      if (handled) return;
      // A chat request loads its model, as the router does.
      loaded.add((req.json as { model: string }).model);
      answer('ok', 30)(req, res);
    });
    await use(s, 'qwen-small');
    assert.equal((await meterWhere('qwen-small\'s window, 4,096', (x) => x.window === 4096)).window, 4096);

    await use(s, 'plain');
    const unknown = await meterWhere('plain, not loaded', (x) => (x.windowNotes ?? []).some((n) => n.includes('has not loaded plain')));
    assert.equal(unknown.window, undefined, 'not the router\'s n_ctx 0, nor a guess');
    await api.chat.send('hello', []);
    assert.equal(lastTurn()?.status, 'done', JSON.stringify(lastTurn()?.error));
    await meterWhere('plain\'s window once loaded, 2,048', (x) => x.window === 2048);
    assert.equal(s.requests.some((r) => r.path.startsWith('/props') && !/[?&]autoload=false/.test(r.path)), false, 'no /props request may load a model');
  });

  test('Ollama running the model at 4,096: a prompt larger than that is not sent, and the card says how to raise the window', async () => {
    const s = await server((req, res) => {
      const handled = serveRoutes('ollama', {
        '/v1/models': () => ({ body: ollama.models(['qwen2.5-coder:7b']) }),
        '/api/ps': () => ({ body: ollama.ps([{ name: 'qwen2.5-coder:7b', contextLength: 4096 }]) }),
      })(req, res);
      if (!handled) answer('a reply that did not see the start', 4000)(req, res);
    });
    await use(s, 'qwen2.5-coder:7b');
    await meterWhere('the window Ollama runs', (x) => x.window === 4096);
    await api.chat.send(question(6000), []);
    assert.equal(chats(s).length, 0, 'nothing was sent');
    const t = lastTurn();
    assert.equal(t?.status, 'error');
    assert.equal(t?.error?.kind, 'context_length');
    assert.match(t?.error?.title ?? '', /of the 4,096 tokens the server runs qwen2\.5-coder:7b at\. Nothing was sent\./);
    assert.match(t?.error?.hint ?? '', /OLLAMA_CONTEXT_LENGTH=8192 where the Ollama server runs, or PARAMETER num_ctx 8192 in the model's Modelfile/);
  });

  test('Ollama not loaded yet: a reply whose prompt_tokens is far below Parley\'s estimate gets a card saying the server dropped part of the prompt', async () => {
    let loaded = false;
    const s = await server((req, res) => {
      const handled = serveRoutes('ollama', {
        '/v1/models': () => ({ body: ollama.models(['qwen2.5-coder:7b']) }),
        '/api/ps': () => ({ body: ollama.ps(loaded ? [{ name: 'qwen2.5-coder:7b', contextLength: 4096 }] : []) }),
        '/api/show': () => ({ body: ollama.show(undefined, 32_768) }),
      })(req, res);
      if (handled) return;
      // Ollama loads the model at its default window and keeps only the prompt's end that fits it.
      loaded = true;
      answer('An answer to the end of it.', 3900)(req, res);
    });
    await use(s, 'qwen2.5-coder:7b');
    await meterWhere('an unknown window, with Ollama\'s default named', (x) => x.window === undefined && (x.windowNotes ?? []).some((n) => n.includes('OLLAMA_CONTEXT_LENGTH')));
    await api.chat.send(question(6000), []);
    assert.equal(chats(s).length, 1, 'sent: the window was not known before the model was loaded');
    const t = lastTurn();
    assert.equal(t?.status, 'done');
    assert.equal(t?.text, 'An answer to the end of it.');
    assert.equal(t?.error?.kind, 'context_length');
    assert.match(t?.error?.title ?? '', /^The server dropped part of the prompt: it read 3,900 tokens where Parley sent about 6,\d{3}, and it runs qwen2\.5-coder:7b at 4,096\./);
    assert.match(t?.error?.hint ?? '', /OLLAMA_CONTEXT_LENGTH=8192/);
    // The meter now has the window Ollama loaded the model at, and the cut count did not skew its correction.
    const m = await meterWhere('the window once loaded', (x) => x.window === 4096);
    assert.equal(m.corrected, false);
  });
});
