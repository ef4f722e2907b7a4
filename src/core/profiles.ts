// Endpoint profiles: a name, a base URL, a default model, custom headers and per-model overrides (`parley.endpoints`).
// The old single `parley.baseUrl` and `parley.model` are one more profile, the implicit one, so no setup breaks.
// Pure: the settings come in as plain values with where each was set, and problems go out in words.
import { isRecord, ParleyError } from './errors';
import { validateHeaders } from './headers';

/** What a profile may say about one model: limits, capabilities, price, and what to send or never send. */
export interface ModelOverride {
  contextWindow?: number;
  maxOutputTokens?: number;
  vision?: boolean;
  tools?: boolean;
  /** Dollars per million tokens. */
  price?: { input: number; output: number };
  /** Request fields never to send to this model (`temperature`, `stream_options`…). */
  neverSend?: string[];
  /** Fields added to the request body as they are (`top_k`, `options`…); Parley's own fields are not replaced. */
  extraBody?: Record<string, unknown>;
  sendReasoningBack?: boolean;
  /**
   * The panel offers a reasoning effort for this model: true (low, medium, high), the server's own words, or false
   * (never). As written: core/reasoningEffort.ts's profileEfforts reads it.
   */
  reasoningEffort?: unknown;
  /** Which API serves the model: `responses` sends every request to POST …/responses; `chat` never tries it. */
  api?: 'chat' | 'responses';
}

/** Where a profile was defined. `implicit` is the one made from parley.baseUrl and parley.model. */
export type ProfileSource = 'implicit' | 'user' | 'workspace' | 'folder';

export interface Profile {
  name: string;
  baseUrl: unknown;
  model: string;
  /** Custom request headers as written: values may hold `${secret:name}` references. */
  headers?: Record<string, string>;
  /** Per-model overrides, by model id. */
  models: Record<string, ModelOverride>;
  /** false: every request asks for one whole reply (`stream: false`), for a gateway that breaks streamed ones. */
  stream?: boolean;
  source: ProfileSource;
  /** The model inline completions use while this profile is active: one of its own, or of the profile named. */
  completionModel?: { profile?: string; model: string };
  /** `balance` as written: true or a server kind turns balances on; core/balance.ts reads it, in a bundle of its own. */
  balance?: unknown;
}

/** The implicit profile's name, unless a named profile already uses it. */
export const IMPLICIT_PROFILE = 'Default';

/** A secret reference in a header value: `${secret:gateway-token}`. */
export const SECRET_REF = /\$\{secret:([^}]*)\}/g;
/** A secret's name: letters, digits, `.`, `_`, `-`, at most 64. */
export const SECRET_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** Request body fields Parley owns: extraBody cannot replace them. */
const OWN_BODY_FIELDS = new Set(['model', 'messages', 'stream', 'stream_options', 'tools', 'tool_choice']);

const positiveInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/** One model's overrides, keeping what is well-typed and saying what was not. */
function readOverride(raw: unknown, where: string, problems: string[]): ModelOverride {
  if (!isRecord(raw)) {
    problems.push(`${where} is not an object; ignored.`);
    return {};
  }
  const o: ModelOverride = {};
  const num = (key: 'contextWindow' | 'maxOutputTokens') => {
    if (raw[key] === undefined) return;
    const n = positiveInt(raw[key]);
    if (n === undefined) problems.push(`${where}.${key} must be a positive whole number; ignored.`);
    else o[key] = n;
  };
  const bool = (key: 'vision' | 'tools' | 'sendReasoningBack') => {
    if (raw[key] === undefined) return;
    if (typeof raw[key] === 'boolean') o[key] = raw[key];
    else problems.push(`${where}.${key} must be true or false; ignored.`);
  };
  num('contextWindow');
  num('maxOutputTokens');
  bool('vision');
  bool('tools');
  bool('sendReasoningBack');
  if (raw.api === 'chat' || raw.api === 'responses') o.api = raw.api;
  else if (raw.api !== undefined) problems.push(`${where}.api is not "chat" or "responses"; ignored.`);
  const price = raw.price;
  if (price !== undefined) {
    if (isRecord(price) && typeof price.input === 'number' && typeof price.output === 'number' && price.input >= 0 && price.output >= 0) {
      o.price = { input: price.input, output: price.output };
    } else problems.push(`${where}.price must be {"input": dollars, "output": dollars} per million tokens; ignored.`);
  }
  if (raw.neverSend !== undefined) {
    if (Array.isArray(raw.neverSend) && raw.neverSend.every((x) => typeof x === 'string')) o.neverSend = raw.neverSend as string[];
    else problems.push(`${where}.neverSend must be a list of request field names; ignored.`);
  }
  // As written: core/reasoningEffort.ts (a lazy bundle) reads it, and package.json's schema tells the user what it takes.
  if (raw.reasoningEffort !== undefined) o.reasoningEffort = raw.reasoningEffort;
  if (raw.extraBody !== undefined) {
    if (isRecord(raw.extraBody)) {
      const extra: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(raw.extraBody)) {
        if (OWN_BODY_FIELDS.has(k)) problems.push(`${where}.extraBody.${k} is set by Parley itself; ignored.`);
        else extra[k] = v;
      }
      o.extraBody = extra;
    } else problems.push(`${where}.extraBody must be an object of request fields; ignored.`);
  }
  return o;
}

/** One entry of parley.endpoints as a profile, or undefined (with the reason in `problems`). */
function readProfile(raw: unknown, index: number, source: ProfileSource, problems: string[]): Profile | undefined {
  const where = `parley.endpoints[${index}]`;
  if (!isRecord(raw)) {
    problems.push(`${where} is not an object; ignored.`);
    return undefined;
  }
  const name = typeof raw.name === 'string' ? raw.name.trim() : '';
  if (!name) {
    problems.push(`${where} has no name; ignored.`);
    return undefined;
  }
  const at = `parley.endpoints "${name.slice(0, 60)}"`;
  let headers: Record<string, string> | undefined;
  if (raw.headers !== undefined) {
    try {
      validateHeaders(raw.headers);
      headers = raw.headers as Record<string, string>;
      for (const v of Object.values(headers)) {
        for (const m of v.matchAll(SECRET_REF)) if (!SECRET_NAME.test(m[1])) throw new ParleyError('config', `The secret name "${m[1].slice(0, 40)}" is not valid: use letters, digits, ".", "_" and "-".`);
      }
    } catch (e) {
      problems.push(`${at}: ${(e as Error).message} Its headers are not sent.`);
      headers = undefined;
    }
  }
  const models: Record<string, ModelOverride> = {};
  if (raw.models !== undefined) {
    if (isRecord(raw.models)) for (const [id, o] of Object.entries(raw.models)) models[id] = readOverride(o, `${at} models["${id.slice(0, 60)}"]`, problems);
    else problems.push(`${at}: models must be an object keyed by model id; ignored.`);
  }
  let stream: boolean | undefined;
  if (typeof raw.stream === 'boolean') stream = raw.stream;
  else if (raw.stream !== undefined) problems.push(`${at}: stream must be true or false; ignored.`);
  const p: Profile = { name, baseUrl: raw.baseUrl, model: typeof raw.model === 'string' ? raw.model.trim() : '', headers, models, ...(stream === undefined ? {} : { stream }), source, balance: raw.balance };
  const cm = raw.completionModel;
  if (typeof cm === 'string' && cm.trim()) p.completionModel = { model: cm.trim() };
  else if (isRecord(cm) && typeof cm.model === 'string' && cm.model.trim()) {
    p.completionModel = { model: cm.model.trim(), ...(typeof cm.profile === 'string' && cm.profile.trim() ? { profile: cm.profile.trim() } : {}) };
  } else if (cm !== undefined) problems.push(`${at}: completionModel must be a model id, or {"profile": name, "model": id}; ignored.`);
  return p;
}

/**
 * Every profile: the implicit one (parley.baseUrl and parley.model) first, then each list in order (user, then a
 * trusted workspace's, which win over a user profile of the same name). A profile without a usable name is left out.
 */
export function readProfiles(
  implicit: { baseUrl: unknown; model: string; models?: Record<string, ModelOverride> },
  lists: ReadonlyArray<{ value: unknown; source: Exclude<ProfileSource, 'implicit'> }>,
): { profiles: Profile[]; problems: string[] } {
  const problems: string[] = [];
  const named = new Map<string, Profile>();
  for (const { value, source } of lists) {
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value)) {
      problems.push(`parley.endpoints (${source} settings) must be a list of profiles; ignored.`);
      continue;
    }
    value.forEach((raw, i) => {
      const p = readProfile(raw, i, source, problems);
      if (!p) return;
      if (named.has(p.name) && named.get(p.name)!.source === source) problems.push(`Two profiles are named "${p.name.slice(0, 60)}"; the later one is used.`);
      named.delete(p.name);
      named.set(p.name, p);
    });
  }
  const profiles: Profile[] = [];
  if (!named.has(IMPLICIT_PROFILE)) {
    profiles.push({ name: IMPLICIT_PROFILE, baseUrl: implicit.baseUrl, model: implicit.model, models: implicit.models ?? {}, source: 'implicit' });
  }
  profiles.push(...named.values());
  return { profiles, problems };
}

/** The profile by name, else the first one (the implicit profile, or the first named one when that shadows it). */
export function findProfile(profiles: readonly Profile[], name: string | undefined): Profile {
  return profiles.find((p) => p.name === name) ?? profiles[0];
}

/** The overrides for one model of a profile (none: an empty object). */
export function overrideFor(p: Profile, model: string): ModelOverride {
  return Object.prototype.hasOwnProperty.call(p.models, model) ? p.models[model] : {};
}

/** The secret names a profile's headers refer to. */
export function secretNames(headers: Record<string, string> | undefined): string[] {
  const names = new Set<string>();
  for (const v of Object.values(headers ?? {})) for (const m of v.matchAll(SECRET_REF)) names.add(m[1]);
  return [...names];
}

/** A request body with a profile's per-model fields: extra fields added (never over Parley's own), others removed. */
export function applyBodyOverrides(body: Record<string, unknown>, o: Pick<ModelOverride, 'extraBody' | 'neverSend'>): Record<string, unknown> {
  for (const [k, v] of Object.entries(o.extraBody ?? {})) if (!OWN_BODY_FIELDS.has(k) && !(k in body)) body[k] = v;
  for (const k of o.neverSend ?? []) delete body[k];
  return body;
}

/** The user's own values that a workspace profile's model overrides are held to. */
export interface UserLimits {
  maxTokens?: number;
  contextWindow?: number;
  sendReasoningBack: boolean;
  pricing?: Record<string, { input: number; output: number }>;
}

/**
 * A workspace profile's model override as it may apply without a question: only tighter than the user's own values.
 * `maxOutputTokens` and `contextWindow` may lower the user's, never raise them (a larger reply or prompt costs more);
 * `sendReasoningBack` may turn it off, not on (it sends more); a `price` applies only to a model the user has priced
 * nowhere (a repository cannot make the usage report cheaper than the user's own prices). `vision: false` and
 * `tools: false` only refuse, so they stay. Body fields (`extraBody`, `neverSend`) go by the user's answer instead.
 */
export function tightenedOverride(o: ModelOverride, user: UserLimits, model: string): ModelOverride {
  const lower = (mine: number | undefined, theirs: number | undefined) => (mine === undefined || theirs === undefined ? theirs : Math.min(mine, theirs));
  const { maxOutputTokens, contextWindow, sendReasoningBack, price, ...rest } = o;
  const out: ModelOverride = rest;
  const max = lower(user.maxTokens, maxOutputTokens);
  if (max !== undefined) out.maxOutputTokens = max;
  const window = lower(user.contextWindow, contextWindow);
  if (window !== undefined) out.contextWindow = window;
  if (sendReasoningBack !== undefined && !(sendReasoningBack && !user.sendReasoningBack)) out.sendReasoningBack = sendReasoningBack;
  if (price && !(user.pricing && Object.prototype.hasOwnProperty.call(user.pricing, model))) out.price = price;
  return out;
}

/** Whether a profile comes from a workspace's (or folder's) settings: what it adds to a request needs the user's consent. */
export function isWorkspaceProfile(p: Pick<Profile, 'source'>): boolean {
  return p.source === 'workspace' || p.source === 'folder';
}

/**
 * The profile without what its models add to or take from a request body (`extraBody`, `neverSend`), but for model
 * `keep` (the one the user's answer covers); the rest kept.
 */
export function withoutBodyOverrides(p: Profile, keep?: string): Profile {
  const models: Record<string, ModelOverride> = {};
  for (const [id, o] of Object.entries(p.models)) {
    if (id === keep) {
      models[id] = o;
      continue;
    }
    const { extraBody: _extra, neverSend: _never, ...rest } = o;
    models[id] = rest;
  }
  return { ...p, models };
}

/**
 * How usage names a request's target: the host, and for a named profile its name first, so each profile's ledger is
 * its own.
 */
export function usageHostOf(profile: Pick<Profile, 'name' | 'source'> | undefined, host: string): string {
  return profile && profile.source !== 'implicit' ? `${profile.name.replace(/\|/g, '/')} (${host})` : host;
}

/** The profile a target's settings were resolved for: its name, the implicit one's when none was. */
export function profileName(s: { profile?: Pick<Profile, 'name'> }): string {
  return s.profile?.name ?? IMPLICIT_PROFILE;
}
