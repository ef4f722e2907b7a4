// Bad input everywhere: a clear error, no crash, nothing sent, nothing lost.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { startTestServer, type TestServer } from '../support/server';
import { chats, chunk, parley, userSettings, waitFor, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import { readSettings } from '../../src/vscode/config';

suite('Bad input gets a clear error', function () {
  this.timeout(30_000);
  let api: TestApi;
  let server: TestServer;

  suiteSetup(async () => {
    api = await parley();
    server = await startTestServer((_req, res) => writeSse(res, [chunk('fine'), chunk('', 'stop')]));
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the chat view to be ready', () => api.recorded.posted.some((m) => m.type === 'snapshot'), 20_000);
  });

  suiteTeardown(async () => {
    await userSettings({ baseUrl: undefined, model: undefined, temperature: undefined });
    await server?.close();
  });

  setup(async () => {
    await userSettings({ baseUrl: server.url, model: 'm', temperature: undefined });
    await api.chat.newChat();
    server.requests.length = 0;
    api.recorded.posted.length = 0;
  });

  function composerErrors(): string[] {
    return api.recorded.posted.flatMap((m) => (m.type === 'composerError' ? [m.text] : []));
  }

  test('an empty prompt is refused in words, and nothing is sent', async () => {
    await api.chat.send('   ', []);
    assert.deepEqual(composerErrors(), ['Type a question first.']);
    assert.equal(chats(server).length, 0);
  });

  test('a binary file attached as an image is refused, and nothing is sent', async () => {
    const fake = 'data:image/png;base64,' + Buffer.from('\x7fELF\x02\x01\x01\x00binary-not-an-image', 'latin1').toString('base64');
    await api.chat.send('look', [{ name: 'program.png', dataUrl: fake }]);
    assert.match(composerErrors()[0] ?? '', /program\.png is not a PNG, JPEG, GIF or WebP image/);
    assert.equal(chats(server).length, 0);
  });

  test('an image is sent labelled by its bytes: a JPEG that claims to be a PNG goes out as image/jpeg', async () => {
    const jpegBytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01]);
    await api.chat.send('what is this?', [{ name: 'photo.png', dataUrl: `data:image/png;base64,${jpegBytes.toString('base64')}` }]);
    assert.equal(chats(server).length, 1);
    const parts = chats(server)[0].json.messages.at(-1).content;
    assert.equal(parts[1].type, 'image_url');
    assert.equal(parts[1].image_url.url, `data:image/jpeg;base64,${jpegBytes.toString('base64')}`);
  });

  test('out-of-range tuning settings are replaced, said in words for the log, and chat goes on', async () => {
    await userSettings({ maxRetries: 50, requestTimeoutSeconds: 'soon' });
    try {
      const adjusted = readSettings().adjusted;
      assert.deepEqual(adjusted, [
        'parley.requestTimeoutSeconds is not a number ("soon"); using 60.',
        'parley.maxRetries 50 is out of range (0 to 10); using 10.',
      ]);
      await api.chat.send('still works?', []);
      assert.equal(api.chat.current.turns.at(-1)?.text, 'fine');
    } finally {
      await userSettings({ maxRetries: undefined, requestTimeoutSeconds: undefined });
    }
  });

  const badBaseUrls: Array<[string, unknown, RegExp]> = [
    ['a number', 42, /parley\.baseUrl .*number/],
    ['javascript:', 'javascript:alert(1)', /http/i],
    ['file:', 'file:///etc/passwd', /http/i],
    ['credentials', 'http://user:pass@127.0.0.1:1', /credential|user name|password/i],
  ];
  for (const [name, value, words] of badBaseUrls) {
    test(`parley.baseUrl set to ${name} gives an error card, and nothing is sent`, async () => {
      await userSettings({ baseUrl: value });
      await api.chat.send('hi', []);
      const reply = api.chat.current.turns.at(-1);
      assert.equal(reply?.status, 'error');
      assert.equal(reply?.error?.kind, 'config');
      assert.match(reply?.error?.title ?? '', words);
      assert.equal(api.chat.current.turns.at(-2)?.text, 'hi', 'the question stays');
      assert.equal(chats(server).length, 0);
    });
  }

  test('a model name with spaces or newlines, and an out-of-range temperature, are refused before sending', async () => {
    await userSettings({ model: 'gpt 4\nmini' });
    await api.chat.send('hi', []);
    assert.equal(api.chat.current.turns.at(-1)?.error?.kind, 'config');
    assert.match(api.chat.current.turns.at(-1)?.error?.title ?? '', /model/i);
    await userSettings({ model: 'm', temperature: 5 });
    await api.chat.send('hi', []);
    assert.equal(api.chat.current.turns.at(-1)?.error?.kind, 'config');
    assert.match(api.chat.current.turns.at(-1)?.error?.title ?? '', /temperature/i);
    assert.equal(chats(server).length, 0);
  });
});
