// Wire and result types shared by the whole core. Plain data only: no behaviour, no 'vscode'.

/** A part of a multi-part message: text, or an image given as a URL (Parley sends data: URLs). */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** One assembled tool call, as the server meant it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A chat message as sent on the wire. */
export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Only sent back when the user enabled parley.sendReasoningBack, under the name the server used. */
  reasoning_content?: string;
  reasoning?: string;
}

/** A tool offered to the model (OpenAI function-tool shape). */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** Token usage. `estimated` is true when Parley computed it because the server did not report it. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: { reasoning_tokens?: number };
  prompt_tokens_details?: { cached_tokens?: number };
  estimated?: boolean;
}

/** How a stream or completion ended. */
export type EndState =
  /** `[DONE]`, or EOF once every choice got its finish_reason, or a complete JSON completion. */
  | 'done'
  /** EOF with no `[DONE]` before every choice got a finish_reason: never passed off as success. */
  | 'incomplete'
  /** The caller aborted, or the budget did (`error` then says so). Partial result kept, usage estimated. */
  | 'cancelled'
  /** A typed error ended it; text received before the error is kept. */
  | 'error';

/** Which wire field carried reasoning, when any did. */
export type ReasoningField = 'reasoning_content' | 'reasoning' | 'reasoning_details' | 'think_tag';

/** One choice's accumulated output. Choices are kept apart by `index`. */
export interface ChoiceResult {
  index: number;
  text: string;
  reasoning: string;
  refusal: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
}

/** What a stream accumulates to, and what complete() returns. Top-level fields mirror choice 0. */
export interface ChatResult {
  text: string;
  reasoning: string;
  refusal: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  choices: ChoiceResult[];
  /** Last non-null usage the server sent, or an estimate (usage.estimated) when it sent none. */
  usage: Usage;
  ended: EndState;
  /**
   * Set when ended === 'error'; on a `cancelled` result, why, when not the caller's own stop: a spend limit crossed
   * while it streamed (kind `budget`, see core/budget.ts watchStream).
   */
  error?: import('./errors').ParleyError;
  /** `model` as reported by the server, when it reported one. */
  model?: string;
  reasoningField?: ReasoningField;
  /** Whether `data: [DONE]` was seen. */
  sawDone: boolean;
}

/** The typed events a stream yields, in wire order. */
export type StreamEvent =
  | { type: 'text'; choice: number; text: string }
  | { type: 'reasoning'; choice: number; text: string }
  | { type: 'refusal'; choice: number; text: string }
  | { type: 'tool_call'; choice: number; index: number; id?: string; name?: string; arguments?: string }
  /** Answer text held back while it may be a tool call the model writes as text: counted by the budget, shown to no one. */
  | { type: 'held'; choice: number; text: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; choice: number; reason: string }
  | { type: 'end'; state: EndState; error?: import('./errors').ParleyError };

/** One model as listed by a server. Unknown fields are undefined, never guessed. */
export interface ModelInfo {
  id: string;
  /** The context window (prompt and reply together), in tokens. */
  contextLength?: number;
  /** The longest reply the server allows, in tokens. */
  maxOutputTokens?: number;
  /** Whether the server says the model takes tools; undefined when it does not say. */
  toolCalling?: boolean;
  /** Whether the server says the model takes images; undefined when it does not say. */
  imageInput?: boolean;
  /** The model's own maximum (llama.cpp `n_ctx_train`, LM Studio's `max_context_length`), when the list says only that. */
  modelMax?: number;
  /** Which local server the list looks like it came from, when it says (see serverWindow.ts). */
  server?: ServerKind;
  /** False when the server says the model is not loaded (LM Studio `state`, llama.cpp router `status`). */
  loaded?: boolean;
  /** Whether the server says the model takes a reasoning effort (`reasoning` in OpenRouter's `supported_parameters`). */
  reasoning?: boolean;
  /** The entry's `pricing` object as listed, read only by the budget (core/priceSources.ts says which fields count). */
  pricing?: Record<string, unknown>;
}

/** The local servers whose own endpoints say what window a model runs at. */
export type ServerKind = 'llama.cpp' | 'ollama' | 'lmstudio' | 'vllm';
