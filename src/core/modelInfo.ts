// What a server's GET /models says about each model: its id, context window, output limit and capabilities.
//
// Servers put the context window under different names, and none is standard. Read here, in this order:
// LM Studio `loaded_context_length` (what is loaded now), `max_context_length` (Mistral's window; for LM Studio, whose
// entries have a `state`, only the model's maximum), OpenRouter `top_provider.context_length` and `context_length` (also
// Together), vLLM `max_model_len`, Groq `context_window`, llama.cpp `meta.n_ctx` (the window it runs, `-c`), LiteLLM
// `max_input_tokens`. llama.cpp's `meta.n_ctx_train` is the model's training length, not the window it runs: only
// `modelMax`. Output limits: OpenRouter `top_provider.max_completion_tokens`, Groq `max_completion_tokens`, LiteLLM
// `max_output_tokens`.
import { DEFAULT_CONTEXT_TOKENS, positive, resolveWindow } from './contextWindow';
import { isRecord } from './errors';
import type { ModelInfo, ServerKind } from './types';

/** The model as listed, and the local servers recognised: types shared with the window's arithmetic (contextWindow.ts). */
export type { ModelInfo, ServerKind } from './types';

const first = (...vs: unknown[]): number | undefined => vs.map(positive).find((n) => n !== undefined);

/** The model in one entry of a model list (an id string, OpenAI `{id}`, Ollama `{name}`), or undefined. */
function modelInfoFrom(entry: unknown): ModelInfo | undefined {
  if (typeof entry === 'string') return entry ? { id: entry } : undefined;
  if (!isRecord(entry)) return undefined;
  const id = typeof entry.id === 'string' && entry.id ? entry.id : typeof entry.name === 'string' && entry.name ? entry.name : undefined;
  if (!id) return undefined;
  const top = isRecord(entry.top_provider) ? entry.top_provider : {};
  const meta = isRecord(entry.meta) ? entry.meta : {};
  const info: ModelInfo = { id };
  const status = isRecord(entry.status) ? entry.status : undefined;
  // LM Studio's /api/v0 entries have a `state`; llama.cpp's router lists each model with `status.value`.
  const lmStudio = typeof entry.state === 'string';
  const state = lmStudio ? entry.state : status?.value;
  const context = first(entry.loaded_context_length, lmStudio ? undefined : entry.max_context_length, top.context_length,
    entry.context_length, entry.max_model_len, entry.context_window, meta.n_ctx, ctxArg(status?.args), entry.max_input_tokens);
  const output = first(top.max_completion_tokens, entry.max_completion_tokens, entry.max_output_tokens);
  const max = first(meta.n_ctx_train, lmStudio ? entry.max_context_length : undefined);
  if (context !== undefined) info.contextLength = context;
  if (output !== undefined) info.maxOutputTokens = output;
  if (max !== undefined && max !== context) info.modelMax = max;
  const owner = entry.owned_by;
  const server: ServerKind | undefined = owner === 'llamacpp' || entry.meta !== undefined || status ? 'llama.cpp'
    : owner === 'vllm' ? 'vllm' : owner === 'organization_owner' || lmStudio ? 'lmstudio' : owner === 'library' ? 'ollama' : undefined;
  if (server) info.server = server;
  if (typeof state === 'string') info.loaded = state === 'loaded';
  if (isRecord(entry.pricing)) info.pricing = entry.pricing;
  const caps = entry.capabilities;
  const params = entry.supported_parameters;
  // Mistral: capabilities {function_calling, vision}; LM Studio: capabilities ["tool_use"], type "vlm"; OpenRouter:
  // supported_parameters and architecture.input_modalities.
  if (isRecord(caps) && typeof caps.function_calling === 'boolean') info.toolCalling = caps.function_calling;
  else if (Array.isArray(caps)) info.toolCalling = caps.includes('tool_use') || caps.includes('tools');
  else if (Array.isArray(params)) info.toolCalling = params.includes('tools');
  if (Array.isArray(params) && params.includes('reasoning')) info.reasoning = true;
  const modalities = isRecord(entry.architecture) ? entry.architecture.input_modalities : undefined;
  if (isRecord(caps) && typeof caps.vision === 'boolean') info.imageInput = caps.vision;
  else if (Array.isArray(modalities)) info.imageInput = modalities.includes('image');
  else if (entry.type === 'vlm' || entry.type === 'llm') info.imageInput = entry.type === 'vlm';
  else if (listsEveryCapability(caps)) info.imageInput = caps.includes('vision') || caps.includes('multimodal');
  return info;
}

/**
 * A capability list that names every capability, "completion" first among them (Ollama's `["completion", "vision",
 * "tools"]`, llama.cpp's `["completion", "multimodal"]`): what it leaves out, the model cannot do. LM Studio's
 * `["tool_use"]` names only some, so it says nothing about images.
 */
function listsEveryCapability(caps: unknown): caps is unknown[] {
  return Array.isArray(caps) && caps.includes('completion');
}

/** llama.cpp router mode: the window a model's preset starts it with (`-c N` or `--ctx-size N` in `status.args`). */
function ctxArg(args: unknown): number | undefined {
  if (!Array.isArray(args)) return undefined;
  const i = args.findIndex((a) => a === '-c' || a === '--ctx-size');
  return i < 0 ? undefined : positive(Number(args[i + 1]));
}

/** Every model in a GET /models body: OpenAI `data`, Ollama `models`, or a bare array. Undefined when it is no list. */
export function modelListFrom(json: unknown): ModelInfo[] | undefined {
  const o = json as { data?: unknown; models?: unknown } | null;
  const list = Array.isArray(o?.data) ? o.data : Array.isArray(o?.models) ? o.models : Array.isArray(json) ? (json as unknown[]) : undefined;
  if (!list) return undefined;
  // llama.cpp's single-model /v1/models gives `data` (without capabilities) and an Ollama-style `models` beside it,
  // whose `capabilities` say whether a projector (--mmproj) is loaded: its image answer completes the entry of that name.
  const extra = list === o?.data && Array.isArray(o?.models) ? o.models.map(modelInfoFrom) : [];
  const out: ModelInfo[] = [];
  for (const m of list) {
    const info = modelInfoFrom(m);
    if (!info) continue;
    const image = info.imageInput ?? extra.find((x) => x?.id === info.id)?.imageInput;
    if (image !== undefined) info.imageInput = image;
    out.push(info);
  }
  return out;
}

/** `model`'s entry in a model list; "llama3.2" is also "llama3.2:latest" (Ollama's default tag). */
export function listedModel(list: readonly ModelInfo[] | undefined, model: string): ModelInfo | undefined {
  return list?.find((x) => x.id === model || x.id === `${model}:latest`);
}

/**
 * A model's token limits for VS Code's language-model API: the window the server runs, lowered by a smaller
 * `contextWindow` setting, else the setting, else `unknown`; the reply's room from the server, else `maxTokens`, else
 * the default. The input limit is the window less the reply's room, so that a full prompt still leaves space for the
 * answer. The arithmetic is the context meter's (resolveWindow), so both agree; only here an unknown window becomes a
 * number (DEFAULT_CONTEXT_TOKENS, or the server's own default), because the API needs one.
 */
export function tokenLimits(info: Pick<ModelInfo, 'contextLength' | 'maxOutputTokens'>, settings: { contextWindow?: number; maxTokens?: number }, unknown = DEFAULT_CONTEXT_TOKENS): { maxInputTokens: number; maxOutputTokens: number } {
  const { window, reserve } = resolveWindow(info, { contextWindow: settings.contextWindow }, settings.maxTokens);
  const context = window ?? unknown;
  const output = Math.min(reserve, Math.floor(context / 2));
  return { maxInputTokens: context - output, maxOutputTokens: output };
}
