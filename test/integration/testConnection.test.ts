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
    await userSettings({ baseUrl: undefined, model: undefined, maxTokens: undefined });
    await api.requester.resetAdaptations();
  });

  function report(contains: string) {
    return waitFor(`a Test Connection report for ${contains}`, () =>
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'parley-report' && !d.isUntitled && d.getText().startsWith('# Parley: Test Connection') && d.getText().includes(contains)));
  }

  test('a server that refuses max_tokens: the report names it, and the next chat request goes right the first time', async () => {
    const server = await startQuirkServer(PARAM_PROFILES.max_tokens);
    try {
      await userSettings({ baseUrl: server.url, model: 'test-model', maxTokens: 50 });
      await vscode.commands.executeCommand('parley.testConnection');
      const doc = await report(server.origin);
      assert.equal(doc.languageId, 'markdown');
      assert.match(doc.getText(), /max_tokens/);
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
