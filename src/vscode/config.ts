// One typed reader for Parley's settings, honouring workspace trust, and the window's one snapshot of them.
import * as vscode from 'vscode';
import { readBudget, type BudgetLimit, type BudgetMistake } from '../core/budgetSettings';
import { readCompletionSettings, type CompletionSettings } from '../core/completion/settings';
import { readProfiles, type Profile } from '../core/profiles';
import { clampNumber, readToolsSettings, type ToolsSettings } from '../core/scopedSettings';
import { Disposable } from './disposable';

/** Where the effective value of a setting came from. */
export type SettingSource = 'default' | 'user' | 'workspace' | 'folder';

export interface Price {
  input: number;
  output: number;
}

export type { ToolsSettings } from '../core/scopedSettings';

/** The `parley.compaction.*` settings. */
export interface CompactionSettings {
  /** Percent of the window past which Parley summarizes older turns before sending; 0 never does on its own. */
  threshold: number;
  /** Questions (with their replies) kept word for word. */
  keepTurns: number;
}

/** Every Parley setting, typed. Values are as the user wrote them: core validates ranges and URLs. */
export interface Settings {
  /** Every endpoint profile: the implicit one from baseUrl and model first, then parley.endpoints. */
  profiles: Profile[];
  /** parley.endpoint: the profile new conversations use (a name; empty or unknown means the first). */
  activeProfile: string;
  /** The profile a target was resolved for (set by the requester; the active one before that). */
  profile?: Profile;
  /** A panel conversation's reasoning effort, as its Selection gave it (set by the requester; unset for other requests). */
  effort?: string | null;
  /** Profiles or overrides that were refused, in words, for the log and Test Connection. */
  profileProblems: string[];
  /** Endpoint values set somewhere this window does not apply them, and where to set them instead. */
  unapplied: string[];
  compaction: CompactionSettings;
  baseUrl: unknown;
  baseUrlSource: SettingSource;
  /** The base URL from user settings or the default: the user's own endpoint. */
  userBaseUrl: unknown;
  model: string;
  /** The system prompt in effect: a workspace's is used only once the user allowed it (the requester asks). */
  systemPrompt: string;
  systemPromptSource: SettingSource;
  /** The system prompt from user settings or the default: the user's own. */
  userSystemPrompt: string;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** The context window for VS Code's chat when the server does not say. */
  contextWindow?: number;
  stop?: string | string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  requestTimeoutSeconds: number;
  streamIdleTimeoutSeconds: number;
  maxRetries: number;
  maxContextChars: number;
  sendReasoningBack: boolean;
  pricing: Record<string, Price>;
  /**
   * `parley.pricing` as the user set it. `pricing` is a trusted workspace's when it sets one; the spend budget counts
   * the user's first and a workspace's only where nothing else (a model list) prices the model.
   */
  userPricing?: Record<string, Price>;
  /** The user's own profiles, where a trusted workspace adds its own: a user profile's prices outlive a workspace one of the same name. */
  userProfiles?: Profile[];
  /** `parley.budget` and each profile's `budget`: the user's limits, plus any a trusted workspace adds (core/budget.ts). */
  budget: BudgetLimit[];
  /** Budget entries that cannot be read, so not enforced: the user is warned (budgetCheck.ts sayBudgetMistakes). */
  budgetMistakes: BudgetMistake[];
  logLevel: 'off' | 'info' | 'debug' | 'trace';
  tools: ToolsSettings;
  /** `parley.completion.*`: inline completions (the model only from user settings). */
  completion: CompletionSettings;
  /** Out-of-range or mistyped tuning values that were replaced, in words, for the log. */
  adjusted: string[];
}

export const SECTION = 'parley';

/**
 * Reads one setting. In Restricted Mode the workspace's values are ignored, so a repository
 * cannot redirect requests (package.json also lists these keys under restrictedConfigurations).
 */
function read<T>(config: vscode.WorkspaceConfiguration, key: string, trusted: boolean): { value: T | undefined; source: SettingSource } {
  const i = config.inspect<T>(key);
  if (!i) return { value: undefined, source: 'default' };
  if (trusted && i.workspaceFolderValue !== undefined) return { value: i.workspaceFolderValue, source: 'folder' };
  if (trusted && i.workspaceValue !== undefined) return { value: i.workspaceValue, source: 'workspace' };
  if (i.globalValue !== undefined) return { value: i.globalValue, source: 'user' };
  return { value: i.defaultValue, source: 'default' };
}

function optionalNumber(v: unknown): number | undefined {
  return v === null || v === undefined ? undefined : (v as number);
}

/** Reads all settings. `trusted` is vscode.workspace.isTrusted unless a test says otherwise. */
export function readSettings(trusted = vscode.workspace.isTrusted): Settings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const get = <T>(key: string) => read<T>(c, key, trusted).value;
  const base = read<unknown>(c, 'baseUrl', trusted);
  const model = String(get<unknown>('model') ?? '');
  const lists = c.inspect<unknown>('endpoints');
  const { profiles, problems } = readProfiles(
    { baseUrl: base.value, model },
    [
      { value: lists?.globalValue, source: 'user' as const },
      ...(trusted ? [{ value: lists?.workspaceValue, source: 'workspace' as const }, { value: lists?.workspaceFolderValue, source: 'folder' as const }] : []),
    ],
  );
  const userBase = read<unknown>(c, 'baseUrl', false);
  const prompt = read<unknown>(c, 'systemPrompt', trusted);
  const stop = get<unknown>('stop');
  const logLevel = get<string>('logLevel');
  const prices = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Price>) : {});
  const adjusted: string[] = [];
  const budgetMistakes: BudgetMistake[] = [];
  const clamp = (key: string, min: number, max: number, fallback: number) => clampNumber(key, get(key), min, max, fallback, adjusted);
  return {
    profiles,
    activeProfile: String(get<unknown>('endpoint') ?? ''),
    profileProblems: problems,
    unapplied: unappliedValues(c, trusted),
    compaction: {
      threshold: Math.round(clamp('compaction.threshold', 0, 100, 85)),
      keepTurns: Math.round(clamp('compaction.keepTurns', 1, 50, 4)),
    },
    baseUrl: base.value,
    baseUrlSource: base.source,
    userBaseUrl: userBase.value,
    model,
    systemPrompt: String(prompt.value ?? ''),
    systemPromptSource: prompt.source,
    userSystemPrompt: String(read<unknown>(c, 'systemPrompt', false).value ?? ''),
    temperature: optionalNumber(get('temperature')),
    topP: optionalNumber(get('topP')),
    maxTokens: optionalNumber(get('maxTokens')),
    contextWindow: optionalNumber(get('contextWindow')),
    stop: typeof stop === 'string' || Array.isArray(stop) ? (stop as string | string[]) : undefined,
    presencePenalty: optionalNumber(get('presencePenalty')),
    frequencyPenalty: optionalNumber(get('frequencyPenalty')),
    requestTimeoutSeconds: clamp('requestTimeoutSeconds', 1, 600, 60),
    streamIdleTimeoutSeconds: clamp('streamIdleTimeoutSeconds', 0, 3600, 300),
    maxRetries: Math.round(clamp('maxRetries', 0, 10, 2)),
    maxContextChars: Math.round(clamp('maxContextChars', 100, 10_000_000, 24_000)),
    sendReasoningBack: get<unknown>('sendReasoningBack') === true,
    pricing: prices(get('pricing')),
    userPricing: prices(c.inspect('pricing')?.globalValue),
    // Read again alone only where a workspace adds profiles (one may take the name of one of the user's).
    userProfiles: trusted && (lists?.workspaceValue !== undefined || lists?.workspaceFolderValue !== undefined) ? readProfiles({ baseUrl: '', model }, [{ value: lists?.globalValue, source: 'user' }]).profiles : undefined,
    budget: readBudget((key) => c.inspect<unknown>(key), trusted, adjusted, budgetMistakes),
    budgetMistakes,
    logLevel: logLevel === 'off' || logLevel === 'debug' || logLevel === 'trace' ? logLevel : 'info',
    tools: readToolsSettings((key) => c.inspect<unknown>(key), trusted, adjusted),
    completion: readCompletionSettings((key) => c.inspect<unknown>(key), trusted),
    adjusted,
  };
}

/** The settings that make up an endpoint: they share one scope so that they always apply together. */
const ENDPOINT_KEYS = ['baseUrl', 'model', 'endpoints', 'endpoint'];

/**
 * Endpoint values that are set but not applied in this window, each with where to set it instead: a value in the
 * local User settings that a remote window (code-server, Codespaces, SSH) ignores for machine-scoped settings
 * (`inspect()` shows it as the local user value, while the user value in effect differs), and workspace values in
 * Restricted Mode.
 */
function unappliedValues(c: vscode.WorkspaceConfiguration, trusted: boolean): string[] {
  const out: string[] = [];
  for (const key of ENDPOINT_KEYS) {
    const i = c.inspect<unknown>(key) as (ReturnType<typeof c.inspect<unknown>> & { globalLocalValue?: unknown; globalRemoteValue?: unknown }) | undefined;
    if (!i) continue;
    if (i.globalLocalValue !== undefined && JSON.stringify(i.globalLocalValue) !== JSON.stringify(i.globalValue)) {
      out.push(`${SECTION}.${key} is set in your local User settings, but this remote window does not apply it there: set it in the Remote tab of Settings (or in the remote's settings.json).`);
    }
    if (!trusted && (i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined)) {
      out.push(`${SECTION}.${key} is set in this workspace's settings, which Restricted Mode ignores: trust the workspace, or set it in your User settings.`);
    }
  }
  return out;
}

/** Opens the Settings editor on Parley's settings. */
export function openSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', '@ext:parley.parley');
}

/** Opens the Settings editor on `parley.budget`, or `parley.endpoints` for a profile's own (raising or removing a limit is the user's own act there). */
export function openBudgetSettings(id = 'parley.budget'): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', id);
}

/** Writes the user-level (global) value of a setting. */
export async function writeUserSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update(key, value, vscode.ConfigurationTarget.Global);
}

/** Rewrites the user's parley.endpoints (a list is written as a whole): `change` gets the list as it is, or []. */
async function updateUserProfiles(change: (list: unknown[]) => unknown[]): Promise<void> {
  const c = vscode.workspace.getConfiguration(SECTION);
  const list = c.inspect<unknown>('endpoints')?.globalValue;
  await c.update('endpoints', change(Array.isArray(list) ? list : []), vscode.ConfigurationTarget.Global);
}

const named = (e: unknown, name: string) => typeof e === 'object' && e !== null && (e as { name?: unknown }).name === name;

/** Adds a profile to the user's parley.endpoints, or replaces the one of that name. */
export function addProfile(name: string, baseUrl: string, model: string): Promise<void> {
  return updateUserProfiles((list) => [...list.filter((e) => !named(e, name)), { name, baseUrl, model }]);
}

/** Sets the default model of a profile in the user's parley.endpoints. */
export function setProfileModel(name: string, model: string): Promise<void> {
  return updateUserProfiles((list) => list.map((e) => (named(e, name) ? { ...(e as object), model } : e)));
}

/**
 * The settings as they are now: read once, and again when a Parley setting changes or the workspace becomes trusted.
 * Everything in the window reads `current` instead of asking VS Code again (the log asked on every line).
 * `onDidChange` fires after the snapshot is fresh, so listeners see the new values.
 */
export class SettingsSnapshot extends Disposable {
  private value = readSettings();
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;

  constructor() {
    super();
    this._register(vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION)) this.refresh();
    }));
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.refresh()));
  }

  get current(): Settings {
    return this.value;
  }

  private refresh(): void {
    this.value = readSettings();
    this.changed.fire();
  }
}
