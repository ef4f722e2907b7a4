// Markdown -> DOM for model output: markdown-it (raw HTML off) parses, and its tokens are built into nodes directly
// (model text only ever becomes Text nodes; no HTML is parsed); code is highlighted by highlight.js into nodes too.
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import hljs from 'highlight.js/lib/core';
import type { Emitter } from 'highlight.js';
import { languages } from './languages';
import { h } from './dom';
import { whenIdle } from './frame';

for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);

/** True for absolute http(s) URLs: the only links that become anchors (and that the host will open). */
export function isWebUrl(href: string): boolean {
  try {
    const u = new URL(href);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * highlight.js's output built as DOM (spans and text nodes) rather than as HTML: the code is never parsed as
 * markup, and nothing needs sanitising. highlight.js
 * calls these methods as it tokenises (its TokenTreeEmitter does the same into a tree, then into HTML); the
 * result has the same nodes as parsing the HTML it would have returned.
 */
class DomEmitter implements Emitter {
  readonly root = document.createDocumentFragment();
  private readonly stack: Node[] = [this.root];
  /** Text not yet added: adjacent pieces become one Text node, as they would when parsed from HTML. */
  private text = '';

  addText(text: string): void {
    this.text += text;
  }

  startScope(scope: string): void {
    this.flush();
    const span = document.createElement('span');
    span.className = scopeClass(scope);
    this.stack[this.stack.length - 1].appendChild(span);
    this.stack.push(span);
  }

  endScope(): void {
    this.flush();
    if (this.stack.length > 1) this.stack.pop();
  }

  // The older names highlight.js still calls for a mode's scope.
  openNode(scope: string): void {
    this.startScope(scope);
  }

  closeNode(): void {
    this.endScope();
  }

  /** Code in an embedded language, highlighted by another emitter: in a span named after the language, if known. */
  __addSublanguage(emitter: Emitter, name: string): void {
    this.flush();
    const sub = emitter as DomEmitter;
    sub.finalize();
    const top = this.stack[this.stack.length - 1];
    if (!name) {
      top.appendChild(sub.root);
      return;
    }
    const span = document.createElement('span');
    span.className = `language-${name}`;
    span.appendChild(sub.root);
    top.appendChild(span);
  }

  finalize(): boolean {
    this.flush();
    this.stack.length = 1;
    return true;
  }

  /** The HTML is never used: codeNodes takes `root`. */
  toHTML(): string {
    return '';
  }

  private flush(): void {
    if (!this.text) return;
    this.stack[this.stack.length - 1].appendChild(document.createTextNode(this.text));
    this.text = '';
  }
}

/** highlight.js's CSS class for a scope: "title.function" is "hljs-title function_" (as its HTML renderer has it). */
function scopeClass(scope: string): string {
  if (scope.startsWith('language:')) return `language-${scope.slice(9)}`;
  const [first, ...rest] = scope.split('.');
  return [`hljs-${first}`, ...rest.map((piece, i) => `${piece}${'_'.repeat(i + 1)}`)].join(' ');
}

hljs.configure({ __emitter: DomEmitter });

/**
 * The last few blocks highlighted, by language and code. While a reply streams, a finished code block can be
 * rendered again with the open block (until the block after it has a complete line); a copy of its nodes costs
 * far less than highlighting it again.
 */
const highlighted = new Map<string, Node>();
const HIGHLIGHTED_KEPT = 8;

/**
 * Languages that have highlighted code in this page. The first block in a language pays for compiling its
 * grammar and for V8 compiling the grammar's regular expressions: ~15 ms and ~6 ms for TypeScript, cold,
 * against ~2 ms for the same block later. So code in a language not used yet shows as plain text at first, and
 * is highlighted in place shortly after, in tasks of its own (highlightSoon): no update of the reply carries
 * that cost.
 */
const usedLanguages = new WeakSet<object>();
const compiledLanguages = new WeakSet<object>();
/** Code shown as plain text until its language is ready: the Text node, and the language. */
const waiting: { text: Text; lang: string }[] = [];
let soon = false;
/** Idle time (ms) that must be left for highlighting another waiting block in the same task. */
const IDLE_SPARE_MS = 8;

/** The code of a block, highlighted when its language is known: spans and text, nothing parsed. */
export function codeNodes(code: string, lang: string): Node {
  const language = lang ? hljs.getLanguage(lang) : undefined;
  if (!language) return document.createTextNode(code);
  const key = `${lang}\n${code}`;
  let nodes = highlighted.get(key);
  if (!nodes) {
    if (!usedLanguages.has(language)) {
      const text = document.createTextNode(code);
      waiting.push({ text, lang });
      highlightSoon();
      return text;
    }
    nodes = highlight(code, lang);
    if (highlighted.size >= HIGHLIGHTED_KEPT) highlighted.delete(highlighted.keys().next().value!);
    highlighted.set(key, nodes);
  }
  return nodes.cloneNode(true);
}

/**
 * Does the highlighting that codeNodes left for later, in idle tasks: compiling a language is a task of its own;
 * blocks still on the page are highlighted (their Text node replaced by the highlighted nodes, where it is) while
 * the idle period lasts, at least one per task. A block rendered again meanwhile is highlighted by that render
 * once its language has been used.
 */
function highlightSoon(): void {
  if (soon) return;
  soon = true;
  whenIdle((timeLeft) => {
    soon = false;
    const compiled = (w: { lang: string }) => compiledLanguages.has(hljs.getLanguage(w.lang)!);
    // Code no longer on the page still asks for its language to be compiled: it is about to be used.
    let kept = 0;
    for (const w of waiting) if (w.text.isConnected || !compiled(w)) waiting[kept++] = w;
    waiting.length = kept;
    if (waiting.length && !compiled(waiting[0])) {
      // An empty highlight compiles the grammar and nothing else.
      highlight('', waiting[0].lang);
      compiledLanguages.add(hljs.getLanguage(waiting[0].lang)!);
    } else {
      while (waiting.length) {
        const next = waiting.shift()!;
        if (next.text.isConnected) {
          usedLanguages.add(hljs.getLanguage(next.lang)!);
          next.text.replaceWith(codeNodes(next.text.data, next.lang));
        }
        if (!waiting.length || !compiled(waiting[0]) || timeLeft() <= IDLE_SPARE_MS) break;
      }
    }
    if (waiting.length) highlightSoon();
  }, 100);
}

function highlight(code: string, lang: string): Node {
  try {
    const result = hljs.highlight(code, { language: lang, ignoreIllegals: true });
    if (!result.errorRaised && !result.illegal) return (result._emitter as DomEmitter).root;
  } catch {
    // fall through to plain text
  }
  return document.createTextNode(code);
}

/** The toolbar every code block carries, cloned: buttons carry only an action name (the code is read from <code>). */
let toolbar: HTMLElement | undefined;

function codeToolbar(lang: string): HTMLElement {
  if (!toolbar) {
    toolbar = h('div', { class: 'code-toolbar' },
      h('span', { class: 'code-lang' }),
      h('button', { type: 'button', class: 'code-btn', 'data-act': 'copy', 'aria-label': 'Copy code' }, 'Copy'),
      h('button', { type: 'button', class: 'code-btn', 'data-act': 'insert', 'aria-label': 'Insert at Cursor' }, 'Insert'),
      h('button', { type: 'button', class: 'code-btn', 'data-act': 'open', 'aria-label': 'Open in New Editor' }, 'Open'));
  }
  const bar = toolbar.cloneNode(true) as HTMLElement;
  bar.firstChild!.textContent = lang || 'text';
  return bar;
}

/** A code block: the toolbar, then the code (highlighted when its language is known) in <pre><code>. */
function codeBlock(code: string, lang: string): HTMLElement {
  const block = h('div', { class: 'code-block', 'data-lang': lang }, codeToolbar(lang));
  block.append(h('pre', null, h('code', { class: 'hljs' }, codeNodes(code, lang))));
  return block;
}

/** A code block's language, from its fence's info string (unescaped): the first word, lower-cased. */
function fenceLanguage(info: string): string {
  return (info.trim().split(/\s+/)[0] ?? '').toLowerCase().slice(0, 40);
}

function createMarkdown(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
  md.linkify.set({ fuzzyEmail: false });
  // Every link target is accepted by the parser so that the renderer can decide: unsafe targets keep
  // their text and lose the anchor, rather than showing raw Markdown syntax.
  md.validateLink = () => true;

  // Table alignment arrives as style="text-align:…", which the CSP would refuse: make it a class.
  md.core.ruler.push('parley_align', (state) => {
    for (const t of state.tokens as Token[]) {
      if (t.type !== 'th_open' && t.type !== 'td_open') continue;
      const style = t.attrGet('style');
      if (!style) continue;
      t.attrs = (t.attrs ?? []).filter(([name]) => name !== 'style');
      const m = /text-align:(left|right|center)/.exec(style);
      if (m) t.attrJoin('class', `align-${m[1]}`);
    }
  });
  return md;
}

/** The one markdown-it instance; exported for the block splitter, which shares its parser. */
export const md = createMarkdown();

/** Renders untrusted Markdown to a fragment of inert nodes. `env` carries reference definitions between calls. */
export function renderMarkdown(src: string, env: object = {}): DocumentFragment {
  return renderMarkdownBlocks(src, env).fragment;
}

/**
 * Like renderMarkdown, and also returns where each top-level block starts in `src` (char offsets).
 * markdown-it renders each top-level block as one top-level element, so these line up with the fragment's
 * element children; the streaming renderer relies on that to keep nodes it already rendered.
 */
export function renderMarkdownBlocks(src: string, env: object = {}): { fragment: DocumentFragment; starts: number[] } {
  const fragment = document.createDocumentFragment();
  let starts: number[] = [];
  try {
    const tokens = md.parse(src, env);
    renderTokens(tokens, fragment, env);
    starts = blockStarts(tokens, src);
  } catch {
    // Never expected; if the parser gives up, the reader still gets the text.
    fragment.replaceChildren(h('pre', { class: 'md-fallback' }, src));
  }
  return { fragment, starts };
}

/**
 * The elements markdown-it's tokens may open, by tag. Anything else (none is expected: raw HTML is off) keeps its
 * content and loses its element.
 */
const TAGS = new Set([
  'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'blockquote', 'ul', 'ol', 'li',
  'table', 'thead', 'tbody', 'tr', 'th', 'td',
]);

/**
 * Builds the DOM for markdown-it's tokens, as its HTML renderer would render them with Parley's rules, but as
 * nodes: model text only ever becomes Text nodes, elements come from TAGS, and the only attributes set are an
 * ordered list's start, a table cell's alignment class and a checked http(s) link. Nothing is parsed as HTML,
 * so there is no markup to sanitise. Links: only absolute http(s) targets become anchors, never nested; the
 * others keep their text. Images are never fetched: a remote one becomes a link, anything else its alt text.
 */
function renderTokens(tokens: Token[], root: Node, env: object): void {
  const stack: Node[] = [root];
  /** For each open link: whether it became an anchor (which is on `stack`) or was dropped. */
  const links: boolean[] = [];
  const top = () => stack[stack.length - 1];
  const add = (node: Node) => top().appendChild(node);
  const walk = (list: Token[]) => {
    for (const t of list) {
      switch (t.type) {
        case 'inline':
          walk(t.children ?? []);
          break;
        case 'text':
          add(document.createTextNode(t.content));
          break;
        case 'softbreak':
          add(document.createTextNode('\n'));
          break;
        case 'hardbreak':
          add(document.createElement('br'));
          add(document.createTextNode('\n'));
          break;
        case 'code_inline':
          add(h('code', null, t.content));
          break;
        case 'fence':
          add(codeBlock(t.content, fenceLanguage(t.info ? md.utils.unescapeAll(t.info) : '')));
          break;
        case 'code_block':
          add(codeBlock(t.content, ''));
          break;
        case 'hr':
          add(document.createElement('hr'));
          break;
        case 'link_open': {
          const href = t.attrGet('href') ?? '';
          const safe = isWebUrl(href) && links.length === 0;
          links.push(safe);
          if (safe) stack.push(add(h('a', { href, title: href })));
          break;
        }
        case 'link_close':
          if (links.pop()) stack.pop();
          break;
        case 'image': {
          const src = t.attrGet('src') ?? '';
          const label = `Image: ${md.renderer.renderInlineAsText(t.children ?? [], md.options, env) || 'untitled'}`;
          add(isWebUrl(src) && !links.includes(true) ? h('a', { href: src, class: 'img-link', title: src }, label) : h('span', { class: 'img-alt' }, label));
          break;
        }
        default:
          if (t.nesting === 1) {
            // A tight list's paragraphs are hidden: their content goes straight into the item.
            if (t.hidden || !TAGS.has(t.tag)) {
              stack.push(top());
              break;
            }
            const el = document.createElement(t.tag);
            // The only class a token carries is a table cell's alignment (parley_align).
            const cls = t.attrGet('class');
            if (cls && /^align-(left|right|center)$/.test(cls)) el.className = cls;
            const start = t.type === 'ordered_list_open' ? t.attrGet('start') : null;
            if (start) el.setAttribute('start', start);
            stack.push(add(el));
          } else if (t.nesting === -1) {
            stack.pop();
          } else if (t.content) {
            // Nothing else is expected (raw HTML is off); whatever it is shows as text.
            add(document.createTextNode(t.content));
          }
      }
    }
  };
  walk(tokens);
}

const fenceFrames = new Map<string, DocumentFragment>();

/**
 * The rendering of a code fence's opening line alone (an empty code block: toolbar, <pre><code>), for a fence
 * whose code streams in as text. Cached by line: every fence in a language has the same frame.
 */
export function renderFenceFrame(openingLine: string): DocumentFragment {
  let frame = fenceFrames.get(openingLine);
  if (!frame) {
    frame = renderMarkdown(openingLine);
    if (fenceFrames.size >= 64) fenceFrames.clear();
    fenceFrames.set(openingLine, frame);
  }
  return frame.cloneNode(true) as DocumentFragment;
}

function blockStarts(tokens: Token[], src: string): number[] {
  const lines: number[] = [];
  for (const t of tokens) if (t.level === 0 && t.nesting !== -1 && t.map) lines.push(t.map[0]);
  const starts: number[] = [];
  let line = 0;
  let offset = 0;
  for (const target of lines) {
    while (line < target) {
      offset = src.indexOf('\n', offset) + 1;
      line++;
    }
    starts.push(offset);
  }
  return starts;
}
