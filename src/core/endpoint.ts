// parley.baseUrl -> exactly one .../chat/completions URL, and the origin that keys are bound to.
import { ParleyError } from './errors';

/** Where requests go. */
export interface Endpoint {
  /** The chat completions URL, e.g. https://api.openai.com/v1/chat/completions. */
  url: string;
  /** scheme://host[:port]: the key for this endpoint is bound to it. */
  origin: string;
  /** The sibling models URL, e.g. https://api.openai.com/v1/models. */
  modelsUrl: string;
  /** The base the two URLs were built from, without a trailing slash. */
  base: string;
  /** Parley added `/v1` to a base URL that had no version segment (so "remove the extra /v1" would be wrong words). */
  versionAdded?: true;
}

/** A path segment that names an API version: v1, v4, v1beta, v2alpha… */
const VERSION_SEGMENT = /^v\d+[a-z0-9]*$/i;

function configError(message: string): ParleyError {
  return new ParleyError('config', message);
}

/**
 * Resolves the base URL setting. `https://host`, `https://host/` and `https://host/v1[/]` all give
 * `https://host/v1/chat/completions`; a base with a version segment anywhere (`/api/v1`, `/v1beta/openai`,
 * `/api/paas/v4`) is kept as given; a URL ending in `/chat/completions` is used as is. Query strings
 * (Azure's `api-version`) are kept. Throws a ParleyError of kind `config` that says what is wrong.
 */
export function resolveEndpoint(baseUrl: unknown): Endpoint {
  if (typeof baseUrl !== 'string') {
    throw configError(`parley.baseUrl must be a URL in quotes, such as "https://api.openai.com" (it is ${baseUrl === null ? 'null' : `a ${typeof baseUrl}`}).`);
  }
  if (baseUrl.length === 0) throw configError('parley.baseUrl is empty. Set it to your server, for example https://api.openai.com or http://localhost:11434.');
  if (/\s/.test(baseUrl)) throw configError('parley.baseUrl contains spaces or line breaks. Remove them.');
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw configError(`parley.baseUrl is not a valid URL: "${baseUrl.slice(0, 100)}". It should look like https://api.openai.com.`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw configError(`parley.baseUrl must start with http:// or https:// (it uses ${u.protocol}).`);
  }
  if (u.username || u.password) {
    throw configError('parley.baseUrl must not contain a user name or password (user:pass@). Remove them and set the key with "Parley: Set API Key".');
  }
  if (!u.hostname) throw configError('parley.baseUrl has no host name.');
  u.hash = '';
  const segments = u.pathname.split('/').filter((s) => s.length > 0);
  let baseSegments: string[];
  let versionAdded = false;
  if (segments.length >= 2 && segments[segments.length - 2] === 'chat' && segments[segments.length - 1] === 'completions') {
    baseSegments = segments.slice(0, -2);
  } else {
    versionAdded = !segments.some((s) => VERSION_SEGMENT.test(s));
    baseSegments = versionAdded ? [...segments, 'v1'] : segments;
  }
  const basePath = baseSegments.length ? '/' + baseSegments.join('/') : '';
  const origin = u.origin;
  const search = u.search;
  return {
    url: `${origin}${basePath}/chat/completions${search}`,
    modelsUrl: `${origin}${basePath}/models${search}`,
    origin,
    base: `${origin}${basePath}`,
    ...(versionAdded ? { versionAdded: true as const } : {}),
  };
}

/** Loopback servers (Ollama, LM Studio, llama.cpp, vLLM) usually take no key. */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const host = new URL(origin).hostname;
    return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
  } catch {
    return false;
  }
}
