// The words of a tool call's approval question, shown and spoken: built from the call's tool name and its arguments as
// the host lists them (every one, whole, in the schema's order), never from a summary the model's argument order chose.
import type { ToolArgumentView, ToolCallView, ToolDecision } from './protocol';

/** The answers, in the order the question offers them. */
export const DECISION_LABELS: ReadonlyArray<{ decision: ToolDecision; label: string }> = [
  { decision: 'once', label: 'Allow once' },
  { decision: 'always', label: 'Always allow this tool' },
  { decision: 'deny', label: 'Deny' },
];

/** A spoken value stops after this many characters and says how long the value is. */
export const SPOKEN_VALUE_CHARS = 200;

/** The question's line: "Run read_file with this argument?", "Run get_open_editors with no arguments?". */
export function questionText(call: Pick<ToolCallView, 'name' | 'question'>): string {
  const n = call.question?.length;
  if (n === 0) return `Run ${call.name} with no arguments?`;
  return `Run ${call.name} with ${n === 1 ? 'this argument' : n === undefined ? 'these arguments' : `these ${n} arguments`}?`;
}

/** One argument as spoken: "path: src/a.ts", a long value cut with its length said. */
function spokenArgument(a: ToolArgumentView): string {
  const length = a.value.length;
  const value = length > SPOKEN_VALUE_CHARS ? `${a.value.slice(0, SPOKEN_VALUE_CHARS)}… (${length.toLocaleString('en-US')} characters in all)` : a.value;
  return `${a.name}: ${value}`;
}

/**
 * What is spoken when a call starts waiting: "Approval needed. Run read_file with this argument? path: src/a.ts. Allow
 * once, Always allow this tool, or Deny." `unread`: how many values go on beyond their box, which the reader must read
 * to the end (or show whole) before Allow works; the announcement says so.
 */
export function approvalAnnouncement(call: Pick<ToolCallView, 'name' | 'question'>, unread = 0): string {
  const labels = DECISION_LABELS.map((d) => d.label);
  const args = call.question?.length ? ` ${call.question.map(spokenArgument).join('; ')}.` : '';
  const more = unread === 0 ? '' : unread === 1
    ? ' One value goes on below its box: read it to the end, or press Show all, before you can allow.'
    : ` ${unread} values go on below their boxes: read each to the end, or press Show all, before you can allow.`;
  return `Approval needed. ${questionText(call)}${args}${more} ${labels.slice(0, -1).join(', ')}, or ${labels[labels.length - 1]}.`;
}

/** Why Allow once and Always allow do not work yet: shown under the question while a value is not read to its end. */
export const READ_TO_ALLOW = 'Read every argument to the end to allow: scroll each box marked "More below" to its end, or press Show all. Deny works now.';

/** The marker under a value box whose text goes on below it. */
export function moreBelowText(lines: number): string {
  return `More below: ${lines.toLocaleString('en-US')} more line${lines === 1 ? '' : 's'}`;
}
