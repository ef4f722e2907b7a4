// The words of a tool call's approval question, shown and spoken: built from the call's tool name and its arguments as
// the host lists them (every one, in the schema's order), never from a summary the model's argument order chose.
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

/** How long a value is, in characters. */
function valueLength(a: ToolArgumentView): number {
  return a.value.length + (a.omitted ?? 0) + (a.tail?.length ?? 0);
}

/** One argument as spoken: "path: src/a.ts", a long value cut with its length said. */
function spokenArgument(a: ToolArgumentView): string {
  const length = valueLength(a);
  const value = length > SPOKEN_VALUE_CHARS ? `${a.value.slice(0, SPOKEN_VALUE_CHARS)}… (${length.toLocaleString('en-US')} characters in all)` : a.value;
  return `${a.name}: ${value}`;
}

/**
 * What is spoken when a call starts waiting: "Approval needed. Run read_file with this argument? path: src/a.ts. Allow
 * once, Always allow this tool, or Deny."
 */
export function approvalAnnouncement(call: Pick<ToolCallView, 'name' | 'question'>): string {
  const labels = DECISION_LABELS.map((d) => d.label);
  const args = call.question?.length ? ` ${call.question.map(spokenArgument).join('; ')}.` : '';
  return `Approval needed. ${questionText(call)}${args} ${labels.slice(0, -1).join(', ')}, or ${labels[labels.length - 1]}.`;
}

/** The line shown between a long value's start and end. */
export function omittedText(omitted: number): string {
  return `… ${omitted.toLocaleString('en-US')} more character${omitted === 1 ? '' : 's'}, not shown here (the card's Arguments have them all) …`;
}
