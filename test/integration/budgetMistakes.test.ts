// Spend limits that cannot be read, inside a real VS Code: a `parley.budget` entry or a profile's `budget` with a
// mistake is not enforced, and the user is told at once (a warning naming the entry, what is wrong and that it is not
// enforced, once per window), and the status bar's tooltip keeps listing it after the warning is closed.
import * as assert from 'node:assert/strict';
import type { TestApi } from '../../src/extension';
import { chats, chunk, keptUserSettings, openChatView, parley, serverPool, userSettings, waitFor, writeJson, writeSse } from './helpers';

const TOUCHED = ['endpoints', 'endpoint', 'budget', 'tools.enabled'];
/** A profile of its own, whose name no other suite's limits use. */
const PROFILE = `Mistakes ${Date.now().toString(36)}`;

suite('Spend limits that cannot be read', function () {
  this.timeout(60_000);
  let api: TestApi;
  const kept = keptUserSettings(TOUCHED);
  const pool = serverPool();

  suiteSetup(async () => {
    api = await parley();
    kept.save();
    await openChatView(api);
  });

  suiteTeardown(async () => {
    await api.chat.stop();
    await kept.restore();
    await api.chat.newChat();
    for (const s of pool.started) {
      await api.keys.delete(s.origin);
      await s.close();
    }
  });

  /** The warnings shown since `from` that are about a spend limit not enforced. */
  const warnings = (from: number) => api.recorded.shown.slice(from).filter((t) => t.surface === 'notice' && /spend limit is not enforced/.test(t.text)).map((t) => t.text);

  test('a mistaken entry is warned of once, names what is wrong, is listed in the tooltip, and does not block', async () => {
    const s = await pool.start((req, res) => (req.method === 'GET' ? writeJson(res, 200, { data: [{ id: 'tiny' }] }) : writeSse(res, [chunk('Sent.'), chunk('', 'stop')])));
    await api.keys.set(s.origin, 'sk-mistakes');
    await userSettings({ 'tools.enabled': false, endpoints: [{ name: PROFILE, baseUrl: s.url, model: 'tiny' }], endpoint: PROFILE });
    await waitFor('the profile in the settings', () => api.settings.current.activeProfile === PROFILE || undefined);
    await api.chat.newChat();

    const from = api.recorded.shown.length;
    await userSettings({
      budget: [{ period: 'daily', dollars: 5 }],
      endpoints: [{ name: PROFILE, baseUrl: s.url, model: 'tiny', budget: [{ period: 'day', tokens: '100' }] }],
    });
    const said = await waitFor('both warnings', () => (warnings(from).length >= 2 ? warnings(from) : undefined));
    assert.deepEqual(said, [
      'Parley: a spend limit is not enforced, because it cannot be read: parley.budget, limit 1, {"period":"daily","dollars":5}. "period" must be "day", "week" or "month", not "daily" (write "day").',
      `Parley: a spend limit is not enforced, because it cannot be read: the budget of the profile "${PROFILE}" in parley.endpoints, limit 1, {"period":"day","tokens":"100"}. "tokens" must be a number, not text: write 100, not "100".`,
    ]);
    assert.deepEqual(api.settings.current.budget, [], 'neither is enforced');

    // Not enforced: the request goes (a 100-token limit would have blocked it), and the tooltip lists both.
    await api.chat.send('hello', []);
    assert.equal(chats(s).length, 1);
    assert.equal(api.chat.current.turns.at(-1)?.text, 'Sent.');
    const tooltip = await waitFor('the tooltip with the limits that cannot be read', () => (api.usageBar.item.tooltip?.includes('Not enforced') ? api.usageBar.item.tooltip : undefined));
    assert.match(tooltip, /\*\*Not enforced\*\*: these limits cannot be read\n\n- parley\.budget, limit 1, \{"period":"daily","dollars":5\}: "period" must be "day", "week" or "month", not "daily" \(write "day"\)\. Not enforced\.\n- the budget of the profile /);

    // Another settings change with the same mistakes: not said again in this window. A new mistake is.
    const again = api.recorded.shown.length;
    await userSettings({ budget: [{ period: 'daily', dollars: 5 }, { period: 'week', dollars: 10, action: 'stop' }] });
    // The warnings of one change are shown in the order of the entries: one said again would come before the new one.
    const more = await waitFor('the new warning', () => (warnings(again).length >= 1 ? warnings(again) : undefined));
    assert.equal(more.length, 1, more.join('\n'));
    assert.match(more[0], /parley\.budget, limit 2, \{"period":"week","dollars":10,"action":"stop"\}\. "action" must be "block" or "warn", not "stop"\.$/);

    // Mended: the tooltip says so at once, with no request in between.
    await userSettings({ budget: [{ period: 'day', dollars: 5 }], endpoints: [{ name: PROFILE, baseUrl: s.url, model: 'tiny' }] });
    const mended = await waitFor('the tooltip without the mistakes', () => (api.usageBar.item.tooltip && !api.usageBar.item.tooltip.includes('Not enforced') ? api.usageBar.item.tooltip : undefined));
    assert.match(mended, /\*\*Budgets\*\*[\s\S]*your daily spend limit\W+\$5\.00, block/, 'the mended limit is listed as enforced');
  });
});
