// Shared helpers for the suites that run inside the real extension host.
import { promises as fs, type Dirent } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import * as assert from 'node:assert/strict';
import type { TestApi } from '../../src/extension';
import type { ChatMessage } from '../../src/core/types';
import type { HeaderView, HostMessage } from '../../src/shared/protocol';
import type { ServerResponse } from 'node:http';
import { pollUntil } from '../support/pollUntil.mjs';
import { startTestServer, type RecordedRequest, type TestServer } from '../support/server';

export const EXTENSION_ID = 'parley.parley';

/** The last message of `type` the host posted to the view. */
export function lastPosted<T extends HostMessage['type']>(api: TestApi, type: T): Extract<HostMessage, { type: T }> | undefined {
  return [...api.recorded.posted].reverse().find((m): m is Extract<HostMessage, { type: T }> => m.type === type);
}

/** Delivers a message as if the webview had sent it: validated and routed by the real ChatViewProvider. */
export function viewReceive(api: TestApi, message: Record<string, unknown>): Promise<void> {
  const view = api.view as unknown as { receive?: (raw: unknown) => Promise<void> };
  assert.equal(typeof view.receive, 'function', 'ChatViewProvider routes webview messages through receive()');
  return view.receive!.call(api.view, message);
}

/** A Memento in memory, so a HistoryStore of a test's own never touches the real state. */
export function memoryMemento(): vscode.Memento {
  const m = new Map<string, unknown>();
  return {
    keys: () => [...m.keys()],
    get: (key: string, fallback?: unknown) => (m.has(key) ? m.get(key) : fallback),
    update: async (key: string, value: unknown) => {
      m.set(key, value);
    },
  } as vscode.Memento;
}

/** Reverts every unsaved file editor (edits a test accepted are never saved), then closes all editors. */
export async function revertAndCloseEditors(): Promise<void> {
  for (const doc of vscode.workspace.textDocuments) {
    if (doc.isDirty && doc.uri.scheme === 'file') {
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand('workbench.action.files.revert');
    }
  }
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

/** Activates Parley and returns its test API (only given in ExtensionMode.Test). */
export async function parley(): Promise<TestApi> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not installed in this host`);
  const api = (await ext.activate()) as TestApi | undefined;
  if (!api) throw new Error('Parley returned no test API: is the host running in extension test mode?');
  return api;
}

/** Opens Parley's chat view and waits for its snapshot (it may be open from an earlier suite, its first long gone). */
export async function openChatView(api: TestApi): Promise<void> {
  await vscode.commands.executeCommand('parley.openChat');
  await waitFor('the chat view to be ready', async () => {
    await api.chat.snapshot();
    return api.recorded.posted.some((m) => m.type === 'snapshot');
  }, 20_000);
}

/** The local servers a suite starts (`start`), kept in `started` so that its teardown closes them. */
export function serverPool(): { started: TestServer[]; start(handler: Reply): Promise<TestServer> } {
  const started: TestServer[] = [];
  return {
    started,
    async start(handler) {
      const s = await startTestServer(handler);
      started.push(s);
      return s;
    },
  };
}

/** Waits for a condition (polled every 25 ms), failing with what was awaited. */
export function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  return pollUntil(what, check, timeoutMs, 25);
}

/** Sets user-level settings and waits until they read back. */
export async function userSettings(values: Record<string, unknown>): Promise<void> {
  const c = vscode.workspace.getConfiguration('parley');
  for (const [k, v] of Object.entries(values)) await c.update(k, v, vscode.ConfigurationTarget.Global);
}

/** The user-level values of `keys`, read by `save` (in a suite's set-up) and put back by `restore` (in its teardown). */
export function keptUserSettings(keys: readonly string[]): { save(): void; restore(): Promise<void> } {
  const saved = new Map<string, unknown>();
  const c = () => vscode.workspace.getConfiguration('parley');
  return {
    save: () => keys.forEach((k) => saved.set(k, c().inspect(k)?.globalValue)),
    restore: async () => {
      for (const k of keys) await c().update(k, saved.get(k), vscode.ConfigurationTarget.Global);
    },
  };
}

/** A chunk as OpenAI streams it. */
export function chunk(content: string, finish: string | null = null): object {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'test-model', choices: [{ index: 0, delta: { content }, finish_reason: finish }] };
}

export function usageChunk(prompt: number, completion: number): object {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'test-model', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
}

/** Writes an SSE response: each event as `data: JSON`, then [DONE]. */
export function writeSse(res: ServerResponse, events: object[], done = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
  if (done) res.write('data: [DONE]\n\n');
  res.end();
}

export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Every string value in a JSON-able structure, flattened, for secret scans. */
export function containsSecret(value: unknown, secret: string): boolean {
  return JSON.stringify(value ?? null).includes(secret);
}

/** Chat requests only: GET /models also reaches a server when the panel header refreshes its model list. */
export function chats(s: TestServer): RecordedRequest[] {
  return s.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions'));
}

/** Every file under dir, recursively (e.g. the window's log folder); none when it does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

/**
 * Every log file of this window (the output channels' included), with its text. VS Code writes them with a delay:
 * callers wait for the line they expect before concluding anything from what is missing.
 */
export async function windowLogs(api: TestApi): Promise<Array<{ file: string; text: string }>> {
  const root = path.resolve(api.context.logUri.fsPath, '..', '..');
  return Promise.all((await filesUnder(root)).map(async (file) => ({ file, text: await fs.readFile(file, 'utf8').catch(() => '') })));
}

/** The header the panel gets when the endpoint is looked at again. */
export async function headerNow(api: TestApi): Promise<HeaderView> {
  api.recorded.posted.length = 0;
  await api.chat.views.endpointChanged();
  const m = await waitFor('a header message', () => api.recorded.posted.find((p) => p.type === 'header'));
  assert.ok(m.type === 'header');
  return m.header;
}

/** What a scripted test server sends back for one request. */
export type Reply = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** A streamed reply with one tool call per entry. */
export function callReply(...calls: Array<[id: string, name: string, args: object]>): Reply {
  return (_req, res) => writeSse(res, [
    ...calls.map(([id, name, args], index) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index, id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, finish_reason: null }] })),
    { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    usageChunk(100, 10),
  ]);
}

/** A streamed reply of one text chunk that ends the turn. */
export function textReply(text: string): Reply {
  return (_req, res) => writeSse(res, [
    { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] },
    usageChunk(200, 5),
  ]);
}

/** The characters of every message's text: what the compaction test servers count against their limit. */
export function charsOf(messages: ChatMessage[]): number {
  return messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content ?? '').length), 0);
}

/** A long reply of about 1,500 characters of ordinary words, different for each n. */
export function longAnswer(n: number): string {
  let out = `Answer ${n}:`;
  while (out.length < 1500) out += ` point ${n} lorem ipsum dolor sit amet`;
  return out;
}
