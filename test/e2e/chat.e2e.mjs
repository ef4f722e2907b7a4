// A person's view of Parley: key through the palette, a streamed answer, Stop, usage in the status bar, Explain (context
// menu and keybinding), Generate Code and its Cancel.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cannedCode } from '../../scripts/demo-endpoint.mjs';
import { hidden, step, visible, waitFor } from './harness.mjs';

export const title = 'Chat, editor commands and usage, as a person uses them';

const KEY = 'sk-e2e-0123456789abcdef';

/** The status bar's names of the language ids the demo endpoint's Generate Code answers in. */
const LANGUAGE_NAMES = { typescript: 'TypeScript', python: 'Python' };

/** The demo endpoint answers only with this key, so the first question shows the key error card. */
export const workbench = { workspace: 'basic', endpoint: { requireKey: KEY, chunkDelayMs: 25 } };

export const timeoutMs = 90_000;

async function ask(chat, text) {
  const box = chat.getByRole('combobox', { name: 'Message Parley' });
  await visible(box, 'the composer');
  await step('typing the question', () => box.fill(text));
  await step('pressing Enter', () => box.press('Enter'));
}

function lastReply(chat) {
  return chat.locator('article[aria-label="Parley"]').last();
}

/** The text of the last reply's body (not its "Parley" heading). */
async function replyText(chat) {
  return (await lastReply(chat).locator('.turn-body').innerText()).trim();
}

export const tests = {
  async 'a question without a key shows the key error card'(wb) {
    const chat = await wb.openParleyView();
    await ask(chat, 'Hello there');
    await visible(lastReply(chat).getByRole('button', { name: 'Set API Key' }), 'the Set API Key button on the error card');
    await wb.screenshot('chat-error-card');
  },

  async 'the API key is set through the command palette and a password input'(wb) {
    await wb.runCommand('Parley: Set API Key');
    const input = wb.page.locator('.quick-input-widget .quick-input-box input');
    await visible(input, 'the API key input');
    const type = await input.first().getAttribute('type');
    if (type !== 'password') throw new Error(`the key input is type="${type}", expected a password input`);
    await visible(wb.page.locator('.quick-input-widget').getByText('127.0.0.1', { exact: false }), 'the origin named in the key prompt');
    await wb.answerInput(KEY);
    await visible(wb.notification('API key stored'), 'the "API key stored" notification');
  },

  async 'Retry streams the answer, rendered as Markdown with a highlighted code block'(wb) {
    const chat = wb.chatFrame();
    await step('clicking Retry on the error card', () => lastReply(chat).getByRole('button', { name: 'Retry' }).first().click());
    const reply = lastReply(chat);
    await visible(reply.locator('pre code'), 'a code block in the streamed answer', 30_000);
    await visible(reply.getByRole('button', { name: /Insert at Cursor/i }), 'the Insert at Cursor button of the code block');
    await hidden(chat.getByRole('button', { name: 'Stop' }), 'the Stop button (the reply finished)', 30_000);
    const auth = wb.endpoint.requests.at(-1)?.headers.authorization;
    if (auth !== `Bearer ${KEY}`) throw new Error('the retried request did not carry the key that was set');
    await visible(reply.locator('pre code .hljs-keyword').first(), 'highlighting in the code block', 10_000);
    await wb.screenshot('chat-answer-code-block');
  },

  async 'the status bar shows the usage the server reported'(wb) {
    const item = wb.statusBarItem('Parley usage');
    await visible(item, 'the Parley usage status bar item');
    const label = await item.first().locator('[aria-label]').first().getAttribute('aria-label').catch(() => null) ?? (await item.first().getAttribute('aria-label'));
    if (!/^Parley usage: last request [\d,]+ tokens$/.test(label ?? '')) throw new Error(`status bar label is "${label}"`);
    await step('hovering the usage item', () => item.first().hover());
    await visible(wb.page.locator('.monaco-hover, .workbench-hover').getByText('Last request', { exact: false }), 'the usage tooltip');
    await wb.screenshot('status-bar-tooltip', { keepHover: true });
    await wb.page.keyboard.press('Escape');
    await wb.page.mouse.move(800, 300);
  },

  async 'Stop mid-stream keeps the partial answer, marked Stopped, with an estimate in the status bar'(wb) {
    wb.endpoint.options.chunkDelayMs = 300;
    try {
      const chat = wb.chatFrame();
      await ask(chat, 'Tell me something long');
      const stop = chat.getByRole('button', { name: 'Stop' });
      await visible(stop, 'the Stop button while the answer streams');
      await waitFor('some streamed text', async () => (await replyText(chat)).length > 40);
      await wb.screenshot('chat-mid-stream');
      await step('clicking Stop', () => stop.click());
      await visible(lastReply(chat).getByText('Stopped', { exact: true }), 'the Stopped badge');
      await visible(wb.statusBarItem('≈'), 'the estimated (≈) usage in the status bar');
      const text = await replyText(chat);
      if (!text.startsWith('A long answer')) throw new Error(`the partial answer was not kept: "${text.slice(0, 80)}"`);
      await wb.screenshot('chat-stopped');
    } finally {
      wb.endpoint.options.chunkDelayMs = 25;
    }
  },

  async 'the transcript is a log of articles labelled "You" and "Parley"'(wb) {
    const chat = wb.chatFrame();
    const log = chat.getByRole('log');
    await visible(log, 'the transcript (role="log")');
    if ((await log.count()) !== 1) throw new Error(`the panel has ${await log.count()} elements with role="log", expected one transcript`);
    const turns = await step('reading the turns of the transcript', () =>
      log.first().evaluate((el) => [...el.ownerDocument.querySelectorAll('[aria-label="You"], [aria-label="Parley"], article')].map((a) => ({ tag: a.tagName, label: a.getAttribute('aria-label'), inLog: el.contains(a) }))));
    // So far: the keyless question, its error card (retried in place), then "Tell me something long" and its stopped reply.
    const labels = turns.map((t) => t.label).join(', ');
    if (labels !== 'You, Parley, You, Parley') throw new Error(`the transcript's messages are labelled [${labels}], expected [You, Parley, You, Parley]`);
    const wrong = turns.filter((t) => t.tag !== 'ARTICLE' || !t.inLog);
    if (wrong.length) throw new Error(`messages that are not <article> elements inside the log: ${JSON.stringify(wrong)}`);
    await visible(log.getByRole('article', { name: 'You' }).filter({ hasText: 'Tell me something long' }), 'the question as an article named "You" in the log');
    await visible(log.getByRole('article', { name: 'Parley' }).filter({ hasText: 'A long answer' }), 'the reply as an article named "Parley" in the log');
  },

  async 'Ctrl+Alt+E explains the selection'(wb) {
    const before = wb.endpoint.requests.length;
    await wb.openFile('src/stats.py');
    await wb.selectAllInEditor();
    await wb.page.keyboard.press('Control+Alt+E');
    await expectExplained(wb, before, { file: 'stats.py', language: 'python' });
  },

  async 'Explain Selection is in the editor context menu only with a selection, and explains it from there'(wb) {
    await wb.openFile('src/greet.ts');
    // No selection: the entry is hidden (its "when" is editorHasSelection), Generate Code is there.
    await step('clicking into the editor, leaving no selection', () => wb.activeEditor().locator('.view-lines .view-line').first().click());
    await wb.openEditorContextMenu();
    await visible(wb.contextMenuItem('Generate Code'), 'Generate Code in the context menu');
    if (await wb.contextMenuItem('Explain Selection').count()) throw new Error('"Explain Selection" is in the context menu with no selection');
    await wb.page.keyboard.press('Escape');
    await hidden(wb.contextMenu(), 'the context menu');

    const before = wb.endpoint.requests.length;
    await wb.selectAllInEditor();
    await wb.openEditorContextMenu();
    const clicks = await wb.clickContextMenuItem('Explain Selection');
    if (clicks > 1) console.log(`      (the menu ignored ${clicks - 1} click(s) on the entry: its mouse-up timer ran late)`);
    await expectExplained(wb, before, { file: 'greet.ts', language: 'typescript' });
    await wb.screenshot('explain-selection');
  },

  async 'Generate Code opens a new untitled editor in the language the server returned, with its code'(wb) {
    const before = wb.endpoint.requests.length;
    const tabsBefore = await wb.editorTabs();
    await wb.runCommand('Parley: Generate Code');
    // The selection of greet.ts goes along as context; asking for Python makes the server answer in a language
    // other than the active editor's, so the new editor's language can only come from the reply.
    await wb.answerInput('a fizzbuzz function in Python', { prompt: 'Describe the code' });
    const request = await waitFor('the Generate Code request at the endpoint', () => wb.endpoint.requests.slice(before).find((r) => r.json?.response_format));
    if (request.json.response_format.type !== 'json_object') throw new Error(`response_format is ${JSON.stringify(request.json.response_format)}`);
    const returned = cannedCode(request.json.messages);
    if (returned.language !== 'python') throw new Error(`the demo endpoint answered in ${returned.language}: the test expects Python, unlike the active greet.ts`);
    await visible(wb.page.locator('.tabs-container .tab.active', { hasText: 'fizzbuzz' }), 'the fizzbuzz editor tab', 30_000);
    await waitFor('the generated code, and nothing else, in the new editor', async () => (await wb.activeEditorText()).trim() === returned.code.trim());

    const resource = await wb.activeEditorResource();
    if (!resource?.startsWith('untitled:')) throw new Error(`the generated code is in ${resource}, not an untitled document`);
    const tab = (await wb.editorTabs()).find((t) => t.active);
    if (tab?.resource !== returned.filename) throw new Error(`the new tab is ${JSON.stringify(tab)}, expected the suggested name ${returned.filename}`);
    if (!tab.dirty) throw new Error('the new untitled editor is not marked unsaved');
    if (tabsBefore.some((t) => t.resource === returned.filename)) throw new Error(`a ${returned.filename} tab was open before Generate Code`);
    if (existsSync(join(wb.folder, returned.filename))) throw new Error(`${returned.filename} was written to disk; it should stay untitled until saved`);
    await waitFor(`the status bar's language mode to be ${LANGUAGE_NAMES[returned.language]}`, async () => (await wb.languageStatus().first().innerText({ timeout: 500 })).trim() === LANGUAGE_NAMES[returned.language]);
    await wb.screenshot('generate-code');
  },

  async 'Cancel on the progress notification aborts Generate Code: the server sees the disconnect, no editor opens'(wb) {
    const held = [];
    wb.endpoint.options.respond = (request, res) => {
      if (!request.json?.response_format) return false;
      // Hold the reply, as a slow model would, and note when the client hangs up.
      const h = { request, res, closed: false };
      res.on('close', () => (h.closed = !res.writableEnded));
      held.push(h);
      return true;
    };
    try {
      const tabsBefore = await wb.editorTabs();
      await wb.runCommand('Parley: Generate Code');
      await wb.answerInput('a fizzbuzz function', { prompt: 'Describe the code' });
      await waitFor('the Generate Code request to reach the endpoint (held there)', () => held.length > 0);
      const progress = wb.notification('generating code');
      await visible(progress, 'the "generating code" progress notification');
      await step('clicking Cancel on the progress notification', () => progress.first().getByRole('button', { name: 'Cancel' }).click());
      await waitFor('the endpoint to see the client close the held connection', () => held[0].closed);
      await visible(wb.notification('code generation cancelled'), 'the "code generation cancelled" message');
      const tabsAfter = await wb.editorTabs();
      if (JSON.stringify(tabsAfter.map((t) => t.resource)) !== JSON.stringify(tabsBefore.map((t) => t.resource))) {
        throw new Error(`the editors changed after Cancel: before ${tabsBefore.map((t) => t.label).join(', ')}; after ${tabsAfter.map((t) => t.label).join(', ')}`);
      }
      if (held.length !== 1) throw new Error(`the endpoint got ${held.length} Generate Code requests; a cancelled one must not be retried`);
    } finally {
      wb.endpoint.options.respond = undefined;
      for (const h of held) h.res.destroy();
    }
  },
  async '"Parley: Stop" is in the command palette only while a reply streams (the parley.generating context key)'(wb) {
    const widget = wb.page.locator('.quick-input-widget');
    const input = widget.locator('.quick-input-box input');
    /** Opens the palette on ">Parley: Stop"; returns its entries for that exact command (disabled commands are left out). */
    const stopEntries = async () => {
      // F1 reaches the workbench from the chat view too. Not Escape first: in the chat view it means Stop.
      await wb.page.keyboard.press('F1');
      await visible(widget, 'the command palette');
      await step('typing ">Parley: Stop"', () => input.fill('>Parley: Stop'));
      await waitFor('the command palette to show what matches', async () => (await widget.locator('.monaco-list-row').count()) > 0 || (await widget.getByText('No matching commands').count()) > 0);
      const labels = await widget.locator('.monaco-list-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
      return labels.filter((l) => l === 'Parley: Stop' || l.startsWith('Parley: Stop,') || l.startsWith('Parley: Stop '));
    };
    const close = async () => {
      await wb.page.keyboard.press('Escape');
      await hidden(widget, 'the command palette');
    };
    const idle = await stopEntries();
    await close();
    if (idle.length !== 0) throw new Error('"Parley: Stop" is offered while nothing streams');
    wb.endpoint.options.chunkDelayMs = 300;
    try {
      const chat = await startLongReply(wb);
      const streaming = await stopEntries();
      if (streaming.length !== 1) {
        await close();
        throw new Error(`while the reply streams the command palette offers ${streaming.length} "Parley: Stop" entries, expected 1`);
      }
      await waitFor('"Parley: Stop" to be the selected entry', async () => (await widget.locator('.monaco-list-row.focused').first().getAttribute('aria-label'))?.startsWith('Parley: Stop'));
      await step('running "Parley: Stop" from the command palette', () => wb.page.keyboard.press('Enter'));
      await visible(lastReply(chat).getByText('Stopped', { exact: true }), 'the Stopped badge after "Parley: Stop"');
    } finally {
      wb.endpoint.options.chunkDelayMs = 25;
    }
    const after = await stopEntries();
    await close();
    if (after.length !== 0) throw new Error('"Parley: Stop" is still offered after the reply stopped');
  },
  async 'Escape in the chat view stops a streaming reply (the view handles it; there is no second route through a keybinding)'(wb) {
    wb.endpoint.options.chunkDelayMs = 300;
    try {
      const chat = await startLongReply(wb);
      await step('pressing Escape in the composer', () => chat.getByRole('combobox', { name: 'Message Parley' }).press('Escape'));
      await visible(lastReply(chat).getByText('Stopped', { exact: true }), 'the Stopped badge after Escape');
      await hidden(chat.getByRole('button', { name: 'Stop' }), 'the Stop button (the reply stopped)');
    } finally {
      wb.endpoint.options.chunkDelayMs = 25;
    }
  },
};

/** Asks for a long reply and returns the chat frame once some of it has streamed (the endpoint must be slowed first). */
async function startLongReply(wb) {
  const chat = wb.chatFrame();
  await ask(chat, 'Tell me something long');
  await visible(chat.getByRole('button', { name: 'Stop' }), 'the Stop button while the answer streams');
  await waitFor('some streamed text', async () => (await replyText(chat)).length > 20);
  return chat;
}

/** Waits for the Explain request of `file` and its answer in the chat. */
async function expectExplained(wb, before, { file, language }) {
  const request = await waitFor(`the Explain request for ${file} at the endpoint`, () => wb.endpoint.requests.slice(before).find((r) => r.json?.messages));
  const sent = JSON.stringify(request.json.messages);
  if (!sent.includes(file) || !sent.includes('```' + language)) throw new Error(`the request lacks the fenced ${language} selection of ${file}`);
  const chat = wb.chatFrame();
  await visible(chat.locator('article[aria-label="You"]').last().getByText(file, { exact: false }), `${file} named in the chat as the explained file`);
  await hidden(chat.getByRole('button', { name: 'Stop' }), 'the end of the explanation', 30_000);
  const answer = await replyText(chat);
  if (!answer.startsWith('This code defines')) throw new Error(`the explanation did not land in the chat: "${answer.slice(0, 80)}"`);
}
