// API keys and header secrets in SecretStorage, each bound to the origin(s) (scheme, host, port) it was stored for.
import { isLoopbackOrigin } from '../core/endpoint';
import * as vscode from 'vscode';
import type { HeaderSecret } from '../core/headerSecrets';
import { Disposable } from './disposable';

const KEY_PREFIX = 'parley.apiKey:';
/** Origins that have a key (not secret: just the list, so "Clear API Key" can show it). */
const ORIGINS_STATE = 'parley.keyOrigins';
/** Origins the user marked as needing no key. */
const NO_KEY_STATE = 'parley.noKeyOrigins';
/** Secrets that custom header values refer to as `${secret:name}`, by name. */
const HEADER_SECRET_PREFIX = 'parley.headerSecret:';
/** The names of the header secrets that are set (not secret). */
const HEADER_SECRETS_STATE = 'parley.headerSecretNames';
/** The origins each header secret may be sent to, by name (not secret). A set secret missing here predates origins. */
const HEADER_SECRET_ORIGINS_STATE = 'parley.headerSecretOrigins';

export type KeyState = { kind: 'key'; key: string } | { kind: 'none-needed' } | { kind: 'missing' };

/** Reading the key: `get(origin)`, used by Requester.target for every request. */
export class ApiKeyStore extends Disposable {
  private readonly changed = this._register(new vscode.EventEmitter<string>());
  /** Fires with the origin whose key changed. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly secrets: vscode.SecretStorage, private readonly state: vscode.Memento) {
    super();
  }

  /** The key for exactly this origin; never another origin's. */
  async get(origin: string): Promise<KeyState> {
    const key = await this.secrets.get(KEY_PREFIX + origin);
    if (key) return { kind: 'key', key };
    if (this.noKeyOrigins().includes(origin) || isLoopbackOrigin(origin)) return { kind: 'none-needed' };
    return { kind: 'missing' };
  }

  async set(origin: string, key: string): Promise<void> {
    await this.secrets.store(KEY_PREFIX + origin, key);
    await this.state.update(ORIGINS_STATE, unique([...this.origins(), origin]));
    await this.state.update(NO_KEY_STATE, this.noKeyOrigins().filter((o) => o !== origin));
    this.changed.fire(origin);
  }

  async markNoKeyNeeded(origin: string): Promise<void> {
    await this.state.update(NO_KEY_STATE, unique([...this.noKeyOrigins(), origin]));
    this.changed.fire(origin);
  }

  async delete(origin: string): Promise<void> {
    await this.secrets.delete(KEY_PREFIX + origin);
    await this.state.update(ORIGINS_STATE, this.origins().filter((o) => o !== origin));
    await this.state.update(NO_KEY_STATE, this.noKeyOrigins().filter((o) => o !== origin));
    this.changed.fire(origin);
  }

  /** Every stored key and header secret, for any origin (to take them out of text that leaves Parley, such as an export). */
  async storedKeys(): Promise<string[]> {
    const keys = await Promise.all([
      ...this.origins().map((o) => this.secrets.get(KEY_PREFIX + o)),
      ...this.headerSecretNames().map((n) => this.secrets.get(HEADER_SECRET_PREFIX + n)),
    ]);
    return keys.filter((k): k is string => typeof k === 'string' && k.length > 0);
  }

  /** The header secrets among `names` that are set, by name, each with the origins it may be sent to. */
  async headerSecrets(names: readonly string[]): Promise<Map<string, HeaderSecret>> {
    const values = await Promise.all(names.map((n) => this.secrets.get(HEADER_SECRET_PREFIX + n)));
    const bound = this.boundOrigins();
    return new Map(names.flatMap((n, i) => {
      const value = values[i];
      if (!value) return [];
      const origins = Object.prototype.hasOwnProperty.call(bound, n) ? bound[n] : undefined;
      return [[n, { value, origins }] as [string, HeaderSecret]];
    }));
  }

  /**
   * Stores the secret a header value refers to as `${secret:name}`, to be sent only to `origins`; an empty value
   * deletes it, with its origins.
   */
  async setHeaderSecret(name: string, value: string, origins: readonly string[]): Promise<void> {
    if (value) await this.secrets.store(HEADER_SECRET_PREFIX + name, value);
    else await this.secrets.delete(HEADER_SECRET_PREFIX + name);
    const others = this.headerSecretNames().filter((n) => n !== name);
    await this.state.update(HEADER_SECRETS_STATE, value ? [...others, name] : others);
    await this.bindHeaderSecret(name, value ? origins : undefined);
  }

  /** Sets the origins a stored header secret may be sent to (undefined: forgets them). */
  async bindHeaderSecret(name: string, origins: readonly string[] | undefined): Promise<void> {
    const rest = Object.fromEntries(Object.entries(this.boundOrigins()).filter(([n]) => n !== name));
    await this.state.update(HEADER_SECRET_ORIGINS_STATE, origins ? { ...rest, [name]: unique([...origins]) } : rest);
    this.changed.fire('');
  }

  /** The origins a header secret may be sent to; undefined when it is not set, or was stored before secrets had origins. */
  headerSecretOrigins(name: string): string[] | undefined {
    const bound = this.boundOrigins();
    return Object.prototype.hasOwnProperty.call(bound, name) ? bound[name] : undefined;
  }

  private boundOrigins(): Record<string, string[]> {
    return this.state.get<Record<string, string[]>>(HEADER_SECRET_ORIGINS_STATE, {});
  }

  headerSecretNames(): string[] {
    return this.state.get<string[]>(HEADER_SECRETS_STATE, []);
  }

  /** Origins with a stored key. */
  origins(): string[] {
    return this.state.get<string[]>(ORIGINS_STATE, []);
  }

  private noKeyOrigins(): string[] {
    return this.state.get<string[]>(NO_KEY_STATE, []);
  }
}

function unique(a: string[]): string[] {
  return [...new Set(a)];
}
