// Markdown -> sanitized DOM for model output: markdown-it (no raw HTML), then DOMPurify; code highlighted by
// highlight.js straight into DOM nodes.
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import type { Emitter } from 'highlight.js';
import { languages } from './languages';

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

/** Per-render state shared with the link renderers (rendering is synchronous, so one is enough). */
const linkStack: boolean[] = [];

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * highlight.js's output built as DOM (spans and text nodes) rather than as HTML: the code is never parsed as
 * markup, so it needs no sanitising, which is most of the cost of rendering a highlighted block. highlight.js
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

/** The code of a block, highlighted when its language is known: spans and text, nothing parsed. */
export function codeNodes(code: string, lang: string): Node {
  if (lang && hljs.getLanguage(lang)) {
    try {
      const result = hljs.highlight(code, { language: lang, ignoreIllegals: true });
      if (!result.errorRaised && !result.illegal) return (result._emitter as DomEmitter).root;
    } catch {
      // fall through to plain text
    }
  }
  return document.createTextNode(code);
}

/** The code of each block in the render under way, in order; put into the sanitised blocks by fillCode. */
const pendingCode: { code: string; lang: string }[] = [];

/** Fills each code block's empty <code> (in document order, the order the renderer met them) with its code. */
function fillCode(fragment: DocumentFragment): void {
  const codes = fragment.querySelectorAll('.code-block > pre > code');
  codes.forEach((el, i) => {
    const block = pendingCode[i];
    if (block) el.replaceChildren(codeNodes(block.code, block.lang));
  });
  pendingCode.length = 0;
}

/**
 * The code-block frame: toolbar buttons carry only an action name; the code itself is read back from
 * the <code> element when a button is pressed, so nothing model-controlled lands in an attribute but the language.
 * The <code> is empty here: fillCode puts the code in after sanitising, as nodes.
 */
function codeBlock(code: string, lang: string): string {
  pendingCode.push({ code, lang });
  const safeLang = escapeHtml(lang);
  return (
    `<div class="code-block" data-lang="${safeLang}">` +
    `<div class="code-toolbar"><span class="code-lang">${safeLang || 'text'}</span>` +
    `<button type="button" class="code-btn" data-act="copy" aria-label="Copy code">Copy</button>` +
    `<button type="button" class="code-btn" data-act="insert" aria-label="Insert at Cursor">Insert</button>` +
    `<button type="button" class="code-btn" data-act="open" aria-label="Open in New Editor">Open</button>` +
    `</div><pre><code class="hljs"></code></pre></div>`
  );
}

/** A code block's language, from its fence's info string (unescaped): the first word, lower-cased. */
export function fenceLanguage(info: string): string {
  return (info.trim().split(/\s+/)[0] ?? '').toLowerCase().slice(0, 40);
}

function createMarkdown(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
  md.linkify.set({ fuzzyEmail: false });
  // Every link target is accepted by the parser so that the renderer can decide: unsafe targets keep
  // their text and lose the anchor, rather than showing raw Markdown syntax.
  md.validateLink = () => true;

  md.renderer.rules.fence = (tokens, idx) => {
    const token = tokens[idx];
    return codeBlock(token.content, fenceLanguage(token.info ? md.utils.unescapeAll(token.info) : ''));
  };
  md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx].content, '');

  md.renderer.rules.link_open = (tokens, idx) => {
    const href = tokens[idx].attrGet('href') ?? '';
    const safe = isWebUrl(href) && linkStack.length === 0;
    linkStack.push(safe);
    if (!safe) return '';
    return `<a href="${escapeHtml(href)}" title="${escapeHtml(href)}">`;
  };
  md.renderer.rules.link_close = () => (linkStack.pop() ? '</a>' : '');

  // Images are never fetched: a remote one becomes a link, anything else (data:, relative) its alt text.
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const src = token.attrGet('src') ?? '';
    const alt = self.renderInlineAsText(token.children ?? [], options, env);
    const label = `Image: ${alt || 'untitled'}`;
    if (isWebUrl(src) && !linkStack.includes(true)) {
      return `<a href="${escapeHtml(src)}" class="img-link" title="${escapeHtml(src)}">${escapeHtml(label)}</a>`;
    }
    return `<span class="img-alt">${escapeHtml(label)}</span>`;
  };

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

const PURIFY_CONFIG = {
  ALLOWED_TAGS: [
    'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'code', 'pre', 'blockquote',
    'ul', 'ol', 'li', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span', 'div', 'button',
  ],
  ALLOWED_ATTR: ['href', 'title', 'class', 'start', 'type', 'aria-label', 'data-act', 'data-lang'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  // Only http(s) for href; the attributes below carry no URL and skip that check.
  ALLOWED_URI_REGEXP: /^https?:\/\//i,
  ADD_URI_SAFE_ATTR: ['type', 'start', 'aria-label', 'data-act', 'data-lang'],
  FORBID_ATTR: ['style'],
  RETURN_DOM_FRAGMENT: true as const,
};
// Set once: parsing the configuration on every call costs more than sanitising a small block.
DOMPurify.setConfig(PURIFY_CONFIG);

/** Renders untrusted Markdown to a sanitized fragment. `env` carries reference definitions between calls. */
export function renderMarkdown(src: string, env: object = {}): DocumentFragment {
  return renderMarkdownBlocks(src, env).fragment;
}

/**
 * Like renderMarkdown, and also returns where each top-level block starts in `src` (char offsets).
 * markdown-it renders each top-level block as one top-level element, so these line up with the fragment's
 * element children; the streaming renderer relies on that to keep nodes it already rendered.
 */
export function renderMarkdownBlocks(src: string, env: object = {}): { fragment: DocumentFragment; starts: number[] } {
  linkStack.length = 0;
  pendingCode.length = 0;
  let html: string;
  let starts: number[] = [];
  try {
    const tokens = md.parse(src, env);
    html = md.renderer.render(tokens, md.options, env);
    starts = blockStarts(tokens, src);
  } catch {
    // Never expected; if the parser gives up, the reader still gets the text.
    html = `<pre class="md-fallback">${escapeHtml(src)}</pre>`;
  }
  const fragment = DOMPurify.sanitize(html) as unknown as DocumentFragment;
  fillCode(fragment);
  return { fragment, starts };
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
