// The one message protocol between the extension host and the chat webview, plus the host's validator.
// Pure TypeScript: used by both bundles. The host owns every conversation; the webview only renders.

/** How a reply ended, as shown to the reader. `done` is a clean stop and shows no badge. */
/** `interrupted`: the window went away (reload, crash) while the reply streamed; the text received is kept. */
export type TurnStatus = 'streaming' | 'done' | 'stopped' | 'interrupted' | 'truncated' | 'filtered' | 'incomplete' | 'error';

/** What a person is told an error was about. */
export type ErrorKindView =
  | 'auth' | 'not_found' | 'rate_limit' | 'quota' | 'context_length' | 'connection'
  | 'timeout' | 'protocol' | 'bad_request' | 'server' | 'config' | 'unknown';

/** Buttons an error card, the setup card or a notice may show. Each maps to one host action. */
export type ActionId =
  | 'retry' | 'setApiKey' | 'markNoKey' | 'openSettings' | 'testConnection' | 'continue' | 'showLog'
  /** Summarize the older turns now (the meter's button, the "won't fit" card). */
  | 'compact'
  /** After a context_length_exceeded error: summarize the older turns, then ask again. */
  | 'compactRetry'
  /** The palette's Switch Endpoint: profile, then model. */
  | 'switchEndpoint';

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
}

/** Messages from the host to the webview. */
export type HostMessage =
  | {
      type: 'snapshot';
      conversation: ConversationView;
      generating: boolean;
      header: HeaderView;
      setup?: SetupView;
      pendingContext: ContextChip[];
    }
  | { type: 'turnStart'; turn: TurnView }
  /** Only the new text: never the whole conversation per token. */
  | { type: 'delta'; turnId: string; text?: string; reasoning?: string }
  /** Final state of a turn (status, usage, error); text is the full text for reconciliation. */
  | { type: 'turnEnd'; turn: TurnView }
  /**
   * A tool round began or a call changed: the turn's steps as they are now. When a round ended in tool calls its text
   * moved into the last step, and the turn's streaming text starts again from empty.
   */
  | { type: 'turnSteps'; turnId: string; steps: ToolStepView[] }
  | { type: 'generating'; value: boolean }
  | { type: 'header'; header: HeaderView }
  /**
   * How full the model's window will be with the next request (undefined: the endpoint is not ready). Only this
   * message sets the meter: a header, which the model list can redraw at any time, leaves it as it is.
   */
  | { type: 'meter'; meter?: ContextMeterView }
  | { type: 'setup'; setup?: SetupView }
  | { type: 'history'; items: HistoryItem[] }
  | { type: 'pendingContext'; chips: ContextChip[] }
  | { type: 'notice'; text: string; actions?: ActionId[] }
  /** The composer's input was refused (empty, too large, bad image): shown next to the composer, nothing sent. */
  | { type: 'composerError'; text: string }
  /** Put text back in the composer (Edit last question). */
  | { type: 'composerText'; text: string; images?: ImageView[] }
  | { type: 'imageAttached'; image: ImageView }
  /** The `@` picker's entries for the query the webview sent (mentionQuery). */
  | { type: 'mentionCandidates'; query: string; items: MentionCandidate[] }
  /** Whether the composer's tools switch is on for this conversation, and whether tools are available at all. */
  | { type: 'tools'; enabled: boolean; available: boolean }
  | { type: 'focusComposer' };

/** Messages from the webview to the host. The host validates each with parseWebviewMessage. */
export type WebviewMessage =
  | { type: 'ready' }
  /** The panel has painted the snapshot that answered its `ready`: the host's slower work for it may start now. */
  | { type: 'drawn' }
  | { type: 'send'; text: string; images: ImageView[] }
  /** Stop the running reply (the Stop button, Escape). */
  | { type: 'stop' }
  | { type: 'regenerate' }
  | { type: 'editLast' }
  | { type: 'copy'; text: string }
  | { type: 'insertCode'; code: string }
  | { type: 'openCode'; code: string; language: string }
  /** A code block's Apply button: its code, its fence's info string and the line before it, as plain data. */
  | { type: 'applyCode'; code: string; info: string; before: string }
  | { type: 'openLink'; url: string }
  | { type: 'newChat' }
  | { type: 'requestHistory' }
  | { type: 'openConversation'; id: string }
  | { type: 'deleteConversation'; id: string }
  /** A damaged conversation file (`<id>.corrupt.json`): open it read-only as text, or delete it. */
  | { type: 'openRaw'; id: string }
  | { type: 'deleteDamaged'; id: string }
  | { type: 'clearHistory' }
  /** A button that maps to a host action; Retry and Continue come only this way. */
  | { type: 'action'; action: ActionId }
  | { type: 'applyPreset'; id: string }
  | { type: 'pickModel' }
  | { type: 'setModel'; model: string }
  /** The header's profile switcher: this conversation (and new ones) use that profile. */
  | { type: 'setProfile'; name: string }
  | { type: 'pickImage' }
  | { type: 'removeContext'; id: string }
  /**
   * The reader's answer to a waiting tool call: only a click or key in the panel approves anything. With the tool's
   * name and the arguments the question showed: the host acts on it only if they are the waiting call's.
   */
  | { type: 'toolApproval'; callId: string; decision: ToolDecision; name: string; arguments: string }
  /** The composer's tools switch, for this conversation. */
  | { type: 'setTools'; enabled: boolean }
  /** The `@` picker asks for its entries (sent debounced as the reader types). */
  | { type: 'mentionQuery'; query: string }
  /** A pick in the `@` picker: the host checks it and adds a chip (or attaches an image), or says why not. */
  | { type: 'addMention'; kind: MentionKind; path?: string };

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

export const ACTION_IDS: readonly ActionId[] = ['retry', 'setApiKey', 'markNoKey', 'openSettings', 'testConnection', 'continue', 'showLog', 'compact', 'compactRetry', 'switchEndpoint'];

export const MENTION_KINDS: readonly MentionKind[] = ['file', 'selection', 'problems', 'open'];

/** Result of validating one incoming message: the typed message, or why it was refused. */
export type Parsed = { ok: true; message: WebviewMessage } | { ok: false; reason: string };

const NO_FIELDS = new Set(['ready', 'drawn', 'stop', 'regenerate', 'editLast', 'newChat',
  'requestHistory', 'clearHistory', 'pickModel', 'pickImage']);

/**
 * Checks type, fields and sizes of a message from the webview. Anything not in the protocol is refused,
 * with a reason for the log. Unknown extra fields are dropped, never passed on.
 */
export function parseWebviewMessage(raw: unknown): Parsed {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('not an object');
  const m = raw as Record<string, unknown>;
  const type = m.type;
  if (typeof type !== 'string') return bad('no type');
  if (NO_FIELDS.has(type)) return ok({ type } as WebviewMessage);
  switch (type) {
    case 'send': {
      const text = str(m.text, LIMITS.promptChars, 'text');
      if (typeof text !== 'string') return text;
      if (!Array.isArray(m.images)) return bad('images is not an array');
      if (m.images.length > LIMITS.maxImages) return bad(`more than ${LIMITS.maxImages} images`);
      const images: ImageView[] = [];
      for (const img of m.images) {
        const parsed = parseImage(img);
        if ('reason' in parsed) return parsed;
        images.push(parsed);
      }
      return ok({ type, text, images });
    }
    case 'copy':
    case 'insertCode': {
      const key = type === 'copy' ? 'text' : 'code';
      const v = str(m[key], LIMITS.codeChars, key);
      if (typeof v !== 'string') return v;
      return ok(type === 'copy' ? { type, text: v } : { type, code: v });
    }
    case 'openCode': {
      const code = str(m.code, LIMITS.codeChars, 'code');
      if (typeof code !== 'string') return code;
      const language = str(m.language, 64, 'language');
      if (typeof language !== 'string') return language;
      return ok({ type, code, language: /^[\w.+#-]*$/.test(language) ? language : '' });
    }
    case 'applyCode': {
      const code = str(m.code, LIMITS.codeChars, 'code');
      if (typeof code !== 'string') return code;
      const info = str(m.info, LIMITS.infoChars, 'info');
      if (typeof info !== 'string') return info;
      const before = str(m.before, LIMITS.infoChars, 'before');
      if (typeof before !== 'string') return before;
      return ok({ type, code, info, before });
    }
    case 'openLink': {
      const url = str(m.url, LIMITS.urlChars, 'url');
      if (typeof url !== 'string') return url;
      return ok({ type, url });
    }
    case 'openConversation':
    case 'deleteConversation':
    case 'openRaw':
    case 'deleteDamaged':
    case 'applyPreset':
    case 'removeContext': {
      const id = str(m.id, LIMITS.idChars, 'id');
      if (typeof id !== 'string') return id;
      return ok({ type, id } as WebviewMessage);
    }
    case 'setModel': {
      const model = str(m.model, LIMITS.modelChars, 'model');
      if (typeof model !== 'string') return model;
      return ok({ type, model });
    }
    case 'setProfile': {
      const name = str(m.name, LIMITS.modelChars, 'name');
      if (typeof name !== 'string') return name;
      return ok({ type, name });
    }
    case 'toolApproval': {
      const callId = str(m.callId, LIMITS.idChars, 'callId');
      if (typeof callId !== 'string') return callId;
      if (m.decision !== 'once' && m.decision !== 'always' && m.decision !== 'deny') return bad('unknown decision');
      const name = str(m.name, LIMITS.modelChars, 'name');
      if (typeof name !== 'string') return name;
      const args = str(m.arguments, LIMITS.codeChars, 'arguments');
      if (typeof args !== 'string') return args;
      return ok({ type, callId, decision: m.decision, name, arguments: args });
    }
    case 'setTools': {
      if (typeof m.enabled !== 'boolean') return bad('enabled is not a boolean');
      return ok({ type, enabled: m.enabled });
    }
    case 'mentionQuery': {
      const query = str(m.query, LIMITS.mentionQueryChars, 'query');
      if (typeof query !== 'string') return query;
      return ok({ type, query });
    }
    case 'addMention': {
      if (!MENTION_KINDS.includes(m.kind as MentionKind)) return bad('unknown mention kind');
      const kind = m.kind as MentionKind;
      if (kind !== 'file') return ok({ type, kind });
      const path = str(m.path, LIMITS.pathChars, 'path');
      if (typeof path !== 'string') return path;
      if (!path.trim()) return bad('path is empty');
      return ok({ type, kind, path });
    }
    case 'action': {
      if (!ACTION_IDS.includes(m.action as ActionId)) return bad('unknown action');
      return ok({ type, action: m.action as ActionId });
    }
    default:
      return bad(`unknown message type ${JSON.stringify(type.slice(0, 40))}`);
  }
}

/** Decoded byte size of a base64 data URL's payload. */
export function dataUrlBytes(dataUrl: string): number {
  const comma = dataUrl.indexOf(',');
  const b64 = dataUrl.slice(comma + 1);
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - pad;
}

function parseImage(img: unknown): ImageView | { ok: false; reason: string } {
  if (typeof img !== 'object' || img === null) return bad('image is not an object');
  const { name, dataUrl } = img as Record<string, unknown>;
  if (typeof name !== 'string' || name.length > 256) return bad('bad image name');
  // base64 grows 4/3; allow a little for the header.
  if (typeof dataUrl !== 'string' || dataUrl.length > Math.ceil(LIMITS.imageBytes * 4 / 3) + 100) {
    return bad(`image ${name} is larger than ${LIMITS.imageBytes / 1024 / 1024} MB`);
  }
  const match = /^data:(image\/(?:png|jpeg|gif|webp));base64,[A-Za-z0-9+/]+=*$/.exec(dataUrl);
  if (!match) return bad(`image ${name} is not a PNG, JPEG, GIF or WebP data URL`);
  return { name, dataUrl };
}

function str(v: unknown, max: number, field: string): string | { ok: false; reason: string } {
  if (typeof v !== 'string') return bad(`${field} is not a string`);
  if (v.length > max) return bad(`${field} is longer than ${max} characters`);
  return v;
}

function ok(message: WebviewMessage): Parsed {
  return { ok: true, message };
}

function bad(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
