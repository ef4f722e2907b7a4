// Exclude globs matched in time bounded by path length times glob size: a Pike VM over the glob, no backtracking.
//
// Written by hand because zeptomatch (and every glob library at hand) compiles to a backtracking RegExp, and a
// workspace's glob against a path the model chose could then run for seconds on the extension host's thread.
// The syntax and its quirks are zeptomatch 2.1's, read from its grammar (normalize, then parse) and checked against
// it in test/unit/glob.test.ts.

/** The most characters and instructions one glob may have; a bigger glob is refused (GlobError) and the caller fails closed. */
export const MAX_GLOB_SIZE = 4096;
/** How deep braces may nest: deeper, reading the glob would take time (and stack) out of proportion. */
export const MAX_BRACE_DEPTH = 32;

/** A glob that cannot be matched: a syntax error zeptomatch also refuses, or one too big to match in bounded time. */
export class GlobError extends Error {
  override readonly name = 'GlobError';
}

/** A compiled glob. */
export interface CompiledGlob {
  /** Its instructions: matching a path of n characters takes at most (n + 1) × 2 × size steps. */
  readonly size: number;
  /**
   * The length of the longest prefix of `path` (the whole path, or the part before one of its `/`) that the glob
   * matches; 0 when none does. `path` is `/`-separated with no empty segments, as excludeMatcher makes it.
   * `meter.steps` counts the work done, for tests.
   */
  longestMatch(path: string | GlobPath, meter?: { steps: number }): number;
}

type Node =
  | { k: 'lit'; c: number }
  | { k: 'slash' } | { k: 'seg' } | { k: 'any' }
  | { k: 'class'; re: RegExp }
  | { k: 'star'; of: Node }
  | { k: 'alt'; alts: Node[][] };

const SLASH: Node = { k: 'slash' };
const SEG: Node = { k: 'seg' };
const ANY: Node = { k: 'any' };
// By UTF-16 code units, as the path is read (and as a RegExp without the `u` flag compares): an astral character is
// two literals, its surrogates, never its first half alone.
const lits = (s: string): Node[] => s.split('').map((ch) => ({ k: 'lit', c: canon(ch) }) as Node);

/**
 * A UTF-16 code unit as a case-insensitive RegExp without the `u` flag compares it (ECMAScript's Canonicalize):
 * upper case, unless that takes more than one unit or turns a non-ASCII character into an ASCII one.
 */
function canon(ch: string): number {
  const c = ch.charCodeAt(0);
  if (c < 128) return c >= 97 && c <= 122 ? c - 32 : c;
  const u = ch.toUpperCase();
  if (u.length !== 1) return c;
  const cu = u.charCodeAt(0);
  return cu < 128 ? c : cu;
}

// zeptomatch's normalize: `***` is `*`, and `**` that is not a whole segment is `*` (one pass, as there).
const NORMALIZE: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [/\*\*\*+/y, () => '*'],
  [/([^/{[(!])\*\*/y, (m) => `${m[1]}*`],
  [/(^|.)\*\*(?=[^*/)\]}])/y, (m) => `${m[1]}*`],
  [/./y, (m) => m[0]],
];

function normalize(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; ) {
    const hit = execAt(NORMALIZE, glob, i);
    if (!hit) throw new GlobError('a line break in a glob');
    out += hit[1](hit[0]);
    i += hit[0][0].length;
  }
  return out;
}

function execAt<T>(rules: Array<[RegExp, T]>, s: string, i: number): [RegExpExecArray, T] | undefined {
  for (const [re, then] of rules) {
    re.lastIndex = i;
    const m = re.exec(s);
    if (m) return [m, then];
  }
  return undefined;
}

function sticky(re: RegExp, s: string, i: number): RegExpExecArray | null {
  re.lastIndex = i;
  return re.exec(s);
}

const NEGATION_ODD = /^(?:!!)*!(.*)$/;
const NEGATION_EVEN = /^(!!)+/;
const STAR_STAR_BETWEEN = /\/(\*\*\/)+/y;
const STAR_STAR_START = /^(\*\*\/)+/y;
const STAR_STAR_END = /\/(\*\*)$/y;
const STAR_STAR_NONE = /\*\*/y;
const STAR_DOUBLE = /\*\/(?!\*\*\/|\*$)/y;
const RANGES = [/\{(\d+)\.\.(\d+)\}/y, /\{([a-z]+)\.\.([a-z]+)\}/y, /\{([A-Z]+)\.\.([A-Z]+)\}/y];
const ESCAPE = /[$.*+?^(){}[\]|]/y;
const BRACES_ESCAPE = /[$.*+?^(){[\]|]/y;
const PASSTHROUGH = /[^$.*+?^(){}[\]|\\/]+/y;
const BRACES_PASSTHROUGH = /[^$.*+?^(){}[\]|\\/,]+/y;
const CLASS_ESCAPE = /[$.*+?^(){}[|]/;

/** zeptomatch's grammar, as a packrat parser (a brace or class that fails at a position is not tried there again). */
class Parser {
  private i = 0;
  private depth = 0;
  private readonly braces = new Map<number, { end: number; node: Node } | null>();
  private readonly lastClose: number;
  /** Values all of the glob's ranges may expand to, together: many ranges in one glob are refused before they are built. */
  private readonly ranges = { left: MAX_GLOB_SIZE };

  constructor(private readonly src: string) {
    this.lastClose = src.lastIndexOf(']');
  }

  top(): Node[] {
    const even = NEGATION_EVEN.exec(this.src);
    if (even) this.i = even[0].length;
    const nodes = this.sequence(false);
    if (this.i < this.src.length) throw new GlobError(`a glob that cannot be read past character ${this.i}`);
    return nodes;
  }

  private sequence(inBraces: boolean): Node[] {
    const out: Node[] = [];
    for (;;) {
      const item = this.item(inBraces);
      if (!item) return out;
      out.push(...item);
    }
  }

  private item(inBraces: boolean): Node[] | undefined {
    const { src, i } = this;
    if (i >= src.length) return undefined;
    let m: RegExpExecArray | null;
    if ((m = sticky(STAR_STAR_BETWEEN, src, i))) return this.took(m, [{ k: 'alt', alts: [[SLASH, ANY, { k: 'star', of: ANY }, SLASH], [SLASH]] }]);
    if ((m = sticky(STAR_STAR_START, src, i))) return this.took(m, [{ k: 'alt', alts: [[], [{ k: 'star', of: ANY }, SLASH]] }]);
    if ((m = sticky(STAR_STAR_END, src, i))) return this.took(m, [{ k: 'alt', alts: [[SLASH, { k: 'star', of: ANY }], []] }]);
    if ((m = sticky(STAR_STAR_NONE, src, i))) return this.took(m, [{ k: 'star', of: ANY }]);
    if ((m = sticky(STAR_DOUBLE, src, i))) return this.took(m, [{ k: 'star', of: SEG }, SLASH]);
    if (src[i] === '*') return this.took('*', [{ k: 'star', of: SEG }]);
    if (src[i] === '?') return this.took('?', [SEG]);
    const cls = this.klass();
    if (cls) return [cls];
    for (const re of RANGES) if ((m = sticky(re, src, i))) return this.took(m, [range(m[1], m[2], this.ranges)]);
    const braces = this.bracesAt();
    if (braces) return [braces];
    if ((m = sticky(inBraces ? BRACES_ESCAPE : ESCAPE, src, i))) return this.took(m, lits(m[0]));
    if (src[i] === '/' || src[i] === '\\') return this.took('/', [SLASH]);
    if ((m = sticky(inBraces ? BRACES_PASSTHROUGH : PASSTHROUGH, src, i))) return this.took(m, lits(m[0]));
    return undefined;
  }

  private took(m: RegExpExecArray | string, nodes: Node[]): Node[] {
    this.i += typeof m === 'string' ? m.length : m[0].length;
    return nodes;
  }

  /** `[…]` up to the first `]`, as zeptomatch writes it into a RegExp class (which may throw, as there). */
  private klass(): Node | undefined {
    const { src, i } = this;
    if (src[i] !== '[') return undefined;
    let body = i + 1;
    let source = '';
    if (src[body] === '!' || src[body] === '^') {
      source = '^\\\\/';
      body++;
    }
    if (body > this.lastClose) return undefined;
    const close = src.indexOf(']', body);
    for (const ch of src.slice(body, close)) {
      source += ch === '/' || ch === '\\' ? '\\\\/' : CLASS_ESCAPE.test(ch) ? `\\${ch}` : ch;
    }
    let re: RegExp;
    try {
      re = new RegExp(`[${source}]`, 'i');
    } catch {
      throw new GlobError('a character class that is not valid');
    }
    this.i = close + 1;
    return { k: 'class', re };
  }

  /** `{a,b,…}`, nested; a `{` without its `}` is a literal (the caller goes on to ESCAPE). */
  private bracesAt(): Node | undefined {
    const start = this.i;
    if (this.src[start] !== '{') return undefined;
    const known = this.braces.get(start);
    if (known !== undefined) {
      if (known) this.i = known.end;
      return known?.node;
    }
    if (++this.depth > MAX_BRACE_DEPTH) throw new GlobError(`braces nested more than ${MAX_BRACE_DEPTH} deep`);
    this.i++;
    const alts = [this.sequence(true)];
    while (this.src[this.i] === ',') {
      this.i++;
      alts.push(this.sequence(true));
    }
    this.depth--;
    if (this.src[this.i] !== '}') {
      this.braces.set(start, null);
      this.i = start;
      return undefined;
    }
    this.i++;
    const node: Node = { k: 'alt', alts };
    this.braces.set(start, { end: this.i, node });
    return node;
  }
}

/** `{1..10}`, `{a..z}` or `{A..Z}` as zeptomatch expands it (numbers padded to the shorter bound's digits). */
function range(from: string, to: string, budget: { left: number }): Node {
  const numeric = /^\d/.test(from);
  const upper = /^[A-Z]/.test(from);
  const alpha2int = (s: string): number => [...s.toLowerCase()].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 96, 0);
  const int2alpha = (n: number): string => {
    let s = '';
    for (; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(97 + ((n - 1) % 26)) + s;
    return s;
  };
  const a = numeric ? Number(from) : alpha2int(from);
  const b = numeric ? Number(to) : alpha2int(to);
  const count = Math.abs(b - a) + 1;
  if (!(count <= MAX_GLOB_SIZE)) throw new GlobError('a range with too many values');
  budget.left -= count;
  if (budget.left < 0) throw new GlobError('ranges with too many values in all');
  const pad = Math.min(from.length, to.length);
  const alts: Node[][] = [];
  for (let n = Math.min(a, b); n <= Math.max(a, b); n++) {
    const s = numeric ? String(n).padStart(pad, '0') : int2alpha(n);
    alts.push(lits(upper ? s.toUpperCase() : s));
  }
  return { k: 'alt', alts };
}

const LIT = 0;
const SLASH_OP = 1;
const SEG_OP = 2;
const ANY_OP = 3;
const CLASS_OP = 4;
const SPLIT = 5;
const JMP = 6;
const MATCH = 7;

/** Thompson's construction: one instruction per character test, SPLIT and JMP for `*` and alternatives. */
class Program {
  readonly op: number[] = [];
  readonly a: number[] = [];
  readonly b: number[] = [];
  readonly classes: Array<RegExp | undefined> = [];

  push(op: number, a = 0, b = 0, re?: RegExp): number {
    if (this.op.length >= MAX_GLOB_SIZE) throw new GlobError('a glob too big to match in bounded time');
    this.op.push(op);
    this.a.push(a);
    this.b.push(b);
    this.classes.push(re);
    return this.op.length - 1;
  }

  emit(nodes: Node[]): void {
    for (const n of nodes) {
      if (n.k === 'lit') this.push(LIT, n.c);
      else if (n.k === 'slash') this.push(SLASH_OP);
      else if (n.k === 'seg') this.push(SEG_OP);
      else if (n.k === 'any') this.push(ANY_OP);
      else if (n.k === 'class') this.push(CLASS_OP, 0, 0, n.re);
      else if (n.k === 'star') {
        const split = this.push(SPLIT, this.op.length + 1);
        this.emit([n.of]);
        this.push(JMP, split);
        this.b[split] = this.op.length;
      } else {
        const jumps: number[] = [];
        n.alts.forEach((alt, k) => {
          const last = k === n.alts.length - 1;
          const split = last ? -1 : this.push(SPLIT, this.op.length + 1);
          this.emit(alt);
          if (last) return;
          jumps.push(this.push(JMP));
          this.b[split] = this.op.length;
        });
        for (const j of jumps) this.a[j] = this.op.length;
      }
    }
  }
}

/**
 * Compiles a glob in zeptomatch 2.1's syntax (VS Code's: `*`, `**`, `?`, `[…]`, `[!…]`, `{a,b}` nested, `{1..3}`, and a
 * leading `!` that negates), case-insensitive, backslashes read as `/`. Throws GlobError for a glob zeptomatch
 * refuses too (a bad class such as `[z-a]`, a line break) and for one over MAX_GLOB_SIZE characters or instructions.
 */
export function compileGlob(glob: string): CompiledGlob {
  if (glob.length > MAX_GLOB_SIZE) throw new GlobError('a glob too long to match in bounded time');
  const { program, negate, required } = compileProgram(glob.replace(/\\/g, '/'), false);
  const vm = new Vm(program, required);
  return {
    size: program.op.length,
    longestMatch: (path, meter) => vm.run(typeof path === 'string' ? globPath(path) : path, meter, negate),
  };
}

/** zeptomatch reads `!x` (an odd number of `!`) as "not x", compiling x (normalized once more) on its own. */
function compileProgram(glob: string, negate: boolean): { program: Program; negate: boolean; required: string } {
  const normal = normalize(glob);
  const odd = NEGATION_ODD.exec(normal);
  if (odd) return compileProgram(odd[1], !negate);
  const nodes = new Parser(normal).top();
  const program = new Program();
  program.emit(nodes);
  program.push(MATCH);
  return { program, negate, required: requiredText(nodes) };
}

/**
 * The longest run of letters the glob's every match holds (case-folded), such as `.PEM` in `**\/*.pem`: a path
 * without it is answered without running the VM, which keeps the common case (a file no glob is about) cheap.
 */
function requiredText(nodes: Node[]): string {
  let best = '';
  let run = '';
  for (const n of nodes) {
    if (n.k === 'lit') run += String.fromCharCode(n.c);
    else run = '';
    if (run.length > best.length) best = run;
  }
  return best;
}

/** A path made ready for matching against many globs: its characters case-folded once. */
export interface GlobPath {
  readonly text: string;
  readonly folded: Uint16Array;
  readonly foldedText: string;
}

/** Prepares `path` (`/`-separated, no empty segments) for CompiledGlob.longestMatch. */
export function globPath(text: string): GlobPath {
  const folded = new Uint16Array(text.length);
  let foldedText = '';
  for (let i = 0; i < text.length; i++) {
    folded[i] = canon(text[i]);
    foldedText += String.fromCharCode(folded[i]);
  }
  return { text, folded, foldedText };
}

/**
 * The Pike VM: the set of live instructions advances one path character at a time, each instruction at most once per
 * character, so the work is at most (path length + 1) × 2 × program size whatever the glob and the path.
 * At the end of the path and before each `/`, the prefix read so far is matched when MATCH is live (when it is not,
 * for a negated glob). Its buffers are reused from run to run (the extension host runs one match at a time).
 */
class Vm {
  private readonly op: Uint8Array;
  private readonly a: Int32Array;
  private readonly b: Int32Array;
  private readonly mark: Int32Array;
  private list: Int32Array;
  private next: Int32Array;
  private readonly stack: Int32Array;
  private gen = 0;
  private matched = false;
  private steps = 0;

  constructor(
    private readonly p: Program,
    private readonly required: string,
  ) {
    const n = p.op.length;
    this.op = Uint8Array.from(p.op);
    this.a = Int32Array.from(p.a);
    this.b = Int32Array.from(p.b);
    this.mark = new Int32Array(n);
    this.list = new Int32Array(n);
    this.next = new Int32Array(n);
    this.stack = new Int32Array(2 * n + 2);
  }

  /** Adds the thread at `start` and what SPLIT and JMP reach from it to `to` (of length `len`); the new length. */
  private add(to: Int32Array, len: number, start: number): number {
    const { op, mark, stack, gen } = this;
    let top = 0;
    stack[top++] = start;
    while (top > 0) {
      const pc = stack[--top];
      if (mark[pc] === gen) continue;
      mark[pc] = gen;
      this.steps++;
      const o = op[pc];
      if (o === SPLIT) {
        stack[top++] = this.b[pc];
        stack[top++] = this.a[pc];
      } else if (o === JMP) stack[top++] = this.a[pc];
      else if (o === MATCH) this.matched = true;
      else to[len++] = pc;
    }
    return len;
  }

  run(path: GlobPath, meter: { steps: number } | undefined, negate: boolean): number {
    const { text, folded } = path;
    const { op, a } = this;
    if (!path.foldedText.includes(this.required)) return negate ? text.length : 0;
    if (this.gen > 0x3fffffff) {
      this.mark.fill(0);
      this.gen = 0;
    }
    this.steps = 0;
    this.matched = false;
    this.gen++;
    let size = this.add(this.list, 0, 0);
    let longest = 0;
    for (let i = 0; ; i++) {
      const code = i < text.length ? text.charCodeAt(i) : -1;
      if ((code === -1 || code === 47) && i > 0 && this.matched !== negate) longest = i;
      if (code === -1) break;
      if (size === 0) {
        if (negate) longest = text.length;
        break;
      }
      const list = this.list;
      const ch = folded[i];
      let nextSize = 0;
      this.matched = false;
      this.gen++;
      for (let k = 0; k < size; k++) {
        const pc = list[k];
        this.steps++;
        const o = op[pc];
        const ok =
          o === LIT ? a[pc] === ch
          : o === SLASH_OP ? code === 47 || code === 92
          : o === SEG_OP ? code !== 47 && code !== 92
          : o === ANY_OP || (this.p.classes[pc] as RegExp).test(text[i]);
        if (ok) nextSize = this.add(this.next, nextSize, pc + 1);
      }
      [this.list, this.next] = [this.next, this.list];
      size = nextSize;
    }
    if (meter) meter.steps += this.steps;
    return longest;
  }
}
