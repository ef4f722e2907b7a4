// Turns typed core errors into words for a person, with the action that fixes them.
import { statusWords, type ParleyError } from './errors';
import type { ActionId, ErrorView } from '../shared/protocol';

/** How a llama.cpp server takes images: said wherever an image meets a model that takes none. */
export const IMAGES_HINT = "A llama.cpp server takes images only when started with the model's projector (--mmproj).";

/** A hint when a 404 looks like a base URL with a missing or doubled version segment. */
export function versionHint(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  if (/\/v\d+[a-z]*\/(?:.*\/)?v\d+[a-z]*\//i.test(path)) {
    return 'The URL has the version segment twice (for example /v1/v1/). Remove it from parley.baseUrl.';
  }
  if (!/\/v\d+[a-z]*(?:\/|$)|\/api\/|\/openai\//i.test(path)) {
    return 'The URL has no version segment. Many servers expect /v1 in parley.baseUrl (for example http://localhost:11434/v1).';
  }
  return 'Check parley.baseUrl: with or without /v1, and no trailing path after the version.';
}

/**
 * Why `model` takes no images, in words, or undefined when it may be sent one: the profile's `vision` for it wins
 * (false refuses, true allows); else what the server's model list says (`imageInput`, see modelInfo.ts), so that a
 * text-only model is not sent one (llama.cpp answers it with a 500).
 */
export function imagesRefusal(model: string, profile: { name: string; vision?: boolean } | undefined, imageInput: boolean | undefined): string | undefined {
  if (profile?.vision === false) return `${model} does not take images (vision is off for it in the profile "${profile.name}").`;
  if (profile?.vision === true || imageInput !== false) return undefined;
  return `${model} does not take images: the server lists it as text-only. ${IMAGES_HINT}`;
}

/**
 * The error card for a failed request. `detail` is already redacted by core. `compactable`: the conversation has
 * older turns to summarize, so a context_length card offers Compact and retry first.
 */
export function errorView(err: ParleyError, ctx: { model: string; url: string; compactable?: boolean }): ErrorView {
  const detail = err.providerMessage && err.providerMessage !== err.message ? err.providerMessage : undefined;
  return refusalView(err, ctx, detail) ?? failureView(err, ctx.url, detail);
}

/** Retry first, then `more`. */
const withRetry = (...more: ActionId[]): ActionId[] => ['retry', ...more];

/** The card for a request the server answered and refused (a key, a model, a limit, a parameter); else undefined. */
function refusalView(err: ParleyError, ctx: { model: string; url: string; compactable?: boolean }, detail: string | undefined): ErrorView | undefined {
  switch (err.kind) {
    case 'auth':
      return {
        kind: 'auth',
        title: `The server rejected the API key (${statusWords(err.status ?? 401, err.inResponse)}). Set the key for this endpoint.`,
        detail,
        actions: ['setApiKey', 'retry', 'testConnection'],
      };
    case 'not_found':
      return {
        kind: 'not_found',
        title: /model/i.test(err.message) || /model/i.test(detail ?? '')
          ? `The model "${ctx.model}" was not found, or the URL is wrong (${statusWords(err.status ?? 404, err.inResponse)}).`
          : err.inResponse === undefined ? 'The server answered 404: the URL or the model is wrong.'
          : `The server answered that the URL or the model is wrong (${statusWords(err.status ?? 404, err.inResponse)}).`,
        detail,
        hint: versionHint(ctx.url),
        actions: ['openSettings', 'testConnection', 'retry'],
      };
    case 'rate_limit':
      return {
        kind: 'rate_limit',
        title: `Rate limited by the provider (${statusWords(err.status ?? 429, err.inResponse)}). Wait a moment and retry.`,
        detail,
        actions: withRetry(),
      };
    case 'quota':
      return { kind: 'quota', title: 'The account is out of quota or credit. Check billing with the provider.', detail, actions: ['retry', 'openSettings'] };
    case 'context_length':
      return {
        kind: 'context_length',
        title: 'The conversation is too long for this model. Start a new chat or send less code.',
        detail,
        hint: "Or raise the window the server runs: llama.cpp's -c, Ollama's num_ctx, LM Studio's context length, vLLM's --max-model-len.",
        actions: ctx.compactable ? ['compactRetry', 'retry'] : ['retry'],
      };
    case 'no_image_input':
      return {
        kind: 'bad_request',
        title: `The model "${ctx.model}" takes no images (${statusWords(err.status ?? 400, err.inResponse)}). Switch to a model that takes images, or start a new chat without the image.`,
        detail,
        hint: IMAGES_HINT,
        actions: ['switchEndpoint', 'retry'],
      };
    case 'bad_request':
      return {
        kind: 'bad_request',
        title: `The server refused the request (${statusWords(err.status ?? 400, err.inResponse)})${err.param ? `: parameter ${err.param}` : ''}.`,
        detail,
        actions: withRetry('openSettings', 'testConnection'),
      };
    default:
      return undefined;
  }
}

/** The card for a request that got no usable answer (no server, no reply in time, not the API) or a bad setting. */
function failureView(err: ParleyError, url: string, detail: string | undefined): ErrorView {
  switch (err.kind) {
    case 'connection':
      return {
        kind: 'connection',
        title: err.message,
        hint: 'Is the server running? For a local server, try 127.0.0.1 instead of localhost.',
        actions: withRetry('testConnection', 'openSettings'),
      };
    case 'timeout':
      return {
        kind: 'timeout',
        title: err.message,
        hint: err.timeout === 'idle'
          ? 'The stream went silent. Raise parley.streamIdleTimeoutSeconds for slow reasoning models.'
          : 'The server did not answer in time. Raise parley.requestTimeoutSeconds if it is slow to start.',
        actions: withRetry('openSettings'),
      };
    case 'protocol':
      return { kind: 'protocol', title: err.message, detail, hint: versionHint(url), actions: withRetry('testConnection') };
    case 'server':
      return { kind: 'server', title: `The server failed (${statusWords(err.status ?? 500, err.inResponse)}). Retry in a moment.`, detail, actions: withRetry() };
    case 'config':
      return { kind: 'config', title: err.message, actions: ['openSettings', 'testConnection'] };
    case 'budget':
      return {
        kind: 'budget',
        title: err.message,
        hint: 'Only you can raise or remove the limit (parley.budget).',
        actions: ['sendOnceAnyway', 'openBudgetSettings'],
      };
    default:
      return { kind: 'unknown', title: err.message, detail, actions: withRetry() };
  }
}
