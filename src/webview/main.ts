// Webview entry: builds the panel, routes host messages to it (hostRoutes.ts) and turns clicks into protocol messages.
import { routeMessage } from '../shared/messageTable';
import type { HostMessage } from '../shared/protocol';
import { Composer } from './composer';
import { h } from './dom';
import { hostRoutes } from './hostRoutes';
import { isWebUrl } from './markdown';
import { warmUp } from './markdownStream';
import { Header, HistoryView, noticeBar, setupCard } from './panels';
import { Transcript } from './transcript';
import { post } from './vscodeApi';

// Marks for bench/latency.mjs's stages (BENCH_STAGES=1): the script begun, ready posted, the first snapshot in and drawn.
performance.mark('parley:script');
const transcript = new Transcript();
const composer = new Composer();
const history = new HistoryView(() => showChat());
const header = new Header(() => post({ type: 'requestHistory' }));
const setupSlot = h('div', { class: 'setup-slot' });
const noticeSlot = h('div', { class: 'notice-slot' });
const chat = h('main', { class: 'chat' },
  setupSlot,
  h('div', { class: 'scroll-area' }, transcript.el, transcript.jumpButton),
  noticeSlot,
  composer.el);
let generating = false;
/** Whether the renderer's warm-up was started: once, after the first snapshot has painted. */
let warming = false;

document.body.append(header.el, history.el, chat, transcript.announcer.el);

function showChat(): void {
  history.hide();
  chat.classList.remove('hidden');
  composer.focus();
}

function setGenerating(value: boolean): void {
  generating = value;
  document.body.classList.toggle('generating', value);
  composer.setGenerating(value);
}

/** Draws a snapshot; the first one also marks its stages and, once it has painted, tells the host and warms up. */
function drawSnapshot(draw: () => void): void {
  if (warming) return draw();
  performance.mark('parley:snapshot');
  draw();
  performance.mark('parley:drawn');
  warming = true;
  // After the frame that paints the host's first snapshot (a task after the frame callback): the host's slower work for
  // the panel (the model list), the warm-up's work and the highlighting worker's script it loads never delay the panel
  // getting ready.
  requestAnimationFrame(() => setTimeout(() => {
    post({ type: 'drawn' });
    warmUp();
  }, 0));
}

const routes = hostRoutes({
  transcript,
  composer,
  header,
  drawSnapshot,
  setGenerating,
  renderSetup: (setup) => setupSlot.replaceChildren(...(setup ? [setupCard(setup)] : [])),
  showNotice: (text, actions) => noticeSlot.replaceChildren(noticeBar(text, actions, () => noticeSlot.replaceChildren())),
  showChat,
  showHistory: (items) => {
    chat.classList.add('hidden');
    history.show(items);
  },
});

window.addEventListener('message', (event: MessageEvent) => {
  const msg = event.data as HostMessage | undefined;
  if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') return;
  routeMessage(routes, msg, undefined);
});

/**
 * The last line of what precedes a code block in its reply (a streamed reply wraps its blocks in groups). Another code
 * block right before it is not a line of prose: its last line of code names no file for this one.
 */
function lineBefore(block: Element): string {
  for (let el: Element | null = block; el && !el.classList.contains('md'); el = el.parentElement) {
    const prev = el.previousElementSibling;
    if (!prev) continue;
    let last: Element = prev;
    while (!last.classList.contains('code-block') && last.lastElementChild) last = last.lastElementChild;
    return last.classList.contains('code-block') ? '' : (prev.textContent ?? '').trimEnd().split('\n').pop() ?? '';
  }
  return '';
}

// Code-block buttons: the code is read from the block itself, never from an attribute.
transcript.log.addEventListener('click', (e) => {
  const button = (e.target as Element).closest?.('.code-block button[data-act]');
  if (!button) return;
  const block = button.closest<HTMLElement>('.code-block');
  const code = block?.querySelector('code')?.textContent ?? '';
  const act = (button as HTMLElement).dataset.act;
  if (act === 'copy') {
    post({ type: 'copy', text: code });
    button.textContent = 'Copied';
    setTimeout(() => { button.textContent = 'Copy'; }, 1200);
  } else if (act === 'apply') {
    // The info string and the line before the block may name the file; the host reads them as plain data and checks
    // whatever path they name.
    post({ type: 'applyCode', code, info: block?.dataset.info ?? '', before: block ? lineBefore(block).slice(-1024) : '' });
  } else if (act === 'insert') {
    post({ type: 'insertCode', code });
  } else if (act === 'open') {
    post({ type: 'openCode', code, language: block?.dataset.lang ?? '' });
  }
});

// Links never navigate the webview: http(s) ones are opened by the host, anything else does nothing.
function onLinkActivate(e: MouseEvent): void {
  const a = (e.target as Element).closest?.('a[href]');
  if (!a) return;
  e.preventDefault();
  if (e.type === 'click' || e.button === 1) {
    const href = a.getAttribute('href') ?? '';
    if (isWebUrl(href)) post({ type: 'openLink', url: href });
  }
}
document.addEventListener('click', onLinkActivate);
document.addEventListener('auxclick', onLinkActivate);

document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || e.defaultPrevented) return;
  if (generating) {
    e.preventDefault();
    post({ type: 'stop' });
  } else if (history.visible) {
    e.preventDefault();
    showChat();
  }
});

// Dropping a file anywhere in the panel attaches it instead of letting the webview navigate to it.
document.addEventListener('dragover', (e) => e.preventDefault());
document.addEventListener('drop', (e) => {
  if (e.defaultPrevented) return;
  e.preventDefault();
  if (e.dataTransfer?.files.length) composer.addFiles([...e.dataTransfer.files]);
});

performance.mark('parley:ready');
window.addEventListener('load', () => performance.mark('parley:load'));
post({ type: 'ready' });
