// markdown-it's HTML entity decoding in the webview, in place of the `entities` package and its ~48 KB of decode tables
// (scripts/webview-build.mjs aliases `entities` here for the webview bundle only): numeric references are decoded here
// as `entities` does, named ones by the browser's own HTML parser, which knows every name. Written by hand because no
// small library leaves the names to the browser; test/webview/entities.test.ts holds it to the real package.

/** NUL and the C1 controls that HTML reads as Windows-1252 (as `entities`' decode_codepoint does). */
const REMAPPED = new Map<number, number>([
  [0x00, 0xfffd], [0x80, 0x20ac], [0x82, 0x201a], [0x83, 0x0192], [0x84, 0x201e], [0x85, 0x2026], [0x86, 0x2020],
  [0x87, 0x2021], [0x88, 0x02c6], [0x89, 0x2030], [0x8a, 0x0160], [0x8b, 0x2039], [0x8c, 0x0152], [0x8e, 0x017d],
  [0x91, 0x2018], [0x92, 0x2019], [0x93, 0x201c], [0x94, 0x201d], [0x95, 0x2022], [0x96, 0x2013], [0x97, 0x2014],
  [0x98, 0x02dc], [0x99, 0x2122], [0x9a, 0x0161], [0x9b, 0x203a], [0x9c, 0x0153], [0x9e, 0x017e], [0x9f, 0x0178],
]);

/** A numeric reference (`&#` then digits, or `&#x` then hex digits), and whether a `;` ends it. */
const NUMERIC = /&#(?:[xX]([0-9a-fA-F]+)|([0-9]+))(;?)/y;
/** A named reference: its letters and digits, and whether a `;` follows them. */
const NAMED = /&([a-zA-Z0-9]+)(;?)/y;
/** No name is longer than this (`CounterClockwiseContourIntegral`): a longer run can only start with a legacy name. */
const LONGEST_NAME = 31;

/** The text of a numeric reference's code point: surrogates and code points past U+10FFFF become U+FFFD. */
function codePointText(codePoint: number): string {
  const cp = (codePoint >= 0xd800 && codePoint <= 0xdfff) || codePoint > 0x10ffff ? 0xfffd : codePoint;
  return String.fromCodePoint(REMAPPED.get(cp) ?? cp);
}

/** Enough for every name a page uses; a flood of made-up ones starts the cache afresh. */
const CACHED = 4096;
let scratch: HTMLTextAreaElement | undefined;
const parsed = new Map<string, string>();

/**
 * What the browser's HTML parser makes of `ref` in running text: `ref` is only ever `&`, ASCII letters and digits, and
 * perhaps `;` (checked by the callers' patterns), so the detached textarea (whose content is text, never markup) gets
 * nothing but one character reference. Cached per reference.
 */
function browserDecode(ref: string): string {
  let text = parsed.get(ref);
  if (text === undefined) {
    scratch ??= document.createElement('textarea');
    scratch.innerHTML = ref;
    text = scratch.textContent ?? ref;
    if (parsed.size >= CACHED) parsed.clear();
    parsed.set(ref, text);
  }
  return text;
}

/**
 * The reference at `at` in `s` (an `&`): its text and how many characters it took, or undefined when it is none and
 * the `&` stays as it is.
 */
function decodeOne(s: string, at: number, strict: boolean): { text: string; length: number } | undefined {
  NUMERIC.lastIndex = at;
  const numeric = NUMERIC.exec(s);
  if (numeric) {
    const [whole, hex, dec, semi] = numeric;
    if (strict && !semi) return undefined;
    return { text: codePointText(hex !== undefined ? parseInt(hex, 16) : parseInt(dec, 10)), length: whole.length };
  }
  NAMED.lastIndex = at;
  const named = NAMED.exec(s);
  if (!named) return undefined;
  const [, name, semi] = named;
  if (name.length <= LONGEST_NAME && semi) {
    const full = browserDecode(`&${name};`);
    // The parser took the whole name only if its text is not what it makes of the name alone and the `;` after it.
    if (full !== browserDecode(`&${name}`) + ';') return { text: full, length: name.length + 2 };
  }
  if (strict) return undefined;
  // Legacy names (`&amp`, `&copy`, `&not`…) count without a `;`, and only the longest such start of the name is taken;
  // the browser puts the rest back as text, as `entities` does. Past the longest name only such a start can count.
  const head = name.slice(0, LONGEST_NAME + 1);
  const text = browserDecode(`&${head}`);
  return text === `&${head}` ? undefined : { text, length: head.length + 1 };
}

function decode(s: string, strict: boolean): string {
  let out = '';
  let last = 0;
  for (let at = s.indexOf('&'); at >= 0; at = s.indexOf('&', at + 1)) {
    const ref = decodeOne(s, at, strict);
    if (!ref) continue;
    out += s.slice(last, at) + ref.text;
    last = at + ref.length;
    at = last - 1;
  }
  return out + s.slice(last);
}

/**
 * Decodes the HTML character references in `s` as HTML does in text (`entities`' decodeHTML, legacy mode): names
 * with or without a `;` where HTML allows it, numeric references with or without one.
 */
export function decodeHTML(s: string): string {
  return decode(s, false);
}

/** Decodes only the character references in `s` that end with `;` (`entities`' decodeHTMLStrict). */
export function decodeHTMLStrict(s: string): string {
  return decode(s, true);
}
