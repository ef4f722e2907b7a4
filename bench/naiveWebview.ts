// The render benchmark's baseline: the host posts the whole reply with every token (as Roo Code did) and the
// webview re-renders all of it from scratch, at most once per animation frame (the charitable version), with
// the same Markdown renderer and highlighter as the real webview. Never shipped.
import { renderMarkdown } from '../src/webview/markdown';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const md = document.createElement('div');
md.className = 'md';
const article = document.createElement('article');
article.className = 'turn assistant';
article.append(md);
const log = document.createElement('div');
log.className = 'log';
log.append(article);
const scroller = document.createElement('div');
scroller.className = 'scroller';
scroller.append(log);
const area = document.createElement('div');
area.className = 'scroll-area';
area.append(scroller);
const chat = document.createElement('main');
chat.className = 'chat';
chat.append(area);
document.body.append(chat);

let latest: string | undefined;
window.addEventListener('message', (event: MessageEvent) => {
  const msg = event.data as { type?: string; text?: string };
  if (msg?.type !== 'update' || typeof msg.text !== 'string') return;
  if (latest === undefined) requestAnimationFrame(render);
  latest = msg.text;
});

function render(): void {
  md.replaceChildren(renderMarkdown(latest ?? ''));
  latest = undefined;
  scroller.scrollTop = scroller.scrollHeight;
}

acquireVsCodeApi().postMessage({ type: 'ready' });
