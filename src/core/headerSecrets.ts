// Header secrets bound to origins, as API keys are: filled into a profile's headers only for a request to an origin the
// user stored the secret for; and the consent a workspace profile's headers and body fields need.
import { resolveEndpoint } from './endpoint';
import { ParleyError } from './errors';
import { validateHeaders } from './headers';
import { SECRET_REF, secretNames, type Profile } from './profiles';

/** A header secret as stored: its value, and the origins it may be sent to (undefined: stored before secrets had origins). */
export interface HeaderSecret {
  value: string;
  origins?: readonly string[];
}

/** The origin a profile's requests go to; undefined when its base URL is unusable. */
export function profileOrigin(p: Pick<Profile, 'baseUrl'>): string | undefined {
  try {
    return resolveEndpoint(p.baseUrl).origin;
  } catch {
    return undefined;
  }
}

/**
 * The origins a secret stored before secrets had origins is bound to: those of the user's own profiles (User
 * settings) that name it. A workspace's profile never binds a secret, so a repository cannot pull one to its server.
 */
export function legacyOrigins(name: string, profiles: readonly Profile[]): string[] {
  const out = new Set<string>();
  for (const p of profiles) {
    if (p.source !== 'user' || !secretNames(p.headers).includes(name)) continue;
    const origin = profileOrigin(p);
    if (origin) out.add(origin);
  }
  return [...out];
}

/** One origin the Set Header Secret command offers for a secret, and whether it starts picked. */
export interface OriginChoice {
  origin: string;
  /** Why it is offered: the profiles that name the secret there, or that the secret is stored for it now. */
  why: string;
  picked: boolean;
}

/**
 * The origins to offer when the user stores a secret: those it is stored for now and those of the user's own profiles
 * that name it (picked), and those of a workspace's profiles that name it (offered, never picked for the user).
 */
export function originChoices(name: string, profiles: readonly Profile[], stored: readonly string[] = []): OriginChoice[] {
  const choices = new Map<string, { why: string[]; picked: boolean }>();
  const add = (origin: string, why: string, picked: boolean) => {
    const c = choices.get(origin) ?? { why: [], picked: false };
    c.why.push(why);
    c.picked ||= picked;
    choices.set(origin, c);
  };
  for (const o of stored) add(o, 'stored for it now', true);
  for (const p of profiles) {
    const origin = profileOrigin(p);
    if (!origin || !secretNames(p.headers).includes(name)) continue;
    const mine = p.source === 'user';
    add(origin, `${mine ? 'your' : 'this workspace’s'} profile ${JSON.stringify(p.name.slice(0, 60))}`, mine);
  }
  return [...choices].map(([origin, c]) => ({ origin, why: c.why.join(', '), picked: c.picked }));
}

/**
 * The headers as sent to `origin`: each `${secret:name}` replaced by the secret's value. Throws a `config` ParleyError
 * (naming secrets and origins, never a value) when a secret is missing or not stored for `origin`, whichever profile
 * asks, so nothing is sent; and checks the result again, since a secret could hold a line break.
 */
export function expandHeaders(
  headers: Record<string, string> | undefined,
  secrets: ReadonlyMap<string, HeaderSecret>,
  origin: string,
  profile: Pick<Profile, 'name' | 'source'>,
): Record<string, string> | undefined {
  if (!headers) return undefined;
  const names = secretNames(headers);
  const missing = names.filter((n) => !secrets.has(n));
  if (missing.length) {
    throw new ParleyError('config', `The custom headers use ${missing.map(ref).join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not set. Run "Parley: Set Header Secret".`);
  }
  const elsewhere = names.filter((n) => !secrets.get(n)?.origins?.includes(origin));
  if (elsewhere.length) {
    const workspace = profile.source === 'workspace' || profile.source === 'folder';
    const where = elsewhere.map((n) => {
      const o = secrets.get(n)?.origins ?? [];
      return `${ref(n)} is ${o.length ? `stored only for ${o.join(', ')}` : 'stored for no origin yet'}`;
    });
    throw new ParleyError('config',
      `${workspace ? 'This workspace’s profile' : 'The profile'} ${JSON.stringify(profile.name.slice(0, 60))} would send ${elsewhere.map(ref).join(', ')} to ${origin}, but ${where.join('; ')}. `
      + 'Parley sends a header secret only to the origins you stored it for, so nothing was sent.'
      // A workspace chose this origin: the words do not invite the user to hand it the secret.
      + (workspace ? '' : ` If ${origin} should have it, run "Parley: Set Header Secret", pick ${elsewhere.join(', ')} and choose ${origin}.`));
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = v.replace(SECRET_REF, (_m, n: string) => secrets.get(n)?.value ?? '');
  validateHeaders(out);
  return out;
}

function ref(name: string): string {
  return `\${secret:${name}}`;
}

/** What a profile's per-model settings change in a request body: fields added (`extraBody`) and fields left out (`neverSend`). */
export interface BodyAdditions {
  extraBody?: Readonly<Record<string, unknown>>;
  neverSend?: readonly string[];
}

/**
 * The identity of the user's answer about what a workspace profile adds to its requests: the origin, every header
 * name and value as written (secret references, not their values), and the model's body fields with their exact
 * values and the fields it leaves out, as a SHA-256 hex digest. Any change to a name or a value (a plain header value
 * turned into `${secret:…}`, another `chat_template`) makes another identity, so the user is asked again; the order
 * of names and of an object's keys does not. Without body fields it is the identity answers about headers alone had.
 */
export async function headerConsentId(origin: string, headers: Readonly<Record<string, string>>, body: BodyAdditions = {}): Promise<string> {
  const entries = Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const extra = body.extraBody ?? {};
  const omitted = [...new Set(body.neverSend ?? [])].sort();
  const parts: unknown[] = [origin, entries];
  if (Object.keys(extra).length || omitted.length) parts.push(canonical(extra), omitted);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(parts)));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A JSON value with every object's keys sorted, so that the same fields and values always hash alike. Arrays and
 * objects are tagged (`{a: […]}`, `{o: [[key, value]…]}`), so that no object can hash as an array or the other way.
 */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return { a: v.map(canonical) };
  if (v === null || typeof v !== 'object') return v;
  return { o: Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]) };
}

/** What a workspace profile's model settings change in the request body, by field name. */
export interface WorkspaceBodyChanges {
  /** Fields `extraBody` adds. */
  fields: string[];
  /** Fields `neverSend` leaves out. */
  omitted: string[];
}

/** The question about a workspace profile's request additions, in words: headers, body fields, fields left out. */
export function workspaceAdditionsQuestion(origin: string, names: string[], secrets: string[], body: WorkspaceBodyChanges): { message: string; detail: string } {
  const list = (what: string, items: string[]) => `${what}${items.length === 1 ? '' : 's'} ${items.join(', ')}`;
  const refs = secrets.map((n) => `\${secret:${n}}`).join(', ');
  const added = [
    ...(names.length ? [list('the request header', names)] : []),
    ...(body.fields.length ? [list('the request body field', body.fields)] : []),
  ].join(' and ');
  const omitted = body.omitted.join(', ');
  const changes = added
    ? `adds ${added} to requests to ${origin}${omitted ? `, and leaves ${omitted} out of them` : ''}`
    : `leaves ${omitted} out of requests to ${origin}`;
  const carried = secrets.length ? `, and the headers carry your header secret${secrets.length === 1 ? '' : 's'} ${refs}` : '';
  return {
    message: `This workspace's endpoint profile ${changes}${carried}. Allow it?`,
    detail: (secrets.length ? `You stored ${refs} for ${origin}; "Allow" lets this workspace's settings send ${secrets.length === 1 ? 'it' : 'them'} there. ` : '')
      + (names.length ? 'Headers can carry credentials or change how the server treats a request. ' : '')
      + (body.fields.length || body.omitted.length ? 'Body fields can change what the model is told (a chat template, its arguments, a system text) and what a request may cost. ' : '')
      + 'Parley remembers your answer for this origin and exactly these names and values: if the workspace changes one, you are asked again. '
      + '"Parley: Forget Workspace Endpoint Answers" asks again too. "Send Without" sends your requests without any of them.',
  };
}
