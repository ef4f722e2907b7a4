// The spend budget across windows in the real VS Code (issue 37): a panel request sent under a blocking limit holds a
// reservation beside the usage logs while it streams, counted by another window's check (a second usage store and
// guard over the same global storage, as a second window has), and released however it ends: done, stopped, failed.
// Another window's request in flight blocks the panel's in turn; an inline completion reserves too. The same in plain
// Node: test/unit/budgetWindows.test.ts.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/extension';
import { estimatePromptTokens } from '../../src/core/tokenEstimate';
import type { ChatMessage } from '../../src/core/types';
import { BudgetGuard, type GuardedRequest } from '../../src/vscode/budgetGuard';
import { UsageStore } from '../../src/vscode/usageStore';
import { completionFixture } from '../support/completionServers';
import { chats, chunk, keptUserSettings, memoryMemento, openChatView, parley, type Reply, serverPool, usageChunk, userSettings, waitFor, writeJson, writeSse } from './helpers';
import type { TestServer } from '../support/server';

const TOUCHED = ['baseUrl', 'model', 'endpoints', 'endpoint', 'budget', 'tools.enabled', 'systemPrompt', 'maxRetries', 'completion.endpoint', 'completion.model', 'completion.enabled'];
/** A profile of its own, so that only this suite's requests count against its limit (the ledger is shared by the run). */
const PROFILE = `Windows ${Date.now().toString(36)}`;
const LIMIT = 2000;
const SAMPLE = 'budget-windows-sample.ts';

suite('Spend budget across windows', function () {
  this.timeout(60_000);
  let api: TestApi;
  let s: TestServer;
  let script: Reply;
  const kept = keptUserSettings(TOUCHED);
  const pool = serverPool();
  /** A second window: its own usage store and guard over the same global storage. */
  let otherUsage: UsageStore;
  let otherGuard: BudgetGuard;

  const inflight = () => path.join(api.usage.dir, 'inflight');
  const reservations = async () => (await fs.readdir(inflight()).catch(() => [])).filter((n) => n.endsWith('.json'));
  /** A request of the other window to the suite's profile, writing at most `maxOutputTokens`. */
  const request = (maxOutputTokens: number): GuardedRequest => {
    const current = api.settings.current;
    const profile = current.profiles.find((p) => p.name === PROFILE);
    return { settings: { budget: current.budget, pricing: {}, profiles: current.profiles, model: 'tiny', profile }, messages: OTHER, maxOutputTokens, host: `${PROFILE} (${new URL(s.url).host})` };
  };
  const OTHER: ChatMessage[] = [{ role: 'user', content: 'From the other window' }];

  suiteSetup(async () => {
    api = await parley();
    kept.save();
    s = await pool.start((req, res) => {
      if (req.method === 'GET') return writeJson(res, req.path.endsWith('/models') ? 200 : 404, { data: [{ id: 'tiny' }] });
      return script(req, res);
    });
    await userSettings({
      'tools.enabled': false,
      systemPrompt: 'Be brief.',
      maxRetries: 0,
      endpoints: [{ name: PROFILE, baseUrl: s.url, model: 'tiny', models: { tiny: { maxOutputTokens: 50 } }, budget: [{ period: 'day', tokens: LIMIT, action: 'block' }] }],
      endpoint: PROFILE,
    });
    await waitFor('the profile in the settings', () => api.settings.current.activeProfile === PROFILE || undefined);
    await openChatView(api);
    await api.chat.newChat();
    otherUsage = new UsageStore(vscode.Uri.file(path.dirname(api.usage.dir)), memoryMemento());
    otherGuard = new BudgetGuard(otherUsage, memoryMemento());
  });

  suiteTeardown(async () => {
    await api.chat.stop();
    otherUsage.dispose();
    await kept.restore();
    await api.chat.newChat();
    for (const p of pool.started) await p.close();
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, SAMPLE)).then(undefined, () => undefined);
  });

  test("a panel request in flight is counted by another window's check, and its reservation ends when it is stopped", async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    script = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('Partial answer'))}\n\n`);
      await hold;
    };
    const asking = api.chat.send('Tell me a long story', []);
    await waitFor('the first delta', () => api.chat.current.turns.at(-1)?.text === 'Partial answer');
    const held = await reservations();
    assert.equal(held.length, 1, 'the streaming request holds one reservation');
    const r = JSON.parse(await fs.readFile(path.join(inflight(), held[0]), 'utf8')) as { prompt: number; completion: number; host: string };
    assert.equal(r.completion, 50, "the model's maximum output");
    assert.match(r.host, new RegExp(`^${PROFILE} \\(`));
    // Nothing is spent yet: a request that fits beside the limit only when the one in flight is not counted.
    const reserved = r.prompt + r.completion;
    const blocked = await otherGuard.check(request(LIMIT - estimatePromptTokens(OTHER) - Math.floor(reserved / 2)));
    assert.equal(blocked.kind, 'block');
    assert.match(blocked.kind === 'block' ? blocked.words : '', new RegExp(`requests still in flight \\(in this or another window\\) up to ${reserved} tokens`));

    await vscode.commands.executeCommand('parley.cancel');
    await asking;
    release();
    assert.equal(api.chat.current.turns.at(-1)?.status, 'stopped');
    assert.deepEqual(await reservations(), [], 'Stop released it (its usage counted first)');
  });

  test("another window's request in flight blocks the panel's; released, the panel's goes, and done or failed releases its own", async () => {
    script = (_req, res) => writeSse(res, [chunk('An answer.'), chunk('', 'stop'), usageChunk(80, 20)]);
    // The other window sends a request that leaves less than the panel's next one needs.
    const mine = Object.entries(await api.usage.ledger()).filter(([k]) => k.split('|')[1].startsWith(`${PROFILE} (`)).reduce((n, [, t]) => n + t.total, 0);
    const theirs = await otherGuard.check(request(LIMIT - mine - estimatePromptTokens(OTHER) - 30));
    assert.equal(theirs.kind, 'send');
    assert.equal((await reservations()).length, 1);
    const before = chats(s).length;
    await api.chat.send('Question while the other window streams', []);
    assert.equal(chats(s).length, before, 'nothing reached the server');
    assert.equal(api.chat.current.turns.at(-1)?.error?.kind, 'budget');
    assert.match(api.chat.current.turns.at(-1)?.error?.title ?? '', /requests still in flight \(in this or another window\)/);
    assert.equal((await reservations()).length, 1, 'a blocked request reserves nothing');

    await theirs.release?.();
    await api.chat.send('Question after it ended', []);
    assert.equal(api.chat.current.turns.at(-1)?.status, 'done', JSON.stringify(api.chat.current.turns.at(-1)?.error));
    assert.equal(chats(s).length, before + 1);
    assert.deepEqual(await reservations(), [], 'done: released');

    script = (_req, res) => writeJson(res, 400, { error: { message: 'bad request', type: 'invalid_request_error' } });
    await api.chat.send('A question the server refuses', []);
    assert.equal(api.chat.current.turns.at(-1)?.status, 'error');
    assert.ok(chats(s).length > before + 1, 'it was sent');
    assert.deepEqual(await reservations(), [], 'failed: released');
  });

  test('an inline completion under the limit holds a reservation while it is asked, released when it is answered', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    script = async (req, res) => {
      if (!req.path.endsWith('/infill')) return writeJson(res, 404, { error: { message: 'not found' } });
      await hold;
      const body = JSON.parse(completionFixture('llamacpp-infill.json')) as Record<string, unknown>;
      writeJson(res, 200, { ...body, content: 'a + b;' });
    };
    await userSettings({ 'completion.endpoint': PROFILE, 'completion.model': 'tiny', 'completion.enabled': true });
    await waitFor('completions configured', () => api.completions.configured || undefined);
    const uri = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, SAMPLE);
    await fs.writeFile(uri.fsPath, 'const total = ');
    const doc = await vscode.workspace.openTextDocument(uri);
    const source = new vscode.CancellationTokenSource();
    const asked = api.completions.provideInlineCompletionItems(doc, doc.positionAt(14), { triggerKind: vscode.InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined }, source.token);
    await waitFor('the /infill request', () => s.requests.some((r) => r.path.endsWith('/infill')) || undefined);
    const held = await reservations();
    assert.equal(held.length, 1, 'the completion holds one reservation');
    release();
    await asked;
    await waitFor('the reservation released once its usage is recorded', async () => (await reservations()).length === 0 || undefined);
  });
});
