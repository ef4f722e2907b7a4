// Custom request headers: checked before any request, so they can neither replace the key nor forge the framing.
import { ParleyError } from './errors';
import { redact } from './redact';

/** Names Parley never takes from custom headers, with the reason it gives: credentials, and what fetch derives itself. */
const RESERVED: ReadonlyMap<string, string> = new Map([
  ['authorization', 'Parley sends the API key itself, and only to the endpoint’s origin: set the key instead'],
  ['host', 'it comes from the endpoint URL'],
  ['content-length', 'it comes from the request body'],
  ['cookie', 'Parley sends no cookies, and a cookie is a credential'],
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
 * Throws a `config` ParleyError for custom headers Parley refuses: not an object of strings; a reserved name
 * (Authorization, Host, Content-Length, Cookie, in any case); a name that is not an HTTP token (empty, spaces, a
 * colon, control characters); a value that holds a control character (CR, LF, NUL…) or a character beyond
 * Latin-1. Pure: no other effect. Values never appear in the message, since a header may carry a secret.
 */
export function validateHeaders(headers: unknown): void {
  if (headers === undefined) return;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new ParleyError('config', 'Custom headers must be an object of header names and text values.');
  }
  for (const [name, value] of Object.entries(headers)) {
    const reserved = RESERVED.get(name.toLowerCase());
    if (reserved !== undefined) {
      throw new ParleyError('config', `The custom header ${shown(name)} is not allowed: ${reserved}.`);
    }
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
