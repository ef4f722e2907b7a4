// The one message protocol between the extension host and the chat webview: a table of messages each way, the views
// they carry, and the check of what the webview sends. Used by both bundles; the host owns every conversation.
import { checkMessage, refuse, type Checked, type CheckedMessages, type Field, type FieldTable, type MessageUnion, type NoFields } from './messageTable';

/** How a reply ended, as shown to the reader. `done` is a clean stop and shows no badge. */
/** `interrupted`: the window went away (reload, crash) while the reply streamed; the text received is kept. */
export type TurnStatus = 'streaming' | 'done' | 'stopped' | 'interrupted' | 'truncated' | 'filtered' | 'incomplete' | 'error';

/** What a person is told an error was about. */
export type ErrorKindView =
  | 'auth' | 'not_found' | 'rate_limit' | 'quota' | 'context_length' | 'connection'
  | 'timeout' | 'protocol' | 'bad_request' | 'server' | 'config' | 'unknown'
  /** Not sent: the request would cross a blocking spend limit (`parley.budget`). */
  | 'budget';

/** Buttons an error card, the setup card or a notice may show. Each maps to one host action. */
export type ActionId =
  | 'retry' | 'setApiKey' | 'markNoKey' | 'openSettings' | 'testConnection' | 'continue' | 'showLog'
  /** Summarize the older turns now (the meter's button, the "won't fit" card). */
  | 'compact'
  /** After a context_length_exceeded error: summarize the older turns, then ask again. */
  | 'compactRetry'
  /** The palette's Switch Endpoint: profile, then model. */
  | 'switchEndpoint'
  /** Lets exactly the next request of this conversation past the spend limit that stopped it (the reader's click only). */
  | 'sendOnceAnyway'
  /** Opens the Settings editor on `parley.budget`. */
  | 'openBudgetSettings'
  /** The meter's Rules button: which rule files go with this conversation's requests (a quick pick). */
  | 'rules';

export interface UsageView {
  prompt: number;
  completion: number;
  total: number;
  estimated: boolean;
}

export interface ErrorView {
  kind: ErrorKindView;
  /** What happened, in words ("The server rejected the API key"). */
  title: string;
  /** The provider's own message, with any key text redacted. */
  detail?: string;
  /** A hint, e.g. that the base URL likely lacks `/v1`. */
  hint?: string;
  actions: ActionId[];
}

export interface ImageView {
  name: string;
  /** data: URL (image/png, image/jpeg, image/gif, image/webp). */
  dataUrl: string;
}

/** Code context attached to a question (Add Selection to Chat, Explain Selection). */
export interface ContextChip {
  id: string;
  /** Workspace-relative path. */
  path: string;
  startLine: number;
  endLine: number;
  language: string;
  /** True when the selection was cut to parley.maxContextChars. */
  truncated: boolean;
  /**
   * An `@` mention: read when the question is sent, not when it was picked, so the content is current. Until then
   * `path` is the file (or `@selection`, `@problems`, `@open`) and the lines are 0. `problems` stays on what it sent.
   */
  mention?: MentionKind;
}

/** What an `@` mention names: a workspace file, the editor's selection, the current file's problems, the open editors. */
export type MentionKind = 'file' | 'selection' | 'problems' | 'open';

/** One entry of the `@` picker. */
export interface MentionCandidate {
  kind: MentionKind;
  /** `@selection`, or a file's name. */
  label: string;
  /** What it sends, or the file's folder. */
  detail: string;
  /** Workspace-relative path (files only). */
  path?: string;
}

/** One prompt file, as the composer's `/` picker lists it. */
export interface PromptCandidate {
  /** What follows `/`. */
  name: string;
  description: string;
  /** What to type after `/name`: the front matter's `argument-hint`, else the inputs the body asks for. */
  hint: string;
  /** Where it was found: a workspace path, or `user` for the user's prompts folder. */
  source: string;
}

/**
 * Where one tool call stands: `queued` waits for the calls before it, `waiting` asks the reader (Allow once, Always
 * allow this tool, Deny).
 */
export type ToolCallStatus = 'queued' | 'waiting' | 'running' | 'done' | 'denied' | 'failed';

/** One argument of a call, as its approval question shows it (core/toolArguments.ts). */
export interface ToolArgumentView {
  /** As the tool's schema names it. */
  name: string;
  /**
   * The value as text (a string as it is, anything else as JSON), invisible and direction-changing characters written
   * out (`⟦U+202E⟧`), whole: never cut.
   */
  value: string;
}

/** One tool call of a turn, shown as a compact card between the text parts. */
export interface ToolCallView {
  /**
   * Parley's id for the call: its card and its approval go by it. Unique in the conversation, never the server's (a
   * server may give the same id in every round).
   */
  id: string;
  /**
   * The id the call goes back to the server under (the server's own, or Parley's when it gave none or repeated one in
   * the round). Unset in conversations stored before Parley made ids of its own: there `id` is the server's.
   */
  wireId?: string;
  name: string;
  /** The main argument, for the card's one line: a path, a query ('' when there is none). */
  summary: string;
  /** The arguments exactly as the model sent them (JSON text). */
  arguments: string;
  status: ToolCallStatus;
  /** How long the call ran, once it ended. */
  ms?: number;
  /** The text the model received as the result (redacted), once there is one. */
  result?: string;
  /** While the call waits for the reader: every argument, in the order the tool's schema declares them. */
  question?: ToolArgumentView[];
}

/** A round of a turn that used tools: the text the model wrote, then the calls it made. */
export interface ToolStepView {
  text: string;
  calls: ToolCallView[];
}

export interface TurnView {
  id: string;
  role: 'user' | 'assistant';
  /** Markdown for assistant turns; plain text for user turns. */
  text: string;
  reasoning?: string;
  /** Milliseconds spent thinking, once known; while streaming the webview counts from reasoningStartedAt. */
  reasoningMs?: number;
  reasoningStartedAt?: number;
  /** The wire field the reasoning came in (`reasoning_content`, `reasoning`, `reasoning_details`, `think_tag`). */
  reasoningField?: string;
  images?: ImageView[];
  context?: ContextChip[];
  /** A short line shown above a user turn, e.g. "Explaining the enclosing block, lines 10–24 (cut to 24,000 characters)". */
  note?: string;
  status: TurnStatus;
  usage?: UsageView;
  error?: ErrorView;
  model?: string;
  /**
   * Rounds that ended in tool calls, before the current `text` (assistant turns only). The turn reads: each step's
   * text and its calls' cards, in order, then `text`.
   */
  steps?: ToolStepView[];
  /** Requests the turn made (more than one when it used tools); `usage` is their sum. */
  requests?: number;
  /**
   * A summary made by compaction (role `assistant`): it stands for the `summaryOf` turns before it, which stay in the
   * transcript for the reader but are no longer sent. Shown collapsed, expandable, with its usage.
   */
  summaryOf?: number;
  /** The profile the turn's request went to (assistant turns). */
  profile?: string;
  /**
   * In a snapshot only, never stored: the turn streams in another window, so its questions are answered there (this
   * window draws no approval buttons for it).
   */
  elsewhere?: boolean;
}

export interface ConversationView {
  id: string;
  title: string;
  turns: TurnView[];
}

export interface HistoryItem {
  id: string;
  title: string;
  updatedAt: number;
  turnCount: number;
  /** The conversation file's size when its entry was written: a file of another size is checked when listed. */
  bytes?: number;
  /** A damaged file, moved aside as `<id>.corrupt.json`: the list offers Open raw and Delete. */
  damaged?: boolean;
  /** A reply was streaming when the conversation was saved: if its window went away, it is recovered as Interrupted. */
  streaming?: boolean;
}

export interface PresetView {
  id: string;
  label: string;
  baseUrl: string;
  model: string;
  needsKey: boolean;
}

/** The first-run card: shown when no endpoint or key is set up. */
export interface SetupView {
  /** Why the card shows, in words ("No API key for https://api.openai.com"). */
  reason: string;
  presets: PresetView[];
  origin: string;
  /** Buttons to show on the card, in order; e.g. setApiKey, markNoKey ("This endpoint needs no key"), testConnection. */
  actions: ActionId[];
}

export interface HeaderView {
  model: string;
  /** Host of the endpoint, e.g. "api.openai.com" or "127.0.0.1:11434". */
  endpoint: string;
  /** True when pointed at `npm start`'s demo endpoint. */
  demo: boolean;
  /** Models listed by GET /models, when the server answered; empty otherwise. */
  models: string[];
  /** The open conversation's endpoint profile (its name). */
  profile: string;
  /** Every profile the header can switch to, in settings order (the implicit one from parley.baseUrl first). */
  profiles: ProfileChoice[];
  /** The reasoning efforts the model is offered with, when it is (core/reasoningEffort.ts says when). */
  effort?: EffortView;
}

/** The header's reasoning effort: what it offers, and the open conversation's choice ("" for the server's default). */
export interface EffortView {
  options: string[];
  value: string;
}

/** One endpoint profile, as the header's switcher lists it. */
export interface ProfileChoice {
  name: string;
  /** host[:port] of its base URL, or the base URL as written when it is not a URL. */
  endpoint: string;
}

/** The context meter: the next request's prompt against the model's window. */
export interface ContextMeterView {
  /** Estimated prompt tokens of the next request: system prompt, history, attachments, tool results. */
  used: number;
  /** The model's context window in tokens; undefined when unknown (shown as unknown, never guessed). */
  window?: number;
  /** Where the window came from: the server, or a contextWindow setting smaller than the server's window. */
  windowSource?: 'server' | 'profile';
  /** The window a local server runs the model at, when it says; a prompt larger than it is not sent. */
  serverWindow?: number;
  /** The window's source and any setting not applied, in words, for the tooltip (plain text). */
  windowNotes?: string[];
  /** Tokens kept free for the reply (the output limit), counted against the window. */
  reserve: number;
  /** The estimate was scaled by the last request's real prompt_tokens. */
  corrected: boolean;
  /** Percent of the window past which Parley compacts on its own (0: never on its own). */
  threshold: number;
  /** Turns a compaction would summarize now; 0 when there is nothing old enough to summarize. */
  compactable: number;
  /** The tool definitions sent, counted in `used`: their tokens, how many of those offered, and whether shortened. */
  tools?: { tokens: number; sent: number; offered: number; short: boolean };
  /** The rule files that went with the last request (counted in `used`), and those left out with why. */
  rules?: RuleView[];
}

/** A rule file in the meter: its path as shown and its tokens; `note` says why it was cut or left out (0 tokens). */
export interface RuleView {
  path: string;
  tokens: number;
  note?: 'cut' | 'over' | 'not allowed' | 'off';
}

/**
 * Messages from the host to the webview, one entry per type: its payload. The webview has one route for each
 * (webview/hostRoutes.ts). They are not checked on arrival: the webview trusts its host.
 */
export interface HostMessages {
  snapshot: {
    conversation: ConversationView;
    generating: boolean;
    header: HeaderView;
    setup?: SetupView;
    pendingContext: ContextChip[];
  };
  turnStart: { turn: TurnView };
  /** Only the new text: never the whole conversation per token. */
  delta: { turnId: string; text?: string; reasoning?: string };
  /** Final state of a turn (status, usage, error); text is the full text for reconciliation. */
  turnEnd: { turn: TurnView };
  /**
   * A tool round began or a call changed: the turn's steps as they are now. When a round ended in tool calls its text
   * moved into the last step, and the turn's streaming text starts again from empty.
   */
  turnSteps: { turnId: string; steps: ToolStepView[] };
  generating: { value: boolean };
  header: { header: HeaderView };
  /**
   * How full the model's window will be with the next request (undefined: the endpoint is not ready). Only this
   * message sets the meter: a header, which the model list can redraw at any time, leaves it as it is.
   */
  meter: { meter?: ContextMeterView };
  setup: { setup?: SetupView };
  history: { items: HistoryItem[] };
  pendingContext: { chips: ContextChip[] };
  notice: { text: string; actions?: ActionId[] };
  /** The composer's input was refused (empty, too large, bad image): shown next to the composer, nothing sent. */
  composerError: { text: string };
  /** Put text back in the composer (Edit last question). */
  composerText: { text: string; images?: ImageView[] };
  imageAttached: { image: ImageView };
  /** The `@` picker's entries for the query the webview sent (mentionQuery). */
  mentionCandidates: { query: string; items: MentionCandidate[] };
  /** The prompt files the `/` picker lists (answers promptQuery). */
  promptCandidates: { items: PromptCandidate[] };
  /** Whether the composer's tools switch is on for this conversation, and whether tools are available at all. */
  tools: { enabled: boolean; available: boolean };
  focusComposer: NoFields;
}

/** A message from the host to the webview. */
export type HostMessage = MessageUnion<HostMessages>;

/** Allow once, Always allow this tool (for this window's session), or Deny. */
export type ToolDecision = 'once' | 'always' | 'deny';

/** Limits the host enforces on what the webview sends. */
export const LIMITS = {
  /** Longest prompt accepted from the composer. */
  promptChars: 256 * 1024,
  /** Largest image, decoded. */
  imageBytes: 5 * 1024 * 1024,
  maxImages: 8,
  /** Longest text for copy / insert / open. */
  codeChars: 2 * 1024 * 1024,
  urlChars: 4096,
  /** A code block's info string, and the line before it (Apply reads a path from them). */
  infoChars: 1024,
  idChars: 128,
  modelChars: 256,
  /** Longest `@` query, and longest mentioned path. */
  mentionQueryChars: 256,
  pathChars: 1024,
} as const;

export const IMAGE_MIME_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

export const ACTION_IDS: readonly ActionId[] = ['retry', 'setApiKey', 'markNoKey', 'openSettings', 'testConnection', 'continue', 'showLog', 'compact', 'compactRetry', 'switchEndpoint', 'sendOnceAnyway', 'openBudgetSettings', 'rules'];

export const MENTION_KINDS: readonly MentionKind[] = ['file', 'selection', 'problems', 'open'];

// The field checkers of WEBVIEW_MESSAGES. They live in this file, marked free of side effects, and the table names its
// limits by key (text('idChars'), never LIMITS.idChars): built only of literals and such calls, the table is dropped
// from every bundle that uses this module but never checks a message (the webview's, the lazy ones). esbuild sees the
// mark only on calls within the file that declares the function.

/** A limit: a number, or the key of one of LIMITS. */
type Limit = number | keyof typeof LIMITS;

/** A string of at most `limit` characters. */
/* @__NO_SIDE_EFFECTS__ */
function text(limit: Limit): Field<string> {
  return (v, name) => {
    const max = typeof limit === 'number' ? limit : LIMITS[limit];
    if (typeof v !== 'string') refuse(`${name} is not a string`);
    if (v.length > max) refuse(`${name} is longer than ${max} characters`);
    return v;
  };
}

/** A boolean. */
const flag: Field<boolean> = (v, name) => (typeof v === 'boolean' ? v : refuse(`${name} is not a boolean`));

/** One of `values`; anything else is refused as an unknown `what`. */
/* @__NO_SIDE_EFFECTS__ */
function oneOf<T extends string>(values: readonly T[], what: string): Field<T> {
  return (v) => (values.includes(v as T) ? (v as T) : refuse(`unknown ${what}`));
}

/** An array of at most `limit` items, each passing `item`. */
/* @__NO_SIDE_EFFECTS__ */
function list<T>(item: Field<T>, limit: Limit): Field<T[]> {
  return (v, name, m) => {
    const max = typeof limit === 'number' ? limit : LIMITS[limit];
    if (!Array.isArray(v)) refuse(`${name} is not an array`);
    if (v.length > max) refuse(`more than ${max} ${name}`);
    // for…of, not map: a hole in a sparse array is checked (and refused) as `undefined`, not skipped.
    const out: T[] = [];
    for (const x of v as unknown[]) out.push(item(x, name, m));
    return out;
  };
}

/** `field`, then `f` on the value it gave: a further check (which may refuse), or a cleaning. */
/* @__NO_SIDE_EFFECTS__ */
function refine<A, B>(field: Field<A>, f: (value: A, name: string, message: Readonly<Record<string, unknown>>) => B): Field<B> {
  return (v, name, m) => f(field(v, name, m), name, m);
}

/** An attached image: a name, and a PNG, JPEG, GIF or WebP data URL of at most LIMITS.imageBytes decoded. */
const image: Field<ImageView> = (img) => {
  if (typeof img !== 'object' || img === null) refuse('image is not an object');
  const { name, dataUrl } = img as Record<string, unknown>;
  if (typeof name !== 'string' || name.length > 256) refuse('bad image name');
  // base64 grows 4/3; allow a little for the header.
  if (typeof dataUrl !== 'string' || dataUrl.length > Math.ceil(LIMITS.imageBytes * 4 / 3) + 100) {
    refuse(`image ${name} is larger than ${LIMITS.imageBytes / 1024 / 1024} MB`);
  }
  if (!/^data:(image\/(?:png|jpeg|gif|webp));base64,[A-Za-z0-9+/]+=*$/.test(dataUrl)) {
    refuse(`image ${name} is not a PNG, JPEG, GIF or WebP data URL`);
  }
  return { name, dataUrl };
};

const byId = { id: text('idChars') };
const mentionPath = refine(text('pathChars'), (path, name) => (path.trim() ? path : refuse(`${name} is empty`)));

/**
 * Messages from the webview to the host, one entry per type: its fields, each with its check, in the order they are
 * checked. The host checks each message with parseWebviewMessage, then routes it (vscode/webviewRoutes.ts).
 */
export const WEBVIEW_MESSAGES = {
  ready: {},
  /** The panel has painted the snapshot that answered its `ready`: the host's slower work for it may start now. */
  drawn: {},
  send: { text: text('promptChars'), images: list(image, 'maxImages') },
  /** Stop the running reply (the Stop button, Escape). */
  stop: {},
  regenerate: {},
  editLast: {},
  copy: { text: text('codeChars') },
  insertCode: { code: text('codeChars') },
  /** A language that is not a plain name is sent on as '' (plain text). */
  openCode: { code: text('codeChars'), language: refine(text(64), (language) => (/^[\w.+#-]*$/.test(language) ? language : '')) },
  /** A code block's Apply button: its code, its fence's info string and the line before it, as plain data. */
  applyCode: { code: text('codeChars'), info: text('infoChars'), before: text('infoChars') },
  openLink: { url: text('urlChars') },
  newChat: {},
  requestHistory: {},
  openConversation: byId,
  deleteConversation: byId,
  /** A damaged conversation file (`<id>.corrupt.json`): open it read-only as text, or delete it. */
  openRaw: byId,
  deleteDamaged: byId,
  clearHistory: {},
  /** A button that maps to a host action; Retry and Continue come only this way. */
  action: { action: oneOf(ACTION_IDS, 'action') },
  applyPreset: byId,
  pickModel: {},
  setModel: { model: text('modelChars') },
  /** The header's profile switcher: this conversation (and new ones) use that profile. */
  setProfile: { name: text('modelChars') },
  /** The header's reasoning effort for this conversation ("": the server's default); the host sends only one it offered. */
  setEffort: { effort: text(64) },
  pickImage: {},
  removeContext: byId,
  /**
   * The reader's answer to a waiting tool call: only a click or key in the panel approves anything. With the tool's
   * name and the arguments the question showed: the host acts on it only if they are the waiting call's.
   */
  toolApproval: {
    callId: text('idChars'),
    decision: oneOf<ToolDecision>(['once', 'always', 'deny'], 'decision'),
    name: text('modelChars'),
    arguments: text('codeChars'),
  },
  /** The composer's tools switch, for this conversation. */
  setTools: { enabled: flag },
  /** The `@` picker asks for its entries (sent debounced as the reader types). */
  mentionQuery: { query: text('mentionQueryChars') },
  /**
   * A pick in the `@` picker: the host checks it and adds a chip (or attaches an image), or says why not. Only a file
   * has a path (not empty); another kind's is dropped.
   */
  addMention: {
    kind: oneOf(MENTION_KINDS, 'mention kind'),
    path: (v, name, m) => (m.kind === 'file' ? mentionPath(v, name, m) : undefined),
  },
  /** The `/` picker asks for the prompt files (on `/` typed at the start of the composer). */
  promptQuery: {},
  /** Sends prompt file `/name` as the reader's message, with the arguments typed after it. */
  runPrompt: { name: text('modelChars'), args: text('promptChars') },
} satisfies FieldTable;

/** A message from the webview to the host. The host checks each with parseWebviewMessage. */
export type WebviewMessage = CheckedMessages<typeof WEBVIEW_MESSAGES>;

/** Result of validating one incoming message: the typed message, or why it was refused. */
export type Parsed = Checked<WebviewMessage>;

/**
 * Checks type, fields and sizes of a message from the webview against WEBVIEW_MESSAGES. Anything not in the protocol
 * is refused, with a reason for the log. Unknown extra fields are dropped, never passed on.
 */
export function parseWebviewMessage(raw: unknown): Parsed {
  return checkMessage(WEBVIEW_MESSAGES, raw);
}

/** Decoded byte size of a base64 data URL's payload. */
export function dataUrlBytes(dataUrl: string): number {
  const comma = dataUrl.indexOf(',');
  const b64 = dataUrl.slice(comma + 1);
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - pad;
}
