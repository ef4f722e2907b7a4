// Quirk profiles for the local test server: each one behaves like a real OpenAI-compatible server that differs from OpenAI in one way.
//
// Error bodies are the ones real servers send (sources next to each builder), so the client is tested
// against what it meets in the field, not against a shape we made up. Used by the unit tests and by the
// integration tests inside VS Code: everything here is plain Node and imports no 'vscode'.
import type * as http from 'node:http';
import * as net from 'node:net';
import { startTestServer, withServer, writeWay, type Handler, type RecordedRequest, type TestServer, type Way } from './server';

/** A request handler for startTestServer(). */
export type { Handler } from './server';

/** A named server behaviour: pass `handler` to startTestServer(), or use startQuirkServer(). */
export interface QuirkProfile {
  /** Short id, usable in test titles. */
  name: string;
  /** What the server does, in words. */
  description: string;
  handler: Handler;
}

/** The request parameters some servers reject (issue 7). */
export const QUIRK_PARAMS = [
  'stream_options',
  'response_format',
  'max_tokens',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'tools',
  'parallel_tool_calls',
] as const;
export type QuirkParam = (typeof QUIRK_PARAMS)[number];

/** Where reasoning arrives: the four forms Parley accepts. */
export const REASONING_FORMS = ['reasoning_content', 'reasoning', 'reasoning_details', 'think_tag'] as const;
export type ReasoningForm = (typeof REASONING_FORMS)[number];

/** An HTTP error answer: status and JSON body. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
}

// ---------------------------------------------------------------------------------------------
// Real error bodies
// ---------------------------------------------------------------------------------------------

/**
 * Real error bodies, by server. Each builder names where its shape was seen.
 */
export const errorBodies = {
  /**
   * OpenAI 400 for a parameter a model does not take (o-series, gpt-5). Verbatim for max_tokens in
   * vercel/ai packages/openai/src/chat/__fixtures__/reasoning-model-legacy-parameter-error.json; the
   * same template for temperature, top_p, presence_penalty and parallel_tool_calls is quoted in
   * sigoden/aichat#1144, aandrew-me/tgpt#333, nextai-translator#1781, langchain-ai/langchain#29416.
   */
  openaiUnsupportedParameter(param: string): ErrorAnswer {
    const message =
      param === 'max_tokens'
        ? "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
        : `Unsupported parameter: '${param}' is not supported with this model.`;
    return { status: 400, body: { error: { message, type: 'invalid_request_error', param, code: 'unsupported_parameter' } } };
  },

  /**
   * Mistral 422 from its pydantic validation: `param` is null and the parameter is named only in
   * `message.detail[].loc`. Shape as in editor-code-assistant/eca#231 and Gage-Technologies/mistral-go#2.
   */
  mistralExtraForbidden(param: string, input: unknown): ErrorAnswer {
    return {
      status: 422,
      body: {
        object: 'error',
        message: { detail: [{ type: 'extra_forbidden', loc: ['body', param], msg: 'Extra inputs are not permitted', input }] },
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    };
  },

  /**
   * Mistral's older 422, where `message` is a JSON document inside a string (mistralai/platform-docs-public#7,
   * seen for frequency_penalty). The parameter appears only inside that string.
   */
  mistralExtraForbiddenLegacy(param: string, input: unknown): ErrorAnswer {
    const inner = {
      detail: [
        { type: 'extra_forbidden', loc: ['body', param], msg: 'Extra inputs are not permitted', input, url: 'https://errors.pydantic.dev/2.5/v/extra_forbidden' },
      ],
    };
    return {
      status: 422,
      body: { object: 'error', message: JSON.stringify(inner), type: 'internal_error_proxy', param: null, code: '1000' },
    };
  },

  /**
   * Mistral's 2025 422 for `tools` (partITech/php-mistral#76): `detail` and `message` are both arrays,
   * `code` is a number.
   */
  mistralExtraForbiddenTools(input: unknown): ErrorAnswer {
    const detail = [{ type: 'extra_forbidden', loc: ['body', 'tools'], msg: 'Extra inputs are not permitted', input }];
    return { status: 422, body: { object: 'Error', detail, message: detail, type: 'invalid_request_error', code: 3001 } };
  },

  /** Groq 400 for a property it does not know, named only in the message (vercel/ai#1578). */
  groqUnsupportedProperty(param: string, didYouMean = 'stream'): ErrorAnswer {
    return { status: 400, body: { error: { message: `property '${param}' is unsupported, did you mean '${didYouMean}'?`, type: 'invalid_request_error' } } };
  },

  /** LM Studio 400 for response_format json_object: `error` is a bare string (LoadShine/tada#16, lmstudio-bug-tracker#189). */
  lmStudioResponseFormat(): ErrorAnswer {
    return { status: 400, body: { error: "'response_format.type' must be 'json_schema' or 'text'" } };
  },

  /** LM Studio's answer to a path it does not serve: HTTP 200 and a bare-string error (lmstudio-bug-tracker#618). */
  lmStudioUnexpectedEndpoint(method: string, path: string): ErrorAnswer {
    return { status: 200, body: { error: `Unexpected endpoint or method. (${method} ${path})` } };
  },

  /** OpenAI 401 for a wrong key; OpenAI echoes the key masked (newrelic cassette, see fixtures/SOURCES.md). */
  openaiInvalidApiKey(echoedKey: string): ErrorAnswer {
    return {
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${echoedKey}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    };
  },

  /** OpenAI 401 when no Authorization header came. */
  openaiMissingApiKey(): ErrorAnswer {
    return {
      status: 401,
      body: {
        error: {
          message:
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the basic auth username and password parameter (i.e. -u YOUR_KEY:), or as the password parameter (i.e. -u :YOUR_KEY). You can obtain an API key from https://platform.openai.com/account/api-keys.",
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    };
  },

  /** OpenAI 404 for an unknown model (pydantic-ai cassette, fixtures/openai-error-404-model-not-found.json). */
  openaiModelNotFound(model: string): ErrorAnswer {
    return {
      status: 404,
      body: { error: { code: 'model_not_found', message: `The model \`${model}\` does not exist or you do not have access to it.`, param: null, type: 'invalid_request_error' } },
    };
  },

  /** Ollama's 404 for a model that is not pulled. */
  ollamaModelNotFound(model: string): ErrorAnswer {
    return { status: 404, body: { error: { message: `model "${model}" not found, try pulling it first`, type: 'api_error', param: null, code: null } } };
  },

  /**
   * OpenAI's 400 for parallel_tool_calls in a request without tools (quoted in Upsonic/Upsonic#323 and in
   * camel-ai/camel#3706). The `code` of this body was not seen in a capture; null here.
   */
  openaiParallelToolCallsWithoutTools(): ErrorAnswer {
    return {
      status: 400,
      body: {
        error: {
          message: "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
          type: 'invalid_request_error',
          param: 'parallel_tool_calls',
          code: null,
        },
      },
    };
  },

  /**
   * OpenAI's 400 for one badly declared tool (an array without `items`): the whole request is refused, and `param`
   * points inside the tool list. Verbatim but for the names, as quoted in modelscope/ms-agent#610 (`param`
   * "tools[0].function.parameters") and garrytan/gbrain#1103, flanksource/mission-control#2634 ("tools[36].parameters").
   */
  openaiInvalidFunctionSchema(index: number, fn: string, property: string, param = `tools[${index}].function.parameters`): ErrorAnswer {
    return {
      status: 400,
      body: {
        error: {
          message: `Invalid schema for function '${fn}': In context=('properties', '${property}'), array schema missing items.`,
          type: 'invalid_request_error',
          param,
          code: 'invalid_function_parameters',
        },
      },
    };
  },

  /**
   * Gemini's OpenAI-compatible endpoint on a tool schema it cannot read: no `param`, the path only in the message
   * (mnfst/llm-gateway#1858; the same "at 'tools[0].function_declarations[0].parameters'" in janhq/jan#5927).
   */
  geminiUnknownSchemaField(field: string): ErrorAnswer {
    return {
      status: 400,
      body: {
        error: {
          code: 400,
          message: `Invalid JSON payload received. Unknown name "${field}" at 'tools[0].function_declarations[0].parameters.properties[0].value.items': Cannot find field.`,
          status: 'INVALID_ARGUMENT',
        },
      },
    };
  },

  /**
   * Ollama's 400 for a model whose template has no tools: the whole `tools` field is refused (ollama/ollama#6027,
   * #5793: `{"error":{"message":"stablelm2:latest does not support tools","type":"api_error","param":null,"code":null}}`).
   */
  ollamaDoesNotSupportTools(model: string): ErrorAnswer {
    return { status: 400, body: { error: { message: `${model} does not support tools`, type: 'api_error', param: null, code: null } } };
  },

  /** OpenAI's 404 for a path it does not serve. */
  openaiInvalidUrl(method: string, path: string): ErrorAnswer {
    return { status: 404, body: { error: { message: `Invalid URL (${method} ${path})`, type: 'invalid_request_error', param: null, code: null } } };
  },
};

/** Which real server's rejection each parameter gets by default: the server known to reject it. */
export const DEFAULT_REJECTION_STYLE: Record<QuirkParam, RejectionStyle> = {
  stream_options: 'mistral',
  response_format: 'lmstudio',
  max_tokens: 'openai',
  temperature: 'openai',
  top_p: 'openai',
  presence_penalty: 'mistral',
  frequency_penalty: 'mistral-legacy',
  tools: 'mistral-tools',
  parallel_tool_calls: 'openai',
};

export type RejectionStyle = 'openai' | 'mistral' | 'mistral-legacy' | 'mistral-tools' | 'groq' | 'lmstudio';

/** The error a server of `style` sends when a request carries `param` with value `input`. */
export function rejection(param: QuirkParam, input: unknown, style: RejectionStyle = DEFAULT_REJECTION_STYLE[param]): ErrorAnswer {
  switch (style) {
    case 'openai':
      return errorBodies.openaiUnsupportedParameter(param);
    case 'mistral':
      return errorBodies.mistralExtraForbidden(param, input);
    case 'mistral-legacy':
      return errorBodies.mistralExtraForbiddenLegacy(param, input);
    case 'mistral-tools':
      return errorBodies.mistralExtraForbiddenTools(input);
    case 'groq':
      return errorBodies.groqUnsupportedProperty(param);
    case 'lmstudio':
      return errorBodies.lmStudioResponseFormat();
  }
}

// ---------------------------------------------------------------------------------------------
// A compliant OpenAI-compatible server, which the quirk profiles build on
// ---------------------------------------------------------------------------------------------

/** How the server answers a chat request it accepts. */
export interface ReplyOptions {
  /** The answer text. Default "OK". */
  text?: string;
  /** Reasoning to send before the answer, and under which name. */
  reasoning?: { form: ReasoningForm; text: string };
  /**
   * When a usage chunk is sent: only when stream_options.include_usage asks (OpenAI), always (Mistral
   * puts usage on its finish chunk regardless), or never (Ollama before 0.5).
   */
  usage?: 'when-asked' | 'always' | 'never';
  /** Send `data: [DONE]`. Default true. */
  done?: boolean;
  /**
   * Deliver the streamed body this way (whole, byte by byte, random splits) instead of one flush per event.
   * Default: one flush per event.
   */
  way?: Way;
}

export interface ServerOptions extends ReplyOptions {
  /** The path prefix the API lives under. Default "/v1". */
  prefix?: string;
  /** Model ids listed at GET {prefix}/models; `false`: no models endpoint (404). Default ["test-model"]. */
  models?: string[] | false;
  /** Reject chat requests for models not served, as this server does. Default: accept any model. */
  unknownModel?: 'openai' | 'ollama';
  /** The models the server actually serves, when they differ from what it lists. Default: `models`. */
  served?: string[];
  /** When set, every request must carry `Authorization: Bearer <key>`; others get OpenAI's 401. */
  key?: string;
  /** How the 401 echoes a wrong key: masked as OpenAI does, or in full as careless proxies do. Default masked. */
  echoKey?: 'masked' | 'full';
  /** Validate tool parameters as OpenAI does: parallel_tool_calls without tools is a 400. Default false. */
  openaiToolValidation?: boolean;
  /** What a path outside the API gets: OpenAI's 404, or LM Studio's 200 with an error string. Default openai. */
  wrongPath?: 'openai' | 'lmstudio';
}

/** The reasoning and answer split into stream deltas, in the given form. */
export function replyDeltas(opts: ReplyOptions): Record<string, unknown>[] {
  const text = opts.text ?? 'OK';
  const out: Record<string, unknown>[] = [{ role: 'assistant', content: '' }];
  const r = opts.reasoning;
  if (r) {
    const parts = splitInThree(r.text);
    switch (r.form) {
      case 'reasoning_content': // DeepSeek, llama.cpp, xAI: content is null while it thinks
        for (const p of parts) out.push({ content: null, reasoning_content: p });
        out.push({ content: text, reasoning_content: null });
        return out;
      case 'reasoning': // Groq, Ollama, vLLM
        for (const p of parts) out.push({ reasoning: p });
        out.push({ content: text });
        return out;
      case 'reasoning_details': // OpenRouter's structured reasoning, without its plain `reasoning` twin
        for (const p of parts) out.push({ content: '', reasoning_details: [{ type: 'reasoning.text', text: p, index: 0, format: null }] });
        out.push({ content: text });
        return out;
      case 'think_tag': {
        // Models served raw (Ollama, LM Studio, vLLM without a reasoning parser) put <think> in the content.
        // The tags are cut mid-word across chunks on purpose.
        const whole = `<think>\n${r.text}\n</think>\n\n${text}`;
        const open = whole.indexOf('<think>');
        const close = whole.indexOf('</think>');
        const cuts = [open + 3, open + 9, close + 4, close + 11, whole.length];
        let from = 0;
        for (const c of cuts) {
          if (c > from) out.push({ content: whole.slice(from, c) });
          from = c;
        }
        return out;
      }
    }
  }
  for (const p of splitInThree(text)) out.push({ content: p });
  return out;
}

/** The non-streamed assistant message for the same reply. */
export function replyMessage(opts: ReplyOptions): Record<string, unknown> {
  const text = opts.text ?? 'OK';
  const r = opts.reasoning;
  if (!r) return { role: 'assistant', content: text };
  switch (r.form) {
    case 'reasoning_content':
      return { role: 'assistant', content: text, reasoning_content: r.text };
    case 'reasoning':
      return { role: 'assistant', content: text, reasoning: r.text };
    case 'reasoning_details':
      return { role: 'assistant', content: text, reasoning_details: [{ type: 'reasoning.text', text: r.text, index: 0, format: null }] };
    case 'think_tag':
      return { role: 'assistant', content: `<think>\n${r.text}\n</think>\n\n${text}` };
  }
}

const USAGE = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 };

/**
 * Writes a full chat reply to `res`: SSE when the request asked to stream, JSON otherwise. Each SSE event
 * is flushed on its own, so the client reads them (and a split <think> tag) in separate pieces.
 */
export async function writeReply(req: RecordedRequest, res: http.ServerResponse, opts: ReplyOptions = {}): Promise<void> {
  const body = (req.json ?? {}) as Record<string, unknown>;
  const model = typeof body.model === 'string' ? body.model : 'test-model';
  const base = { id: 'chatcmpl-quirk', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const usageMode = opts.usage ?? 'when-asked';
  const asked = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const sendUsage = usageMode === 'always' || (usageMode === 'when-asked' && asked);
  if (body.stream !== true) {
    writeJson(res, 200, {
      id: 'chatcmpl-quirk',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: replyMessage(opts), finish_reason: 'stop' }],
      usage: usageMode === 'never' ? undefined : USAGE,
    });
    return;
  }
  const events: unknown[] = replyDeltas(opts).map((delta) => ({ ...base, choices: [{ index: 0, delta, finish_reason: null }] }));
  if (usageMode === 'always') {
    // Mistral's way: usage rides on the finish chunk, asked for or not.
    events.push({ ...base, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }], usage: USAGE });
  } else {
    events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (sendUsage) events.push({ ...base, choices: [], usage: USAGE });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  if (opts.way) {
    let text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
    if (opts.done ?? true) text += 'data: [DONE]\n\n';
    return writeWay(res, text, opts.way);
  }
  for (const e of events) await flush(res, `data: ${JSON.stringify(e)}\n\n`);
  if (opts.done ?? true) await flush(res, 'data: [DONE]\n\n');
  if (!res.destroyed) res.end();
}

/** Writes a JSON answer. */
export function writeJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function flush(res: http.ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(text, () => setImmediate(resolve));
  });
}

function writeError(res: http.ServerResponse, e: ErrorAnswer): void {
  writeJson(res, e.status, e.body);
}

/**
 * A server that follows OpenAI's API: GET {prefix}/models and POST {prefix}/chat/completions, plus the
 * options' differences. `before` runs first on chat requests and may answer instead (how quirks plug in).
 */
export function openAiCompatible(opts: ServerOptions = {}, before?: (req: RecordedRequest, res: http.ServerResponse) => boolean): Handler {
  const prefix = (opts.prefix ?? '/v1').replace(/\/+$/, '');
  const models = opts.models === undefined ? ['test-model'] : opts.models;
  return (req, res) => {
    const path = req.path.split('?')[0];
    if (opts.key !== undefined) {
      const auth = String(req.headers.authorization ?? '');
      if (!auth) return writeError(res, errorBodies.openaiMissingApiKey());
      const sent = auth.replace(/^Bearer\s+/i, '');
      if (sent !== opts.key) return writeError(res, errorBodies.openaiInvalidApiKey(opts.echoKey === 'full' ? sent : maskKey(sent)));
    }
    if (req.method === 'GET' && path === `${prefix}/models` && models !== false) {
      return writeJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'organization-owner' })) });
    }
    if (req.method === 'POST' && path === `${prefix}/chat/completions`) {
      if (before?.(req, res)) return;
      const sent = (req.json ?? {}) as Record<string, unknown>;
      if (opts.openaiToolValidation && sent.parallel_tool_calls !== undefined && sent.tools === undefined) {
        return writeError(res, errorBodies.openaiParallelToolCallsWithoutTools());
      }
      const model = String((req.json as { model?: unknown } | undefined)?.model ?? '');
      const served = opts.served ?? (models === false ? [] : models);
      if (opts.unknownModel && !modelListed(model, served)) {
        return writeError(res, opts.unknownModel === 'ollama' ? errorBodies.ollamaModelNotFound(model) : errorBodies.openaiModelNotFound(model));
      }
      return writeReply(req, res, opts);
    }
    return writeError(
      res,
      opts.wrongPath === 'lmstudio' ? errorBodies.lmStudioUnexpectedEndpoint(req.method, path) : errorBodies.openaiInvalidUrl(req.method, path),
    );
  };
}

// ---------------------------------------------------------------------------------------------
// Profiles
// ---------------------------------------------------------------------------------------------

/**
 * Rejects every chat request that carries `param` (any value but undefined), the way the server of
 * `style` does, and answers normally once it is gone. For max_tokens, `max_completion_tokens` is accepted.
 */
export function rejectsParam(param: QuirkParam, opts: ServerOptions & { style?: RejectionStyle } = {}): QuirkProfile {
  const style = opts.style ?? DEFAULT_REJECTION_STYLE[param];
  const reply: ServerOptions = {
    openaiToolValidation: style === 'openai',
    ...opts,
    usage: opts.usage ?? (style.startsWith('mistral') ? 'always' : 'when-asked'),
  };
  return {
    name: `rejects-${param}`,
    description: `rejects ${param} as ${style} does`,
    handler: openAiCompatible(reply, (req, res) => {
      const body = (req.json ?? {}) as Record<string, unknown>;
      if (body[param] === undefined) return false;
      if (param === 'response_format' && style === 'lmstudio') {
        // LM Studio takes json_schema and text; only json_object is refused.
        const t = (body.response_format as { type?: unknown } | null)?.type;
        if (t === 'json_schema' || t === 'text') return false;
      }
      writeError(res, rejection(param, body[param], style));
      return true;
    }),
  };
}

/** One rejecting profile per parameter, each as its default real server does it. */
export const PARAM_PROFILES: Readonly<Record<QuirkParam, QuirkProfile>> = Object.fromEntries(
  QUIRK_PARAMS.map((p) => [p, rejectsParam(p)]),
) as Record<QuirkParam, QuirkProfile>;

/** Streams `reasoning` under the given name before answering `text`. */
export function reasoningUnder(form: ReasoningForm, opts: ServerOptions = {}, reasoning = 'The user wants a short answer.'): QuirkProfile {
  return {
    name: `reasoning-${form}`,
    description: form === 'think_tag' ? 'sends <think>…</think> in the content, tags split across chunks' : `sends reasoning in delta.${form}`,
    handler: openAiCompatible({ ...opts, reasoning: { form, text: reasoning } }),
  };
}

/**
 * LM Studio: serves /v1 only, and answers any other path with HTTP 200 and
 * `{"error":"Unexpected endpoint or method. (POST /chat/completions)"}`.
 */
export function lmStudio(opts: ServerOptions = {}): QuirkProfile {
  return {
    name: 'lmstudio-wrong-path',
    description: 'LM Studio: 200 with {"error":"Unexpected endpoint or method. …"} off /v1',
    handler: openAiCompatible({ models: ['qwen2.5-7b-instruct'], ...opts, wrongPath: 'lmstudio' }),
  };
}

/** OpenAI's key check: 401 without the key or with another one. */
export function requiresKey(key: string, opts: ServerOptions = {}): QuirkProfile {
  return { name: 'requires-key', description: 'answers 401 unless the right key comes', handler: openAiCompatible({ ...opts, key }) };
}

/**
 * Serves `models` and answers 404 for any other model, as OpenAI (or, with unknownModel 'ollama', Ollama)
 * does. It lists them at GET /models too, unless `opts.models` says otherwise (`false`: no models endpoint).
 */
export function knownModels(models: string[], opts: ServerOptions = {}): QuirkProfile {
  return {
    name: 'known-models',
    description: `serves ${models.join(', ')} and answers 404 for other models`,
    handler: openAiCompatible({ unknownModel: 'openai', ...opts, models: opts.models ?? models, served: models }),
  };
}

/** Starts the local test server with a profile. */
export function startQuirkServer(profile: QuirkProfile): Promise<TestServer> {
  return startTestServer(profile.handler);
}

/** Runs `fn` against a server that behaves as `profile` says, and closes it however `fn` ends. */
export function withQuirkServer<T>(profile: QuirkProfile, fn: (server: TestServer) => Promise<T>): Promise<T> {
  return withServer(profile.handler, fn);
}

/**
 * A URL nothing listens on: a port bound on 127.0.0.1 and closed again. Connecting to it is refused.
 * `host` lets tests use "localhost" for the same port.
 */
export async function closedPortUrl(host = '127.0.0.1'): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://${host}:${port}`;
}

/** OpenAI's masking of an echoed key: first 3 and last 4 characters. */
export function maskKey(key: string): string {
  if (key.length <= 8) return '*'.repeat(key.length);
  return `${key.slice(0, 3)}${'*'.repeat(Math.max(4, key.length - 7))}${key.slice(-4)}`;
}

function modelListed(model: string, models: string[]): boolean {
  return models.includes(model) || models.includes(`${model}:latest`);
}

function splitInThree(s: string): string[] {
  if (s.length < 3) return [s];
  const a = Math.floor(s.length / 3);
  const b = Math.floor((2 * s.length) / 3);
  return [s.slice(0, a), s.slice(a, b), s.slice(b)];
}
