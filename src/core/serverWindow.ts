// The window a local server really runs a model at, from its own endpoints, where its model list does not say it:
// llama.cpp GET /props (`?model=` in router mode, whose bare /props answers `n_ctx: 0`), Ollama GET /api/ps (a loaded
// model's `context_length`) and POST /api/show (a Modelfile's `num_ctx`), LM Studio GET /api/v1/models (0.4 on: each
// loaded instance's `config.context_length`) else GET /api/v0/models (`loaded_context_length`). vLLM's list says it
// (`max_model_len`, read in modelInfo.ts). With the words about it: the meter's notes, how to raise each server's
// window, the card of a prompt not sent, and of one the server cut.
import type { ContextMeterView, ErrorView } from '../shared/protocol';
import { isRecord } from './errors';
import { positive } from './contextWindow';
import type { ModelInfo, ServerKind } from './modelInfo';
import { readText, RequestAbort, send, type ClientOptions } from './transport';

/** What the server says about the window it runs one model at. Unknown fields are undefined, never guessed. */
export interface ServerWindow {
  /** The window the server runs the model at, or will load it at (a configured `-c` or `num_ctx`). */
  window?: number;
  kind?: ServerKind;
  /** Where the window came from, in words for the meter's tooltip. */
  from?: string;
  /** The model's own maximum (its training length), when the server runs it at less. */
  modelMax?: number;
  /** False while the model is not loaded: the figure may change when it is, so it is asked again after a reply. */
  loaded?: boolean;
}

/**
 * Ollama's window for a model with no `num_ctx` anywhere: 2,048 before 0.6.7, then 4,096; since 0.15.5 it is 4,096
 * below 24 GiB of GPU memory, 32,768 from 24 GiB and 262,144 from 48 GiB (server/routes.go, `defaultNumCtx`), unless
 * OLLAMA_CONTEXT_LENGTH sets it. Parley cannot see the GPU, so this is only the figure VS Code's chat is given.
 */
export const OLLAMA_DEFAULT_CONTEXT = 4096;

const PROBE_TIMEOUT_MS = 5_000;

/** Ollama's names, with `:latest` added to an untagged one: `llama3.2` and `llama3.2:latest` are one model. */
const ollamaName = (n: string): string => (/:[^/]*$/.test(n) ? n : `${n}:latest`);

/**
 * Asks a server what windows it runs its models at. The answers that cover every model (llama.cpp's /props, Ollama's
 * /api/ps, LM Studio's model table) are asked once per probe and shared; make a new probe to ask again.
 */
export class WindowProbe {
  private readonly shared = new Map<string, Promise<unknown>>();
  /** Where the server's own endpoints live: the base URL without its `/v1`, so a path prefix (a proxy) is kept. */
  private readonly root: string;

  constructor(private readonly opts: ClientOptions, private readonly list: readonly ModelInfo[]) {
    this.root = opts.endpoint.base.replace(/\/v1$/, '');
  }

  /** The window `model` runs at, by what its list entry says and, for a local server, what its own endpoints say. */
  async windowOf(model: string): Promise<ServerWindow> {
    const info = this.list.find((m) => m.id === model);
    const fromList: ServerWindow = {
      ...(info?.contextLength ? { window: info.contextLength, from: 'the server\'s model list' } : {}),
      ...(info?.modelMax ? { modelMax: info.modelMax } : {}),
      ...(info?.server ? { kind: info.server } : {}),
      ...(info?.loaded === false ? { loaded: false } : {}),
    };
    const kind = info?.server ?? this.list.find((m) => m.server)?.server;
    // vLLM's max_model_len is what it runs; any other list figure from a server Parley does not know is taken as is.
    if (kind === 'vllm' || (kind === undefined && info?.contextLength)) return fromList;
    // Only plain-HTTP servers (local ones) are asked for Ollama's and LM Studio's endpoints without a sign of them.
    const local = kind === undefined && this.opts.endpoint.origin.startsWith('http:');
    if (kind === 'llama.cpp' || kind === undefined) {
      const w = await this.llamaCpp(model);
      if (w) return { ...fromList, ...w, kind: 'llama.cpp' };
      if (kind === 'llama.cpp') return fromList;
    }
    if (kind === 'lmstudio' || local) {
      const w = await this.lmStudio(model);
      if (w) return { ...fromList, ...w };
    }
    if (kind === 'ollama' || local) {
      const w = await this.ollama(model);
      if (w) return w;
    }
    return fromList;
  }

  /** GET {root}{path} (or POST it `body`) as JSON; undefined on any failure. */
  private async json(path: string, body?: unknown): Promise<unknown> {
    const req = new RequestAbort(this.opts.signal);
    const stop = req.after(Math.min(this.opts.requestTimeoutMs ?? PROBE_TIMEOUT_MS, PROBE_TIMEOUT_MS), 'timeout');
    try {
      const a = await send(this.opts, body === undefined ? 'GET' : 'POST', `${this.root}${path}`, body === undefined ? undefined : JSON.stringify(body), req.signal);
      if (!a.response.ok) {
        await a.response.body?.cancel().catch(() => undefined);
        return undefined;
      }
      return JSON.parse(await readText(a.response, 1024 * 1024));
    } catch {
      return undefined;
    } finally {
      stop();
      req.dispose();
    }
  }

  private once(path: string): Promise<unknown> {
    let p = this.shared.get(path);
    if (!p) this.shared.set(path, (p = this.json(path)));
    return p;
  }

  /**
   * llama.cpp: `default_generation_settings.n_ctx` of GET /props, the window of one slot (`n_ctx` in older builds).
   * `?model=` picks the model in router mode and is ignored by a single-model server; `autoload=false` keeps the
   * router from loading a model just to be asked (it answers 400 "model is not loaded" instead).
   */
  private async llamaCpp(model: string): Promise<ServerWindow | undefined> {
    const props = await this.once(`/props?model=${encodeURIComponent(model)}&autoload=false`);
    if (!isRecord(props)) return undefined;
    const settings = isRecord(props.default_generation_settings) ? props.default_generation_settings : undefined;
    const n = positive(settings?.n_ctx ?? props.n_ctx);
    if (n !== undefined) return { window: n, from: 'llama.cpp\'s /props', loaded: true };
    return settings || props.role === 'router' ? {} : undefined;
  }

  /**
   * LM Studio: its REST API v1 table (0.4 and later); where that does not settle it (an older LM Studio answers its
   * path 200 "Unexpected endpoint"; a model it does not name, a window it does not give), its v0 table.
   */
  private async lmStudio(model: string): Promise<ServerWindow | undefined> {
    const v1 = lmStudioV1(await this.once('/api/v1/models'), model);
    if (v1?.window !== undefined || v1?.loaded === false) return v1;
    const v0 = lmStudioV0(await this.once('/api/v0/models'), model);
    // v0 wins only with a window: one that does not name the model must not undo v1's "loaded".
    return v0?.window !== undefined ? v0 : v1 ?? v0;
  }

  /**
   * Ollama: a loaded model's `context_length` in GET /api/ps (0.10 and later); else a Modelfile's `num_ctx` from POST
   * /api/show, which Ollama loads it at (capped at the model's own length, `<arch>.context_length` in `model_info`).
   * Neither: Ollama's default, which Parley cannot know (see OLLAMA_DEFAULT_CONTEXT): the window stays unknown.
   */
  private async ollama(model: string): Promise<ServerWindow | undefined> {
    const ps = await this.once('/api/ps');
    if (!isRecord(ps) || !Array.isArray(ps.models)) return undefined;
    const name = ollamaName(model);
    const running = ps.models.find((m): m is Record<string, unknown> => isRecord(m) && (m.name === name || m.model === name || m.name === model));
    const n = positive(running?.context_length);
    if (n !== undefined) return { kind: 'ollama', window: n, from: 'Ollama (/api/ps: the model as loaded)', loaded: true };
    const show = await this.json('/api/show', { model });
    const params = isRecord(show) && typeof show.parameters === 'string' ? show.parameters : '';
    const info = isRecord(show) && isRecord(show.model_info) ? show.model_info : {};
    const max = positive(Object.entries(info).find(([k]) => k.endsWith('.context_length'))?.[1]);
    const numCtx = positive(Number(/^num_ctx\s+(\d+)/m.exec(params)?.[1]));
    const window = numCtx !== undefined && max !== undefined ? Math.min(numCtx, max) : numCtx;
    return {
      kind: 'ollama', loaded: false,
      ...(window ? { window, from: 'Ollama (num_ctx in the model\'s Modelfile)' } : {}),
      ...(max && max !== window ? { modelMax: max } : {}),
    };
  }
}

const LM_STUDIO_LOADED = 'LM Studio (the model as loaded)';

/** LM Studio's GET /api/v0/models: `loaded_context_length` for a loaded model, `max_context_length` for any. */
function lmStudioV0(table: unknown, model: string): ServerWindow | undefined {
  const data = isRecord(table) && Array.isArray(table.data) ? table.data : undefined;
  if (!data?.some((e) => isRecord(e) && typeof e.state === 'string')) return undefined;
  const e = data.find((x): x is Record<string, unknown> => isRecord(x) && x.id === model);
  return lmStudioWindow(positive(e?.loaded_context_length), positive(e?.max_context_length), e?.state === 'loaded');
}

/**
 * LM Studio's GET /api/v1/models (https://lmstudio.ai/docs/developer/rest/list): `models[]` by `key`, each with
 * `max_context_length` and `loaded_instances[]` (`id`, `config.context_length`). A model loaded twice (`key`,
 * `key:2`) is taken at the instance named, else at its smallest window, which a prompt must fit whichever answers.
 * Undefined when the body is not that table; no `loaded` when it does not name the model.
 */
function lmStudioV1(table: unknown, model: string): ServerWindow | undefined {
  const list = isRecord(table) && Array.isArray(table.models) ? table.models.filter(isRecord) : [];
  const instancesOf = (e: Record<string, unknown>) => (Array.isArray(e.loaded_instances) ? e.loaded_instances.filter(isRecord) : []);
  if (!list.some((e) => typeof e.key === 'string' && Array.isArray(e.loaded_instances))) return undefined;
  const e = list.find((x) => x.key === model || instancesOf(x).some((i) => i.id === model));
  if (!e) return { kind: 'lmstudio' };
  const all = instancesOf(e);
  const named = all.filter((i) => i.id === model);
  // An instance without a readable window makes the smallest unknown (0), so v0 is asked.
  const window = Math.min(...(named.length ? named : all).map((i) => positive(isRecord(i.config) ? i.config.context_length : 0) ?? 0));
  return lmStudioWindow(positive(window), positive(e.max_context_length), all.length > 0);
}

function lmStudioWindow(window: number | undefined, max: number | undefined, loaded: boolean): ServerWindow {
  return {
    kind: 'lmstudio',
    ...(window ? { window, from: LM_STUDIO_LOADED } : {}),
    ...(max && max !== window ? { modelMax: max } : {}),
    loaded,
  };
}

const count = (n: number): string => n.toLocaleString('en-US');
const SERVER_NAMES: Record<ServerKind, string> = { 'llama.cpp': 'llama.cpp', ollama: 'Ollama', lmstudio: 'LM Studio', vllm: 'vLLM' };

/**
 * How to make the server run a larger window, in words, for a prompt of `needed` tokens: each server's own switch,
 * with the next power of two above `needed` (at most the model's own maximum) as the example.
 */
export function raiseHint(sw: Pick<ServerWindow, 'kind' | 'modelMax'>, needed: number): string {
  if (sw.modelMax !== undefined && sw.modelMax < needed) {
    return `The model itself takes at most ${count(sw.modelMax)} tokens, so only a shorter conversation fits.`;
  }
  let n = 4096;
  while (n < needed) n *= 2;
  if (sw.modelMax !== undefined) n = Math.min(n, sw.modelMax);
  switch (sw.kind) {
    case 'llama.cpp': return `To give the model more room, start llama-server with a larger window: -c ${n} (--ctx-size; in router mode, c = ${n} in the model's preset).`;
    case 'ollama': return `To give the model more room, set OLLAMA_CONTEXT_LENGTH=${n} where the Ollama server runs, or PARAMETER num_ctx ${n} in the model's Modelfile (then ollama create).`;
    case 'lmstudio': return `To give the model more room, load it in LM Studio with a larger context length (${n}: its load settings, or lms load --context-length ${n}).`;
    case 'vllm': return `To give the model more room, start vLLM with a larger --max-model-len (${n}).`;
    default: return 'To give the model more room, run it with a larger window on the server.';
  }
}

/** The meter tooltip's lines about the window: where it came from, a setting not applied and why, a model not loaded. */
export function windowNotes(sw: ServerWindow, w: { window?: number; source?: 'server' | 'profile'; serverWindow?: number; unapplied?: number }, model: string): string[] {
  const name = sw.kind ? SERVER_NAMES[sw.kind] : 'The server';
  const notes: string[] = [];
  if (w.source === 'server') notes.push(`Window: what ${sw.kind ? name : 'the server'} runs (${sw.from ?? 'the server\'s model list'})`);
  else if (w.source === 'profile') {
    notes.push(w.serverWindow !== undefined
      ? `Window: your contextWindow setting, smaller than the ${count(w.serverWindow)} tokens the server runs`
      : 'Window: your contextWindow setting (the server does not say what it runs)');
  }
  if (w.unapplied !== undefined && w.serverWindow !== undefined) {
    notes.push(`Your contextWindow setting (${count(w.unapplied)}) is not applied: the server runs this model at ${count(w.serverWindow)} tokens, and a longer prompt would fail or lose its start.`);
  }
  if (sw.modelMax !== undefined && w.serverWindow !== undefined && sw.modelMax > w.serverWindow) {
    notes.push(`The model itself takes up to ${count(sw.modelMax)} tokens.`);
  }
  if (w.window === undefined && sw.loaded === false && sw.kind) {
    notes.push(sw.kind === 'ollama'
      ? `Ollama has not loaded ${model} yet and nothing sets its num_ctx: it will run it at Ollama's default window (${count(OLLAMA_DEFAULT_CONTEXT)} tokens on most machines; OLLAMA_CONTEXT_LENGTH changes it). Parley reads the real one once the model is loaded.`
      : `${name} has not loaded ${model} yet: Parley reads its window once the model is loaded.`);
  }
  return notes;
}

/**
 * The card of a turn not sent because its prompt does not fit: past the window (the server's, or a smaller setting)
 * with older turns to summarize, Compact and retry; past the window the server runs, also how to raise it; with
 * nothing to summarize, Retry (once the server's window is raised).
 */
export function notSentCard(m: ContextMeterView, sw: ServerWindow, model: string, keepTurns: number): ErrorView {
  const over = m.serverWindow !== undefined && m.used >= m.serverWindow;
  const limit = over ? `the ${count(m.serverWindow ?? 0)} tokens the server runs ${model} at` : count(m.window ?? 0);
  const raise = over ? ` ${raiseHint(sw, m.used + m.reserve)}` : '';
  return {
    kind: 'context_length',
    title: `This conversation no longer fits the model's window: about ${count(m.used)} tokens and ${count(m.reserve)} for the reply, of ${limit}. Nothing was sent.`,
    hint: m.compactable > 0
      ? `Compact it: older turns are summarized by the same model and the latest are kept word for word. Or start a new chat.${raise}`
      : `There is nothing older to summarize (the last ${keepTurns} questions are kept word for word): start a new chat, or shorten the question.${raise}`,
    actions: m.compactable > 0 ? ['compactRetry'] : ['retry'],
  };
}

/** The card under a reply whose prompt the server cut (see promptDropped in contextWindow.ts). */
export function droppedCard(a: { expected: number; actual: number; window?: number; reserve: number; compactable: boolean }, sw: ServerWindow, model: string): ErrorView {
  const where = a.window !== undefined ? `, and it runs ${model} at ${count(a.window)}` : '';
  return {
    kind: 'context_length',
    title: `The server dropped part of the prompt: it read ${count(a.actual)} tokens where Parley sent about ${count(a.expected)}${where}. This reply did not see the start of the conversation.`,
    hint: `${a.compactable ? 'Compact the conversation, then regenerate. ' : ''}${raiseHint(sw, a.expected + a.reserve)}`,
    actions: a.compactable ? ['compact'] : [],
  };
}

/** A shortfall smaller than this is within the estimate's noise, never a dropped prompt. */
const MIN_DROPPED_TOKENS = 256;

/**
 * Whether the server's `prompt_tokens` says it dropped part of the prompt, as Ollama does (it cuts the start of a
 * prompt longer than its window and answers 200). `expected` is Parley's estimate of what was sent, corrected by the
 * last real count. With the server's window known: the estimate was larger than the window, the count fits in it,
 * and it is under 80 % of the estimate. Without it: the count is under half the estimate. Both: short by 256 or more.
 */
export function promptDropped(a: { expected: number; actual: number; window?: number }): boolean {
  const { expected, actual, window } = a;
  if (!(expected > 0 && actual > 0) || expected - actual < MIN_DROPPED_TOKENS) return false;
  if (window !== undefined) return expected > window && actual <= window && actual < expected * 0.8;
  return actual < expected * 0.5;
}
