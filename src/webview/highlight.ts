// Code highlighting for the webview, off its main thread: highlight.js runs in a worker (highlightWorker.ts). A
// block's code shows as plain text first; its highlighted nodes take that text's place when the worker answers.
import { requestFlushWithin } from './frame';
import type { CodeTree, HighlightReply, HighlightRequest } from './highlightWorker';

/**
 * The script that carries the worker's source (dist/highlightWorker.js), as the host names it on the page's own
 * script tag. It is loaded only when highlighting is first wanted, so the panel does not parse highlight.js (a third
 * of the bundle) before it is ready. Read now: `document.currentScript` is only set while the bundle first runs.
 */
const workerScript = (document.currentScript as HTMLScriptElement | null)?.dataset.highlightWorker;
const workerNonce = (document.currentScript as HTMLScriptElement | null)?.nonce;

declare global {
  interface Window {
    /** Set by dist/highlightWorker.js: the worker's bundled source (src/webview/highlightWorkerScript.ts). */
    parleyHighlightWorkerSource?: string;
  }
}

/** The worker once started; 'loading' while its script loads; null when it could not be (code stays plain text). */
let worker: Worker | 'loading' | null | undefined;
/** Requests made while the worker's script loads, sent once it has started. */
let queued: HighlightRequest[] = [];
let nextId = 1;
/** A request in flight: the block's key and language, and the Text nodes (one per render of it) its answer replaces. */
interface Waiting {
  key: string;
  lang: string;
  texts: Text[];
}
const inFlight = new Map<number, Waiting>();
const waitingByKey = new Map<string, Waiting>();
/** Languages the worker does not know: their code is plain text from the start. */
const unknownLanguages = new Set<string>();
/**
 * The blocks highlighted last, by language and code, most recent last. A block that is rendered again (the open
 * block of a streaming reply is, with each update, until the block after it starts) is a copy of these nodes.
 */
const highlighted = new Map<string, DocumentFragment>();
const HIGHLIGHTED_KEPT = 32;

/**
 * Starts the worker, ahead of the first code block: loads its script (with the page's nonce, so the policy needs
 * nothing more), then starts it from a blob: URL, the one way a webview can start a worker; it loads highlight.js on
 * its own thread.
 */
export function startHighlighter(): void {
  if (worker !== undefined) return;
  if (!workerScript) {
    stop('has no script (the page names none)');
    return;
  }
  worker = 'loading';
  const script = document.createElement('script');
  if (workerNonce) script.nonce = workerNonce;
  script.src = workerScript;
  script.onload = () => {
    script.remove();
    const source = window.parleyHighlightWorkerSource;
    if (typeof source === 'string') started(source);
    else stop('script did not load');
  };
  script.onerror = () => {
    script.remove();
    stop(`script could not be loaded from ${workerScript}`);
  };
  document.head.append(script);
}

function started(source: string): void {
  if (worker !== 'loading') return;
  try {
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    const w = new Worker(url, { name: 'parley-highlight' });
    w.onmessage = (e: MessageEvent<HighlightReply>) => answered(e.data);
    w.onerror = (e) => stop(`failed: ${e.message}`);
    worker = w;
    for (const request of queued.splice(0)) w.postMessage(request);
  } catch (err) {
    stop(`could not start: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** No highlighting in this page from now on: code waiting for it keeps its plain text. */
function stop(why: string): void {
  console.warn(`Parley: code is shown without highlighting; the highlighting worker ${why}`);
  if (worker && worker !== 'loading') worker.terminate();
  worker = null;
  queued = [];
  inFlight.clear();
  waitingByKey.clear();
}

/**
 * The code of a block: its highlighted nodes when this code was highlighted lately, otherwise a Text node that they
 * replace (wherever it is in the page then) once the worker has highlighted it. No language: plain text.
 */
export function codeNodes(code: string, lang: string): Node {
  if (lang && !unknownLanguages.has(lang)) {
    const key = `${lang}\n${code}`;
    const nodes = highlighted.get(key);
    if (nodes) {
      highlighted.delete(key);
      highlighted.set(key, nodes);
      return nodes.cloneNode(true);
    }
    startHighlighter();
    if (worker) {
      const text = document.createTextNode(code);
      const waiting = waitingByKey.get(key);
      if (waiting) {
        waiting.texts.push(text);
      } else {
        const id = nextId++;
        const entry = { key, lang, texts: [text] };
        inFlight.set(id, entry);
        waitingByKey.set(key, entry);
        const request: HighlightRequest = { id, lang, code };
        if (worker === 'loading') queued.push(request);
        else worker.postMessage(request);
      }
      return text;
    }
  }
  return document.createTextNode(code);
}

/**
 * Answers whose nodes are built, put in the page together with the streaming reply's next update (at most
 * APPLY_WITHIN_MS on, ~8 updates a second come in a fast stream), so that the browser lays the page out once for
 * both rather than once more for each code block.
 */
const answers: { texts: Text[]; nodes: DocumentFragment }[] = [];
const APPLY_WITHIN_MS = 150;
const applier = {
  flush(): void {
    // The cached nodes stay as they are (for later renders of the block): the page gets copies.
    for (const { texts, nodes } of answers.splice(0)) {
      for (const text of texts.filter((t) => t.isConnected)) text.replaceWith(nodes.cloneNode(true));
    }
  },
};

function answered(reply: HighlightReply): void {
  const entry = inFlight.get(reply.id);
  if (!entry) return;
  inFlight.delete(reply.id);
  waitingByKey.delete(entry.key);
  if (reply.unknownLanguage) unknownLanguages.add(entry.lang);
  if (!reply.tree) return;
  const nodes = document.createDocumentFragment();
  build(reply.tree, nodes);
  if (highlighted.size >= HIGHLIGHTED_KEPT) highlighted.delete(highlighted.keys().next().value!);
  highlighted.set(entry.key, nodes);
  // Empty code (a fence that just opened, asked for its grammar) looks the same highlighted: nothing to put in.
  if (!reply.tree.length) return;
  answers.push({ texts: entry.texts, nodes });
  requestFlushWithin(applier, APPLY_WITHIN_MS);
}

/** The nodes for a tree from the worker: spans with its class names, and Text nodes. */
function build(tree: CodeTree, parent: Node): void {
  for (const piece of tree) {
    if (typeof piece === 'string') {
      parent.appendChild(document.createTextNode(piece));
    } else {
      const span = document.createElement('span');
      span.className = piece[0];
      build(piece[1], span);
      parent.appendChild(span);
    }
  }
}
