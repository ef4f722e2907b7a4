// Parley: Set Header Secret, loaded on first use (dist/headerSecretCommand.js, see LAZY in esbuild.mjs): a secret for
// `${secret:name}` in custom headers, and the origins it may be sent to. The secrets themselves are in secrets.ts.
import { resolveEndpoint } from '../core/endpoint';
import { originChoices, type OriginChoice } from '../core/headerSecrets';
import { secretNames, SECRET_NAME } from '../core/profiles';
import type { SettingsSnapshot } from './config';
import type { Log } from './log';
import { askText, pickMany, pickOne, showError, showInfo } from './notices';
import type { ApiKeyStore } from './secrets';

/** What Set Header Secret uses: the profiles' header names, the secrets, and the log. */
export interface HeaderSecretDeps {
  settings: SettingsSnapshot;
  keys: ApiKeyStore;
  log: Log;
}

/** What a header secret's name may hold. */
const NAME_RULE = 'Letters, digits, ".", "_" and "-", at most 64.';

/**
 * Parley: Set Header Secret: the value a custom header refers to as `${secret:name}`, kept in secret storage and sent
 * only to the origins picked here (as a key goes only to its origin). The name is picked from those the profiles use,
 * or typed; an empty value removes the secret. `name`, `value` and `origins` (base URLs or origins) as arguments skip
 * the prompts (tests, keybindings); without `origins`, the ones the picker would start with are used.
 */
export async function setHeaderSecret(s: HeaderSecretDeps, givenName?: unknown, givenValue?: unknown, givenOrigins?: unknown): Promise<void> {
  let name = typeof givenName === 'string' ? givenName : undefined;
  if (name === undefined) {
    const used = [...new Set(s.settings.current.profiles.flatMap((p) => secretNames(p.headers)))];
    const other = 'Another name…';
    const set = s.keys.headerSecretNames();
    const pick = used.length
      ? await pickOne([...used.map((n) => ({ label: n, description: set.includes(n) ? 'set' : 'not set' })), { label: other }], { title: 'Parley: Set Header Secret' })
      : { label: other };
    if (!pick) return;
    name = pick.label === other
      ? await askText({ title: 'Parley: header secret name', prompt: 'Used in a header value as ${secret:name}.', validateInput: (v) => (SECRET_NAME.test(v) ? undefined : NAME_RULE) })
      : pick.label;
    if (!name) return;
  }
  if (!SECRET_NAME.test(name)) {
    void showError(`Parley: a header secret name takes ${NAME_RULE.toLowerCase()}`);
    return;
  }
  const value = typeof givenValue === 'string' ? givenValue : await askText({
    title: `Parley: value of \${secret:${name}}`,
    prompt: 'Kept in VS Code\'s secret storage and sent only to the origins you choose next. Empty removes it.',
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (/[\u0000-\u001f\u007f]/.test(v) ? 'A header value cannot hold line breaks or control characters.' : undefined),
  });
  if (value === undefined) return;
  if (!value.trim()) {
    await s.keys.setHeaderSecret(name, '', []);
    s.log.info(`Header secret ${name} removed.`);
    return;
  }
  const choices = originChoices(name, s.settings.current.profiles, s.keys.headerSecretOrigins(name));
  let origins: string[] | undefined;
  if (givenOrigins === undefined) {
    origins = typeof givenValue === 'string' ? choices.filter((c) => c.picked).map((c) => c.origin) : await pickOrigins(name, choices);
    if (origins === undefined) return;
  } else {
    const given = Array.isArray(givenOrigins) ? givenOrigins.map(originOf) : [undefined];
    origins = given.filter((o): o is string => o !== undefined);
    if (origins.length !== given.length) {
      void showError('Parley: the origins of a header secret must be a list of http(s) URLs; nothing was stored.');
      return;
    }
  }
  if (origins.length === 0) {
    void showError(`Parley: \${secret:${name}} needs at least one origin to be sent to; nothing was stored.`);
    return;
  }
  await s.keys.setHeaderSecret(name, value.trim(), origins);
  s.log.info(`Header secret ${name} stored, to be sent only to ${origins.join(', ')}.`);
  void showInfo(`Parley: \${secret:${name}} stored; it is sent only to ${origins.join(', ')}.`);
}

/** The origin of a base URL or origin the user typed or passed; undefined when it is not an http(s) URL. */
function originOf(v: unknown): string | undefined {
  try {
    return resolveEndpoint(v).origin;
  } catch {
    return undefined;
  }
}

/**
 * Which origins a header secret may go to: a pick of those in `choices` (the user's own profiles' and the current ones
 * picked at first; a workspace's offered but not picked), and another typed in. Undefined: the user cancelled.
 */
async function pickOrigins(name: string, choices: OriginChoice[]): Promise<string[] | undefined> {
  const another = 'Another origin…';
  let picked: string[] = [];
  let typeOne = choices.length === 0;
  if (!typeOne) {
    const items = await pickMany(
      [...choices.map((c) => ({ label: c.origin, description: c.why, picked: c.picked })), { label: another, description: 'type a base URL' }],
      { title: `Parley: where may \${secret:${name}} be sent?`, placeHolder: 'Parley sends this secret only to the origins picked here.', ignoreFocusOut: true },
    );
    if (!items) return undefined;
    picked = items.filter((i) => i.label !== another).map((i) => i.label);
    typeOne = items.some((i) => i.label === another);
  }
  if (typeOne) {
    const typed = await askText({
      title: `Parley: where may \${secret:${name}} be sent?`,
      prompt: 'The base URL (or origin) of the endpoint that needs it. Parley sends this secret there only.',
      placeHolder: 'https://gateway.example.com/v1',
      ignoreFocusOut: true,
      validateInput: (v) => (originOf(v.trim()) ? undefined : 'An http or https URL, such as https://gateway.example.com/v1.'),
    });
    if (typed === undefined) return undefined;
    picked.push(originOf(typed.trim()) as string);
  }
  return [...new Set(picked)];
}
