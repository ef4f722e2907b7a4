// Parley's own code against a real llama.cpp llama-server (issue 34): the window the server runs (-c 2048, not the
// model's 32,768) as the model list, the window probe, the meter and VS Code's chat read it; compaction going by it
// through a whole conversation that the server never refuses; the server's overflow as Parley's context_length card
// with Compact and retry, which works; router mode's window per model.
import * as assert from 'node:assert/strict';
import { listModelInfo } from '../../src/core/client';
import { DEFAULT_CONTEXT_TOKENS } from '../../src/core/contextWindow';
import { errorView } from '../../src/core/errorView';
import { tokenLimits } from '../../src/core/modelInfo';
import { WindowProbe } from '../../src/core/serverWindow';
import type { ToolDefinition } from '../../src/core/types';
import { Panel, panelWindow } from './panel';
import { clientOptions, countingProxy, getJson, llamaServers } from './support';

/** Parley's read_file tool as offered (src/vscode/tools/fileTools.ts). */
const READ_FILE: ToolDefinition = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Reads a text file in the workspace, whole or a range of lines. Use it before answering about a file.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace folder.' },
        startLine: { type: 'integer', minimum: 1, description: 'First line to read (1-based).' },
        endLine: { type: 'integer', minimum: 1, description: 'Last line to read (1-based, inclusive).' },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
};

const WORDS = 'the parser reads each line of the file and keeps the tokens that match a rule from the table so later steps can find them again when the build runs'.split(' ');

/** A question of about `n` words (the scripted model counts one token a word), different for each `seed`. */
function question(n: number, seed: number): string {
  return `Question ${seed}: ${Array.from({ length: n }, (_, i) => WORDS[(i * 7 + seed) % WORDS.length]).join(' ')}?`;
}

describe('Parley against llama-server -c 2048: the window it runs', function () {
  this.timeout(60_000);

  it('reads 2048 from the model list and /props, not the model\'s 32,768: the meter, its notes and VS Code\'s chat', async () => {
    const { single, key } = llamaServers();
    const opts = clientOptions(single, key);
    const [info] = await listModelInfo(opts);
    assert.deepEqual(info, { id: 'tiny', contextLength: 2048, modelMax: 32_768, server: 'llama.cpp', imageInput: false });
    const server = await new WindowProbe(opts, [info]).windowOf('tiny');
    assert.deepEqual(server, { window: 2048, from: 'llama.cpp\'s /props', modelMax: 32_768, kind: 'llama.cpp', loaded: true });

    const w = await panelWindow(opts, 'tiny');
    assert.equal(w.window, 2048);
    assert.equal(w.serverWindow, 2048);
    assert.equal(w.source, 'server');
    assert.equal(w.reserve, 1024, 'half the window is kept for the reply');
    assert.deepEqual(w.notes, ['Window: what llama.cpp runs (llama.cpp\'s /props)', 'The model itself takes up to 32,768 tokens.']);
    const { meter } = new Panel(opts, 'tiny', w).meter();
    assert.equal(meter.window, 2048);
    assert.equal(meter.serverWindow, 2048);
    assert.deepEqual(tokenLimits({ contextLength: server.window }, {}), { maxInputTokens: 1024, maxOutputTokens: 1024 });

    // A smaller contextWindow setting wins; a larger one is not applied, and the tooltip says why.
    const smaller = await panelWindow(opts, 'tiny', { contextWindow: 1500 });
    assert.deepEqual([smaller.window, smaller.source, smaller.serverWindow], [1500, 'profile', 2048]);
    const larger = await panelWindow(opts, 'tiny', { contextWindow: 8192 });
    assert.deepEqual([larger.window, larger.source, larger.unapplied], [2048, 'server', 8192]);
    assert.ok(larger.notes.some((n) => /contextWindow setting \(8,192\) is not applied: the server runs this model at 2,048 tokens/.test(n)), larger.notes.join('\n'));
  });

  it('compacts a conversation that outgrows the window before the server would refuse it: 24 questions, no request refused', async () => {
    const { single, key, expected } = llamaServers();
    const opts = clientOptions(single, key);
    const panel = new Panel(opts, 'tiny', await panelWindow(opts, 'tiny'), [READ_FILE]);
    const questions = 24;
    let asked = 0;
    for (let i = 1; i <= questions; i++) {
      const r = await panel.ask(question(100, i));
      assert.ok(r, `question ${i} was not sent: ${JSON.stringify(panel.notSent)}`);
      assert.equal(r.ended, 'done', `question ${i}: ${r.error?.message}`);
      assert.equal(r.text, expected.plain.text);
      asked++;
    }
    const failed = panel.requests.filter((x) => x.result.ended !== 'done');
    assert.deepEqual(failed.map((x) => `${x.source}: ${x.result.error?.message}`), [], 'the server refused none');
    assert.equal(asked, questions);
    assert.deepEqual(panel.notSent, []);
    assert.deepEqual(panel.dropped, []);
    // Without compaction the conversation would not fit: every question's words, sent again each time.
    const chat = panel.requests.filter((x) => x.source === 'chat');
    assert.ok(chat.length === questions && chat.every((x) => x.result.usage.prompt_tokens < 2048));
    assert.ok(100 * questions > 2048);
    // One compaction buys several questions (issue 34, item 7: it had compacted before 8 of 12).
    assert.ok(panel.compactions >= 2, `compactions: ${panel.compactions}`);
    assert.ok(panel.compactions * 3 <= questions, `compactions: ${panel.compactions} for ${questions} questions`);
    // The meter after the last reply, corrected by the server's own count, is within the window.
    const { meter } = panel.meter();
    assert.ok(meter.corrected && meter.used < 2048, JSON.stringify(meter));
  });

  it('gives the server\'s overflow as a context_length card with Compact and retry, which then gets an answer', async () => {
    const { single, key, expected } = llamaServers();
    const proxy = await countingProxy(single);
    try {
      const opts = clientOptions(proxy.url, key);
      const panel = new Panel(opts, 'tiny', await panelWindow(opts, 'tiny'), [READ_FILE]);
      panel.turns.push(
        { id: 'q1', role: 'user', text: question(700, 1), status: 'done' }, { id: 'a1', role: 'assistant', text: expected.plain.text, status: 'done' },
        { id: 'q2', role: 'user', text: question(700, 2), status: 'done' }, { id: 'a2', role: 'assistant', text: expected.plain.text, status: 'done' },
        { id: 'q3', role: 'user', text: question(700, 3), status: 'done' },
      );
      const r = await panel.send();
      const err = r.error;
      assert.ok(r.ended === 'error' && err, `ended ${r.ended}`);
      assert.equal(err.kind, 'context_length', err.message);
      assert.equal(err.status, 400);
      assert.match(err.providerMessage ?? '', /^request \(\d+ tokens\) exceeds the available context size \(2048 tokens\)/);
      assert.equal(proxy.count('POST', '/v1/chat/completions'), 1, 'not retried');

      const card = errorView(err, { model: 'tiny', url: opts.endpoint.url, compactable: panel.meter(panel.messages(panel.turns.slice(0, -1))).plan !== undefined });
      assert.equal(card.kind, 'context_length');
      assert.deepEqual(card.actions, ['compactRetry', 'retry']);
      assert.match(card.title, /too long for this model/);
      assert.match(card.detail ?? '', /exceeds the available context size \(2048 tokens\)/);

      const retried = await panel.compactAndRetry();
      assert.equal(retried?.ended, 'done', retried?.error?.message);
      assert.equal(retried.text, expected.plain.text);
      assert.equal(panel.compactions, 1);
      assert.equal(proxy.count('POST', '/v1/chat/completions'), 3, 'the failed request, the summary and the retry');
    } finally {
      await proxy.close();
    }
  });
});

describe('Parley against llama-server in router mode: each model\'s own window', function () {
  this.timeout(60_000);

  it('before loading: a preset\'s -c, else unknown and said so, without loading the model to ask; once loaded, /props?model= per model', async () => {
    const { router, key } = llamaServers();
    const opts = clientOptions(router, key);
    const listed = await listModelInfo(opts);
    assert.deepEqual(listed.map((m) => [m.id, m.contextLength, m.loaded, m.imageInput]).sort(), [['tiny-a', 2048, false, false], ['tiny-b', undefined, false, false]]);

    const a = await panelWindow(opts, 'tiny-a');
    assert.deepEqual([a.window, a.server.from, a.server.loaded], [2048, 'the server\'s model list', false]);
    const b = await panelWindow(opts, 'tiny-b');
    assert.equal(b.window, undefined, 'unknown, never guessed');
    assert.deepEqual(b.notes, ['llama.cpp has not loaded tiny-b yet: Parley reads its window once the model is loaded.']);
    assert.equal(new Panel(opts, 'tiny-b', b).meter().meter.window, undefined);
    assert.equal(tokenLimits({ contextLength: b.server.window }, {}).maxInputTokens + tokenLimits({ contextLength: b.server.window }, {}).maxOutputTokens, DEFAULT_CONTEXT_TOKENS);
    const status = (await getJson(router, '/v1/models', key)) as { data: { id: string; status: { value: string } }[] };
    assert.deepEqual(status.data.map((m) => `${m.id} ${m.status.value}`).sort(), ['tiny-a unloaded', 'tiny-b unloaded'], 'asking /props?model=…&autoload=false loads nothing');

    // A reply from each loads it; the router's own /props says n_ctx 0, each model's its own.
    for (const [model, w] of [['tiny-a', a], ['tiny-b', b]] as const) {
      const r = await new Panel(opts, model, w).ask('Who are you?');
      assert.equal(r?.ended, 'done', r?.error?.message);
    }
    const loadedA = await panelWindow(opts, 'tiny-a');
    assert.deepEqual([loadedA.window, loadedA.server.from, loadedA.server.loaded, loadedA.server.modelMax], [2048, 'llama.cpp\'s /props', true, 4096]);
    const loadedB = await panelWindow(opts, 'tiny-b');
    assert.deepEqual([loadedB.window, loadedB.server.from, loadedB.server.loaded], [8192, 'llama.cpp\'s /props', true]);
  });
});
