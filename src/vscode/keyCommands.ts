// The key commands: Set API Key, Clear API Key, and "This endpoint needs no key". The keys themselves are in secrets.ts;
// Set Header Secret is in headerSecretCommand.ts.
import type { ChatController } from './chatController';
import { openSettings } from './config';
import type { Log } from './log';
import { askText, pickOne, showError, showInfo, showWarning } from './notices';
import type { Requester } from './requester';
import type { ApiKeyStore } from './secrets';

/** What the key commands use: the keys, the log, and where the open conversation sends its requests. */
export interface KeyCommandDeps {
  keys: ApiKeyStore;
  log: Log;
  requester: Requester;
  chat: Pick<ChatController, 'selection'>;
}

/** Where the current settings send requests, for messages: the origin, or why there is none. */
async function originForKey(s: KeyCommandDeps): Promise<string | undefined> {
  const t = await s.requester.target(undefined, true, s.chat.selection());
  if (t.kind === 'ready') return t.endpoint.origin;
  if (t.kind === 'no-key') return t.origin;
  void showError(`Parley: ${t.error.message}`, 'Open Settings').then((a) => a && openSettings());
  return undefined;
}

/** Parley: Set API Key, for the origin the settings point at. */
export async function setApiKey(s: KeyCommandDeps): Promise<void> {
  const origin = await originForKey(s);
  if (!origin) return;
  const key = await askText({
    title: `Parley: API key for ${origin}`,
    prompt: `The key is stored in VS Code's secret storage and sent only to ${origin}.`,
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'sk-…',
    validateInput: (v) => (/[\s]/.test(v.trim()) ? 'A key has no spaces or line breaks.' : undefined),
  });
  if (key === undefined) return;
  const trimmed = key.trim();
  if (!trimmed) {
    void showWarning('Parley: no key entered; nothing was stored.');
    return;
  }
  await s.keys.set(origin, trimmed);
  s.log.info(`API key stored for ${origin}.`);
  void showInfo(`Parley: API key stored for ${origin}.`);
}

/** Parley: Clear API Key: one origin's key, or all of them. */
export async function clearApiKey(s: Pick<KeyCommandDeps, 'keys' | 'log'>): Promise<void> {
  const origins = s.keys.origins();
  if (origins.length === 0) {
    void showInfo('Parley: no API keys are stored.');
    return;
  }
  const all = 'All stored keys';
  const pick = await pickOne([...origins, all], { title: 'Parley: Clear API Key', placeHolder: 'Which endpoint’s key?' });
  if (!pick) return;
  for (const o of pick === all ? origins : [pick]) await s.keys.delete(o);
  s.log.info(`API key removed for ${pick === all ? 'all origins' : pick}.`);
  void showInfo(`Parley: removed ${pick === all ? 'all stored keys' : `the key for ${pick}`}.`);
}

/** The setup card's "This endpoint needs no key". */
export async function markNoKey(s: KeyCommandDeps): Promise<void> {
  const origin = await originForKey(s);
  if (!origin) return;
  await s.keys.markNoKeyNeeded(origin);
  s.log.info(`${origin} marked as needing no API key.`);
}
