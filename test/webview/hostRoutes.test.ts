// The webview's routes of the host's messages, run in Node (no page) against a panel that records what it is asked:
// every message type has its route, and each reaches the part of the panel it always did, with the message's fields.
import * as assert from 'node:assert/strict';
import { routeMessage } from '../../src/shared/messageTable';
import type { HeaderView, HostMessage, TurnView } from '../../src/shared/protocol';
import { hostRoutes, type Panel } from '../../src/webview/hostRoutes';

type Of<K extends HostMessage['type']> = Extract<HostMessage, { type: K }>;

const header: HeaderView = { model: 'm', endpoint: 'api.example.com', demo: false, models: [], profile: 'p', profiles: [] };
const turn = (role: TurnView['role']): TurnView => ({ id: 't1', role, text: 'x', status: 'done' });
const image = { name: 'p.png', dataUrl: 'data:image/png;base64,iVBORw0KGgo=' };

/** One message of each type: the compiler refuses this object if a type of HostMessage is missing. */
const SAMPLES: { [K in HostMessage['type']]: Of<K> } = {
  snapshot: { type: 'snapshot', conversation: { id: 'c', title: 't', turns: [turn('user')] }, generating: true, header, pendingContext: [] },
  turnStart: { type: 'turnStart', turn: turn('user') },
  delta: { type: 'delta', turnId: 't1', text: 'a', reasoning: 'r' },
  turnEnd: { type: 'turnEnd', turn: turn('assistant') },
  turnSteps: { type: 'turnSteps', turnId: 't1', steps: [{ text: 's', calls: [] }] },
  generating: { type: 'generating', value: false },
  header: { type: 'header', header },
  meter: { type: 'meter', meter: { used: 1, reserve: 0, corrected: false, threshold: 80, compactable: 0 } },
  setup: { type: 'setup', setup: { reason: 'r', presets: [], origin: 'o', actions: ['setApiKey'] } },
  history: { type: 'history', items: [{ id: 'c', title: 't', updatedAt: 1, turnCount: 2 }] },
  pendingContext: { type: 'pendingContext', chips: [] },
  notice: { type: 'notice', text: 'n', actions: ['showLog'] },
  composerError: { type: 'composerError', text: 'e' },
  composerText: { type: 'composerText', text: 'q', images: [image] },
  imageAttached: { type: 'imageAttached', image },
  mentionCandidates: { type: 'mentionCandidates', query: 'gr', items: [] },
  promptCandidates: { type: 'promptCandidates', items: [] },
  tools: { type: 'tools', enabled: true, available: true },
  focusComposer: { type: 'focusComposer' },
};

/** What each message asks of the panel, in order: [part.method or panel step, its arguments…]. */
const EXPECTED: { [K in HostMessage['type']]: (m: Of<K>) => unknown[][] } = {
  snapshot: (m) => [
    ['drawSnapshot'], ['header.render', m.header], ['renderSetup', m.setup], ['composer.renderChips', m.pendingContext],
    ['setGenerating', m.generating], ['transcript.setTurns', m.conversation.turns],
  ],
  turnStart: (m) => [['composer.accepted'], ['transcript.turnStart', m.turn]],
  delta: (m) => [['transcript.delta', m.turnId, m.text, m.reasoning]],
  turnEnd: (m) => [['transcript.turnEnd', m.turn]],
  turnSteps: (m) => [['transcript.turnSteps', m.turnId, m.steps]],
  generating: (m) => [['setGenerating', m.value]],
  header: (m) => [['header.render', m.header]],
  meter: (m) => [['header.setMeter', m.meter]],
  setup: (m) => [['renderSetup', m.setup]],
  history: (m) => [['showHistory', m.items]],
  pendingContext: (m) => [['composer.renderChips', m.chips]],
  notice: (m) => [['showNotice', m.text, m.actions]],
  composerError: (m) => [['composer.showError', m.text, true]],
  composerText: (m) => [['showChat'], ['composer.setText', m.text, m.images]],
  imageAttached: (m) => [['composer.addImage', m.image]],
  mentionCandidates: (m) => [['composer.mentionCandidates', m.query, m.items]],
  promptCandidates: (m) => [['composer.promptCandidates', m.items]],
  tools: (m) => [['composer.setTools', m.enabled, m.available]],
  focusComposer: () => [['showChat']],
};

/** A panel whose every part and step records its call; drawSnapshot draws at once. */
function recordingPanel(calls: unknown[][]): Panel {
  const part = <T extends object>(name: string): T =>
    new Proxy({} as T, { get: (_, method) => (...args: unknown[]) => { calls.push([`${name}.${String(method)}`, ...args]); } });
  const step = (name: string) => (...args: unknown[]) => { calls.push([name, ...args]); };
  return {
    transcript: part('transcript'),
    composer: part('composer'),
    header: part('header'),
    drawSnapshot: (draw) => {
      calls.push(['drawSnapshot']);
      draw();
    },
    setGenerating: step('setGenerating'),
    renderSetup: step('renderSetup'),
    showNotice: step('showNotice'),
    showChat: step('showChat'),
    showHistory: step('showHistory'),
  };
}

describe('webview routes of the host\'s messages (Node)', () => {
  it('has a route for every host message type, and each reaches the panel as it always did', () => {
    assert.deepEqual(Object.keys(EXPECTED).sort(), Object.keys(SAMPLES).sort());
    const calls: unknown[][] = [];
    const routes = hostRoutes(recordingPanel(calls));
    for (const [type, message] of Object.entries(SAMPLES) as [HostMessage['type'], HostMessage][]) {
      calls.length = 0;
      routeMessage(routes, message, undefined);
      const expected = (EXPECTED[type] as (m: HostMessage) => unknown[][])(message);
      assert.deepEqual(calls, expected, type);
    }
  });

  it('a reply\'s own turn start does not take the composer\'s text as accepted; an unknown type reaches nothing', () => {
    const calls: unknown[][] = [];
    const routes = hostRoutes(recordingPanel(calls));
    routeMessage(routes, { type: 'turnStart', turn: turn('assistant') }, undefined);
    assert.deepEqual(calls, [['transcript.turnStart', turn('assistant')]]);
    calls.length = 0;
    for (const type of ['nope', 'constructor', '__proto__']) routeMessage(routes, { type } as unknown as HostMessage, undefined);
    assert.deepEqual(calls, []);
  });
});
