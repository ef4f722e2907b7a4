// Expected results of replaying every provider transcript in test/fixtures/providers/ through the client.
//
// Every value here was derived by READING the transcript (by eye, or by throwaway one-off scripts over the transcript
// that are not part of the project), never by running Parley's code. The rules applied while reading:
// - text / reasoning / refusal: concatenation of that choice's `delta.content` / `delta.reasoning_content` or
//   `delta.reasoning` (reasoning_details carrying the same text is not counted twice) / `delta.refusal`, in wire order;
// - tool calls: assembled by `index`, else `id`, else position; `name` is not concatenated, `arguments` is, and a
//   missing or null `arguments` contributes '';
// - usage: the LAST non-null `usage` object on the wire (never a sum); none at all => an estimate (`estimated: true`,
//   numbers not asserted);
// - finishReason: choice 0's last non-null finish_reason;
// - ended: 'error' for an error inside the stream (`data: {"error":...}` or `event: error`) or an HTTP error status;
//   else 'done' when `data: [DONE]` is dispatched or the body ends after a finish_reason; else 'incomplete';
// - SSE is read per the WHATWG spec: comments are ignored, a line ` data: ...` (leading space) has the field name
//   " data" and is dropped, and an event not terminated by a blank line before EOF is never dispatched.
// Transcripts are never copied here; texts longer than 500 UTF-16 code units are pinned by length + SHA-256 (of the
// UTF-8 bytes) + their first and last 48 characters.
import type { ErrorKind } from '../../src/core/errors';

/** A literal string, or a long one pinned by its length (UTF-16 code units), SHA-256 (UTF-8, hex) and its ends. */
export type TextExpectation = string | { length: number; sha256: string; startsWith: string; endsWith: string };

export interface ToolCallExpectation {
  id: string;
  name: string;
  arguments: string;
}

/** Exact token counts the server reported, or `{ estimated: true }` when it reported none. */
export type UsageExpectation =
  | { estimated: true }
  | {
      prompt_tokens: number;
      completion_tokens: number;
      total_tokens: number;
      /** completion_tokens_details.reasoning_tokens, when the transcript gives it. */
      reasoning_tokens?: number;
      /** prompt_tokens_details.cached_tokens, when the transcript gives it. */
      cached_tokens?: number;
    };

export interface ErrorExpectation {
  /** The kind; an array when the transcript alone allows more than one reading (each is documented). */
  kind: ErrorKind | ErrorKind[];
  /** HTTP status the error came with (only for HTTP error responses). */
  status?: number;
  /** The wire `code`, compared as a string (OpenRouter sends integers). */
  code?: string;
  param?: string;
  /** providerMessage (or, failing that, message) must contain one of these. */
  messageIncludes?: string[];
  /** A key the server echoes back: it must not appear in error.message, String(error) or error.providerMessage. */
  secret?: string;
}

export interface ChoiceExpectation {
  index: number;
  text: TextExpectation;
  finishReason: string | null;
}

export interface Expected {
  text: TextExpectation;
  reasoning: TextExpectation;
  refusal: string;
  toolCalls: ToolCallExpectation[];
  finishReason: string | null;
  usage: UsageExpectation;
  ended: 'done' | 'incomplete' | 'error';
  /** Whether `data: [DONE]` is dispatched; left out where it is not part of the expectation. */
  sawDone?: boolean;
  /** How many choices the result holds; left out for errors. */
  choiceCount?: number;
  /** Per-choice expectations (n > 1). */
  choices?: ChoiceExpectation[];
  error?: ErrorExpectation;
}

/** How the transcript is put on the wire. `file` is relative to the fixtures folder (default: the fixture itself). */
export type Serve =
  /** The bytes of an SSE file, as text/event-stream, status 200. */
  | { kind: 'sse'; file?: string; headersFrom?: RecordedHeaders }
  /** A .chunks.jsonl framed by the test: `data: <line>\n\n` per non-empty line, no `[DONE]`. */
  | { kind: 'jsonl' }
  /** A JSON body, with this status, as application/json (or the recorded headers). */
  | { kind: 'json'; status: number; file?: string; headersFrom?: RecordedHeaders }
  /** A single stream chunk stored as (pretty) JSON, sent as one SSE event `data: <compact JSON>\n\n`, no `[DONE]`. */
  | { kind: 'chunk-as-sse' }
  /** A curl -v transcript: status line and `< ` headers as recorded (hop-by-hop ones dropped), then the body. */
  | { kind: 'curl' };

/** Response headers recorded in a fixture (`file`, top-level `key`, each value an array of strings). */
export interface RecordedHeaders {
  file: string;
  key: string;
}

export interface Case {
  /** Shown in the test title. */
  label: string;
  serve: Serve;
  /** 'stream': streamChat (three split modes); 'complete': complete() (three split modes). */
  via: 'stream' | 'complete';
  expect: Expected;
}

export interface FixtureEntry {
  file: string;
  /** What the transcript exercises. */
  exercises: string;
  cases: Case[];
}

// ---------------------------------------------------------------------------------------------------------------------
// helpers

const none = { reasoning: '', refusal: '', toolCalls: [] as ToolCallExpectation[] };
const estimated: UsageExpectation = { estimated: true };

/** A raw .sse transcript, replayed as recorded. */
function sse(file: string, exercises: string, expect: Expected): FixtureEntry {
  return { file, exercises, cases: [{ label: 'as recorded', serve: { kind: 'sse' }, via: 'stream', expect }] };
}

/**
 * A .chunks.jsonl transcript, replayed two ways: with the derived-sse/ framing (each line as `data: <line>\n\n`, then
 * `data: [DONE]\n\n`, the vercel/ai harness's assumption), and framed by the test without `[DONE]`. Every one of these
 * transcripts carries a finish_reason, so both end 'done'; only sawDone differs.
 */
function chunks(file: string, exercises: string, expect: Omit<Expected, 'sawDone'>): FixtureEntry {
  const derived = `derived-sse/${file.replace(/\.chunks\.jsonl$/, '.sse')}`;
  return {
    file,
    exercises,
    cases: [
      { label: 'derived-sse framing, with [DONE]', serve: { kind: 'sse', file: derived }, via: 'stream', expect: { ...expect, sawDone: true } },
      { label: 'framed data: <line>, no [DONE]', serve: { kind: 'jsonl' }, via: 'stream', expect: { ...expect, sawDone: false } },
    ],
  };
}

/** A JSON error body served with its HTTP status to a streaming request. */
function httpError(file: string, status: number, exercises: string, error: ErrorExpectation): FixtureEntry {
  return {
    file,
    exercises,
    cases: [
      {
        label: `HTTP ${status}`,
        serve: { kind: 'json', status },
        via: 'stream',
        expect: { text: '', ...none, finishReason: null, usage: estimated, ended: 'error', error: { status, ...error } },
      },
    ],
  };
}

/** A non-streaming completion: through complete(), and to streamChat() from a server that ignores `stream`. */
function nonStream(file: string, exercises: string, expect: Expected): FixtureEntry {
  return {
    file,
    exercises,
    cases: [
      { label: 'complete()', serve: { kind: 'json', status: 200 }, via: 'complete', expect },
      { label: 'streamChat() answered with application/json', serve: { kind: 'json', status: 200 }, via: 'stream', expect },
    ],
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// the table: one entry per file in test/fixtures/providers/ (derived-sse/ files are used by their .chunks.jsonl)

export const FIXTURES: FixtureEntry[] = [
  chunks(
    'alibaba-qwen-tool-call-empty-id.chunks.jsonl',
    "Qwen: continuation tool deltas repeat id:'' (must not blank the id), a trailing empty-args delta without finish_reason, usage in a choices:[] chunk",
    {
      text: '',
      ...none,
      toolCalls: [{ id: 'call_eee11723464a4b9eb8cee71d', name: 'weather', arguments: '{"location": "San Francisco"}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 295, completion_tokens: 22, total_tokens: 317, cached_tokens: 0 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  {
    file: 'azure-async-filter-annotation-chunk.json',
    exercises:
      'Azure async-filter annotation chunk: empty id/model, a choice with NO delta and finish_reason null. Alone on the wire it must not crash; with no finish_reason and no [DONE] the stream is incomplete',
    cases: [
      {
        label: 'as the only SSE event',
        serve: { kind: 'chunk-as-sse' },
        via: 'stream',
        expect: { text: '', ...none, finishReason: null, usage: estimated, ended: 'incomplete', sawDone: false },
      },
    ],
  },

  httpError(
    'azure-error-400-content-filter-prompt.json',
    400,
    'Azure 400 prompt filter: type:null, code content_filter, param prompt, extra status + innererror, newlines inside the JSON',
    {
      kind: 'bad_request',
      code: 'content_filter',
      param: 'prompt',
      messageIncludes: ["The response was filtered due to the prompt triggering Azure OpenAI's content management policy."],
    },
  ),

  nonStream(
    'azure-nonstream-content-filter-results.json',
    'Azure non-stream completion with prompt_filter_results and per-choice content_filter_results; refusal:null',
    {
      text: 'The capital of France is **Paris**.',
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 14, completion_tokens: 9, total_tokens: 23, reasoning_tokens: 0, cached_tokens: 0 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  chunks(
    'azure-prompt-filter-first.chunks.jsonl',
    "Azure: FIRST chunk has choices:[] and empty id/model/object (prompt_filter_results); content_filter_results per chunk; usage in a final choices:[] chunk",
    {
      text: 'Capital of Denmark.',
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 15, completion_tokens: 78, total_tokens: 93, reasoning_tokens: 64, cached_tokens: 0 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  {
    file: 'compat-anthropic-fallback-tool-index-1.sse',
    exercises:
      'Gateway proxying Claude: text, then a tool call whose index starts at 1, a duplicate empty-arguments delta, arguments split mid-key; no usage. The file ends "data: [DONE]\\n" with no blank line, so per the SSE spec [DONE] is never dispatched (sawDone not asserted); it still ends done, after a finish_reason',
    cases: [
      {
        label: 'as recorded',
        serve: { kind: 'sse' },
        via: 'stream',
        expect: {
          text: 'Reading it.',
          ...none,
          toolCalls: [{ id: 'toolu_sanitized', name: 'read_file', arguments: '{"path": "a.txt"}' }],
          finishReason: 'tool_calls',
          usage: estimated,
          ended: 'done',
          choiceCount: 1,
        },
      },
    ],
  },

  chunks(
    'deepseek-reasoning-content.chunks.jsonl',
    'DeepSeek reasoner: delta.reasoning_content (content:null) then content (reasoning_content:null); usage with reasoning_tokens and prompt_cache_* on the finish chunk',
    {
      text: 'The word "strawberry" contains three "r"s.',
      reasoning: {
        length: 606,
        sha256: '01a5d04ca7e849fd2fade232d01ab33b2f93c8b2cd8c4bfaa2acc0f6d86f83f5',
        startsWith: 'We need to count the number of the letter "r" in',
        endsWith: ' 3, 8, and 9. So yes, 3.\n\nThus, the answer is 3.',
      },
      refusal: '',
      toolCalls: [],
      finishReason: 'stop',
      usage: { prompt_tokens: 18, completion_tokens: 219, total_tokens: 237, reasoning_tokens: 205, cached_tokens: 0 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  chunks(
    'deepseek-reasoning-then-tool-call.chunks.jsonl',
    'DeepSeek reasoner: reasoning_content, then a tool call whose arguments arrive in 10 fragments; usage on the finish chunk',
    {
      text: '',
      reasoning:
        'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
      refusal: '',
      toolCalls: [{ id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather', arguments: '{"location": "San Francisco"}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 339, completion_tokens: 83, total_tokens: 422, reasoning_tokens: 39, cached_tokens: 320 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  httpError(
    'groq-error-400-tool-use-failed.json',
    400,
    'Groq 400 tool_use_failed with an extra failed_generation field and no param',
    {
      kind: 'bad_request',
      code: 'tool_use_failed',
      messageIncludes: ['Tool call validation failed'],
    },
  ),

  httpError('groq-error-404-model-not-found.json', 404, 'Groq 404 model_not_found without a param key', {
    kind: 'not_found',
    code: 'model_not_found',
    messageIncludes: ['The model `llama-3.3-70b-versatlie` does not exist or you do not have access to it.'],
  }),

  sse(
    'groq-midstream-event-error-no-done.sse',
    "Groq gpt-oss: delta.reasoning deltas (with channel:'analysis'), then `event: error` + data {error:{code:tool_use_failed,status_code:400}}, no [DONE]; the reasoning before the error is kept",
    {
      text: '',
      reasoning:
        'We need to call the tool with invalid parameters first, then second call with valid args. The user wants us to test error handling. So first call should have wrong parameters (e.g., missing required "name" or extra param). The tool expects only "name". If we send extra property, that might cause error. Or missing "name". We\'ll do a call with missing name: {}. Then second call with name: "test". Let\'s do that.',
      refusal: '',
      toolCalls: [],
      finishReason: null,
      usage: estimated,
      ended: 'error',
      sawDone: false,
      error: {
        // status_code 400, type invalid_request_error: a rejected request, reported mid-stream.
        kind: 'bad_request',
        code: 'tool_use_failed',
        messageIncludes: ['Tool call validation failed'],
      },
    },
  ),

  chunks(
    'groq-reasoning-field.chunks.jsonl',
    'Groq qwen3: 1,104 chunks, reasoning in delta.reasoning (not reasoning_content), non-ASCII text (UTF-8 split by the byte-wise replay)',
    {
      text: 'The word **"strawberry"** is spelled as **S-T-R-A-W-B-E-R-R-Y**. Breaking it down letter by letter:\n\n1. **S**  \n2. **T**  \n3. **R** (1st R)  \n4. **A**  \n5. **W**  \n6. **B**  \n7. **E**  \n8. **R** (2nd R)  \n9. **R** (3rd R)  \n10. **Y**\n\n**Total R\'s**: There are **three** instances of the letter **R** in "strawberry".\n\n**Final Answer**: $\\boxed{3}$',
      reasoning: {
        length: 2952,
        sha256: 'a8661d5bd141de42fe1683760783adf1557a8c14802bb4c7cfffcfb3d78f0943',
        startsWith: 'Okay, let me try to figure out how many times th',
        endsWith: ' So the number of R\'s in "strawberry" is three.\n',
      },
      refusal: '',
      toolCalls: [],
      finishReason: 'stop',
      usage: { prompt_tokens: 17, completion_tokens: 1107, total_tokens: 1124, reasoning_tokens: 963 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  chunks(
    'groq-tool-call-whole-args.chunks.jsonl',
    "Groq: a tool call delivered whole in one delta (arguments '{}'), index after function; usage both in x_groq.usage and top-level",
    {
      text: '',
      ...none,
      toolCalls: [{ id: 'tk85n1k4m', name: 'weather', arguments: '{}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 210, completion_tokens: 15, total_tokens: 225 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  chunks(
    'groq-x-groq-usage.chunks.jsonl',
    'Groq: 663 chunks of text, x_groq on the first chunk, final usage in x_groq.usage and top-level usage with timing extras',
    {
      text: {
        length: 3189,
        sha256: 'ca1f8ad858e90cfae58a43d5a1aa6cf08d2f572b50f498e121da8415e36f9063',
        startsWith: 'Introducing "Luminaria" - a new holiday that cel',
        endsWith: 'nd a deeper appreciation for the magic of light.',
      },
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 45, completion_tokens: 662, total_tokens: 707 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  sse(
    'llamacpp-reasoning-timings-excerpt.sse',
    'llama.cpp excerpt: keys in non-OpenAI order, reasoning_content deltas, a timings object on every chunk; the excerpt stops before any finish_reason or [DONE], so the stream is incomplete',
    {
      text: '',
      reasoning: 'Playful',
      refusal: '',
      toolCalls: [],
      finishReason: null,
      usage: estimated,
      ended: 'incomplete',
      sawDone: false,
      choiceCount: 1,
    },
  ),

  {
    file: 'lmstudio-200-unexpected-endpoint.http',
    exercises:
      'LM Studio: HTTP 200, application/json, body {"error": "<bare string>"}: an error, never an empty reply',
    cases: [
      {
        label: 'as recorded (200 + error body)',
        serve: { kind: 'curl' },
        via: 'stream',
        expect: {
          text: '',
          ...none,
          finishReason: null,
          usage: estimated,
          ended: 'error',
          error: {
            // The transcript says only that the endpoint/method is wrong; which kind names that best is a design choice.
            kind: ['not_found', 'bad_request', 'protocol', 'server'],
            messageIncludes: ['Unexpected endpoint or method. (POST /chat/completions)'],
          },
        },
      },
    ],
  },

  sse(
    'mistral-parallel-tool-calls.sse',
    'Mistral: two parallel tool calls whole in ONE delta, entries without index (assembled by id), usage on the finish chunk',
    {
      text: '',
      ...none,
      toolCalls: [
        { id: 'nqjf8Hqe1', name: 'plus', arguments: '{"a": 1, "b": 2}' },
        { id: 'ATcpCKul3', name: 'minus', arguments: '{"a": 2, "b": 1}' },
      ],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 187, completion_tokens: 45, total_tokens: 232 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  chunks(
    'mistral-text.chunks.jsonl',
    'Mistral: text, then an empty-content finish chunk carrying usage',
    {
      text: 'Hello, world! This is a test response.',
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  chunks(
    'mistral-tool-call-no-index.chunks.jsonl',
    'Mistral: a tool_calls entry without index and without type, whole arguments in the finish chunk together with usage',
    {
      text: '',
      ...none,
      toolCalls: [{ id: 'gSIMJiOkT', name: 'weather', arguments: '{"location": "San Francisco"}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 124, completion_tokens: 22, total_tokens: 146 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  nonStream(
    'ollama-v1-nonstream-reasoning.json',
    'Ollama /v1 non-stream completion: message.reasoning (not reasoning_content) kept apart from the JSON answer',
    {
      text: '{ "city": "Paris", "country": "France" }',
      reasoning: {
        length: 508,
        sha256: '6028fcbedd53c8cb7aedd5b04636e8d87a9aae67057e6ba5089050fe6fa189be',
        startsWith: 'Okay, the user is asking for the capital of Fran',
        endsWith: "stakes. Yep, I'm confident the answer is Paris.\n",
      },
      refusal: '',
      toolCalls: [],
      finishReason: 'stop',
      usage: { prompt_tokens: 136, completion_tokens: 15, total_tokens: 151 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  sse(
    'ollama-v1-stream-role-every-delta-no-usage.sse',
    "Ollama /v1: role:'assistant' repeated on every delta, content split mid-word, no usage chunk despite include_usage",
    {
      text: 'Hello! How are you today? Is there something I can help you with or would you like to chat?',
      ...none,
      finishReason: 'stop',
      usage: estimated,
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse(
    'ollama-v1-stream-tool-call-whole.sse',
    "Ollama /v1: a whole tool call in ONE delta with content:'' and no index; finish_reason 'stop' (forced tool_choice); no usage",
    {
      text: '',
      ...none,
      toolCalls: [{ id: 'call_28sm5ma0', name: 'return_list_of_int', arguments: '{"value":"[1, 2, 3, 4, 5]"}' }],
      finishReason: 'stop',
      usage: estimated,
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse('openai-content-logprobs.sse', 'OpenAI: content deltas with logprobs.content; usage in a choices:[] chunk', {
    text: 'Foo!',
    ...none,
    finishReason: 'stop',
    usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, reasoning_tokens: 0 },
    ended: 'done',
    sawDone: true,
    choiceCount: 1,
  }),

  httpError(
    'openai-error-400-context-length-exceeded.json',
    400,
    'OpenAI 400 context_length_exceeded (param messages)',
    {
      kind: 'context_length',
      code: 'context_length_exceeded',
      param: 'messages',
      messageIncludes: ["This model's maximum context length is 4097 tokens."],
    },
  ),

  httpError(
    'openai-error-400-unsupported-parameter.json',
    400,
    'OpenAI 400 unsupported_parameter naming param max_tokens',
    {
      kind: 'bad_request',
      code: 'unsupported_parameter',
      param: 'max_tokens',
      messageIncludes: ["Unsupported parameter: 'max_tokens' is not supported with this model."],
    },
  ),

  httpError(
    'openai-error-400-unsupported-value.json',
    400,
    'OpenAI 400 unsupported_value naming param messages[0].role',
    {
      kind: 'bad_request',
      code: 'unsupported_value',
      param: 'messages[0].role',
      messageIncludes: ["Unsupported value: 'messages[0].role' does not support 'system' with this model."],
    },
  ),

  httpError(
    'openai-error-401-invalid-api-key.json',
    401,
    'OpenAI 401 invalid_api_key whose message echoes the key (recorded with the fake key DEADBEEF); the key is sent as DEADBEEF and must not come back in the error',
    {
      kind: 'auth',
      code: 'invalid_api_key',
      messageIncludes: ['Incorrect API key provided'],
      secret: 'DEADBEEF',
    },
  ),

  httpError('openai-error-404-model-not-found.json', 404, 'OpenAI 404 model_not_found, param null', {
    kind: 'not_found',
    code: 'model_not_found',
    messageIncludes: ['The model `gpt-5.2-proo` does not exist or you do not have access to it.'],
  }),

  httpError(
    'openai-error-429-rate-limit-tokens.json',
    429,
    "OpenAI 429 rate_limit_exceeded with type 'tokens' (not insufficient_quota: a rate limit, not a quota)",
    {
      kind: 'rate_limit',
      code: 'rate_limit_exceeded',
      messageIncludes: ['Rate limit reached for 10KTPM-200RPM'],
    },
  ),

  sse('openai-finish-length.sse', 'OpenAI max_tokens=1: finish_reason length, a truncated one-token answer', {
    text: '{"',
    ...none,
    finishReason: 'length',
    usage: { prompt_tokens: 79, completion_tokens: 1, total_tokens: 80, reasoning_tokens: 0 },
    ended: 'done',
    sawDone: true,
    choiceCount: 1,
  }),

  sse(
    'openai-long-text-stream.sse',
    'OpenAI gpt-4o: ~180 small deltas forming a JSON document, with non-ASCII (°) split by the byte-wise replay',
    {
      text: {
        length: 608,
        sha256: 'fd5dc0f04c4dbdf7a7465109587b4676163ecab5bfb02c8ad7998d0d671656e5',
        startsWith: '\n  {\n    "location": "San Francisco, CA",\n    "w',
        endsWith: '        "condition": "Cloudy"\n      }\n    ]\n  }\n',
      },
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 19, completion_tokens: 177, total_tokens: 196, reasoning_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse(
    'openai-midstream-error-server-error.sse',
    'OpenAI-style HTTP 200 stream whose only event is data:{error:{type:server_error,code:null}}, then [DONE]: an error, not an empty success',
    {
      text: '',
      ...none,
      finishReason: null,
      usage: estimated,
      ended: 'error',
      error: {
        kind: 'server',
        messageIncludes: ['The server had an error processing your request.'],
      },
    },
  ),

  {
    file: 'openai-n3-multiple-choices.sse',
    exercises: 'OpenAI n=3: interleaved deltas for choices 0/1/2 kept apart by index, three finish_reason stop, one usage',
    cases: [
      {
        label: 'as recorded',
        serve: { kind: 'sse' },
        via: 'stream',
        expect: {
          text: '{"city":"San Francisco","temperature":65,"units":"f"}',
          ...none,
          finishReason: 'stop',
          usage: { prompt_tokens: 79, completion_tokens: 42, total_tokens: 121, reasoning_tokens: 0 },
          ended: 'done',
          sawDone: true,
          choiceCount: 3,
          choices: [
            { index: 0, text: '{"city":"San Francisco","temperature":65,"units":"f"}', finishReason: 'stop' },
            { index: 1, text: '{"city":"San Francisco","temperature":61,"units":"f"}', finishReason: 'stop' },
            { index: 2, text: '{"city":"San Francisco","temperature":59,"units":"f"}', finishReason: 'stop' },
          ],
        },
      },
    ],
  },

  chunks(
    'openai-obfuscation-usage-null.chunks.jsonl',
    "OpenAI gpt-4.1-nano: usage:null and an 'obfuscation' padding field on every chunk, non-ASCII text; final usage chunk choices:[] with details",
    {
      text: {
        length: 1724,
        sha256: '53b2d9e583d02b3ff0a0e83be5beb61ce1d16ccddc7ab9f033e72ec8ef55c8e4',
        startsWith: '**Holiday Name:** Harmony Day\n\n**Date:** Celebra',
        endsWith: 'ugh shared human experiences and mutual respect.',
      },
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 16, completion_tokens: 300, total_tokens: 316, reasoning_tokens: 0, cached_tokens: 0 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  sse(
    'openai-parallel-tool-calls.sse',
    'OpenAI parallel tool calls: index 0 and 1, each announced with id/name then argument fragments; role chunk has content:null',
    {
      text: '',
      ...none,
      toolCalls: [
        { id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' },
        { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' },
      ],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 149, completion_tokens: 60, total_tokens: 209, reasoning_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse(
    'openai-plain-text-stream.sse',
    "OpenAI gpt-4o: role chunk with content:'' and refusal:null, content deltas, finish stop, usage chunk",
    {
      text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 14, completion_tokens: 30, total_tokens: 44, reasoning_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse('openai-refusal-logprobs.sse', 'OpenAI refusal in delta.refusal with logprobs.refusal arrays; no content', {
    text: '',
    reasoning: '',
    refusal: "I'm very sorry, but I can't assist with that.",
    toolCalls: [],
    finishReason: 'stop',
    usage: { prompt_tokens: 79, completion_tokens: 12, total_tokens: 91, reasoning_tokens: 0 },
    ended: 'done',
    sawDone: true,
    choiceCount: 1,
  }),

  sse('openai-refusal.sse', 'OpenAI refusal streamed in delta.refusal (content:null), kept apart from text', {
    text: '',
    reasoning: '',
    refusal: "I'm sorry, I can't assist with that request.",
    toolCalls: [],
    finishReason: 'stop',
    usage: { prompt_tokens: 79, completion_tokens: 11, total_tokens: 90, reasoning_tokens: 0 },
    ended: 'done',
    sawDone: true,
    choiceCount: 1,
  }),

  {
    file: 'openai-response-headers-401-and-stream.json',
    exercises:
      "Recorded OpenAI response headers (no bodies). Replayed as the headers of the same cassette's 401 body (openai-error-401-invalid-api-key.json, interactions[2]) and of a real OpenAI stream (openai-plain-text-stream.sse) under the recorded 200 headers: content-type 'text/event-stream; charset=utf-8', x-ratelimit-*, openai-processing-ms",
    cases: [
      {
        label: 'recorded 401 headers + the 401 body',
        serve: {
          kind: 'json',
          status: 401,
          file: 'openai-error-401-invalid-api-key.json',
          headersFrom: { file: 'openai-response-headers-401-and-stream.json', key: 'interactions[2] HTTP 401' },
        },
        via: 'stream',
        expect: {
          text: '',
          ...none,
          finishReason: null,
          usage: estimated,
          ended: 'error',
          error: { kind: 'auth', status: 401, code: 'invalid_api_key', messageIncludes: ['Incorrect API key provided'], secret: 'DEADBEEF' },
        },
      },
      {
        label: 'recorded 200 SSE headers + an OpenAI stream',
        serve: {
          kind: 'sse',
          file: 'openai-plain-text-stream.sse',
          headersFrom: { file: 'openai-response-headers-401-and-stream.json', key: 'interactions[3] HTTP 200' },
        },
        via: 'stream',
        expect: {
          text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
          ...none,
          finishReason: 'stop',
          usage: { prompt_tokens: 14, completion_tokens: 30, total_tokens: 44, reasoning_tokens: 0 },
          ended: 'done',
          sawDone: true,
          choiceCount: 1,
        },
      },
    ],
  },

  sse(
    'openai-tool-call-args-split.sse',
    "OpenAI single tool call: first delta has id/type/name and arguments:'', then 14 argument fragments",
    {
      text: '',
      ...none,
      toolCalls: [{ id: 'call_c91SqDXlYFuETYv8mUHzz6pp', name: 'GetWeatherArgs', arguments: '{"city":"Edinburgh","country":"UK","units":"c"}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 76, completion_tokens: 24, total_tokens: 100, reasoning_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse('openai-tool-call-strict.sse', 'OpenAI strict function tool call stream', {
    text: '',
    ...none,
    toolCalls: [{ id: 'call_CTf1nWJLqSeRgDqaCG27xZ74', name: 'get_weather', arguments: '{"city":"San Francisco","state":"CA"}' }],
    finishReason: 'tool_calls',
    usage: { prompt_tokens: 48, completion_tokens: 19, total_tokens: 67, reasoning_tokens: 0 },
    ended: 'done',
    sawDone: true,
    choiceCount: 1,
  }),

  sse(
    'openrouter-comments-then-midstream-error.sse',
    "OpenRouter: 17 ': OPENROUTER PROCESSING' comments, reasoning in delta.reasoning AND the same text in reasoning_details (counted once), finish_reason 'length' twice, then a chunk with a top-level error {code:400,'Token limit reached'}, finish_reason null and usage, then [DONE]. The error wins over [DONE]; the reasoning before it is kept; that chunk's usage is the last one seen",
    {
      text: '',
      reasoning: 'We need to respond to a greeting. The user',
      refusal: '',
      toolCalls: [],
      finishReason: 'length',
      usage: { prompt_tokens: 43, completion_tokens: 10, total_tokens: 53, reasoning_tokens: 11, cached_tokens: 0 },
      ended: 'error',
      error: {
        // code 400 with the text 'Token limit reached': a rejected request, and arguably a context/token limit.
        // (its integer `code` 400 is an HTTP-like status, not a string code, so error.code is not asserted)
        kind: ['bad_request', 'context_length'],
        messageIncludes: ['Token limit reached'],
      },
    },
  ),

  sse(
    'openrouter-doc-midstream-error-example.sse',
    "OpenRouter documented mid-stream error: top-level error {code:'server_error'} in a chunk whose choice has finish_reason 'error'; no [DONE]",
    {
      text: '',
      ...none,
      finishReason: 'error',
      usage: estimated,
      ended: 'error',
      sawDone: false,
      error: {
        kind: 'server',
        code: 'server_error',
        messageIncludes: ['Provider disconnected unexpectedly'],
      },
    },
  ),

  httpError(
    'openrouter-error-429-upstream-rate-limit.json',
    429,
    'OpenRouter 429: error.code is the INTEGER 429, error.metadata.{provider_name,raw}, extra top-level user_id',
    {
      // The integer `code` 429 repeats the HTTP status (asserted as status 429); there is no string code to keep.
      kind: 'rate_limit',
      messageIncludes: ['Provider returned error', 'temporarily rate-limited upstream'],
    },
  ),

  sse(
    'openrouter-novita-tool-call-no-arguments-key.sse',
    "OpenRouter/Novita: the body begins with ' data:' (field name ' data', so the first event, a role chunk, is dropped per the SSE spec); first tool delta has NO arguments key; the continuation has type but no id; a chunk after the finish has finish_reason null",
    {
      text: '',
      ...none,
      toolCalls: [{ id: 'llm_version:0', name: 'llm_version', arguments: '{}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 56, completion_tokens: 12, total_tokens: 68, reasoning_tokens: 0, cached_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse(
    'openrouter-novita-tool-call-repeated-id-name.sse',
    "OpenRouter/Novita kimi-k2: two identical role chunks; the second tool delta repeats id+type+name (name must stay 'llm_version', not doubled) with arguments '{}' after ''; finish_reason null on every chunk; usage on a chunk that still has choices",
    {
      text: '',
      ...none,
      toolCalls: [{ id: '0', name: 'llm_version', arguments: '{}' }],
      finishReason: null,
      usage: { prompt_tokens: 57, completion_tokens: 17, total_tokens: 74, reasoning_tokens: 0, cached_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse(
    'openrouter-novita-tool-call-single-delta.sse',
    "OpenRouter/Novita: a whole tool call in one delta (arguments '{}'); finish_reason null on every chunk (ended by [DONE]); usage on a chunk with choices",
    {
      text: '',
      ...none,
      toolCalls: [{ id: '0', name: 'llm_version', arguments: '{}' }],
      finishReason: null,
      usage: { prompt_tokens: 57, completion_tokens: 17, total_tokens: 74, reasoning_tokens: 0, cached_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse(
    'openrouter-tool-call-arguments-null.sse',
    "OpenRouter-style no-arg tool call: arguments:null and never '{}' (arguments assemble to ''); usage on the finish chunk",
    {
      text: '',
      ...none,
      toolCalls: [{ id: '0', name: 'llm_version', arguments: '' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 57, completion_tokens: 17, total_tokens: 74, reasoning_tokens: 0, cached_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  sse(
    'openrouter-tool-call-with-comments.sse',
    "OpenRouter: ': OPENROUTER PROCESSING' comments before data, a tool call streamed in two deltas, native_finish_reason, usage chunk choices:[]",
    {
      text: '',
      ...none,
      toolCalls: [{ id: 'chatcmpl-tool-1b4c179a4d8c4d49b484d3a35f47ff3f', name: 'plus', arguments: '{"a":1,"b":2}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 205, completion_tokens: 11, total_tokens: 216, reasoning_tokens: 0, cached_tokens: 0 },
      ended: 'done',
      sawDone: true,
      choiceCount: 1,
    },
  ),

  chunks(
    'perplexity-citations-cumulative-usage.chunks.jsonl',
    "Perplexity sonar: CUMULATIVE usage on every chunk (the last one wins, never the sum), role on every delta, no finish_reason key until the last chunk, object 'chat.completion.done'",
    {
      text: 'The current population of **[2][3]',
      ...none,
      finishReason: 'stop',
      usage: { prompt_tokens: 10, completion_tokens: 336, total_tokens: 346 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  chunks(
    'xai-reasoning-tool-call.chunks.jsonl',
    'xAI grok-3-mini: reasoning_content deltas, no finish_reason key on non-final chunks, a whole tool call, usage whose total_tokens (513) is not prompt+completion (kept as sent)',
    {
      text: '',
      reasoning: 'First, the user is',
      refusal: '',
      toolCalls: [{ id: 'call_55117580', name: 'weather', arguments: '{"location":"San Francisco"}' }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 291, completion_tokens: 26, total_tokens: 513, reasoning_tokens: 196, cached_tokens: 290 },
      ended: 'done',
      choiceCount: 1,
    },
  ),

  // Issue 34: each server's "the request does not fit the window" is a context_length error (Compact and retry), an
  // image sent to a text-only model is said as such, and a gateway's bare {status, message} gives its message.
  httpError('llamacpp-error-400-exceed-context-size.json', 400, "llama.cpp's overflow: type exceed_context_size_error, n_prompt_tokens and n_ctx beside the message", {
    kind: 'context_length',
    messageIncludes: ['request (2248 tokens) exceeds the available context size (2048 tokens)'],
  }),
  httpError('llamacpp-error-500-image-input-not-supported.json', 500, 'llama.cpp without a projector, sent an image: a 500 server_error that says so', {
    kind: 'no_image_input',
    messageIncludes: ['image input is not supported'],
  }),
  httpError('vllm-error-400-max-context-length.json', 400, "vLLM's {object: error} body: \"This model's maximum context length is … tokens\"", {
    kind: 'context_length',
    messageIncludes: ["This model's maximum context length is 16384 tokens."],
  }),
  httpError('vllm-error-400-negative-max-tokens.json', 400, 'an older vLLM, asked without max_tokens by a prompt that fills the window: a negative max_tokens', {
    kind: 'context_length',
    messageIncludes: ['max_tokens must be at least 1, got -186.'],
  }),
  httpError('lmstudio-error-400-context-overflow.json', 400, "LM Studio's bare-string error: more tokens to keep than the context length", {
    kind: 'context_length',
    messageIncludes: ['greater than the context length (n_keep: 13055>= n_ctx: 4096)'],
  }),
  httpError('ollama-error-400-prompt-longer-than-context.json', 400, "Ollama's /v1 overflow, in OpenAI's error shape with code null", {
    kind: 'context_length',
    messageIncludes: ['the prompt is longer than the context length currently available to the model'],
  }),
  httpError('tgi-error-422-max-total-tokens.json', 422, "TGI's 422 validation error: inputs + max_new_tokens over the limit, no context words", {
    kind: 'context_length',
    messageIncludes: ['`inputs` tokens + `max_new_tokens` must be <= 2048'],
  }),
  httpError('azure-error-400-context-length-exceeded.json', 400, "Azure OpenAI's context_length_exceeded, pretty-printed", {
    kind: 'context_length',
    code: 'context_length_exceeded',
    param: 'messages',
    messageIncludes: ["This model's maximum context length is 8192 tokens."],
  }),
  httpError('mistral-error-400-context-too-large.json', 400, "Mistral: too large for the model's maximum context length, code \"3051\"", {
    kind: 'context_length',
    code: '3051',
    messageIncludes: ['too large for model with 131072 maximum context length'],
  }),
  httpError('portkey-error-500-something-went-wrong.json', 500, "Portkey's catch-all: a bare {status: failure, message}", {
    kind: 'server',
    messageIncludes: ['Something went wrong'],
  }),
];
