// The chat's link filter: only http and https may reach vscode.env.openExternal.
import * as assert from 'node:assert/strict';
import { externalLink } from '../../src/core/links';

describe('chat links (externalLink)', () => {
  it('lets http and https through, normalised', () => {
    assert.deepEqual(externalLink('https://example.com/docs?q=1#top'), { ok: true, href: 'https://example.com/docs?q=1#top' });
    assert.deepEqual(externalLink('http://127.0.0.1:8080'), { ok: true, href: 'http://127.0.0.1:8080/' });
    assert.deepEqual(externalLink('HTTPS://Example.COM/a b'), { ok: true, href: 'https://example.com/a%20b' });
    // Leading and trailing spaces are stripped by the URL parser; the link is still an http one.
    assert.deepEqual(externalLink('  https://example.com/  '), { ok: true, href: 'https://example.com/' });
  });

  it('refuses command:, vscode:, file:, javascript: and data: links, naming the scheme', () => {
    const refused: Array<[string, string]> = [
      ['command:workbench.action.terminal.new', 'command:'],
      ['command:parley.setApiKey?%5B%5D', 'command:'],
      ['vscode://parley.parley/anything', 'vscode:'],
      ['vscode-insiders://vscode.git/clone?url=x', 'vscode-insiders:'],
      ['file:///etc/passwd', 'file:'],
      ['javascript:alert(1)', 'javascript:'],
      ['data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==', 'data:'],
      ['blob:https://example.com/uuid', 'blob:'],
      ['ftp://example.com/file', 'ftp:'],
      ['mailto:someone@example.com', 'mailto:'],
    ];
    for (const [url, scheme] of refused) {
      const r = externalLink(url);
      assert.equal(r.ok, false, url);
      if (!r.ok) assert.equal(r.reason, `Refused to open a ${scheme} link from the chat.`, url);
    }
  });

  it('is not fooled by case, control characters or whitespace around a dangerous scheme', () => {
    for (const url of ['JavaScript:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', 'java\nscript:alert(1)', '\x01javascript:alert(1)', 'COMMAND:workbench.action.terminal.new', 'FILE:///etc/passwd', 'Data:text/html,<b>x</b>']) {
      const r = externalLink(url);
      assert.equal(r.ok, false, JSON.stringify(url));
    }
  });

  it('refuses what is not an absolute URL, without echoing it', () => {
    for (const url of ['', 'not a url', '//evil.example/path', '/relative/path', '#fragment', 'https//missing-colon.example', 'http://']) {
      const r = externalLink(url);
      assert.equal(r.ok, false, JSON.stringify(url));
      if (!r.ok) assert.equal(r.reason, 'Refused to open a link that is not a URL.', JSON.stringify(url));
    }
  });

  it('never returns an href of another scheme than the one it checked', () => {
    // A scheme-relative-looking but absolute http URL stays http; credentials do not change the scheme.
    const r = externalLink('https:evil.example/x');
    assert.ok(r.ok && new URL(r.href).protocol === 'https:');
    const c = externalLink('http://user:pw@example.com/');
    assert.ok(c.ok && c.href.startsWith('http://'));
  });
});
