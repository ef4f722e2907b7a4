// Settings + messages -> the request body. Sends only what is set, and checks ranges before any network call.
import { ParleyError } from './errors';
import { applyBodyOverrides } from './profiles';
import type { ChatMessage, ToolDefinition } from './types';

export interface RequestSettings {
  model: string;
  stream: boolean;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: string | string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  tools?: ToolDefinition[];
  /** Sent only when set, and only with tools (OpenAI refuses it alone); unset, each server keeps its own default. */
  parallelToolCalls?: boolean;
  /** `tool_choice`: sent only when set, and only with tools ("required", or one function by name). */
  toolChoice?: 'auto' | 'required' | { type: 'function'; function: { name: string } };
  seed?: number;
  responseFormat?: { type: 'json_object' | 'text' } | { type: 'json_schema'; json_schema: unknown };
  /** Which API the model is served on, when a profile says (`models.<id>.api`); unset, chat completions until a server says otherwise. */
  api?: 'chat' | 'responses';
  /** A profile's per-model fields: added to the body (never over Parley's own), and fields never to send. */
  extraBody?: Record<string, unknown>;
  neverSend?: string[];
}

/** What Parley learnt about a server and model: parameters it refuses, whether it wants max_completion_tokens, and more. */
export interface Adaptations {
  drop?: string[];
  maxCompletionTokens?: boolean;
  /** A request that carried a reasoning effort succeeded, or a reply came with reasoning: the header offers an effort. */
  reasoningEffort?: true;
  /** The server refused the model on chat completions, and answered on the Responses API. */
  api?: 'responses';
}

/** A setting's value as a person would write it: JSON, except numbers JSON cannot hold (NaN, Infinity). */
function shown(v: unknown): string {
  return typeof v === 'number' ? String(v) : v === undefined ? 'unset' : JSON.stringify(v) ?? String(v);
}

function checkRange(name: string, setting: string, v: number | undefined, min: number, max: number): void {
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw new ParleyError('config', `${setting} (${name}) must be a number from ${min} to ${max}; it is ${shown(v)}.`);
  }
}

/** Throws a `config` ParleyError for a setting out of range or a malformed model name. */
export function validateSettings(s: RequestSettings): void {
  if (typeof s.model !== 'string' || s.model.trim().length === 0) {
    throw new ParleyError('config', 'No model is set. Set parley.model, for example gpt-4o-mini or llama3.2.');
  }
  if (/\s/.test(s.model)) {
    throw new ParleyError('config', `The model name "${s.model.replace(/\s+/g, ' ').slice(0, 80)}" contains spaces or line breaks. Fix parley.model.`);
  }
  checkRange('temperature', 'parley.temperature', s.temperature, 0, 2);
  checkRange('top_p', 'parley.topP', s.topP, 0, 1);
  checkRange('presence_penalty', 'parley.presencePenalty', s.presencePenalty, -2, 2);
  checkRange('frequency_penalty', 'parley.frequencyPenalty', s.frequencyPenalty, -2, 2);
  if (s.maxTokens !== undefined && (!Number.isInteger(s.maxTokens) || s.maxTokens < 1)) {
    throw new ParleyError('config', `parley.maxTokens (max_tokens) must be a positive whole number; it is ${shown(s.maxTokens)}.`);
  }
  if (s.stop !== undefined && !(typeof s.stop === 'string' || (Array.isArray(s.stop) && s.stop.every((x) => typeof x === 'string')))) {
    throw new ParleyError('config', 'parley.stop must be a string or a list of strings.');
  }
}

/** Builds the JSON body. Never a null, never an empty `tools`. */
export function buildRequestBody(settings: RequestSettings, messages: ChatMessage[], adaptations?: Adaptations): Record<string, unknown> {
  validateSettings(settings);
  if (!Array.isArray(messages) || messages.length === 0) throw new ParleyError('config', 'There is nothing to send.');
  const body: Record<string, unknown> = { model: settings.model, messages, stream: settings.stream };
  if (settings.stream) body.stream_options = { include_usage: true };
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  if (settings.topP !== undefined) body.top_p = settings.topP;
  if (settings.maxTokens !== undefined) body[adaptations?.maxCompletionTokens ? 'max_completion_tokens' : 'max_tokens'] = settings.maxTokens;
  if (settings.stop !== undefined && settings.stop.length > 0) body.stop = settings.stop;
  if (settings.presencePenalty !== undefined) body.presence_penalty = settings.presencePenalty;
  if (settings.frequencyPenalty !== undefined) body.frequency_penalty = settings.frequencyPenalty;
  if (settings.tools && settings.tools.length > 0) {
    body.tools = settings.tools;
    if (typeof settings.parallelToolCalls === 'boolean') body.parallel_tool_calls = settings.parallelToolCalls;
    if (settings.toolChoice !== undefined) body.tool_choice = settings.toolChoice;
  }
  if (settings.seed !== undefined) body.seed = settings.seed;
  if (settings.responseFormat) body.response_format = settings.responseFormat;
  applyBodyOverrides(body, settings);
  // After the profile's extraBody, so that a field the server refused cannot come back from it.
  for (const p of adaptations?.drop ?? []) delete body[p];
  // parallel_tool_calls and tool_choice mean nothing without tools, and OpenAI refuses them alone.
  if (body.tools === undefined) {
    delete body.parallel_tool_calls;
    delete body.tool_choice;
  }
  return body;
}
