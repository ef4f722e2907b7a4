// The check of a conversation read from disk: every field of every turn, step, call, chip and image has the type
// Parley writes, or the file is not a conversation (history.ts moves it aside as damaged).
//
// Why every field: the host passes stored turns to the webview as they are, and one field of the wrong type
// (`steps: "x"`, `context: 5`) made the webview throw and draw no turn at all. Each shape below is typed against the
// stored type, so a field added to Turn, ToolCallView, ContextChip… does not compile until it is checked here too.
import type { LastUsage } from './contextWindow';
import type { Conversation, ContextItem, InflightRequest, Turn, TurnOwner } from './conversation';
import type { UsageRecord } from './usageLedger';
import type {
  ActionId, ContextChip, ErrorKindView, ErrorView, ImageView, MentionKind, ToolArgumentView, ToolCallStatus, ToolCallView, ToolStepView, TurnStatus, UsageView,
} from '../shared/protocol';

/**
 * Checks a value: undefined when it is right, else the path of its first wrong field below it (`''` for the value
 * itself, `.steps[0].status` for a field inside). Paths are made only on the way back from a wrong field, so a right
 * conversation of thousands of turns builds no strings.
 */
type Check = (v: unknown) => string | undefined;

/** The keys of T that may be left out. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
type RequiredKeys<T> = Exclude<keyof T, OptionalKeys<T>>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: Record<string, unknown>, k: string) => Object.prototype.hasOwnProperty.call(o, k);

const text: Check = (v) => (typeof v === 'string' ? undefined : '');
const num: Check = (v) => (typeof v === 'number' && Number.isFinite(v) ? undefined : '');
const flag: Check = (v) => (typeof v === 'boolean' ? undefined : '');

/** One of a union's values: a Record over the union, so a value added to it does not compile until it is listed. */
function oneOf<T extends string>(values: Record<T, true>): Check {
  return (v) => (typeof v === 'string' && has(values, v) ? undefined : '');
}

function list(item: Check): Check {
  return (v) => {
    if (!Array.isArray(v)) return '';
    for (let i = 0; i < v.length; i++) {
      const bad = item(v[i]);
      if (bad !== undefined) return `[${i}]${bad}`;
    }
    return undefined;
  };
}

/**
 * An object of type T: every required field present and right, every optional one absent or right (null is not
 * absent: Parley never writes it). Fields T does not have are left alone: they may be a newer version's.
 */
function shape<T>(required: { [K in RequiredKeys<T>]-?: Check }, optional: { [K in OptionalKeys<T>]-?: Check }): Check {
  const req = Object.entries(required) as Array<[string, Check]>;
  const opt = Object.entries(optional) as Array<[string, Check]>;
  return (v) => {
    if (!isRecord(v)) return '';
    for (const [k, check] of req) {
      const bad = has(v, k) ? check(v[k]) : '';
      if (bad !== undefined) return `.${k}${bad}`;
    }
    for (const [k, check] of opt) {
      const bad = has(v, k) ? check(v[k]) : undefined;
      if (bad !== undefined) return `.${k}${bad}`;
    }
    return undefined;
  };
}

const TURN_STATUS: Record<TurnStatus, true> = { streaming: true, done: true, stopped: true, interrupted: true, truncated: true, filtered: true, incomplete: true, error: true };
const CALL_STATUS: Record<ToolCallStatus, true> = { queued: true, waiting: true, running: true, done: true, denied: true, failed: true };
const ERROR_KIND: Record<ErrorKindView, true> = {
  auth: true, not_found: true, rate_limit: true, quota: true, context_length: true, connection: true, timeout: true, protocol: true,
  bad_request: true, server: true, config: true, unknown: true, budget: true,
};
const ACTION: Record<ActionId, true> = {
  retry: true, setApiKey: true, markNoKey: true, openSettings: true, testConnection: true, continue: true, showLog: true, compact: true,
  compactRetry: true, switchEndpoint: true, sendOnceAnyway: true, openBudgetSettings: true, rules: true,
};
const MENTION: Record<MentionKind, true> = { file: true, selection: true, problems: true, open: true };
const SOURCE: Record<UsageRecord['source'], true> = { chat: true, explain: true, generate: true, test: true, 'vscode-chat': true, compact: true, complete: true };

/** A stored image: its data URL, or (written since images have files of their own) `ref` with the data URL empty. */
const image = shape<ImageView & { ref?: string }>({ name: text, dataUrl: text }, { ref: text });
const usage = shape<UsageView>({ prompt: num, completion: num, total: num, estimated: flag }, {});
const error = shape<ErrorView>({ kind: oneOf(ERROR_KIND), title: text, actions: list(oneOf(ACTION)) }, { detail: text, hint: text });
const chip = { id: text, path: text, startLine: num, endLine: num, language: text, truncated: flag };
const contextChip = shape<ContextChip>(chip, { mention: oneOf(MENTION) });
const contextItem = shape<ContextItem>({ ...chip, code: text }, { mention: oneOf(MENTION) });
const argument = shape<ToolArgumentView>({ name: text, value: text }, {});
const call = shape<ToolCallView>(
  { id: text, name: text, summary: text, arguments: text, status: oneOf(CALL_STATUS) },
  { wireId: text, ms: num, result: text, question: list(argument) },
);
const step = shape<ToolStepView>({ text, calls: list(call) }, {});
const owner = shape<TurnOwner>({ session: text, pid: num, hostname: text, beat: num }, {});
const inflight = shape<InflightRequest>({ id: text, model: text, host: text, source: oneOf(SOURCE), prompt: num }, {});

const turn = shape<Turn>(
  { id: text, role: oneOf({ user: true, assistant: true }), text, status: oneOf(TURN_STATUS) },
  {
    reasoning: text, reasoningMs: num, reasoningStartedAt: num, reasoningField: text, images: list(image), context: list(contextChip),
    note: text, usage, error, model: text, steps: list(step), requests: num, summaryOf: num, profile: text,
    contextItems: list(contextItem), owner, inflight, tools: list(text),
  },
);

const conversation = shape<Conversation>(
  { id: text, title: text, createdAt: num, updatedAt: num, turns: list(turn) },
  { toolsOff: flag, rulesOff: list(text), profile: text, model: text, effort: text, lastPrompt: shape<LastUsage>({ estimated: num, actual: num }, {}) },
);

/**
 * Why a value read from a conversation file is not the conversation `id`: the path of its first wrong field
 * (`turns[2].steps`, `turns[0].context[1].startLine`, `id` for another conversation's), or undefined when every field
 * has the type Parley writes. Only names and paths, never content, so it can go to the log.
 */
export function conversationProblem(value: unknown, id: string): string | undefined {
  if (!isRecord(value)) return 'the file';
  if (value.id !== id) return 'id';
  const bad = conversation(value);
  return bad === undefined ? undefined : bad.replace(/^\./, '');
}
