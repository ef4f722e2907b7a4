// Parley's own code against a real llama.cpp llama-server (issue 34): Test Connection's checks (core/diagnose.ts, what
// the command runs): a passing report that names the model and the window the server runs it at; a wrong key, and
// none, in words.
import * as assert from 'node:assert/strict';
import { diagnose, reportMarkdown, reportSummary } from '../../src/core/diagnose';
import { resolveEndpoint } from '../../src/core/endpoint';
import { llamaServers } from './support';

describe('Parley against llama-server -c 2048: Test Connection', function () {
  this.timeout(60_000);

  it('passes, naming the model and the window it runs (2,048, not the model\'s 32,768)', async () => {
    const { single, key } = llamaServers();
    const report = await diagnose({ endpoint: resolveEndpoint(`${single}/v1`), apiKey: key, model: 'tiny' });
    assert.equal(report.ok, true, JSON.stringify(report.causes));
    assert.deepEqual(report.causes, []);
    assert.deepEqual(report.models.ids, ['tiny']);
    assert.equal(report.models.modelListed, true);
    assert.deepEqual(report.models.window, { window: 2048, from: 'llama.cpp\'s /props', modelMax: 32_768, kind: 'llama.cpp', loaded: true });
    assert.deepEqual([report.chat.status, report.chat.sawDone, report.chat.sawUsage, report.chat.ended], [200, true, true, 'done']);
    const md = reportMarkdown(report);
    assert.match(md, /^\*\*Result: the connection works\.\*\*$/m);
    assert.match(md, /^- Model: `tiny`$/m);
    assert.match(md, /^- Window of `tiny`: 2,048 tokens, what the server runs it at \(llama\.cpp's \/props\); the model itself takes up to 32,768\.$/m);
    assert.ok(!md.includes(key), 'the key is not in the report');
    assert.match(reportSummary(report), /^Test Connection works: .* model=tiny key=present models=1 window=2048 /);
  });

  it('with a wrong key: fails, and says in words that the server rejected it', async () => {
    const { single } = llamaServers();
    const wrong = 'sk-wrong-parley-key-123';
    const report = await diagnose({ endpoint: resolveEndpoint(`${single}/v1`), apiKey: wrong, model: 'tiny' });
    assert.equal(report.ok, false);
    assert.equal(report.models.outcome, 'failed');
    assert.equal(report.models.error?.status, 401);
    assert.deepEqual([report.chat.status, report.chat.error?.kind], [401, 'auth']);
    assert.deepEqual(report.causes.map((c) => c.id), ['wrong-key']);
    const md = reportMarkdown(report);
    assert.match(md, /^\*\*Result: the connection does not work\.\*\*$/m);
    assert.match(md, new RegExp(`^- The server rejected the API key\\. Run "Parley: Set API Key" and enter a valid key for \`${single.replace(/[.]/g, '\\.')}\`\\.`, 'm'));
    assert.match(md, /Invalid API Key/, 'the server\'s own words');
    assert.ok(!md.includes(wrong), 'the key is not in the report');
  });

  it('without a key: says the server wants one', async () => {
    const { single } = llamaServers();
    const report = await diagnose({ endpoint: resolveEndpoint(`${single}/v1`), model: 'tiny', keyMissing: true });
    assert.equal(report.ok, false);
    assert.deepEqual(report.causes.map((c) => c.id), ['missing-key']);
    assert.match(reportMarkdown(report), /The server wants an API key\. Run "Parley: Set API Key"/);
  });
});
