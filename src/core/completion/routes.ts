// The five ways a server takes a fill-in-the-middle request, each one's body and answer, and the probe that finds the
// one a server and model take, once, and remembers it by origin and model.
//
// Refusals come from each server's own code: llama.cpp answers 501 "Infill is not supported by this model" for a model
// without FIM tokens (tools/server/server-context.cpp, post_infill) and 404 for an unknown path; LM Studio answers 200
// with {"error":"Unexpected endpoint or method. (POST /infill)"} (lmstudio-bug-tracker#618); vLLM answers 400
// "suffix is not currently supported" (vllm serving_completion.py / online_renderer.py); Ollama answers 400
// {"error":"<model> does not support insert"} for a model whose template has no suffix (server/images.go
// errCapabilityInsert, routes.go handleScheduleError), wrapped in OpenAI's error shape on /v1 (openai.NewError).
import type { listModels } from '../client';
import type { Endpoint } from '../endpoint';
import { isRecord, ParleyError, withoutSecrets, type errorFromResponse } from '../errors';
import { estimateTokens } from '../tokenEstimate';
import { MAX_ERROR_BODY, RequestAbort, secretsOf, type ClientOptions, type failedFetch, type readText, type send } from '../transport';
import type { Usage } from '../types';
import { fimPrompt, fimStops, type FimExtra, type FimFamily } from './fim';
import { COMPLETION_ROUTES_STATE } from './settings';

/** The client's wire functions, handed in (the engine hands in the client's own; the tests the same functions). */
export interface Wire {
  send: typeof send;
  readText: typeof readText;
  errorFromResponse: typeof errorFromResponse;
  failedFetch: typeof failedFetch;
  listModels: typeof listModels;
}

/** A way of asking for a fill-in-the-middle completion. */
export type RouteId = 'infill' | 'completions' | 'fim' | 'generate' | 'tokens' | 'generate-tokens';

/** Each route in words, for the status bar, the log and Test Connection. */
export const ROUTE_NAMES: Record<RouteId, string> = {
  infill: "llama.cpp's /infill",
  completions: '/v1/completions with suffix',
  fim: '/v1/fim/completions',
  generate: "Ollama's /api/generate with suffix",
  tokens: "/v1/completions with the model's FIM tokens",
  'generate-tokens': "Ollama's /api/generate (raw) with the model's FIM tokens",
};

/** What one completion request says. */
export interface FimInput {
  model: string;
  /** Text before the cursor, within the budget. */
  prefix: string;
  /** Text after the cursor, within the budget. */
  suffix: string;
  /** The file's path as the model sees it (workspace-relative). */
  file: string;
  languageId: string;
  /** Chunks of other files, newest first. */
  extras: readonly FimExtra[];
  maxTokens: number;
  /** Where to stop besides the family's tokens (`\n` for one line). */
  stop: readonly string[];
  /** The model's FIM tokens, when known (from its id, or the override setting). */
  family?: FimFamily;
  temperature?: number;
}

/** A completion as the server gave it, before shaping. */
export interface RawCompletion {
  text: string;
  usage: Usage;
  route: RouteId;
}

/** What one route did during a probe. */
export interface RouteOutcome {
  route: RouteId;
  url?: string;
  verdict: 'works' | 'refused' | 'failed' | 'skipped';
  /** Why, in words: the server's refusal, the failure, or why it was not tried. */
  why: string;
  status?: number;
  /** A route that works: what its answer used (billed, so counted), and how long it took. */
  usage?: Usage;
  durationMs?: number;
}

/** A request that got no completion. `final`: no route of this server can serve this model (the status says why). */
export interface CompletionFailure {
  error: ParleyError;
  final: boolean;
  outcomes: RouteOutcome[];
}

/** Where the route each origin and model takes is kept. */
export interface RouteStore {
  get(origin: string, model: string): RouteId | undefined;
  set(origin: string, model: string, route: RouteId): PromiseLike<void>;
  forget(origin: string, model: string): PromiseLike<void>;
}

/** Key-value state with VS Code's Memento shape. */
export interface RouteState {
  get<T>(key: string, defaultValue: T): T;
  update(key: string, value: unknown): PromiseLike<void>;
}


const ROUTE_IDS = Object.keys(ROUTE_NAMES) as RouteId[];

/** A RouteStore in key-value state (globalState: it lasts across windows and reloads). */
export function stateRouteStore(state: RouteState): RouteStore {
  const all = () => state.get<Record<string, unknown>>(COMPLETION_ROUTES_STATE, {});
  const key = (origin: string, model: string) => `${origin} ${model}`;
  return {
    get(origin, model) {
      const a = all();
      const v = Object.prototype.hasOwnProperty.call(a, key(origin, model)) ? a[key(origin, model)] : undefined;
      return ROUTE_IDS.includes(v as RouteId) ? (v as RouteId) : undefined;
    },
    set: (origin, model, route) => state.update(COMPLETION_ROUTES_STATE, { ...all(), [key(origin, model)]: route }),
    forget(origin, model) {
      const { [key(origin, model)]: _gone, ...rest } = all();
      return state.update(COMPLETION_ROUTES_STATE, rest);
    },
  };
}

/** The base without its version segment (`http://host:8080/v1` -> `http://host:8080`): where /infill and /api live. */
export function serverRoot(endpoint: Endpoint): string {
  return endpoint.base.replace(/\/v\d+[a-z0-9]*$/i, '');
}

/** OpenAI, DeepSeek and others take at most 4 stop sequences; Parley cuts at the rest itself. */
const MAX_STOPS = 4;

/** Line comments by language, for the other files' chunks on routes whose prompt is plain text. */
function lineComment(languageId: string): string | undefined {
  if (/^(python|shellscript|ruby|perl|r|yaml|toml|dockerfile|makefile|powershell|elixir|julia|nim|coffeescript|graphql|cmake)$/.test(languageId)) return '#';
  if (/^(sql|lua|haskell|ada|elm)$/.test(languageId)) return '--';
  if (/^(clojure|lisp|scheme|racket)$/.test(languageId)) return ';;';
  if (/^(latex|tex|erlang|matlab)$/.test(languageId)) return '%';
  if (/^(plaintext|markdown|html|xml|json|jsonc|css|scss|less)$/.test(languageId)) return undefined;
  return '//';
}

/** The prefix with the other files' chunks and the file's path before it, as comments (as Continue does), where the language has line comments. */
export function prefixWithContext(input: FimInput): string {
  const c = lineComment(input.languageId);
  if (!c) return input.prefix;
  const chunk = (name: string, text: string) => `${c} Path: ${name}\n${text.split('\n').map((l) => `${c} ${l}`).join('\n')}\n`;
  return input.extras.map((e) => chunk(e.filename, e.text)).join('') + `${c} Path: ${input.file}\n` + input.prefix;
}

/** The URL and body of one route, or undefined when the route cannot serve this input (no FIM tokens known). */
export function routeRequest(route: RouteId, endpoint: Endpoint, input: FimInput): { url: string; body: Record<string, unknown> } | undefined {
  const root = serverRoot(endpoint);
  const temperature = input.temperature ?? 0.1;
  const stops = (family?: FimFamily) => [...input.stop, ...(family ? fimStops(family) : [])];
  switch (route) {
    case 'infill':
      return {
        url: `${root}/infill`,
        body: {
          model: input.model,
          input_prefix: input.prefix,
          input_suffix: input.suffix,
          input_extra: input.extras.map((e) => ({ filename: e.filename, text: e.text })),
          prompt: '',
          n_predict: input.maxTokens,
          stop: [...input.stop],
          temperature,
          // llama.vscode's sampling for infill: top-k and top-p, then llama.cpp's own infill sampler.
          top_k: 40,
          top_p: 0.99,
          samplers: ['top_k', 'top_p', 'infill'],
          // The server keeps the prompt's KV cache, so the next keystroke evaluates only what changed.
          cache_prompt: true,
          t_max_predict_ms: 1000,
          stream: false,
        },
      };
    case 'completions':
      return {
        // DeepSeek serves FIM at /beta/completions only (api-docs.deepseek.com, "FIM Completion (Beta)").
        url: endpoint.origin === 'https://api.deepseek.com' ? `${endpoint.origin}/beta/completions` : `${endpoint.base}/completions`,
        body: { model: input.model, prompt: prefixWithContext(input), suffix: input.suffix, max_tokens: input.maxTokens, temperature, stop: input.stop.slice(0, MAX_STOPS), stream: false },
      };
    case 'fim':
      return {
        url: `${endpoint.base}/fim/completions`,
        body: { model: input.model, prompt: prefixWithContext(input), suffix: input.suffix, max_tokens: input.maxTokens, temperature, stop: input.stop.slice(0, MAX_STOPS), stream: false },
      };
    case 'generate':
      return {
        url: `${root}/api/generate`,
        body: { model: input.model, prompt: prefixWithContext(input), suffix: input.suffix, stream: false, options: { num_predict: input.maxTokens, temperature, stop: [...input.stop] } },
      };
    case 'tokens':
      if (!input.family) return undefined;
      return {
        url: `${endpoint.base}/completions`,
        body: { model: input.model, prompt: fimPrompt(input.family, input.prefix, input.suffix, input.file, input.extras), max_tokens: input.maxTokens, temperature, stop: stops(input.family).slice(0, MAX_STOPS), stream: false },
      };
    case 'generate-tokens':
      if (!input.family) return undefined;
      return {
        url: `${root}/api/generate`,
        body: { model: input.model, prompt: fimPrompt(input.family, input.prefix, input.suffix, input.file, input.extras), raw: true, stream: false, options: { num_predict: input.maxTokens, temperature, stop: stops(input.family) } },
      };
  }
}

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined);

/** The completion's text and the usage the server reported, from a 200 body; undefined when it is not a completion. */
export function parseRouteResponse(route: RouteId, json: unknown): { text: string; usage?: Usage } | undefined {
  if (!isRecord(json)) return undefined;
  const usage = (prompt: unknown, completion: unknown): Usage | undefined => {
    const p = count(prompt);
    const c = count(completion);
    return p === undefined && c === undefined ? undefined : { prompt_tokens: p ?? 0, completion_tokens: c ?? 0, total_tokens: (p ?? 0) + (c ?? 0) };
  };
  if (route === 'infill') {
    return typeof json.content === 'string' ? { text: json.content, usage: usage(json.tokens_evaluated, json.tokens_predicted) } : undefined;
  }
  if (route === 'generate' || route === 'generate-tokens') {
    return typeof json.response === 'string' ? { text: json.response, usage: usage(json.prompt_eval_count, json.eval_count) } : undefined;
  }
  const choice = Array.isArray(json.choices) && isRecord(json.choices[0]) ? json.choices[0] : undefined;
  if (!choice) return undefined;
  // Mistral's /fim/completions answers in chat shape (message.content); the others in completion shape (text).
  const text = typeof choice.text === 'string' ? choice.text : isRecord(choice.message) && typeof choice.message.content === 'string' ? choice.message.content : undefined;
  if (text === undefined) return undefined;
  const u = isRecord(json.usage) ? usage(json.usage.prompt_tokens, json.usage.completion_tokens) : undefined;
  return { text, usage: u };
}

/** What a refusal says about the server, for the routes still to try. */
interface Verdict {
  verdict: RouteOutcome['verdict'];
  why: string;
  /** No route can serve this model on this server (llama.cpp: no FIM tokens in the model). */
  final?: boolean;
  /** The answer came from Ollama. */
  ollama?: boolean;
  /** The answer came from LM Studio. */
  lmStudio?: boolean;
}

/** Words that mean "this server or model does not do this", whatever the status. */
const REFUSES = /suffix|not (?:currently )?supported|does not support|unsupported|chat model|not a completion model|only supported|unknown (?:field|param)|unrecognized|extra (?:fields|inputs) not permitted|not allowed/i;

/** Whether an error refuses the route (try the next) or fails the request (stop and say why). */
export function judge(route: RouteId, e: ParleyError): Verdict {
  const said = e.providerMessage ?? e.message;
  const lmStudio = /unexpected endpoint or method/i.test(said);
  const ollama = (route === 'generate' || route === 'generate-tokens') && /does not support insert|not found, try pulling it/i.test(said);
  if (e.status === 501 && route === 'infill' && /infill is not supported/i.test(said)) {
    return { verdict: 'refused', why: `llama.cpp says this model cannot fill in the middle: ${said.trim()} Load a model with FIM tokens (a coder model such as Qwen2.5-Coder).`, final: true };
  }
  if (e.kind === 'auth' || e.kind === 'rate_limit' || e.kind === 'quota' || e.kind === 'timeout' || e.kind === 'connection' || e.kind === 'cancelled' || e.kind === 'config') {
    return { verdict: 'failed', why: e.message };
  }
  if (e.kind === 'not_found' || e.status === 404 || e.status === 405 || e.status === 501) return { verdict: 'refused', why: e.message, lmStudio, ollama };
  if (e.kind === 'bad_request' || e.status === 400 || e.status === 422) return { verdict: 'refused', why: e.message, ollama: ollama || /does not support insert/i.test(said) };
  if (e.kind === 'protocol' && e.status !== undefined && e.status < 300 && !REFUSES.test(said)) return { verdict: 'refused', why: e.message };
  return { verdict: REFUSES.test(said) ? 'refused' : 'failed', why: e.message };
}

/** The order routes are probed in, after what the answers so far said about the server. */
function probeOrder(hints: { ollama: boolean; lmStudio: boolean }, family: FimFamily | undefined): RouteId[] {
  // LM Studio's /v1/completions has no suffix parameter: with known FIM tokens, those go first there.
  if (hints.lmStudio && family) return ['infill', 'tokens', 'completions', 'fim', 'generate'];
  return ['infill', 'completions', 'fim', 'generate', hints.ollama ? 'generate-tokens' : 'tokens'];
}

/** The outcome of one request on one route. */
type Tried = { ok: RawCompletion } | { verdict: Verdict; error: ParleyError };

/** One request on one route; never throws. The HTTP request is aborted when `opts.signal` is. */
export async function tryRoute(opts: ClientOptions, wire: Wire, route: RouteId, input: FimInput, onUrl?: (url: string) => void): Promise<Tried | undefined> {
  const r = routeRequest(route, opts.endpoint, input);
  if (!r) return undefined;
  onUrl?.(r.url);
  const req = new RequestAbort(opts.signal);
  const timeoutMs = opts.requestTimeoutMs ?? 30_000;
  const stop = req.after(timeoutMs, 'timeout');
  const secrets = secretsOf(opts);
  const fail = (e: ParleyError): Tried => ({ verdict: judge(route, withoutSecrets(e, secrets)), error: e });
  try {
    let response: Response;
    let text: string;
    try {
      response = (await wire.send(opts, 'POST', r.url, JSON.stringify(r.body), req.signal)).response;
      text = await wire.readText(response, response.ok ? 4 * 1024 * 1024 : MAX_ERROR_BODY);
    } catch (e) {
      if (req.why === 'cancelled') return fail(new ParleyError('cancelled', `POST ${r.url} was cancelled.`, { url: r.url }));
      if (req.why === 'timeout') return fail(new ParleyError('timeout', `POST ${r.url} got no answer within ${Math.round(timeoutMs / 1000)} s.`, { url: r.url }));
      return fail(e instanceof ParleyError ? e : wire.failedFetch(e, r.url));
    }
    const contentType = response.headers.get('content-type');
    const ctx = { url: r.url, model: input.model, secrets };
    if (!response.ok) return fail(wire.errorFromResponse(response.status, contentType, text, ctx));
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return fail(wire.errorFromResponse(response.status, contentType, text, ctx));
    }
    const parsed = parseRouteResponse(route, json);
    if (!parsed) return fail(wire.errorFromResponse(response.status, contentType, text, ctx));
    const promptText = String(r.body.prompt || '') + String(r.body.input_prefix ?? '') + String(r.body.suffix ?? r.body.input_suffix ?? '');
    const usage = parsed.usage ?? { prompt_tokens: estimateTokens(promptText), completion_tokens: estimateTokens(parsed.text), total_tokens: 0, estimated: true };
    if (usage.estimated) usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    return { ok: { text: parsed.text, usage, route } };
  } finally {
    stop();
    req.dispose();
  }
}

/**
 * Asks for a completion on the route this origin and model are known to take, or, when none is known (or the known one
 * now refuses), probes the routes in order and remembers the first that answers with a completion. A failure that is
 * not a refusal (a rejected key, a timeout, a server error) stops the probe and is not remembered.
 */
export async function requestCompletion(opts: ClientOptions, wire: Wire, store: RouteStore, input: FimInput): Promise<RawCompletion | CompletionFailure> {
  const origin = opts.endpoint.origin;
  const outcomes: RouteOutcome[] = [];
  const known = store.get(origin, input.model);
  if (known) {
    const t = await tryRoute(opts, wire, known, input);
    if (t && 'ok' in t) return t.ok;
    if (t && t.verdict.verdict === 'failed') return { error: t.error, final: false, outcomes: [{ route: known, verdict: 'failed', why: t.verdict.why, status: t.error.status }] };
    opts.log?.(`${origin} no longer takes ${ROUTE_NAMES[known]} for ${input.model}; probing again`, 'info');
    await store.forget(origin, input.model);
  }
  const result = await probeRoutes(opts, wire, input, outcomes, false);
  if ('text' in result) {
    await store.set(origin, input.model, result.route);
    opts.log?.(`Completions: ${origin} takes ${ROUTE_NAMES[result.route]} for ${input.model}; remembered.`, 'info');
  }
  return result;
}

/**
 * Tries the routes in order. `all`: every route is tried and reported, even after one works (Test Connection);
 * otherwise the probe stops at the first that works or fails. A refusal that says no route can serve the model
 * (llama.cpp's 501 for a model without FIM tokens) ends it either way, the rest reported as not asked.
 */
export async function probeRoutes(opts: ClientOptions, wire: Wire, input: FimInput, outcomes: RouteOutcome[], all: boolean): Promise<RawCompletion | CompletionFailure> {
  const hints = { ollama: false, lmStudio: false };
  let found: RawCompletion | undefined;
  let lastRefusal: ParleyError | undefined;
  let final: ParleyError | undefined;
  const done = new Set<RouteId>();
  for (;;) {
    const route = probeOrder(hints, input.family).find((r) => !done.has(r));
    if (!route) break;
    done.add(route);
    let url: string | undefined;
    const began = Date.now();
    const t = await tryRoute(opts, wire, route, input, (u) => (url = u));
    if (!t) {
      outcomes.push({ route, verdict: 'skipped', why: `no FIM tokens are known for the model id "${input.model}"; set parley.completion.fimTokens to its family` });
      continue;
    }
    if ('ok' in t) {
      outcomes.push({ route, url, verdict: 'works', why: `answered with a completion (${t.ok.usage.estimated ? '≈' : ''}${t.ok.usage.total_tokens} tokens)`, usage: t.ok.usage, durationMs: Date.now() - began });
      found ??= t.ok;
      if (!all) return found;
      continue;
    }
    const v = t.verdict;
    outcomes.push({ route, url, verdict: v.verdict, why: v.why, status: t.error.status });
    hints.ollama ||= v.ollama === true;
    hints.lmStudio ||= v.lmStudio === true;
    if (v.verdict === 'failed' && !all) return { error: t.error, final: false, outcomes };
    if (v.final) {
      final = new ParleyError(t.error.kind, v.why, { status: t.error.status, url });
      // Not even Test Connection asks the others: llama.cpp's /v1/completions answers 200 with `suffix` unread
      // (tested against the real server), which would be taken and remembered as a route that works.
      for (const rest of probeOrder(hints, input.family).filter((r) => !done.has(r))) {
        outcomes.push({ route: rest, verdict: 'skipped', why: `not asked: the server said ${input.model} cannot fill in the middle` });
      }
      break;
    }
    if (!lastRefusal || telling(t.error) >= telling(lastRefusal)) lastRefusal = t.error;
  }
  if (found) return found;
  if (final) return { error: final, final: true, outcomes };
  return { error: noRouteError(opts.endpoint, input, lastRefusal, outcomes), final: true, outcomes };
}

/** How much a refusal tells a person: one about the model's template, then one about anything but a missing path. */
function telling(e: ParleyError): number {
  const said = `${e.providerMessage ?? ''} ${e.message}`;
  return /does not support insert/i.test(said) ? 2 : e.kind === 'not_found' && !/model/i.test(said) ? 0 : 1;
}

/** The failure when every route refused: the most telling refusal, and what to do. */
function noRouteError(endpoint: Endpoint, input: FimInput, last: ParleyError | undefined, outcomes: RouteOutcome[]): ParleyError {
  const said = last?.providerMessage ?? last?.message ?? '';
  if (/does not support insert/i.test(said)) {
    return new ParleyError('bad_request', `Ollama says ${input.model} does not support insert (its template has no suffix), and no FIM tokens are known for it. Use a coder model with FIM, such as qwen2.5-coder:1.5b-base, or set parley.completion.fimTokens to its family.`, { status: last?.status });
  }
  const tried = outcomes.filter((o) => o.verdict !== 'skipped').map((o) => ROUTE_NAMES[o.route]).join(', ');
  return new ParleyError('not_found', `${endpoint.origin} took none of the completion routes for ${input.model} (tried ${tried}). Last answer: ${said || 'none'}`, { status: last?.status });
}
