// Custom request headers: checked before any request, so they can neither replace the key nor forge the framing.
import { ParleyError } from './errors';
import { redact } from './redact';

/** What fetch manages itself for each connection: a request carrying one fails before it is sent, or misframes. */
const CONNECTION = 'it belongs to the connection, which Parley’s HTTP client manages itself (a request carrying it cannot be sent)';
/** A cookie by any name: Parley sends no cookies. */
const COOKIE = 'Parley sends no cookies, and a cookie is a credential';

/**
 * Names Parley never takes from custom headers, by lower-case name, with the reason it gives: credentials (the key,
 * cookies, a proxy's credential), what fetch derives itself, and the connection-level (hop-by-hop) fields fetch
 * refuses or manages, which would otherwise fail as a network error and be retried.
 */
const RESERVED: ReadonlyMap<string, string> = new Map([
  ['authorization', 'Parley sends the API key itself, and only to the endpoint’s origin: set the key instead'],
  ['proxy-authorization', 'it is a proxy’s credential: set the proxy in VS Code’s settings (http.proxy) instead'],
  ['cookie', COOKIE],
  ['cookie2', COOKIE],
  ['set-cookie', `${COOKIE} (and Set-Cookie is a response header)`],
  ['host', 'it comes from the endpoint URL'],
  ['content-length', 'it comes from the request body'],
  ['content-type', 'Parley sends the body as JSON and says so itself'],
  ['connection', CONNECTION],
  ['keep-alive', CONNECTION],
  ['proxy-connection', CONNECTION],
  ['transfer-encoding', CONNECTION],
  ['te', CONNECTION],
  ['upgrade', CONNECTION],
  ['expect', CONNECTION],
]);

/** An HTTP field name: one or more token characters (RFC 9110, section 5.1). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Control characters other than horizontal tab: a CR or LF in a value would start a header (or a body) of its own. */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** Beyond Latin-1: fetch cannot send it, and would fail with an error that looks like a network problem. */
const NOT_LATIN1 = /[^\u0000-\u00ff]/;

/** A header name as it may appear in a message: quoted, escaped (no raw control characters), short, no key. */
function shown(name: string): string {
  return redact(JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name));
}

/**
 * Throws a `config` ParleyError for custom headers Parley refuses: not an object of strings; a reserved name (see
 * RESERVED: credentials, framing, connection-level fields, in any case); two names that differ only in case (HTTP
 * would merge them into one); a name that is not an HTTP token (empty, spaces, a colon, control characters); a value
 * that holds a control character (CR, LF, NUL…) or a character beyond Latin-1. Pure: no other effect. Values never
 * appear in the message, since a header may carry a secret.
 */
export function validateHeaders(headers: unknown): void {
  if (headers === undefined) return;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new ParleyError('config', 'Custom headers must be an object of header names and text values.');
  }
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const reserved = RESERVED.get(lower);
    if (reserved !== undefined) {
      throw new ParleyError('config', `The custom header ${shown(name)} is not allowed: ${reserved}.`);
    }
    const twin = seen.get(lower);
    if (twin !== undefined) {
      throw new ParleyError('config', `The custom headers ${shown(twin)} and ${shown(name)} are the same header (names ignore case), and would be merged into one: keep one of them.`);
    }
    seen.set(lower, name);
    if (!TOKEN.test(name)) {
      throw new ParleyError('config', `The custom header name ${shown(name)} is not a valid HTTP header name (no spaces, colons, quotes, line breaks or other separators).`);
    }
    if (typeof value !== 'string') {
      throw new ParleyError('config', `The value of the custom header ${shown(name)} must be text.`);
    }
    if (CONTROL.test(value)) {
      throw new ParleyError('config', `The value of the custom header ${shown(name)} contains a control character (a line break, NUL or the like); remove it.`);
    }
    if (NOT_LATIN1.test(value)) {
      throw new ParleyError('config', `The value of the custom header ${shown(name)} contains characters a header cannot carry (beyond Latin-1, such as emoji).`);
    }
  }
}
