// Reasoning effort (issue 39), inside a real VS Code against local servers: the effort chosen in the panel's header is
// sent and remembered for the model; a server that refuses it (OpenAI's recorded words) is asked again without it, and
// the refusal is learnt: the next request goes without it, and the header no longer offers it.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { TestApi } from '../../src/extension';
import type { TestServer } from '../support/server';
import { chats, chunk, headerNow, keptUserSettings, lastPosted, openChatView, parley, type Reply, serverPool, userSettings, viewReceive, waitFor, writeJson, writeSse } from './helpers';

/** api.openai.com's answer to `reasoning_effort` for gpt-4o-mini (test/fixtures/reasoning-effort/SOURCES.md). */
const REFUSAL: unknown = JSON.parse(readFileSync(path.resolve(__dirname, '../../../test/fixtures/reasoning-effort/openai-error-400-unrecognized-reasoning-effort.json'), 'utf8'));
const TOUCHED = ['endpoints', 'endpoint', 'tools.enabled'];

suite('Reasoning effort', function () {
  this.timeout(60_000);
  let api: TestApi;
  const kept = keptUserSettings(TOUCHED);
  const pool = serverPool();

  suiteSetup(async () => {
    api = await parley();
    kept.save();
    await openChatView(api);
  });

  setup(async () => {
    await userSettings({ 'tools.enabled': false });
    await api.chat.newChat();
  });

  teardown(async () => {
    await api.chat.stop();
    await kept.restore();
    await api.requester.resetAdaptations();
    await api.chat.newChat();
  });

  suiteTeardown(async () => {
    for (const s of pool.started) {
      await api.keys.delete(s.origin);
      await s.close();
    }
  });

  /** A server listing `model` and answering each chat request with `reply`, behind a profile that says the model takes an effort. */
  async function profileFor(model: string, reply: Reply): Promise<TestServer> {
    const s = await pool.start((req, res) => (req.method === 'GET' ? writeJson(res, 200, { object: 'list', data: [{ id: model, object: 'model' }] }) : reply(req, res)));
    await api.keys.set(s.origin, 'sk-effort-test');
    await userSettings({ endpoints: [{ name: 'Effort', baseUrl: s.url, model, models: { [model]: { reasoningEffort: true } } }] });
    await waitFor('the Effort profile', () => api.settings.current.profiles.some((p) => p.name === 'Effort') || undefined);
    assert.equal(await api.chat.setProfile('Effort'), true);
    return s;
  }

  const answer: Reply = (_req, res) => writeSse(res, [chunk('Done.'), chunk('', 'stop')]);

  /** Chooses an effort as the header's select does, and waits for the header that shows it. */
  async function choose(effort: string): Promise<void> {
    api.recorded.posted.length = 0;
    await viewReceive(api, { type: 'setEffort', effort });
    await waitFor(`the header with effort "${effort}"`, () => lastPosted(api, 'header')?.header.effort?.value === effort || undefined);
  }

  test('the effort chosen in the header is sent, kept with the conversation, and new conversations with the model start with it', async () => {
    const s = await profileFor('o3-mini', answer);
    assert.deepEqual((await headerNow(api)).effort, { options: ['low', 'medium', 'high'], value: '' }, 'the profile says the model takes one');

    await api.chat.send('one', []);
    assert.equal('reasoning_effort' in chats(s)[0].json, false, "none chosen: the server's default, nothing sent");

    await choose('high');
    assert.equal(api.chat.current.effort, 'high');
    await api.chat.send('two', []);
    assert.equal(chats(s)[1].json.reasoning_effort, 'high');
    assert.equal(api.chat.current.turns.at(-1)?.text, 'Done.');

    // A word the header does not offer is not taken.
    await viewReceive(api, { type: 'setEffort', effort: 'extreme' });
    assert.equal(api.chat.current.effort, 'high');

    await api.chat.newChat();
    assert.equal((await headerNow(api)).effort?.value, 'high', 'remembered for the model');
    await api.chat.send('three', []);
    assert.equal(chats(s)[2].json.reasoning_effort, 'high');
    await choose('');
    await api.chat.send('four', []);
    assert.equal('reasoning_effort' in chats(s)[3].json, false, "back to the server's default");
  });

  test('a server that refuses reasoning_effort: asked again without it, the refusal learnt, and the header no longer offers it', async () => {
    const s = await profileFor('gpt-4o-mini', (req, res) => (req.json?.reasoning_effort !== undefined ? writeJson(res, 400, REFUSAL) : answer(req, res)));
    assert.ok((await headerNow(api)).effort, 'offered: the profile says the model takes one');
    await choose('low');

    api.recorded.posted.length = 0;
    await api.chat.send('first', []);
    assert.deepEqual(chats(s).map((r) => r.json.reasoning_effort), ['low', undefined], 'refused, then sent again without it');
    assert.equal(api.chat.current.turns.at(-1)?.status, 'done');
    assert.equal(api.chat.current.turns.at(-1)?.text, 'Done.');
    const notice = await waitFor('the notice', () => lastPosted(api, 'notice'));
    assert.match(notice.text, /reasoning_effort/);

    await api.chat.send('second', []);
    assert.equal(chats(s).length, 3, 'one request: the refusal is not asked for again');
    assert.equal('reasoning_effort' in chats(s)[2].json, false, 'the next request goes without it on the first try');
    assert.equal((await headerNow(api)).effort, undefined, 'the header no longer offers it for that model');

    // Reset Endpoint Adaptations forgets the refusal: offered again.
    await api.requester.resetAdaptations();
    assert.ok((await headerNow(api)).effort);
  });
});
