// Markdown -> DOM for model output: markdown-it (raw HTML off) parses, and its tokens are built into nodes directly
// (model text only ever becomes Text nodes; no HTML is parsed); code is highlighted into nodes too (highlight.ts).
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { h, textNodes } from './dom';
import { codeNodes } from './highlight';

/** True for absolute http(s) URLs: the only links that become anchors (and that the host will open). */
export function isWebUrl(href: string): boolean {
  try {
    const u = new URL(href);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** The toolbar every code block carries, cloned: buttons carry only an action name (the code is read from <code>). */
let toolbar: HTMLElement | undefined;

function codeToolbar(lang: string): HTMLElement {
  if (!toolbar) {
    toolbar = h('div', { class: 'code-toolbar' },
      h('span', { class: 'code-lang' }),
      h('button', { type: 'button', class: 'code-btn', 'data-act': 'copy', 'aria-label': 'Copy code' }, 'Copy'),
      h('button', { type: 'button', class: 'code-btn', 'data-act': 'apply', 'aria-label': 'Apply to a file (review first)' }, 'Apply'),
      h('button', { type: 'button', class: 'code-btn', 'data-act': 'insert', 'aria-label': 'Insert at Cursor' }, 'Insert'),
      h('button', { type: 'button', class: 'code-btn', 'data-act': 'open', 'aria-label': 'Open in New Editor' }, 'Open'));
  }
  const bar = toolbar.cloneNode(true) as HTMLElement;
  bar.firstChild!.textContent = lang || 'text';
  return bar;
}

/**
 * A code block: the toolbar, then the code (highlighted when its language is known) in <pre><code>. The fence's info
 * string is kept as an attribute (plain data, for Apply, which reads a path from it).
 */
function codeBlock(code: string, lang: string, info = ''): HTMLElement {
  const block = h('div', { class: 'code-block', 'data-lang': lang, 'data-info': info.slice(0, 1024) || undefined }, codeToolbar(lang));
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

  // Past maxNesting (100 levels of quotes and lists) markdown-it drops the rest of the block unseen, yet Copy and
  // Export still have it: there, the rest of the block's source becomes one plain-text token instead.
  const tokenize = md.block.tokenize;
  md.block.tokenize = function (state, startLine, endLine) {
    // (maxNesting is an option of markdown-it's presets that its types leave out.)
    if (state.level < ((state.md.options as { maxNesting?: number }).maxNesting ?? 100)) {
      tokenize.call(this, state, startLine, endLine);
      return;
    }
    // The container's lines: up to the first line indented less than its content (a list item's `endLine` is the
    // end of the document). markdown-it's own loop stops there too, between blocks; it skipped to `endLine`.
    const line = state.skipEmptyLines(startLine);
    state.line = line;
    let end = line;
    for (let l = line; l < endLine && (state.isEmpty(l) || state.sCount[l] >= state.blkIndent); l++) {
      if (!state.isEmpty(l)) end = l + 1;
    }
    if (end === line) return;
    const token = state.push('parley_plain', '', 0);
    token.content = state.getLines(line, end, state.blkIndent, false);
    token.map = [line, end];
    token.block = true;
    state.line = end;
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

/** The elements that indent their content. */
const INDENTING = new Set(['blockquote', 'ul', 'ol']);
/**
 * How many of them nested still indent. Each takes ~23 px: a hundred (the parser's limit) would push their text far
 * out of the panel, where the reader never sees it although Copy copies it.
 */
const INDENTED = 8;

/**
 * Builds the DOM for markdown-it's tokens, as its HTML renderer would render them with Parley's rules, but as
 * nodes: model text only ever becomes Text nodes (a long unbroken run in a span of its own: dom.ts, textNodes),
 * elements come from TAGS, and the only attributes set are an ordered list's start, a table cell's alignment class,
 * the class of a deeply nested quote or list and a checked http(s) link. Nothing is parsed as HTML, so there is no
 * markup to sanitise. Links: only absolute http(s) targets become anchors, never nested; the others keep their text. Images are never fetched: a remote one becomes a link, anything else its alt text.
 */
function renderTokens(tokens: Token[], root: Node, env: object): void {
  new TokenRenderer(root, env).walk(tokens);
}

/** renderTokens' state while it walks: the open elements, the quotes and lists open, the links open. */
class TokenRenderer {
  private readonly stack: Node[];
  /** How many quotes and lists are open: past INDENTED of them, one more indents no further (class "deep"). */
  private indents = 0;
  /** For each open link: whether it became an anchor (which is on `stack`) or was dropped. */
  private readonly links: boolean[] = [];

  constructor(root: Node, private readonly env: object) {
    this.stack = [root];
  }

  walk(list: Token[]): void {
    for (const t of list) {
      if (t.type === 'inline') this.walk(t.children ?? []);
      else if (!this.leaf(t) && !this.link(t)) this.nest(t);
    }
  }

  private top(): Node {
    return this.stack[this.stack.length - 1];
  }

  private add<T extends Node>(node: T): T {
    return this.top().appendChild(node);
  }

  /** Text, breaks, code and rules; false when `t` is none of them. */
  private leaf(t: Token): boolean {
    switch (t.type) {
      case 'text':
        this.add(textNodes(t.content));
        return true;
      case 'softbreak':
        this.add(document.createTextNode('\n'));
        return true;
      case 'hardbreak':
        this.add(document.createElement('br'));
        this.add(document.createTextNode('\n'));
        return true;
      case 'code_inline':
        this.add(h('code', null, textNodes(t.content)));
        return true;
      case 'fence': {
        const info = t.info ? md.utils.unescapeAll(t.info) : '';
        this.add(codeBlock(t.content, fenceLanguage(info), info.trim()));
        return true;
      }
      case 'code_block':
        this.add(codeBlock(t.content, ''));
        return true;
      case 'parley_plain':
        // Source past the nesting limit, as it was written (createMarkdown).
        this.add(h('p', { class: 'md-plain' }, textNodes(t.content)));
        return true;
      case 'hr':
        this.add(document.createElement('hr'));
        return true;
      default:
        return false;
    }
  }

  /** Links and images; false when `t` is neither. */
  private link(t: Token): boolean {
    switch (t.type) {
      case 'link_open': {
        const href = t.attrGet('href') ?? '';
        const safe = isWebUrl(href) && this.links.length === 0;
        this.links.push(safe);
        if (safe) this.stack.push(this.add(h('a', { href, title: href })));
        return true;
      }
      case 'link_close':
        if (this.links.pop()) this.stack.pop();
        return true;
      case 'image': {
        const src = t.attrGet('src') ?? '';
        const label = `Image: ${md.renderer.renderInlineAsText(t.children ?? [], md.options, this.env) || 'untitled'}`;
        this.add(isWebUrl(src) && !this.links.includes(true) ? h('a', { href: src, class: 'img-link', title: src }, label) : h('span', { class: 'img-alt' }, label));
        return true;
      }
      default:
        return false;
    }
  }

  /** An element opening or closing, or (nothing else is expected) a token whose content shows as text. */
  private nest(t: Token): void {
    if (t.nesting === 1) {
      // A tight list's paragraphs are hidden: their content goes straight into the item.
      if (t.hidden || !TAGS.has(t.tag)) {
        this.stack.push(this.top());
        return;
      }
      const el = document.createElement(t.tag);
      if (INDENTING.has(t.tag) && ++this.indents > INDENTED) el.className = 'deep';
      // The only class a token carries is a table cell's alignment (parley_align).
      const cls = t.attrGet('class');
      if (cls && /^align-(left|right|center)$/.test(cls)) el.className = cls;
      const start = t.type === 'ordered_list_open' ? t.attrGet('start') : null;
      if (start) el.setAttribute('start', start);
      this.stack.push(this.add(el));
    } else if (t.nesting === -1) {
      if (INDENTING.has(t.tag)) this.indents--;
      this.stack.pop();
    } else if (t.content) {
      // Raw HTML is off; whatever it is shows as text.
      this.add(document.createTextNode(t.content));
    }
  }
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
