// The webview protocol's table: every message the webview may send has its entry and every field of it is checked;
// anything else is refused; a message goes to the route of its own type and nowhere else.
import * as assert from 'node:assert/strict';
import { routeMessage, type Routes } from '../../src/shared/messageTable';
import { LIMITS, WEBVIEW_MESSAGES, parseWebviewMessage, type WebviewMessage } from '../../src/shared/protocol';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAAABJRU5ErkJggg==';

/** One well-formed message of each type: the compiler refuses this object if a type of WebviewMessage is missing. */
const SAMPLES: { [K in WebviewMessage['type']]: Extract<WebviewMessage, { type: K }> } = {
  ready: { type: 'ready' },
  drawn: { type: 'drawn' },
  send: { type: 'send', text: 'hi', images: [{ name: 'p.png', dataUrl: PNG }] },
  stop: { type: 'stop' },
  regenerate: { type: 'regenerate' },
  editLast: { type: 'editLast' },
  copy: { type: 'copy', text: 'x' },
  insertCode: { type: 'insertCode', code: 'x' },
  openCode: { type: 'openCode', code: 'x', language: 'ts' },
  applyCode: { type: 'applyCode', code: 'x', info: 'ts', before: 'In a.ts:' },
  openLink: { type: 'openLink', url: 'https://example.com/' },
  newChat: { type: 'newChat' },
  requestHistory: { type: 'requestHistory' },
  openConversation: { type: 'openConversation', id: 'c1' },
  deleteConversation: { type: 'deleteConversation', id: 'c1' },
  openRaw: { type: 'openRaw', id: 'c1' },
  deleteDamaged: { type: 'deleteDamaged', id: 'c1' },
  clearHistory: { type: 'clearHistory' },
  action: { type: 'action', action: 'retry' },
  applyPreset: { type: 'applyPreset', id: 'openai' },
  pickModel: { type: 'pickModel' },
  setModel: { type: 'setModel', model: 'm' },
  setProfile: { type: 'setProfile', name: 'p' },
  setEffort: { type: 'setEffort', effort: 'high' },
  pickImage: { type: 'pickImage' },
  removeContext: { type: 'removeContext', id: 'c1' },
  toolApproval: { type: 'toolApproval', callId: 't1', decision: 'once', name: 'read_file', arguments: '{}' },
  setTools: { type: 'setTools', enabled: true },
  mentionQuery: { type: 'mentionQuery', query: 'gr' },
  addMention: { type: 'addMention', kind: 'file', path: 'src/a.ts' },
  promptQuery: { type: 'promptQuery' },
  runPrompt: { type: 'runPrompt', name: 'write-test', args: 'fn=parse' },
};

const samples = (): WebviewMessage[] => Object.values(SAMPLES);

describe('webview protocol table', () => {
  it('has an entry for every message type, and passes a well-formed message of each as it is', () => {
    assert.deepEqual(Object.keys(WEBVIEW_MESSAGES).sort(), Object.keys(SAMPLES).sort());
    for (const m of samples()) assert.deepEqual(parseWebviewMessage({ ...m, extra: 1 }), { ok: true, message: m }, m.type);
  });

  it('checks every field of every message: missing, of the wrong type or too long is refused, with a reason', () => {
    const tooLong = 'x'.repeat(LIMITS.codeChars + 1);
    for (const m of samples()) {
      for (const field of Object.keys(m).filter((k) => k !== 'type')) {
        const { [field]: _, ...without } = m as unknown as Record<string, unknown>;
        for (const bad of [without, { ...m, [field]: 12345 }, { ...m, [field]: tooLong }, { ...m, [field]: null }]) {
          const r = parseWebviewMessage(bad);
          assert.equal(r.ok, false, `${m.type}.${field}`);
          if (!r.ok) assert.ok(r.reason.length > 0 && r.reason.length < 200, r.reason.slice(0, 200));
        }
      }
    }
  });

  it('refuses what is not a message of the protocol: not an object, no type, an unknown type, a name of Object.prototype', () => {
    const cases: unknown[] = [
      undefined, null, 0, 'ready', [], [{ type: 'ready' }], {}, { type: 5 }, { type: ['ready'] },
      { type: 'runCommand', command: 'workbench.action.terminal.new' }, { type: 'Ready' }, { type: 'ready ' },
      { type: 'constructor' }, { type: '__proto__' }, { type: 'toString' }, { type: 'hasOwnProperty' }, { type: 'valueOf' },
    ];
    for (const c of cases) {
      const r = parseWebviewMessage(c);
      assert.equal(r.ok, false, String(JSON.stringify(c)));
      if (!r.ok) assert.ok(r.reason.length > 0);
    }
    assert.deepEqual(parseWebviewMessage({ type: 'x'.repeat(1000) }), { ok: false, reason: `unknown message type "${'x'.repeat(40)}"` });
  });

  it('refuses a hole in the images as an image that is not one', () => {
    const images: unknown[] = [];
    images[1] = { name: 'p.png', dataUrl: PNG };
    assert.deepEqual(parseWebviewMessage({ type: 'send', text: 'x', images }), { ok: false, reason: 'image is not an object' });
  });
});

describe('routing a message by its table', () => {
  type Ping = { type: 'ping'; n: number } | { type: 'pong' };
  const calls: string[] = [];
  const routes: Routes<Ping, string, string> = {
    ping: (m, c) => { calls.push(`ping ${m.n} ${c}`); return 'pinged'; },
    pong: (_, c) => { calls.push(`pong ${c}`); return 'ponged'; },
  };

  beforeEach(() => { calls.length = 0; });

  it('calls the route of the message\'s own type, with the message and the context', () => {
    assert.equal(routeMessage(routes, { type: 'ping', n: 3 }, 'ctx'), 'pinged');
    assert.equal(routeMessage(routes, { type: 'pong' }, 'c2'), 'ponged');
    assert.deepEqual(calls, ['ping 3 ctx', 'pong c2']);
  });

  it('calls nothing for a type the table has no route of, nor for a name of Object.prototype', () => {
    for (const type of ['pang', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      assert.equal(routeMessage(routes, { type } as unknown as Ping, 'ctx'), undefined, type);
    }
    assert.deepEqual(calls, []);
  });
});
