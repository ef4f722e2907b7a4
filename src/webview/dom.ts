// Small DOM helpers: every element the webview builds from data goes through these, so text stays text.

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;

/**
 * Creates an element. `class` sets className, `on<event>` functions become listeners, `true` booleans
 * become empty attributes, `false`/undefined are skipped; string children become text nodes (never HTML).
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === false) continue;
      if (typeof value === 'function') el.addEventListener(key.slice(2), value);
      else if (key === 'class') el.className = String(value);
      else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children, turning strings into text nodes. */
export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

/**
 * A run of at least this many characters with no space, tab or newline goes in a span.long-run (see textNodes).
 * English words stay far below it; hashes, base64, long URLs and runaway output reach it.
 */
const LONG_RUN = 100;
const LONG_RUNS = new RegExp(`[^ \\t\\n]{${LONG_RUN},}`, 'g');

/**
 * `text` as nodes: Text, except that each long unbroken run (LONG_RUN) is in a span.long-run, which the stylesheet
 * lays out without kerning. A word wider than the line is broken mid-word, and where the font kerns, Chromium shapes
 * the rest of the word again at each break: a 32,000-character run took 1.8 s to lay out, 1 MB over 80 s; without
 * kerning, 5 ms and 0.17 s. The span adds no characters: selecting and copying give the text as it was.
 */
export function textNodes(text: string): Node {
  if (text.length < LONG_RUN) return document.createTextNode(text);
  LONG_RUNS.lastIndex = 0;
  let m = LONG_RUNS.exec(text);
  if (!m) return document.createTextNode(text);
  const fragment = document.createDocumentFragment();
  let from = 0;
  for (; m; m = LONG_RUNS.exec(text)) {
    if (m.index > from) fragment.append(text.slice(from, m.index));
    fragment.append(h('span', { class: 'long-run' }, m[0]));
    from = m.index + m[0].length;
  }
  if (from < text.length) fragment.append(text.slice(from));
  return fragment;
}

/** True for the characters that end an unbroken run (LONG_RUN). */
const isBreak = (c: string) => c === ' ' || c === '\t' || c === '\n';

/**
 * Appends `text` to `el`, whose children are textNodes' nodes (a streaming text): afterwards they are what
 * textNodes(all of the text) would give, give or take how the Text is split. Only the run at the end can grow long.
 */
export function appendText(el: Element, text: string): void {
  const last = el.lastChild;
  if (last instanceof HTMLElement && last.classList.contains('long-run')) {
    let lead = 0;
    while (lead < text.length && !isBreak(text[lead])) lead++;
    (last.firstChild as Text).appendData(text.slice(0, lead));
    if (lead < text.length) el.append(textNodes(text.slice(lead)));
    return;
  }
  if (last instanceof Text) {
    let at = last.length;
    while (at > 0 && !isBreak(last.data[at - 1])) at--;
    const joined = last.data.slice(at) + text;
    LONG_RUNS.lastIndex = 0;
    if (joined.length < LONG_RUN || !LONG_RUNS.test(joined)) {
      last.appendData(text);
      return;
    }
    last.deleteData(at, last.length - at);
    if (!last.length) last.remove();
    el.append(textNodes(joined));
    return;
  }
  el.append(textNodes(text));
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** 16x16 stroke icons (codicons are not available in the webview). */
const ICONS = {
  send: 'M2.5 8h10M8.5 4l4 4-4 4',
  stop: 'M4 4h8v8H4z',
  image: 'M2.5 3.5h11v9h-11zM2.5 10.5l3-3 3 3 2-2 3 3M10.5 6.5h.01',
  plus: 'M8 3v10M3 8h10',
  history: 'M8 4v4l2.5 1.5M2.5 8a5.5 5.5 0 1 0 1.6-3.9M2.5 2.5v2.5H5',
  close: 'M4 4l8 8M12 4l-8 8',
  down: 'M8 3v10M4 9l4 4 4-4',
  at: 'M10.5 8a2.5 2.5 0 1 1-5 0 2.5 2.5 0 0 1 5 0zM10.5 8v1.2a1.7 1.7 0 0 0 3.4 0V8a5.9 5.9 0 1 0-2.3 4.7',
  tools: 'M13.2 4.6l-2.1 2.1-1.8-1.8 2.1-2.1a3 3 0 0 0-3.9 3.9L3 11.2a1.3 1.3 0 0 0 1.8 1.8l4.5-4.5a3 3 0 0 0 3.9-3.9z',
} as const;

/** An inline SVG icon, hidden from assistive technology (its button carries the label). */
export function icon(name: keyof typeof ICONS): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  const path = document.createElementNS(SVG_NS, 'path');
  path.setAttribute('d', ICONS[name]);
  svg.append(path);
  return svg;
}

/** Formats a number with thousands separators ("1,234"). */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
