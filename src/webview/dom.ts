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
