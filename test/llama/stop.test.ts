// Parley's own code against a real llama.cpp llama-server (issue 34): Stop. The panel's Stop aborts the turn's signal;
// the streaming client then closes the connection, keeps the text received so far, and the server stops generating.
import * as assert from 'node:assert/strict';
import { chatAndLearn, memoryAdaptationStore } from '../../src/core/adaptations';
import { pollUntil } from '../support/pollUntil.mjs';
import { clientOptions, getJson, llamaServers } from './support';

describe('Parley against llama-server: Stop in the middle of a never-ending reply', function () {
  this.timeout(60_000);

  it('keeps the text received so far, and leaves the server idle (no slot processing)', async () => {
    const { stop, key, expected } = llamaServers();
    const processing = async () => ((await getJson(stop, '/slots', key)) as { is_processing: boolean }[]).filter((s) => s.is_processing).length;
    assert.equal(await processing(), 0, 'idle before');

    // As Requester.run sends a turn: under the turn's signal, events to the panel as they come.
    const turn = new AbortController();
    let shown = '';
    let enough!: () => void;
    const streaming = new Promise<void>((resolve) => (enough = resolve));
    const run = chatAndLearn(memoryAdaptationStore(), clientOptions(stop, key, { signal: turn.signal }), { model: 'tiny', stream: true }, [{ role: 'user', content: 'Count for me #forever' }], (e) => {
      if (e.type !== 'text') return;
      shown += e.text;
      if (shown.split(' tock').length > 20) enough();
    });
    await streaming;
    assert.equal(await processing(), 1, 'a slot generates while the reply streams');
    turn.abort();
    const { result } = await run;

    assert.equal(result.ended, 'cancelled');
    assert.equal(result.text, shown, 'every word shown is kept');
    assert.ok(result.text.startsWith(`${expected.forever.text}${expected.forever.loop.repeat(20)}`), result.text.slice(0, 200));
    assert.equal(result.usage.estimated, true, 'the server sent no usage: Parley estimates it');
    await pollUntil('no slot of llama-server processing after Stop', async () => (await processing()) === 0, 30_000, 100);
  });
});
