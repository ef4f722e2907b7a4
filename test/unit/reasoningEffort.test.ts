// Reasoning effort: the body field that carries it (OpenRouter's form apart), when the header offers it, and what a
// server's refusal (real wordings, test/fixtures/reasoning-effort) or acceptance teaches, against a real local server.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chatAndLearn, stateAdaptationStore } from '../../src/core/adaptations';
import type { ClientOptions } from '../../src/core/client';
import { resolveEndpoint } from '../../src/core/endpoint';
import { modelListFrom } from '../../src/core/modelInfo';
import { readProfiles } from '../../src/core/profiles';
import { chosenEffort, effortOffer, learnEffort, rememberEffort, withEffort } from '../../src/core/reasoningEffort';
import { buildRequestBody, type RequestSettings } from '../../src/core/request';
import { effortView, headerEffort, panelSettings, withPanelEffort, type PanelTarget } from '../../src/vscode/reasoningEffort';
import { writeJson, writeReply } from '../support/quirks';
import { startTestServer, type TestServer } from '../support/server';
import { MemoryState } from '../support/memoryState';


const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/reasoning-effort');
const fixture = (name: string): unknown => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));
const MESSAGES = [{ role: 'user' as const, content: 'hi' }];
const OPENAI = 'https://api.openai.com';
const OPENROUTER = 'https://openrouter.ai';

describe('reasoning effort', function () {
  this.timeout(10_000);

  describe('the body field', () => {
    const settings: RequestSettings = { model: 'o3-mini', stream: true };

    it('chat completions carry reasoning_effort; OpenRouter its documented reasoning: {effort}', () => {
      assert.equal(buildRequestBody(withEffort(settings, OPENAI, 'high'), MESSAGES).reasoning_effort, 'high');
      assert.equal(buildRequestBody(withEffort(settings, 'http://127.0.0.1:8080', 'low'), MESSAGES).reasoning_effort, 'low');
      const or = buildRequestBody(withEffort(settings, OPENROUTER, 'medium'), MESSAGES);
      assert.deepEqual(or.reasoning, { effort: 'medium' });
      assert.equal(or.reasoning_effort, undefined);
      // A profile's own reasoning settings for OpenRouter are kept, the effort set among them.
      const mine = buildRequestBody(withEffort({ ...settings, extraBody: { reasoning: { exclude: true, effort: 'low' } } }, OPENROUTER, 'high'), MESSAGES);
      assert.deepEqual(mine.reasoning, { exclude: true, effort: 'high' });
    });

    it("none chosen (the server's default): nothing is sent", () => {
      const body = buildRequestBody(withEffort(settings, OPENAI, ''), MESSAGES);
      assert.equal('reasoning_effort' in body, false);
      assert.equal('reasoning' in body, false);
    });

    it("the header's choice goes over the profile's own extraBody field, and neverSend and a learnt refusal still win", () => {
      const withExtra = withEffort({ ...settings, extraBody: { reasoning_effort: 'low', top_k: 5 } }, OPENAI, 'high');
      assert.deepEqual(buildRequestBody(withExtra, MESSAGES).reasoning_effort, 'high');
      assert.equal(buildRequestBody(withExtra, MESSAGES).top_k, 5);
      assert.equal('reasoning_effort' in buildRequestBody({ ...withExtra, neverSend: ['reasoning_effort'] }, MESSAGES), false);
      assert.equal('reasoning_effort' in buildRequestBody(withExtra, MESSAGES, { drop: ['reasoning_effort'] }), false);
    });
  });

  describe('when the header offers it', () => {
    it('the profile says so: true gives low, medium, high; a list gives its own words; false never', () => {
      assert.deepEqual(effortOffer(OPENAI, true, undefined, undefined), ['low', 'medium', 'high']);
      assert.deepEqual(effortOffer(OPENAI, ['minimal', 'low', 'high', 'low'], undefined, undefined), ['minimal', 'low', 'high']);
      assert.equal(effortOffer(OPENAI, false, { id: 'm', reasoning: true }, { reasoningEffort: true }), undefined);
    });

    it("OpenRouter's model list says so (supported_parameters has reasoning)", () => {
      const list = modelListFrom(JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../test/fixtures/models/openrouter-models.json'), 'utf8')))!;
      const gpt = list.find((m) => m.id === 'openai/gpt-5.4');
      assert.equal(gpt?.reasoning, true);
      assert.deepEqual(effortOffer(OPENROUTER, undefined, gpt, undefined), ['low', 'medium', 'high']);
      const plain = modelListFrom({ data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: 'system' }] })![0];
      assert.equal(plain.reasoning, undefined, 'a list that says nothing');
      assert.equal(effortOffer(OPENAI, undefined, plain, undefined), undefined, 'nothing says the model reasons: not offered');
    });

    it('the server accepted one before; a refusal wins over everything until Reset Endpoint Adaptations', () => {
      assert.deepEqual(effortOffer(OPENAI, undefined, undefined, { reasoningEffort: true }), ['low', 'medium', 'high']);
      assert.equal(effortOffer(OPENAI, ['low', 'high'], { id: 'm', reasoning: true }, { drop: ['reasoning_effort'] }), undefined);
      assert.equal(effortOffer(OPENROUTER, true, undefined, { drop: ['reasoning'] }), undefined, "OpenRouter's own field refused");
      assert.deepEqual(effortOffer(OPENROUTER, true, undefined, { drop: ['reasoning_effort'] }), ['low', 'medium', 'high'], 'not the field sent there');
    });

    it('a profile model option is read as written; a wrong one is left out of the offer', () => {
      const { profiles, problems } = readProfiles({ baseUrl: OPENAI, model: 'o3' }, [{
        source: 'user',
        value: [{ name: 'Work', baseUrl: OPENAI, model: 'o3', models: { o3: { reasoningEffort: ['low', 'high'] }, o1: { reasoningEffort: true }, x: { reasoningEffort: 'high' } } }],
      }]);
      assert.deepEqual(problems, []);
      const work = profiles.find((p) => p.name === 'Work')!;
      assert.deepEqual(effortOffer(OPENAI, work.models.o3.reasoningEffort, undefined, undefined), ['low', 'high']);
      assert.deepEqual(effortOffer(OPENAI, work.models.o1.reasoningEffort, undefined, undefined), ['low', 'medium', 'high']);
      assert.equal(effortOffer(OPENAI, work.models.x.reasoningEffort, undefined, undefined), undefined);
    });
  });

  describe('per conversation, remembered per model', () => {
    it("the conversation's own choice, else the one last chosen for the model at that origin", async () => {
      const state = new MemoryState();
      assert.equal(chosenEffort(state, OPENAI, 'o3', null), '');
      await rememberEffort(state, OPENAI, 'o3', 'high');
      assert.equal(chosenEffort(state, OPENAI, 'o3', null), 'high');
      assert.equal(chosenEffort(state, OPENAI, 'o3', 'low'), 'low', "the conversation's own");
      assert.equal(chosenEffort(state, OPENAI, 'o3', ''), '', "the server's default, chosen for this conversation");
      assert.equal(chosenEffort(state, OPENAI, 'o4-mini', null), '', 'another model');
      assert.equal(chosenEffort(state, OPENROUTER, 'o3', null), '', 'the same name at another server');
    });

    it('the header shows the offer with the choice; a panel request carries it, a profile that rules it out not', async () => {
      const state = new MemoryState();
      await rememberEffort(state, OPENAI, 'o3', 'medium');
      const profile = readProfiles({ baseUrl: OPENAI, model: 'o3', models: { o3: { reasoningEffort: true }, o1: { reasoningEffort: ['high'] } } }, []).profiles[0];
      const target = (model: string, effort: string | null): PanelTarget => ({ kind: 'ready', endpoint: { origin: OPENAI }, settings: { model, profile, effort } });
      assert.deepEqual(effortView(state, undefined, target('o3', null), undefined), { options: ['low', 'medium', 'high'], value: 'medium' });
      assert.deepEqual(effortView(state, undefined, target('o3', 'high'), undefined), { options: ['low', 'medium', 'high'], value: 'high' });
      assert.equal(effortView(state, undefined, target('gpt-4o', null), undefined), undefined);
      assert.equal(effortView(state, { drop: ['reasoning_effort'] }, target('o3', null), undefined), undefined);
      const base: RequestSettings = { model: 'o3', stream: true };
      assert.equal(panelSettings(state, undefined, target('o3', null), undefined, base).extraBody?.reasoning_effort, 'medium');
      assert.equal(panelSettings(state, undefined, target('o1', 'low'), undefined, { ...base, model: 'o1' }).extraBody, undefined, "not one of the profile's words");
      assert.equal(panelSettings(state, undefined, target('gpt-4o', 'high'), undefined, { ...base, model: 'gpt-4o' }).extraBody, undefined, 'not offered for the model: not sent');
    });
  });

  describe('sent only when the header offers it (what the reader sees is what is sent)', () => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('after Reset Endpoint Adaptations hides the menu, neither the effort last chosen nor the conversation\'s own is sent', async () => {
      server = await startTestServer((req, res) => writeReply(req, res));
      const s = server;
      const opts: ClientOptions = { endpoint: resolveEndpoint(s.origin), maxRetries: 0, requestTimeoutMs: 5_000 };
      const origin = opts.endpoint.origin;
      const sent = () => s.requests.filter((q) => q.method === 'POST').map((q) => (q.json as Record<string, unknown>).reasoning_effort);
      const state = new MemoryState();
      const store = stateAdaptationStore(state);
      const plain: RequestSettings = { model: 'o3-mini', stream: true };
      const target = (effort: string | null): PanelTarget => ({ kind: 'ready', endpoint: { origin }, settings: { model: 'o3-mini', effort } });
      // The server accepted an effort before (so the header offers one), and "high" was chosen for the model.
      await store.set(origin, 'o3-mini', { reasoningEffort: true });
      await rememberEffort(state, origin, 'o3-mini', 'high');
      assert.deepEqual(effortView(state, store.get(origin, 'o3-mini'), target(null), undefined), { options: ['low', 'medium', 'high'], value: 'high' });
      await withPanelEffort(state, target(null))(store, opts, plain, MESSAGES);
      assert.deepEqual(sent(), ['high'], 'offered and chosen: sent');

      await store.clear(); // Parley: Reset Endpoint Adaptations
      assert.equal(effortView(state, store.get(origin, 'o3-mini'), target(null), undefined), undefined, 'the header offers none now');
      await withPanelEffort(state, target(null))(store, opts, plain, MESSAGES);
      await withPanelEffort(state, target('low'))(store, opts, plain, MESSAGES);
      assert.deepEqual(sent(), ['high', undefined, undefined], 'not offered: not sent, remembered or not');
      assert.equal(chosenEffort(state, origin, 'o3-mini', null), 'high', 'the choice is still remembered for when it is offered again');
    });

    it("an effort offered because the server's model list says the model reasons is sent", async () => {
      server = await startTestServer((req, res) => writeReply(req, res));
      const s = server;
      const opts: ClientOptions = { endpoint: resolveEndpoint(s.origin), maxRetries: 0, requestTimeoutMs: 5_000 };
      const origin = opts.endpoint.origin;
      const state = new MemoryState();
      const store = stateAdaptationStore(state);
      const t: PanelTarget = { kind: 'ready', endpoint: { origin }, settings: { model: 'r1', effort: 'medium' } };
      const requester = { state, adaptations: (p: PanelTarget) => store.get(p.endpoint.origin, p.settings.model) };
      assert.deepEqual(headerEffort(requester, t, [{ id: 'r1', reasoning: true }]), { effort: { options: ['low', 'medium', 'high'], value: 'medium' } });
      await withPanelEffort(state, t)(store, opts, { model: 'r1', stream: true }, MESSAGES);
      assert.equal((s.requests.at(-1)?.json as Record<string, unknown>).reasoning_effort, 'medium');
    });
  });

  describe('learnt from a real server', () => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    /** A server that refuses a request carrying `reasoning_effort` with `body`, and answers any other. */
    async function refusing(body: unknown): Promise<{ opts: ClientOptions; posts: () => Record<string, unknown>[] }> {
      server = await startTestServer((req, res) => {
        if ((req.json as Record<string, unknown> | undefined)?.reasoning_effort !== undefined) return writeJson(res, 400, body);
        return writeReply(req, res, { reasoning: { form: 'reasoning_content', text: 'Thinking it over.' } });
      });
      const s = server;
      return {
        opts: { endpoint: resolveEndpoint(s.origin), maxRetries: 0, requestTimeoutMs: 5_000 },
        posts: () => s.requests.filter((q) => q.method === 'POST').map((q) => q.json as Record<string, unknown>),
      };
    }

    for (const name of [
      'openai-error-400-unrecognized-reasoning-effort.json',
      'openai-error-400-unsupported-parameter-reasoning-effort.json',
      'groq-error-400-reasoning-effort-not-supported.json',
      'groq-error-400-reasoning-effort-unsupported-property.json',
      'xai-error-400-reasoning-effort.json',
    ]) {
      it(`refused (${name}): retried without it, learnt, the next request goes without it and the header no longer offers it`, async () => {
        const { opts, posts } = await refusing(fixture(name));
        const state = new MemoryState();
        const origin = opts.endpoint.origin;
        const settings = withEffort({ model: 'gpt-4o-mini', stream: true }, origin, 'high');
        const first = await chatAndLearn(stateAdaptationStore(state), opts, settings, MESSAGES);
        await learnEffort(stateAdaptationStore(state), origin, settings, first);
        assert.equal(first.result.ended, 'done', JSON.stringify(first.result.error));
        assert.deepEqual(first.dropped, ['reasoning_effort']);
        assert.deepEqual(posts().map((b) => b.reasoning_effort), ['high', undefined], 'refused once, then sent without it');
        const learnt = stateAdaptationStore(state).get(origin, 'gpt-4o-mini');
        assert.deepEqual(learnt, { drop: ['reasoning_effort'] }, 'the refusal is kept; a reply with reasoning does not undo it');
        assert.equal(effortOffer(origin, true, { id: 'gpt-4o-mini', reasoning: true }, learnt), undefined, 'no longer offered');

        server!.requests.length = 0;
        const second = await chatAndLearn(stateAdaptationStore(state), opts, settings, MESSAGES);
        assert.equal(second.result.ended, 'done');
        assert.deepEqual(second.dropped, []);
        assert.deepEqual(posts().map((b) => 'reasoning_effort' in b), [false], 'one request, without it');
      });
    }

    it('accepted: the model is kept as one the header offers an effort for', async () => {
      server = await startTestServer((req, res) => writeReply(req, res));
      const opts: ClientOptions = { endpoint: resolveEndpoint(server.origin), maxRetries: 0, requestTimeoutMs: 5_000 };
      const state = new MemoryState();
      const origin = opts.endpoint.origin;
      const plain: RequestSettings = { model: 'o3-mini', stream: true };
      // Without an effort and without reasoning in the reply, nothing is learnt.
      await learnEffort(stateAdaptationStore(state), origin, plain, await chatAndLearn(stateAdaptationStore(state), opts, plain, MESSAGES));
      assert.equal(stateAdaptationStore(state).get(origin, 'o3-mini'), undefined);
      const settings = withEffort(plain, origin, 'low');
      const outcome = await chatAndLearn(stateAdaptationStore(state), opts, settings, MESSAGES);
      await learnEffort(stateAdaptationStore(state), origin, settings, outcome);
      assert.equal((server.requests.at(-1)?.json as Record<string, unknown>).reasoning_effort, 'low');
      const learnt = stateAdaptationStore(state).get(origin, 'o3-mini');
      assert.deepEqual(learnt, { reasoningEffort: true });
      assert.deepEqual(effortOffer(origin, undefined, undefined, learnt), ['low', 'medium', 'high']);
    });

    it('a reply that came with reasoning: the model reasons, so the header offers an effort', async () => {
      server = await startTestServer((req, res) => writeReply(req, res, { reasoning: { form: 'reasoning_content', text: 'Hmm.' } }));
      const opts: ClientOptions = { endpoint: resolveEndpoint(server.origin), maxRetries: 0, requestTimeoutMs: 5_000 };
      const state = new MemoryState();
      const plain: RequestSettings = { model: 'qwen3', stream: true };
      await learnEffort(stateAdaptationStore(state), opts.endpoint.origin, plain, await chatAndLearn(stateAdaptationStore(state), opts, plain, MESSAGES));
      assert.deepEqual(stateAdaptationStore(state).get(opts.endpoint.origin, 'qwen3'), { reasoningEffort: true });
    });
  });
});
