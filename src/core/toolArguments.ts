// A tool call's arguments against its tool's schema: the names it does not declare (refused before anything asks), and
// every argument as the approval question shows it, in the schema's order, whole, as plain text that hides nothing.
import type { ToolArgumentView } from '../shared/protocol';

/**
 * The most text (argument names and values, as shown) a question may carry. Up to it, every value is shown whole and
 * the panel lets the reader allow only once each value has been read to its end; beyond it, the call is not asked
 * about at all (tooLongToReview): nobody reviews that much in a panel, and a cut would hide what runs.
 */
export const QUESTION_MAX_CHARS = 100_000;

/** The argument names a tool's parameter schema declares (its top-level `properties`), in the schema's order. */
export function declaredArguments(parameters: Record<string, unknown> | undefined): string[] {
  const props = parameters?.properties;
  return props && typeof props === 'object' && !Array.isArray(props) ? Object.keys(props) : [];
}

/**
 * What the model is told when a call passes arguments its tool does not declare, or undefined when it passes none.
 * Such a call is not run and not asked about: an argument the schema does not name is one the reader could not be
 * expected to weigh, and the tool would get it all the same. (This holds even where a schema allows more properties.)
 */
export function undeclaredArguments(tool: string, args: Record<string, unknown>, parameters: Record<string, unknown> | undefined): string | undefined {
  const declared = declaredArguments(parameters);
  const known = new Set(declared);
  const extra = Object.keys(args).filter((k) => !known.has(k));
  if (extra.length === 0) return undefined;
  const names = (list: string[]) => list.map((k) => JSON.stringify(visibleText(k).slice(0, 100))).join(', ');
  const takes = declared.length ? `It takes only: ${names(declared)}.` : 'It takes no arguments.';
  return `Not run: ${tool} does not declare the argument${extra.length === 1 ? '' : 's'} ${names(extra.slice(0, 20))}${extra.length > 20 ? ` and ${extra.length - 20} more` : ''}. ${takes} Call it again with only those.`;
}

/**
 * Code points that show nothing, or turn the text around them: control characters (tab and newline excepted; a
 * carriage return only before a newline), soft hyphen, bidi marks and controls, zero-width characters, fillers,
 * variation selectors, specials, tag characters (which can carry hidden text). Pairs of first and last.
 */
const INVISIBLE: ReadonlyArray<readonly [number, number]> = [
  [0x00, 0x08], [0x0b, 0x1f], [0x7f, 0x9f], [0xad, 0xad], [0x34f, 0x34f], [0x61c, 0x61c], [0x115f, 0x1160],
  [0x17b4, 0x17b5], [0x180b, 0x180f], [0x200b, 0x200f], [0x2028, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164],
  [0xfe00, 0xfe0f], [0xfeff, 0xfeff], [0xffa0, 0xffa0], [0xfff0, 0xfffb], [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
];

function invisible(cp: number): boolean {
  if (cp >= 0x20 && cp < 0x7f) return false;
  return INVISIBLE.some(([a, b]) => cp >= a && cp <= b);
}

/** Text with every invisible or direction-changing character (INVISIBLE) written out as `⟦U+202E⟧`, so nothing hides. */
export function visibleText(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i)!;
    const wide = cp > 0xffff;
    if (invisible(cp) && !(cp === 0x0d && text[i + 1] === '\n')) {
      out += text.slice(from, i) + `⟦U+${cp.toString(16).toUpperCase().padStart(4, '0')}⟧`;
      from = i + (wide ? 2 : 1);
    }
    if (wide) i++;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A value as text: a string as it is (invisible characters written out), anything else as JSON. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return visibleText(v);
  return visibleText(JSON.stringify(v, null, 2) ?? String(v));
}

/**
 * Every argument of a call as the approval question shows it: in the order the tool's schema declares them (any
 * the schema does not declare after, in the model's order, though such a call is refused before it asks), each value
 * whole. Never cut: a cut is where a command would hide. (tooLongToReview bounds the whole.)
 */
export function questionArguments(args: Record<string, unknown>, parameters: Record<string, unknown> | undefined): ToolArgumentView[] {
  const declared = declaredArguments(parameters);
  const order = [...declared.filter((k) => Object.hasOwn(args, k)), ...Object.keys(args).filter((k) => !declared.includes(k))];
  return order.map((name) => ({ name: visibleText(name), value: valueText(args[name]) }));
}

/**
 * What the model is told when a call's arguments, as the question would show them, are longer than QUESTION_MAX_CHARS
 * (so the call is not run and the reader is not asked), or undefined when the question can show them whole.
 */
export function tooLongToReview(tool: string, question: readonly ToolArgumentView[]): string | undefined {
  const length = question.reduce((n, a) => n + a.name.length + a.value.length, 0);
  if (length <= QUESTION_MAX_CHARS) return undefined;
  const n = (x: number) => x.toLocaleString('en-US');
  return `Not run: the arguments of this ${tool} call are ${n(length)} characters long, too long for the user to review before allowing it (at most ${n(QUESTION_MAX_CHARS)}). Call it again with shorter arguments, or split the work into smaller calls.`;
}

/** One line for a card: every argument as `name: value`, in the schema's order (for tools with no summary of their own). */
export function argumentSummary(args: Record<string, unknown>, parameters: Record<string, unknown> | undefined): string {
  return questionArguments(args, parameters).map((a) => `${a.name}: ${a.value.slice(0, 1000).replace(/\s+/g, ' ').slice(0, 200)}`).join(', ');
}

/** A call's arguments as an object, or what is wrong with them (for the model). Empty arguments are `{}`. */
export function parseArguments(text: string): Record<string, unknown> | string {
  if (!text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return `The arguments are not valid JSON: ${text.slice(0, 200)}`;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'The arguments must be a JSON object.';
  return v as Record<string, unknown>;
}
