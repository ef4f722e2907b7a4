// The host's half of the webview protocol, where it can be loaded (it needs VS Code): every message the webview may
// send has its route, and every button's action too.
import * as assert from 'node:assert/strict';
import { ACTION_IDS, WEBVIEW_MESSAGES } from '../../src/shared/protocol';
import { ACTION_ROUTES, WEBVIEW_ROUTES } from '../../src/vscode/webviewRoutes';

suite('Panel protocol: the host routes every webview message', () => {
  test('every message type of the table has a host route, and every action of a card or notice its route', () => {
    assert.deepEqual(Object.keys(WEBVIEW_ROUTES).sort(), Object.keys(WEBVIEW_MESSAGES).sort());
    assert.deepEqual(Object.keys(ACTION_ROUTES).sort(), [...ACTION_IDS].sort());
    for (const [name, route] of [...Object.entries(WEBVIEW_ROUTES), ...Object.entries(ACTION_ROUTES)]) {
      assert.equal(typeof route, 'function', name);
    }
  });
});
