// What Parley never loses, inside a real VS Code: damaged conversation files, replies interrupted by their window going
// away, streaming saves, and storage that cannot be written. The reload itself is in test/e2e/durability.e2e.mjs.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';
import { chunk, parley, usageChunk, userSettings, waitFor, windowLogs, writeJson, writeSse } from './helpers';
import type { TestApi } from '../../src/extension';
import type { Conversation } from '../../src/core/conversation';
import { HistoryStore } from '../../src/vscode/history';
import { StorageFaults } from '../../src/vscode/testSeam';
import { group } from '../../src/core/usageLedger';
import { parseUsageLog } from '../../src/core/usageLog';

type Script = (req: RecordedRequest, res: import('node:http').ServerResponse) => void | Promise<void>;

/** A process id that no process has now: a child's, after it exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

/** A reply saved mid-stream by a window that has gone away (an earlier session, a process that no longer runs). */
function orphanedReply(id: string, text: string, requestId: string, prompt: number): Conversation['turns'][number] {
  return {
    id, role: 'assistant', text, status: 'streaming', model: 'test-model',
    owner: { session: 'an-earlier-session', pid: deadPid(), hostname: hostname(), beat: Date.now() },
    inflight: { id: requestId, model: 'test-model', host: '127.0.0.1:1', source: 'chat', prompt },
  };
}

suite('Durability: damaged files, interrupted replies, unwritable storage', function () {
  this.timeout(60_000);
  let api: TestApi;
  let server: TestServer;
  let script: Script;
  let dir: string;

  suiteSetup(async () => {
    api = await parley();
    dir = join(api.context.globalStorageUri.fsPath, 'conversations');
    server = await startTestServer((req, res) => {
      if (req.method === 'GET') return writeJson(res, 200, { data: [] });
      return script(req, res);
    });
    await userSettings({ baseUrl: server.url, model: 'test-model' });
    // The panel open, so that what the chat posts to it is recorded.
    await vscode.commands.executeCommand('parley.openChat');
    await waitFor('the panel, ready', () => api.recorded.posted.some((m) => m.type === 'snapshot'), 20_000);
  });

  suiteTeardown(async () => {
    await server?.close();
  });

  setup(async () => {
    await api.chat.newChat();
  });

  function conversation(id: string, title: string): Conversation {
    return {
      id, title, createdAt: 1, updatedAt: Date.now(),
      turns: [{ id: `${id}-u`, role: 'user', text: title, status: 'done' }, { id: `${id}-a`, role: 'assistant', text: `Answer to ${title}`, status: 'done' }],
    };
  }

  /** Every usage record in every window's log of this profile. */
  async function usageRecords() {
    const usageDir = join(api.context.globalStorageUri.fsPath, 'usage');
    const names = (await fs.readdir(usageDir).catch(() => [])).filter((n) => n.endsWith('.jsonl'));
    return (await Promise.all(names.map(async (n) => parseUsageLog(await fs.readFile(join(usageDir, n), 'utf8'))))).flat();
  }

  async function allTimeTotal(): Promise<number> {
    return group(await api.usage.ledger(), () => 'all')[0]?.[1].total ?? 0;
  }

  test('a truncated file and a file of random bytes are moved aside and listed as damaged; nothing else is lost', async () => {
    const good = conversation(`good${randomUUID().slice(0, 8)}`, 'A good conversation');
    const cut = conversation(`cut${randomUUID().slice(0, 8)}`, 'Cut short');
    const noise = `noise${randomUUID().slice(0, 8)}`;
    const stale = conversation(`stale${randomUUID().slice(0, 8)}`, 'Cut short behind its entry');
    await api.history.save(good);
    await api.history.save(stale);
    await fs.writeFile(join(dir, `${cut.id}.json`), JSON.stringify(cut).slice(0, 60));
    await fs.writeFile(join(dir, `${noise}.json`), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)));
    // A file cut short after its entry was written: its size no longer matches the entry's.
    const staleText = await fs.readFile(join(dir, `${stale.id}.json`), 'utf8');
    await fs.writeFile(join(dir, `${stale.id}.json`), staleText.slice(0, staleText.length - 10));
    // A damaged file from before: a second one with the same id must not replace it.
    await fs.writeFile(join(dir, `${cut.id}.corrupt.json`), 'earlier damage');

    const list = await api.history.list();
    const byId = new Map(list.map((i) => [i.id, i]));
    assert.equal(byId.get(good.id)?.title, 'A good conversation', 'the good conversation is listed as it was');
    assert.equal(byId.get(good.id)?.damaged, undefined);
    for (const id of [noise, stale.id, cut.id]) assert.equal(byId.get(id)?.damaged, true, `${id} is listed as damaged`);
    const otherCut = list.filter((i) => i.damaged && i.id.startsWith(`${cut.id}-`));
    assert.equal(otherCut.length, 1, 'the second damaged file of the same id is listed under a name of its own');
    assert.equal(await fs.readFile(join(dir, `${cut.id}.corrupt.json`), 'utf8'), 'earlier damage', 'the earlier damaged file is not replaced');
    assert.equal(await fs.readFile(join(dir, `${otherCut[0].id}.corrupt.json`), 'utf8'), JSON.stringify(cut).slice(0, 60));
    const names = await fs.readdir(dir);
    for (const id of [noise, stale.id, cut.id]) assert.ok(!names.includes(`${id}.json`), `${id}.json is moved aside`);
    assert.ok(!names.includes(`${stale.id}.entry.json`), 'the entry of a damaged file goes with it');
    assert.equal((await api.history.load(good.id))?.turns[1].text, 'Answer to A good conversation');
    // The log says what happened, with names only: never the content.
    const logged = await waitFor('the log line about the random bytes', async () =>
      (await windowLogs(api)).find((l) => l.text.includes(`${noise}.json is not a readable conversation`) && l.text.includes(`moved aside as ${noise}.corrupt.json`)), 15_000);
    assert.ok(!logged.text.includes('Cut short"'), 'no conversation content in the log');

    // The panel's list carries the flag; Open raw opens the file as text, read-only; Delete removes only it.
    api.recorded.posted.length = 0;
    await api.chat.files.postHistory();
    const posted = api.recorded.posted.find((m) => m.type === 'history');
    assert.ok(posted?.type === 'history' && posted.items.some((i) => i.id === noise && i.damaged));
    await api.chat.files.openRaw(stale.id);
    const editor = await waitFor('the raw text in an editor', () => vscode.window.activeTextEditor?.document.uri.fsPath.endsWith(`${stale.id}.corrupt.json`) && vscode.window.activeTextEditor);
    assert.equal(editor.document.getText(), staleText.slice(0, staleText.length - 10));
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    // Random bytes are not text: the file opens in VS Code's editor all the same (which offers Open Anyway).
    await api.chat.files.openRaw(noise);
    await waitFor('the raw bytes in an editor tab', () => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { uri?: vscode.Uri } | undefined;
      return input?.uri?.fsPath.endsWith(`${noise}.corrupt.json`);
    });
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await api.chat.files.deleteDamaged(noise);
    const after = await api.history.list();
    assert.ok(!after.some((i) => i.id === noise), 'Delete removes the damaged file');
    assert.ok(after.some((i) => i.id === good.id) && after.some((i) => i.id === stale.id && i.damaged), 'Delete removes nothing else');
  });

  test('opening a conversation whose file is damaged: not opened, the panel says where it went', async () => {
    const id = `bad${randomUUID().slice(0, 8)}`;
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(join(dir, `${id}.json`), '{"id":"' + id + '","title":"x","turns":[{"role":');
    api.recorded.posted.length = 0;
    assert.equal(await api.chat.openConversation(id), false);
    const notice = api.recorded.posted.find((m) => m.type === 'notice' && m.text.includes(`${id}.corrupt.json`));
    assert.ok(notice, 'a notice names the damaged file');
    assert.ok((await fs.readdir(dir)).includes(`${id}.corrupt.json`));
  });

  test('one mistyped field (steps "x", context 5) is a damaged file: moved aside, listed with Open raw and Delete, the log naming the field', async () => {
    const steps = conversation(`steps${randomUUID().slice(0, 8)}`, 'Steps that are not steps');
    const context = conversation(`context${randomUUID().slice(0, 8)}`, 'Context that is a number');
    await fs.mkdir(dir, { recursive: true });
    // Written by hand (no entry beside them), as a file edited or synced from elsewhere would be.
    await fs.writeFile(join(dir, `${steps.id}.json`), JSON.stringify({ ...steps, turns: [steps.turns[0], { ...steps.turns[1], steps: 'x' }] }));
    await fs.writeFile(join(dir, `${context.id}.json`), JSON.stringify({ ...context, turns: [{ ...context.turns[0], context: 5 }, context.turns[1]] }));

    const list = await api.history.list();
    for (const c of [steps, context]) {
      assert.equal(list.find((i) => i.id === c.id)?.damaged, true, `${c.id} is listed as damaged`);
      assert.ok((await fs.readdir(dir)).includes(`${c.id}.corrupt.json`), `${c.id}.json is moved aside`);
    }
    await waitFor('the log line naming the field', async () =>
      (await windowLogs(api)).find((l) => l.text.includes(`${steps.id}.json is not a readable conversation (turns[1].steps is not what Parley writes there)`)), 15_000);

    // Opened before any list (its entry says nothing is wrong): not opened, and the panel says where it went.
    const late = conversation(`late${randomUUID().slice(0, 8)}`, 'Opened directly');
    await api.history.save(late);
    const text = await fs.readFile(join(dir, `${late.id}.json`), 'utf8');
    await fs.writeFile(join(dir, `${late.id}.json`), text.replace('"status":"done"', '"status":5'));
    api.recorded.posted.length = 0;
    assert.equal(await api.chat.openConversation(late.id), false);
    assert.ok(api.recorded.posted.some((m) => m.type === 'notice' && m.text.includes(`${late.id}.corrupt.json`)), 'a notice names the damaged file');
    assert.equal((await api.history.list()).find((i) => i.id === late.id)?.damaged, true);
  });

  test('a save stopped half-way (as by a crash while writing) leaves the old conversation whole: it loads, and is listed as it was', async () => {
    const faults = new StorageFaults();
    const store = new HistoryStore(api.context.globalStorageUri, api.context.globalState, undefined, faults);
    const c = conversation(`crash${randomUUID().slice(0, 8)}`, 'Before the crash');
    await store.save(c);
    const file = join(dir, `${c.id}.json`);
    const before = await fs.readFile(file, 'utf8');
    const changed: Conversation = {
      ...c, title: 'After the crash', updatedAt: c.updatedAt + 1,
      turns: [...c.turns, { id: `${c.id}-u2`, role: 'user', text: 'A long question. '.repeat(5000), status: 'done' }],
    };
    faults.cutNextWrite(`${c.id}.json`);
    await assert.rejects(store.save(changed), /stopped half-way/, 'the save stopped in the middle of writing the conversation');
    assert.equal(await fs.readFile(file, 'utf8'), before, 'the conversation file is the old one, byte for byte');
    assert.deepEqual(await store.load(c.id), c, 'and it loads as it was');
    const item = (await store.list()).find((i) => i.id === c.id);
    assert.equal(item?.title, 'Before the crash');
    assert.equal(item?.damaged, undefined);
    assert.ok(!(await fs.readdir(dir)).includes(`${c.id}.corrupt.json`), 'nothing moved aside');
    // The next save is whole.
    await store.save(changed);
    assert.equal((await store.load(c.id))?.turns.length, 3);
  });

  test('a reply whose window went away mid-stream: Interrupted, its text kept, its estimated usage counted once', async () => {
    const id = `gone${randomUUID().slice(0, 8)}`;
    const requestId = randomUUID();
    const c = conversation(id, 'Interrupted question');
    c.turns[1] = orphanedReply(`${id}-a`, 'The first half of an answer', requestId, 40);
    await api.history.save(c);
    const before = await allTimeTotal();
    assert.equal(await api.chat.openConversation(id), true);
    const turn = api.chat.current.turns[1];
    assert.equal(turn.status, 'interrupted');
    assert.equal(turn.text, 'The first half of an answer');
    assert.equal(turn.usage?.estimated, true);
    assert.equal(turn.owner, undefined);
    const counted = (await usageRecords()).filter((r) => r.id === requestId);
    assert.equal(counted.length, 1, 'one record for the interrupted request');
    assert.equal(await allTimeTotal(), before + counted[0].total);
    // Saved as interrupted: opening it again (a second reload, another window) counts nothing more.
    const onDisk = await api.history.load(id);
    assert.equal(onDisk?.turns[1].status, 'interrupted');
    assert.equal(onDisk?.turns[1].inflight, undefined);
    await api.chat.newChat();
    assert.equal(await api.chat.openConversation(id), true);
    assert.equal((await usageRecords()).filter((r) => r.id === requestId).length, 1);
    // Another window that recovered the same request before this one saved records it too: still counted once.
    await api.usage.record({ ...counted[0], at: Date.now() });
    assert.equal(await allTimeTotal(), before + counted[0].total);
  });

  test('a reply left streaming in a conversation that is not open is recovered from the history: Interrupted, counted once; a live one is left', async () => {
    const gone = `away${randomUUID().slice(0, 8)}`;
    const live = `busy${randomUUID().slice(0, 8)}`;
    const requestId = randomUUID();
    const a = conversation(gone, 'Left streaming by a reloaded window');
    a.turns[1] = orphanedReply(`${gone}-a`, 'Part of a reply', requestId, 30);
    const b = conversation(live, 'Streaming in another window');
    b.turns[1] = { id: `${live}-a`, role: 'assistant', text: 'Half', status: 'streaming', owner: { session: 'another-window', pid: process.ppid, hostname: hostname(), beat: Date.now() } };
    await api.history.save(a);
    await api.history.save(b);
    const listed = await api.history.list();
    assert.equal(listed.find((i) => i.id === gone)?.streaming, true, 'the entry says a reply was streaming');
    const before = await allTimeTotal();
    // The history list, as the panel asks for it: the orphan is recovered before the list is shown.
    await api.chat.files.postHistory();
    const onDisk = await api.history.load(gone);
    assert.equal(onDisk?.turns[1].status, 'interrupted');
    assert.equal(onDisk?.turns[1].text, 'Part of a reply');
    assert.equal(onDisk?.turns[1].usage?.estimated, true);
    assert.equal((await api.history.list()).find((i) => i.id === gone)?.streaming, undefined, 'its entry no longer says streaming');
    const counted = (await usageRecords()).filter((r) => r.id === requestId);
    assert.equal(counted.length, 1, 'one record for the interrupted request');
    assert.equal(await allTimeTotal(), before + counted[0].total);
    assert.equal((await api.history.load(live))?.turns[1].status, 'streaming', "a live window's reply is left alone");
    // Again (another window, a later activation): nothing more is counted.
    assert.equal(await api.chat.files.recoverOthers(), false);
    assert.equal((await usageRecords()).filter((r) => r.id === requestId).length, 1);
    await api.history.delete(live);
  });

  test('a reply that a live window is streaming is left alone', async () => {
    const id = `live${randomUUID().slice(0, 8)}`;
    const c = conversation(id, 'Still streaming elsewhere');
    // The parent of this extension host runs: as another window's extension host would.
    c.turns[1] = {
      id: `${id}-a`, role: 'assistant', text: 'Half', status: 'streaming',
      owner: { session: 'another-window', pid: process.ppid, hostname: hostname(), beat: Date.now() },
    };
    await api.history.save(c);
    assert.equal(await api.chat.openConversation(id), true);
    assert.equal(api.chat.current.turns[1].status, 'streaming');
    assert.equal((await api.history.load(id))?.turns[1].status, 'streaming', 'nothing was written over it');
  });

  test('a streaming reply is on disk, with its owner and in-flight request, before it ends; the request is counted under that id', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    script = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('Saved while streaming'))}\n\n`);
      await hold;
      for (const e of [chunk(' and finished', 'stop'), usageChunk(7, 5)]) res.write(`data: ${JSON.stringify(e)}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    const asking = api.chat.send('Stream slowly', []);
    const id = await waitFor('the conversation id', () => api.chat.current.turns.length === 2 && api.chat.current.id);
    const onDisk = await waitFor('the partial reply saved while it streams', async () => {
      const c = await api.history.load(id);
      return c?.turns[1]?.text.includes('Saved while streaming') && c;
    }, 15_000);
    const streaming = onDisk.turns[1];
    assert.equal(streaming.status, 'streaming');
    assert.equal(streaming.owner?.pid, process.pid);
    assert.ok(streaming.inflight?.id, 'the in-flight request is saved with its id');
    release();
    await asking;
    const done = await api.history.load(id);
    assert.equal(done?.turns[1].status, 'done');
    assert.equal(done?.turns[1].text, 'Saved while streaming and finished');
    assert.equal(done?.turns[1].owner, undefined);
    assert.equal(done?.turns[1].inflight, undefined);
    const records = (await usageRecords()).filter((r) => r.id === streaming.inflight?.id);
    assert.deepEqual(records.map((r) => [r.total, r.estimated]), [[12, false]]);
  });

  test('images are kept in files of their own, written once; the conversation file names them; a missing one is said', async () => {
    const png = (n: number) => `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, n, n, n]).toString('base64')}`;
    const id = `img${randomUUID().slice(0, 8)}`;
    const c = conversation(id, 'With images');
    c.turns[0].images = [{ name: 'a.png', dataUrl: png(1) }, { name: 'b.png', dataUrl: png(2) }];
    await api.history.save(c);
    const text = await fs.readFile(join(dir, `${id}.json`), 'utf8');
    assert.ok(!text.includes(png(1).slice(22)), 'no image data in the conversation file');
    const files = await fs.readdir(join(dir, 'images'));
    const named = [...text.matchAll(/"ref":"([0-9a-f]{64}\.png)"/g)].map((m) => m[1]);
    assert.equal(named.length, 2);
    for (const f of named) assert.ok(files.includes(f), `${f} is in images/`);
    const loaded = await api.history.load(id);
    assert.deepEqual(loaded?.turns[0].images, c.turns[0].images, 'the images come back whole');
    await fs.rm(join(dir, 'images', named[1]));
    const without = await api.history.load(id);
    assert.deepEqual(without?.turns[0].images?.map((i) => i.name), ['a.png']);
    assert.match(without?.turns[0].note ?? '', /b\.png is missing/);
  });

  test('deleting a conversation deletes its images that no other conversation names; a shared one stays; old temporary files go', async () => {
    const png = (n: number) => `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7, n, 7]).toString('base64')}`;
    const a = conversation(`dela${randomUUID().slice(0, 8)}`, 'Deleted with its screenshot');
    const b = conversation(`keep${randomUUID().slice(0, 8)}`, 'Shares one image');
    a.turns[0].images = [{ name: 'only-a.png', dataUrl: png(1) }, { name: 'shared.png', dataUrl: png(2) }];
    b.turns[0].images = [{ name: 'shared.png', dataUrl: png(2) }];
    await api.history.save(a);
    await api.history.save(b);
    const refs = [...(await fs.readFile(join(dir, `${a.id}.json`), 'utf8')).matchAll(/"ref":"([0-9a-f]{64}\.png)"/g)].map((m) => m[1]);
    assert.equal(refs.length, 2);
    // A write a crash cut short, long ago, and one another window may be making now.
    const old = join(dir, `${b.id}.json.0123456789ab.tmp`);
    const young = join(dir, `${b.id}.json.ba9876543210.tmp`);
    await fs.writeFile(old, '{"half');
    await fs.writeFile(young, '{"half');
    const past = new Date(Date.now() - 5 * 60_000);
    await fs.utimes(old, past, past);
    await api.chat.deleteConversation(a.id);
    const images = await fs.readdir(join(dir, 'images'));
    assert.ok(!images.includes(refs[0]), 'the deleted conversation\'s own image is gone');
    assert.ok(images.includes(refs[1]), 'the image another conversation names stays');
    assert.deepEqual((await api.history.load(b.id))?.turns[0].images, b.turns[0].images);
    await waitFor('the old temporary file to go', async () => !(await fs.stat(old).then(() => true, () => false)), 10_000);
    assert.ok(await fs.stat(young).then(() => true, () => false), 'a young temporary file is left for its writer');
    await fs.rm(young, { force: true });
    await api.history.delete(b.id);
    assert.ok(!(await fs.readdir(join(dir, 'images'))).includes(refs[1]), 'the shared image goes with the last conversation naming it');
  });

  test('storage that cannot be written: a clear notice, the conversation stays in memory, and a later save says it works again', async () => {
    script = (_req, res) => writeSse(res, [chunk('Kept in memory'), chunk('', 'stop'), usageChunk(3, 2)]);
    // Works as root too (chmod does not stop root): the conversations folder is a file, so nothing can be made in it.
    await fs.rm(dir, { recursive: true, force: true });
    await fs.writeFile(dir, 'not a folder');
    try {
      api.recorded.posted.length = 0;
      await api.chat.send('Remember this anyway', []);
      const notice = api.recorded.posted.find((m) => m.type === 'notice' && m.text.startsWith("Parley can't save this conversation"));
      assert.ok(notice?.type === 'notice', 'the panel says the conversation is not saved');
      assert.match(notice.text, /storage folder is not a folder any more\. It stays open in this window/);
      assert.equal(api.recorded.posted.filter((m) => m.type === 'notice' && m.text.startsWith("Parley can't save")).length, 1, 'said once, not per save');
      assert.deepEqual(api.chat.current.turns.map((t) => t.text), ['Remember this anyway', 'Kept in memory']);
    } finally {
      await fs.rm(dir, { force: true });
    }
    api.recorded.posted.length = 0;
    await api.chat.send('And this', []);
    assert.ok(api.recorded.posted.some((m) => m.type === 'notice' && m.text === 'Parley can save again: this conversation is saved.'));
    const saved = await api.history.load(api.chat.current.id);
    assert.deepEqual(saved?.turns.map((t) => t.text), ['Remember this anyway', 'Kept in memory', 'And this', 'Kept in memory']);
  });
});
