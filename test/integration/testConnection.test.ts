// "Parley: Test Connection" in a real VS Code: the report opens, names what was dropped, and names the likely fix.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { lmStudio, PARAM_PROFILES, startQuirkServer } from '../support/quirks';
import { parley, userSettings, waitFor } from './helpers';
import type { TestApi } from '../../src/extension';

suite('Test Connection and endpoint adaptations', function () {
  this.timeout(60_000);
  let api: TestApi;

  suiteSetup(async () => {
    api = await parley();
    await api.requester.resetAdaptations();
  });

  suiteTeardown(async () => {
    await userSettings({ baseUrl: undefined, model: undefined, maxTokens: undefined, endpoints: undefined, endpoint: undefined });
    await api.requester.resetAdaptations();
  });

  function report(contains: string) {
    return waitFor(`a Test Connection report for ${contains}`, () =>
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'parley-report' && !d.isUntitled && d.getText().startsWith('# Parley: Test Connection') && d.getText().includes(contains)));
  }

  test('Test Every Endpoint Profile: one report with a row per profile, each tested with its own model and headers', async () => {
    const good = await startQuirkServer(PARAM_PROFILES.max_tokens);
    try {
      await userSettings({
        baseUrl: good.url,
        model: 'default-model',
        endpoints: [
          { name: 'Team', baseUrl: good.url, model: 'team-model', headers: { 'X-Team': 'alpha' } },
          { name: 'Broken', baseUrl: 'not a url', model: 'x' },
        ],
      });
      await vscode.commands.executeCommand('parley.testAllEndpoints');
      const doc = await waitFor('the every-profile report', () =>
        vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'parley-report' && d.getText().startsWith('# Parley: Test every endpoint profile')));
      const text = doc.getText();
      assert.match(text, /\| `Default` \| `[^`]+` \| `default-model` \| works/);
      assert.match(text, /\| `Team` \| `[^`]+` \| `team-model` \| works/);
      assert.match(text, /\| `Broken` \| `not a url` \| `x` \| not tested: .*spaces or line breaks/);
      assert.match(text, /# Profile `Team`/, "each tested profile's own report follows");
      const teamPosts = good.requests.filter((r) => r.method === 'POST' && (r.json as { model?: string }).model === 'team-model');
      assert.ok(teamPosts.length > 0 && teamPosts.every((r) => r.headers['x-team'] === 'alpha'), "the Team profile's test carried its header");
      assert.ok(good.requests.filter((r) => (r.json as { model?: string } | undefined)?.model === 'default-model').every((r) => r.headers['x-team'] === undefined), 'the Default profile sent none');
    } finally {
      await userSettings({ endpoints: undefined, endpoint: undefined });
      await good.close();
    }
  });

  test('a server that refuses max_tokens: the report names it, and the next chat request goes right the first time', async () => {
    const server = await startQuirkServer(PARAM_PROFILES.max_tokens);
    try {
      await userSettings({ baseUrl: server.url, model: 'test-model', maxTokens: 50 });
      const counted = async () => Object.entries(await api.usage.ledger()).filter(([k]) => k.includes(new URL(server.url).host) && k.endsWith('|test-model')).reduce((n, [, t]) => n + t.requests, 0);
      const before = await counted();
      await vscode.commands.executeCommand('parley.testConnection');
      const doc = await report(server.origin);
      assert.equal(doc.languageId, 'markdown');
      assert.match(doc.getText(), /max_tokens/);
      assert.equal(await counted() - before, 1, "the test's answered request is counted in the usage ledger (its refusal cost nothing)");
      server.requests.length = 0;
      await api.chat.newChat();
      await api.chat.send('hi', []);
      const posts = server.requests.filter((r) => r.method === 'POST');
      assert.equal(posts.length, 1, 'no retry needed: the adaptation was remembered');
      assert.equal(posts[0].json.max_tokens, undefined);
      assert.equal(posts[0].json.max_completion_tokens, 50);
    } finally {
      await server.close();
    }
  });

  test('a chat request refused for stream_options: the next chat request goes without it the first time', async () => {
    const server = await startQuirkServer(PARAM_PROFILES.stream_options);
    try {
      await userSettings({ baseUrl: server.url, model: 'learns-in-chat', maxTokens: undefined });
      await api.chat.newChat();
      await api.chat.send('first', []);
      const posts = () => server.requests.filter((r) => r.method === 'POST').map((r) => r.json as Record<string, unknown>);
      assert.deepEqual(posts().map((b) => 'stream_options' in b), [true, false], 'refused once, then sent without it');
      server.requests.length = 0;
      await api.chat.send('second', []);
      assert.equal(posts().length, 1, 'no refusal the second time');
      assert.equal('stream_options' in posts()[0], false, 'the first try goes without stream_options');
    } finally {
      await server.close();
    }
  });

  test('LM Studio with a doubled /v1: the report says to remove it', async () => {
    const server = await startQuirkServer(lmStudio());
    try {
      await userSettings({ baseUrl: `${server.url}/v1/v1`, model: 'x', maxTokens: undefined });
      await vscode.commands.executeCommand('parley.testConnection');
      const doc = await report(`${server.origin}/v1/v1`);
      assert.match(doc.getText(), /Remove the extra \/v1/);
    } finally {
      await server.close();
    }
  });

  test('Reset Endpoint Adaptations forgets what was learnt', async () => {
    await api.requester.rememberAdaptations(
      { settings: { model: 'm' }, endpoint: { origin: 'http://127.0.0.1:1' } } as never,
      { drop: ['stream_options'] },
    );
    await vscode.commands.executeCommand('parley.resetAdaptations');
    assert.equal(api.context.globalState.get('parley.adaptations'), undefined);
  });
});
