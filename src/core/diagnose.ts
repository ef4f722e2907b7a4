// "Test Connection": probes an endpoint step by step and explains, in plain words, what works and what to change.
import { listModelInfo, listModels, type ClientOptions } from './client';
import { chatWithFallback, type FallbackAttempt } from './fallback';
import { resolveEndpoint, type Endpoint } from './endpoint';
import { ParleyError } from './errors';
import type { ModelInfo } from './modelInfo';
import { codeSpan, markdownProse } from './markdownText';
import { redact } from './redact';
import type { Adaptations, RequestSettings } from './request';
import { WindowProbe, type ServerWindow } from './serverWindow';
import { secretsOf } from './transport';
import type { ChatMessage, EndState, ReasoningField, StreamEvent, Usage } from './types';
import { billed } from './usageLedger';

/** What diagnose() needs. The key is used only for `endpoint.origin` and never appears in the report. */
export interface DiagnoseOptions {
  endpoint: Endpoint;
  apiKey?: string;
  /** The profile's custom headers, secrets filled in: sent with every probe, as with chat. */
  headers?: Record<string, string>;
  model: string;
  /** What Parley already learnt about this origin and model, so the test sends what chat sends. */
  adaptations?: Adaptations;
  /** Per-request limit for headers and for stream silence. Default 15 s. */
  timeoutMs?: number;
  /** The user's sampling settings, so a parameter the server refuses shows up here too. */
  settings?: Partial<Omit<RequestSettings, 'model' | 'stream' | 'maxTokens'>>;
  /** True when no key is stored for this origin and the user has not said that it needs none. */
  keyMissing?: boolean;
  /** false: the profile turned streaming off, so the test asks for one whole reply as chat does. Default true. */
  stream?: boolean;
  /** The named profile under test (undefined: the Default one, from parley.baseUrl), for the words of a fix. */
  profile?: string;
  /** The Responses API, for a model served there (as chat's requests have it: ClientOptions.responses). */
  responses?: ClientOptions['responses'];
  signal?: AbortSignal;
  /** Each chat request the server bills (core/usageLedger.ts billed()): its usage and time, for the caller to count. */
  onBilled?: (usage: Usage, durationMs: number) => void;
}

/** A failure, in words, with the key removed. */
export interface ErrorSummary {
  kind: ParleyError['kind'];
  status?: number;
  code?: string;
  message: string;
}

/** Step 2: GET …/models. */
export interface ModelsStep {
  url: string;
  outcome: 'listed' | 'failed';
  ids: string[];
  error?: ErrorSummary;
  /** Whether the configured model is among `ids` (undefined when nothing was listed). */
  modelListed?: boolean;
  /** Listed names closest to the configured one, when it is not listed. */
  closest?: string[];
  /**
   * The window the server runs the configured model at, as the panel's meter and compaction read it (its list, and a
   * local server's own endpoints: llama.cpp's /props…); asked when the model is listed, or the list is empty.
   */
  window?: ServerWindow;
}

/** Step 3: a one-token request, streamed unless the profile turned streaming off. */
export interface ChatStep {
  outcome: 'ok' | 'failed';
  /** Whether it asked for a stream. */
  streamed: boolean;
  status?: number;
  contentType?: string;
  ttfbMs?: number;
  /** Stream events received (text, reasoning, usage, finish…). */
  chunks: number;
  sawDone: boolean;
  sawUsage: boolean;
  reasoningField?: ReasoningField;
  /** Parameters the server refused, which Parley dropped (or, for max_tokens, renamed) to get an answer. */
  dropped: string[];
  /**
   * The API that answered: chat completions, or the Responses API (`learnt`: the server refused the model on chat
   * completions, this time or before; `profile`: the profile's `models.<id>.api` says so).
   */
  api?: { name: 'responses'; url: string; why: 'learnt' | 'profile' };
  ended: EndState;
  finishReason: string | null;
  /** The start of the reply, for the eye. */
  sample: string;
  error?: ErrorSummary;
}

/** Why it fails (or what to change), most likely first. */
export type CauseId =
  | 'add-v1'
  | 'remove-v1'
  | 'no-v1'
  | 'trailing-slash'
  | 'wrong-path'
  | 'missing-key'
  | 'wrong-key'
  | 'no-key-needed'
  | 'use-127'
  | 'not-running'
  | 'unknown-host'
  | 'model-not-in-list'
  | 'model-not-found'
  | 'timeout'
  | 'rate-limit'
  | 'quota'
  | 'server-error'
  | 'not-openai-compatible'
  | 'stream-off'
  | 'setting';

export interface Cause {
  id: CauseId;
  /** One sentence: what to do. */
  fix: string;
  /** Why Parley thinks so. */
  because?: string;
}

/** Everything Test Connection found. Holds no key. */
export interface DiagnosisReport {
  ok: boolean;
  /** The exact URL chat requests go to. */
  url: string;
  modelsUrl: string;
  origin: string;
  model: string;
  key: 'present' | 'absent';
  keyMissing: boolean;
  /** Whether the profile sends custom headers (which may carry the key, as a header secret). */
  headers: boolean;
  models: ModelsStep;
  chat: ChatStep;
  causes: Cause[];
  /** Adaptations after this test (the given ones plus any learnt here). */
  adaptations: Adaptations;
  /** Other URLs on the same server that were tried, and what they did. */
  probes: { url: string; ok: boolean; detail: string }[];
}

const PROBE_MESSAGES: ChatMessage[] = [{ role: 'user', content: 'Reply with OK.' }];
const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * Runs the Test Connection steps against one endpoint: where requests go, GET models, a streamed
 * one-token request (with the capability fallback), and on failure probes that narrow down the fix.
 * Never throws for network or server failures: they are findings.
 */
export async function diagnose(opts: DiagnoseOptions): Promise<DiagnosisReport> {
  const secrets = secretsOf(opts);
  const clean = (s: string) => redact(s, secrets);
  const client: ClientOptions = {
    endpoint: opts.endpoint,
    apiKey: opts.apiKey,
    headers: opts.headers,
    requestTimeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    idleTimeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    // A diagnosis reports what happens; retries with backoff would only hide it and take longer.
    maxRetries: 0,
    signal: opts.signal,
    responses: opts.responses,
  };

  const models = await modelsStep(client, opts.model, clean);
  const chat = await chatStep(client, opts, clean);

  const report: DiagnosisReport = {
    ok: chat.step.outcome === 'ok',
    url: opts.endpoint.url,
    modelsUrl: opts.endpoint.modelsUrl,
    origin: opts.endpoint.origin,
    model: opts.model,
    key: opts.apiKey ? 'present' : 'absent',
    keyMissing: opts.keyMissing === true,
    headers: Object.keys(opts.headers ?? {}).length > 0,
    models,
    chat: chat.step,
    causes: [],
    adaptations: chat.adaptations,
    probes: [],
  };
  report.causes = await findCauses(report, opts, chat.error, clean, client);
  return report;
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

async function modelsStep(client: ClientOptions, model: string, clean: (s: string) => string): Promise<ModelsStep> {
  const url = client.endpoint.modelsUrl;
  let list: ModelInfo[];
  try {
    list = await listModelInfo(client);
  } catch (e) {
    return { url, outcome: 'failed', ids: [], error: summarize(e, clean, true) };
  }
  const ids = list.map((m) => m.id);
  const listed = ids.length > 0 ? modelInList(model, ids) : undefined;
  const step: ModelsStep = { url, outcome: 'listed', ids, modelListed: listed, closest: listed === false ? closestNames(model, ids) : undefined };
  if (listed !== false) step.window = await new WindowProbe(client, list).windowOf(model);
  return step;
}

interface ChatOutcome {
  step: ChatStep;
  error?: ParleyError;
  adaptations: Adaptations;
}

async function chatStep(client: ClientOptions, opts: DiagnoseOptions, clean: (s: string) => string): Promise<ChatOutcome> {
  const streamed = opts.stream !== false;
  const settings: RequestSettings = { ...(opts.settings ?? {}), model: opts.model, stream: streamed, maxTokens: 1 };
  // The fallback loop chat uses, watched one attempt at a time: the report shows the status, content type and
  // timing of the attempt that counted, and what its events were.
  let started = Date.now();
  let chunks = 0;
  let sawUsage = false;
  let firstEventMs: number | undefined;
  let measured: Measured | undefined;
  const onEvent = (e: StreamEvent) => {
    firstEventMs ??= Date.now() - started;
    chunks++;
    if (e.type === 'usage') sawUsage = true;
  };
  const onAttempt = ({ result, response }: FallbackAttempt) => {
    if (billed(result)) opts.onBilled?.(result.usage, Date.now() - started);
    measured = {
      status: response?.status ?? result.error?.status,
      contentType: response?.contentType ?? undefined,
      ttfbMs: response?.ttfbMs ?? firstEventMs,
      chunks,
      sawUsage: sawUsage || result.usage.estimated === false,
    };
    started = Date.now();
    chunks = 0;
    sawUsage = false;
    firstEventMs = undefined;
  };
  const outcome = await chatWithFallback(client, settings, PROBE_MESSAGES, opts.adaptations, onEvent, onAttempt);
  const { adaptations, dropped } = outcome;
  const viaProfile = settings.api === 'responses';
  const api = client.responses && (viaProfile || (!settings.api && adaptations.api)) ? { name: 'responses' as const, url: client.responses().at(client).endpoint.url, why: viaProfile ? 'profile' as const : 'learnt' as const } : undefined;
  // No attempt: a setting is invalid, so nothing was sent.
  if (!measured) return { step: configFailure(outcome.result.error, clean, streamed), error: outcome.result.error, adaptations };
  // The last attempt is the one chatWithFallback returns: its result is outcome.result.
  const r = outcome.result;
  const step: ChatStep = {
    outcome: r.ended === 'done' || (r.ended === 'incomplete' && (r.text !== '' || r.reasoning !== '')) ? 'ok' : 'failed',
    streamed,
    status: measured.status,
    contentType: measured.contentType,
    ttfbMs: measured.ttfbMs,
    chunks: measured.chunks,
    sawDone: r.sawDone,
    sawUsage: measured.sawUsage,
    reasoningField: r.reasoningField,
    dropped,
    api,
    ended: r.ended,
    finishReason: r.finishReason,
    sample: clean((r.text || r.reasoning).slice(0, 200)),
    error: r.error ? summarize(r.error, clean) : undefined,
  };
  return { step, error: r.error, adaptations };
}

/** The step when a setting is invalid, so nothing was sent. */
function configFailure(e: unknown, clean: (s: string) => string, streamed: boolean): ChatStep {
  return { outcome: 'failed', streamed, chunks: 0, sawDone: false, sawUsage: false, dropped: [], ended: 'error', finishReason: null, sample: '', error: summarize(e, clean) };
}

/** What Test Connection saw of one attempt, besides its result. */
interface Measured {
  status?: number;
  contentType?: string;
  ttfbMs?: number;
  chunks: number;
  sawUsage: boolean;
}

// ---------------------------------------------------------------------------------------------
// Causes
// ---------------------------------------------------------------------------------------------

const UNEXPECTED_ENDPOINT = /unexpected endpoint|invalid url|not found|no route|cannot (post|get)|unknown (url|path|endpoint)/i;

async function findCauses(r: DiagnosisReport, opts: DiagnoseOptions, err: ParleyError | undefined, clean: (s: string) => string, client: ClientOptions): Promise<Cause[]> {
  const causes: Cause[] = [];
  const add = (c: Cause) => {
    if (!causes.some((x) => x.id === c.id)) causes.push(c);
  };

  if (r.ok) {
    worthKnowing(r, add);
    return causes;
  }

  const chatErr = r.chat.error;
  const text = [chatErr?.message, chatErr?.code].filter(Boolean).join(' ');
  const kind = chatErr?.kind;
  const status = chatErr?.status ?? r.chat.status;

  if (kind === 'config') {
    add({ id: 'setting', fix: chatErr?.message ?? 'A Parley setting is invalid.' });
    return causes;
  }

  // Nothing answers at all.
  if (kind === 'connection' || kind === 'timeout') {
    await unreachableCauses(r, opts, err, clean, add);
    return causes;
  }

  const modelErr = /\bmodel\b/i.test(text) && (status === 404 || kind === 'not_found' || /not (exist|found)|does not exist|unknown model|pull/i.test(text));
  if (listOrKeyCauses(r, status, modelErr, add)) return causes;

  if (kind === 'rate_limit') add({ id: 'rate-limit', fix: 'The provider is rate limiting this key. Wait a moment and test again.', because: chatErr?.message });
  if (kind === 'quota') add({ id: 'quota', fix: 'The account is out of quota or credit. Check billing with the provider.', because: chatErr?.message });

  // The model: a 404 (or words) that names it, from a server whose list did not settle it.
  if (modelErr && r.models.modelListed !== false) {
    add({ id: 'model-not-found', fix: `The server does not know the model "${r.model}". Check parley.model ("Parley: Select Model" lists what the server offers).`, because: chatErr?.message });
    return causes;
  }

  // The path: 404/405, LM Studio's 200 + "Unexpected endpoint", or a web page instead of the API.
  const html = /text\/html/i.test(r.chat.contentType ?? '');
  const pathLike = status === 404 || status === 405 || html || UNEXPECTED_ENDPOINT.test(text) || kind === 'not_found';
  if (pathLike) {
    await pathCauses(r, opts, clean, add, html);
    return causes;
  }

  // A gateway that breaks streamed requests only (Portkey 1.15.2 answers every one with a 500): the same request
  // without streaming tells it apart from a server that fails whatever it is asked.
  if (r.chat.streamed && (kind === 'server' || kind === 'protocol' || kind === 'bad_request') && (await unstreamedWorks(client, opts, r))) {
    add({ id: 'stream-off', fix: streamOffFix(opts.profile), because: `${r.url} failed the streamed request, and answered the same request with "stream": false.` });
    return causes;
  }

  if (kind === 'server' || (status !== undefined && status >= 500)) {
    add({ id: 'server-error', fix: 'The server failed while answering. Check its own log; test again in a moment.', because: chatErr?.message });
  } else if (kind === 'protocol') {
    await pathCauses(r, opts, clean, add, html);
    if (causes.length === 0) {
      add({ id: 'not-openai-compatible', fix: 'The server answered, but not in the OpenAI chat format. Check that parley.baseUrl points at its OpenAI-compatible API.', because: chatErr?.message });
    }
  }
  return causes;
}

/**
 * The model missing from the server's own list, and a refused key; true when that settles it. A model missing from the
 * list the server itself gave is the likeliest cause whatever the status (some servers answer an unknown model with a
 * bare 500 or 400), so it goes first, and the status's own cause follows unless the error is about the model too.
 */
function listOrKeyCauses(r: DiagnosisReport, status: number | undefined, modelErr: boolean, add: (c: Cause) => void): boolean {
  const chatErr = r.chat.error;
  const kind = chatErr?.kind;
  if (r.models.modelListed === false) {
    add({
      id: 'model-not-in-list',
      fix: `"${r.model}" is not in the server's model list${hintNames(r.models.closest)}. Set parley.model to one of them ("Parley: Select Model").`,
      because: chatErr?.message,
    });
    if (modelErr || kind === 'not_found' || kind === 'bad_request' || status === 404) return true;
  }
  if (kind !== 'auth' && status !== 401 && status !== 403) return false;
  add({
    id: r.key === 'absent' ? 'missing-key' : 'wrong-key',
    fix: `${r.key === 'absent' ? 'The server wants an API key.' : 'The server rejected the API key.'} ${keyAction(r)}`,
    because: chatErr?.message,
  });
  return true;
}

/** What to do about a key the server refused (401/403): set it, or the header secret that carries it. */
function keyAction(r: DiagnosisReport): string {
  const header = r.headers ? ', or, if the profile sends the key in a custom header, set that header\'s secret again ("Parley: Set Header Secret")' : '';
  return `Run "Parley: Set API Key" and enter ${r.key === 'absent' ? 'the' : 'a valid'} key for ${r.origin}${header}.`;
}

/** Whether the one-token request succeeds when it asks for one whole reply (`stream: false`). */
async function unstreamedWorks(client: ClientOptions, opts: DiagnoseOptions, r: DiagnosisReport): Promise<boolean> {
  const settings: RequestSettings = { ...(opts.settings ?? {}), model: opts.model, stream: false, maxTokens: 1 };
  let started = Date.now();
  const onAttempt = (a: FallbackAttempt) => {
    if (billed(a.result)) opts.onBilled?.(a.result.usage, Date.now() - started);
    started = Date.now();
  };
  const { result } = await chatWithFallback(client, settings, PROBE_MESSAGES, r.adaptations, undefined, onAttempt);
  return result.ended === 'done';
}

/** How to turn streaming off: in the named profile, or in a new one for the Default profile, which has no entry. */
function streamOffFix(profile: string | undefined): string {
  const where = profile !== undefined
    ? `add "stream": false to the profile "${profile}" in parley.endpoints`
    : 'add a profile with this base URL and "stream": false to parley.endpoints, then choose it with "Parley: Switch Endpoint"';
  return `Streamed requests fail at this endpoint, but whole replies work. Turn streaming off: ${where}.`;
}

/** What is worth knowing when the connection works. */
function worthKnowing(r: DiagnosisReport, add: (c: Cause) => void): void {
  if (r.keyMissing && r.key === 'absent') {
    add({
      id: 'no-key-needed',
      fix: 'This server answered without an API key. If it needs none, choose "This endpoint needs no key" in the Parley panel; otherwise run "Parley: Set API Key".',
    });
  }
  if (r.models.modelListed === false) {
    add({
      id: 'model-not-in-list',
      fix: `The server answered, but "${r.model}" is not in its model list${hintNames(r.models.closest)}. Check parley.model if replies come from another model than you expect.`,
    });
  }
}

/** Nothing answers (refused, unknown host, timeout): which of those, and whether 127.0.0.1 would do. */
async function unreachableCauses(r: DiagnosisReport, opts: DiagnoseOptions, err: ParleyError | undefined, clean: (s: string) => string, add: (c: Cause) => void): Promise<void> {
  const chatErr = r.chat.error;
  const kind = chatErr?.kind;
  const url = new URL(r.url);
  const raw = `${err?.message ?? ''} ${err?.code ?? ''} ${causeCodes(err)}`;
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(raw)) {
    add({ id: 'unknown-host', fix: `The host name "${url.hostname}" does not resolve. Check its spelling in parley.baseUrl.`, because: chatErr?.message });
    return;
  }
  if (kind === 'timeout') {
    add({
      id: 'timeout',
      fix: 'The server took too long to answer. It may be loading the model: try again, or raise parley.requestTimeoutSeconds.',
      because: chatErr?.message,
    });
  } else {
    const refused = /ECONNREFUSED|refused/i.test(raw);
    add({
      id: 'not-running',
      fix: `Nothing is answering at ${url.host}. Check that the server is running and listening on port ${portOf(url)}.`,
      because: refused ? 'The connection was refused.' : chatErr?.message,
    });
  }
  if (url.hostname === 'localhost') {
    const alt = new URL(r.url);
    alt.hostname = '127.0.0.1';
    const probe = await probeModels(rootOf(alt.href), undefined, opts, clean);
    r.probes.push(probe);
    add({
      id: 'use-127',
      fix: `Use 127.0.0.1 instead of localhost in parley.baseUrl (${swapHost(opts.endpoint, '127.0.0.1')}).`,
      because: probe.ok
        ? 'The server answers on 127.0.0.1: "localhost" resolves to the IPv6 address ::1 first, where it does not listen.'
        : '"localhost" may resolve to the IPv6 address ::1 while the server listens only on 127.0.0.1.',
    });
  }
}

/** Tries the same server with /v1 added or removed and trailing slashes fixed, and names what answers. */
async function pathCauses(r: DiagnosisReport, opts: DiagnoseOptions, clean: (s: string) => string, add: (c: Cause) => void, html: boolean): Promise<void> {
  const root = rootOf(r.url);
  const u = new URL(root);
  const path = u.pathname.replace(/\/+$/, '');
  const candidates: { id: CauseId; root: string }[] = [];
  const withPath = (p: string) => `${u.origin}${p}`;

  if (/\/\/|\/$/.test(u.pathname) || /\/\/chat\/completions$/.test(new URL(r.url).pathname)) {
    candidates.push({ id: 'trailing-slash', root: withPath(u.pathname.replace(/\/{2,}/g, '/').replace(/\/+$/, '')) });
  }
  const doubled = path.match(/^(.*\/v\d+[a-z]*)\/v\d+[a-z]*(\/.*)?$/i);
  if (doubled) candidates.push({ id: 'remove-v1', root: withPath(`${doubled[1]}${doubled[2] ?? ''}`) });
  if (!/\/v\d+[a-z]*(\/|$)/i.test(path)) candidates.push({ id: 'add-v1', root: withPath(`${path}/v1`) });
  // A /v1 Parley added to a base URL without one is no "extra /v1" of the user's: the fix names the URL that answers.
  else candidates.push({ id: opts.endpoint.versionAdded ? 'no-v1' : 'remove-v1', root: withPath(path.replace(/\/v\d+[a-z]*$/i, '')) });
  // Most servers (Ollama, LM Studio, vLLM, llama.cpp) serve the API at /v1 right under the host: try that last,
  // and suggest it only when it answers (".../api" instead of ".../v1" on Ollama is a common mix-up).
  const plain = { id: 'wrong-path' as CauseId, root: withPath('/v1') };
  const tried = [...candidates, ...(candidates.some((c) => c.root === plain.root) ? [] : [plain])];

  let found = false;
  for (const c of tried) {
    if (c.root === root) continue;
    const probe = await probeModels(c.root, opts.apiKey, opts, clean);
    r.probes.push(probe);
    if (probe.ok) {
      found = true;
      add({ id: c.id, fix: fixFor(c.id, suggestBase(c.root), true), because: `${probe.url} answers with a model list.` });
      break;
    }
  }
  if (found) return;

  // Nothing answered: say what the URL shape suggests.
  const because = html
    ? `${r.url} answered with a web page, not the API.`
    : r.chat.error?.message ?? `${r.url} is not the chat endpoint.`;
  for (const c of candidates) add({ id: c.id, fix: fixFor(c.id, suggestBase(c.root), false), because });
  if (candidates.length === 0) add({ id: 'wrong-path', fix: 'Check parley.baseUrl: the server does not serve chat completions there.', because });
}

/** The fix for a URL cause; `answered`: a probe of `base` answered (else it is what the URL's shape suggests). */
function fixFor(id: CauseId, base: string, answered: boolean): string {
  switch (id) {
    case 'add-v1':
      return `Add /v1 to parley.baseUrl: ${base}`;
    case 'remove-v1':
      return `Remove the extra /v1 from parley.baseUrl: ${base}`;
    case 'no-v1':
      return answered
        ? `Parley added /v1 to parley.baseUrl, which had none, and this server answers without it: set parley.baseUrl to ${base}`
        : `Parley added /v1 to parley.baseUrl, which had none: if this server serves its API without /v1, set parley.baseUrl to ${base}`;
    case 'trailing-slash':
      return `Remove the trailing slash from parley.baseUrl: ${base}`;
    default:
      return `Set parley.baseUrl to ${base}`;
  }
}

/** GET {root}/models through the client; the key goes only to its own origin. */
async function probeModels(root: string, apiKey: string | undefined, opts: DiagnoseOptions, clean: (s: string) => string): Promise<{ url: string; ok: boolean; detail: string }> {
  const endpoint: Endpoint = { ...opts.endpoint, url: `${root}/chat/completions`, modelsUrl: `${root}/models`, base: root, origin: new URL(root).origin };
  const sameOrigin = endpoint.origin === opts.endpoint.origin;
  try {
    const ids = await listModels({
      endpoint,
      apiKey: sameOrigin ? apiKey : undefined,
      // Custom headers may carry a gateway's token: like the key, only to their own origin.
      headers: sameOrigin ? opts.headers : undefined,
      requestTimeoutMs: Math.min(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, 5_000),
      maxRetries: 0,
      signal: opts.signal,
    });
    return { url: endpoint.modelsUrl, ok: true, detail: ids.length ? `lists ${ids.length} model${ids.length === 1 ? '' : 's'}` : 'answers with an empty list' };
  } catch (e) {
    return { url: endpoint.modelsUrl, ok: false, detail: summarize(e, clean, true).message };
  }
}

// ---------------------------------------------------------------------------------------------
// The Markdown report
// ---------------------------------------------------------------------------------------------

/** The report as Markdown, for a person to read and to paste into a bug report. Never contains the key. */
export function reportMarkdown(r: DiagnosisReport): string {
  const L: string[] = [];
  L.push('# Parley: Test Connection', '');
  L.push(r.ok ? '**Result: the connection works.**' : '**Result: the connection does not work.**', '');

  if (r.causes.length > 0) {
    L.push(r.ok ? '## Worth knowing' : '## Likely fix', '');
    for (const c of r.causes) L.push(`- ${markdownProse(c.fix)}${c.because ? `  \n  _Because: ${markdownProse(c.because)}_` : ''}`);
    L.push('');
  }

  L.push('## 1. Where requests go', '');
  L.push(`- Chat URL: ${codeSpan(r.url)}`);
  L.push(`- Model: ${codeSpan(r.model)}`);
  const api = r.chat.api;
  L.push(api
    ? `- API: the Responses API, ${codeSpan(`POST ${api.url}`)} (${api.why === 'profile' ? 'the profile says so' : 'the server serves this model there only; "Parley: Reset Endpoint Adaptations" forgets it'})`
    : '- API: chat completions');
  L.push(`- API key: ${r.key === 'present' ? `present (sent only to ${r.origin})` : r.keyMissing ? 'absent (none is set for this endpoint; tested without one)' : 'absent (none needed)'}`);
  L.push('');

  L.push('## 2. Models', '');
  L.push(`- ${codeSpan(`GET ${r.models.url}`)}`);
  if (r.models.outcome === 'listed') {
    L.push(`- The server listed ${r.models.ids.length} model${r.models.ids.length === 1 ? '' : 's'}${r.models.ids.length ? ':' : '.'}`);
    const shown = r.models.ids.slice(0, 50);
    for (const id of shown) L.push(`  - ${codeSpan(id)}${id === r.model ? ' (configured)' : ''}`);
    if (r.models.ids.length > shown.length) L.push(`  - … and ${r.models.ids.length - shown.length} more`);
    if (r.models.modelListed === false) L.push(`- ${codeSpan(r.model)} is **not** in the list.`);
    if (r.models.window) L.push(`- ${windowLine(r.model, r.models.window)}`);
  } else {
    L.push(`- Not available: ${markdownProse(r.models.error?.message ?? 'no answer')}${statusNote(r.models.error)}`);
    L.push(`  ${markdownProse(unlistedWhy(r))}`);
  }
  L.push('');

  const c = r.chat;
  L.push(c.streamed ? '## 3. A streamed one-token request' : '## 3. A one-token request, not streamed (the profile turned streaming off)', '');
  L.push(`- HTTP status: ${c.status ?? 'none (no answer)'}`);
  L.push(`- Content type: ${c.contentType ? codeSpan(c.contentType) : 'unknown'}`);
  L.push(`- Time to first byte: ${c.ttfbMs !== undefined ? `${Math.round(c.ttfbMs)} ms` : 'unknown'}`);
  L.push(`- Chunks: ${c.chunks > 0 ? `yes (${c.chunks})` : 'none'}`);
  L.push(`- \`[DONE]\`: ${c.sawDone ? 'yes' : 'no'}`);
  L.push(`- Usage chunk: ${c.sawUsage ? 'yes' : 'no (Parley estimates usage and marks it ≈)'}`);
  L.push(`- Reasoning field: ${c.reasoningField ? reasoningName(c.reasoningField) : 'none seen'}`);
  L.push(
    `- Parameters dropped: ${
      c.dropped.length ? c.dropped.map((p) => (p === 'max_tokens' ? '`max_tokens` (sent as `max_completion_tokens`)' : codeSpan(p))).join(', ') : 'none'
    }`,
  );
  L.push(`- Ended: ${c.ended}${c.finishReason ? ` (finish reason ${codeSpan(c.finishReason)})` : ''}`);
  if (c.sample) L.push(`- Reply: ${codeSpan(c.sample.replace(/\s+/g, ' ').slice(0, 80))}`);
  if (c.error) L.push(`- Error: ${c.error.kind}${statusNote(c.error)}: ${markdownProse(c.error.message)}`);
  L.push('');

  if (r.probes.length > 0) {
    L.push('## Other URLs tried', '');
    for (const p of r.probes) L.push(`- ${codeSpan(`GET ${p.url}`)}: ${p.ok ? p.detail : `no (${markdownProse(p.detail)})`}`);
    L.push('');
  }
  if (c.dropped.length > 0) {
    L.push(`Parley remembers that this server does not accept ${c.dropped.join(', ')}; "Parley: Reset Endpoint Adaptations" forgets it.`, '');
  }
  return L.join('\n');
}

/**
 * Why the model list is missing, in step with the rest of the report: a refused key (401/403) is said once, where the
 * chat request was refused too; else a missing endpoint, which alone is no problem.
 */
function unlistedWhy(r: DiagnosisReport): string {
  const e = r.models.error;
  if (e?.kind !== 'auth' && e?.status !== 401 && e?.status !== 403) return 'Some servers have no models endpoint; that alone is not a problem.';
  if (r.causes.some((c) => c.id === 'wrong-key' || c.id === 'missing-key')) return 'The server refused the key, as it did the chat request: see the likely fix above.';
  // Chat worked with what was sent (a stored key, or a key in the profile's headers): setting a key again is no fix.
  if (r.chat.outcome === 'ok') return 'The server took this key for the chat request below but refused it for its model list: the key may not be allowed to list models (the model picker and the window need the list).';
  return r.key === 'absent' ? `The server wants a key for its model list. ${keyAction(r)}` : `The server refused the key for its model list. ${keyAction(r)}`;
}

/** The window of the configured model, in words: the figure the panel's meter and compaction go by. */
function windowLine(model: string, w: ServerWindow): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const head = `Window of ${codeSpan(model)}:`;
  if (w.window !== undefined) {
    const max = w.modelMax !== undefined && w.modelMax > w.window ? `; the model itself takes up to ${n(w.modelMax)}` : '';
    return `${head} ${n(w.window)} tokens, what the server runs it at (${w.from ?? 'the server\'s model list'})${max}.`;
  }
  if (w.loaded === false) return `${head} not known until the server loads the model; Parley reads it then.`;
  return `${head} the server does not say (a contextWindow setting, in the profile or parley.contextWindow, tells Parley).`;
}

/** One line for the log. */
export function reportSummary(r: DiagnosisReport): string {
  const c = r.chat;
  const head = r.ok ? 'works' : 'fails';
  const parts = [
    `Test Connection ${head}: ${r.url} model=${r.model} key=${r.key}`,
    `models=${r.models.outcome === 'listed' ? r.models.ids.length : 'n/a'}`,
    ...(r.models.window ? [`window=${r.models.window.window ?? 'unknown'}`] : []),
    `status=${c.status ?? '-'}`,
    `done=${c.sawDone}`,
    `usage=${c.sawUsage}`,
  ];
  if (c.dropped.length) parts.push(`dropped=${c.dropped.join(',')}`);
  if (c.api) parts.push('api=responses');
  if (r.causes.length) parts.push(`causes=${r.causes.map((x) => x.id).join(',')}`);
  return parts.join(' ');
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** `serverWords`: prefer the server's own message (for GET models, whose core wording is about chat). */
function summarize(e: unknown, clean: (s: string) => string, serverWords = false): ErrorSummary {
  if (e instanceof ParleyError) {
    const p = e.providerMessage;
    const message = serverWords && p ? p : p && !e.message.includes(p) ? `${e.message} ${p}` : e.message;
    return { kind: e.kind, status: e.status, code: e.code, message: clean(message).trim() };
  }
  return { kind: 'protocol', message: clean(e instanceof Error ? e.message : String(e)) };
}

/** Codes of nested `cause`s (undici wraps ECONNREFUSED in "fetch failed"). */
function causeCodes(e: unknown): string {
  const out: string[] = [];
  let c: unknown = e;
  for (let i = 0; i < 5 && c && typeof c === 'object'; i++) {
    const o = c as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof o.code === 'string') out.push(o.code);
    if (typeof o.message === 'string') out.push(o.message);
    c = o.cause;
  }
  return out.join(' ');
}

/** Whether `model` is listed; "llama3.2" counts as "llama3.2:latest" (Ollama's default tag). */
export function modelInList(model: string, ids: string[]): boolean {
  return ids.includes(model) || ids.includes(`${model}:latest`) || (model.endsWith(':latest') && ids.includes(model.slice(0, -':latest'.length)));
}

/** Up to three listed names nearest to `model`. */
export function closestNames(model: string, ids: string[]): string[] {
  const m = model.toLowerCase();
  return ids
    // A listed name that contains the configured one ("llama3" in "llama3:8b") is the likeliest meant.
    .map((id) => ({ id, d: distance(m, id.toLowerCase()) - (id.toLowerCase().includes(m) ? 100 : 0) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.id);
}

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

function hintNames(names: string[] | undefined): string {
  return names && names.length ? ` (closest: ${names.map((n) => `"${n}"`).join(', ')})` : '';
}

/** The API root of a chat URL: everything before /chat/completions. */
function rootOf(chatUrl: string): string {
  return chatUrl.replace(/\/chat\/completions\/?$/, '');
}

/** The base URL to put in settings so that requests go to `root`/chat/completions. */
function suggestBase(root: string): string {
  try {
    if (resolveEndpoint(root).url === `${root}/chat/completions`) return root;
  } catch {
    // fall through: the full URL always works
  }
  return `${root}/chat/completions`;
}

function swapHost(endpoint: Endpoint, host: string): string {
  const u = new URL(endpoint.base || endpoint.url);
  u.hostname = host;
  return u.href.replace(/\/$/, '');
}

function portOf(u: URL): string {
  return u.port || (u.protocol === 'https:' ? '443' : '80');
}

function reasoningName(f: ReasoningField): string {
  return f === 'think_tag' ? '`<think>` tags in the content' : codeSpan(f);
}

/**
 * " (HTTP 500)" after an error's kind, unless its message already says so (ParleyError messages usually do): as
 * "HTTP 500", or as "status 401" for an error inside an HTTP 200 response, where a note would name the wrong status.
 */
function statusNote(e: ErrorSummary | undefined): string {
  return e?.status && !e.message.includes(`HTTP ${e.status}`) && !e.message.includes(`status ${e.status}`) ? ` (HTTP ${e.status})` : '';
}
