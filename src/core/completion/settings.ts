// The `parley.completion.*` settings and the completion model they (or a profile) name. Only the user's own settings
// can name where completions go: a workspace can turn them off, for a language or all, never on or elsewhere.
import type { Profile } from '../profiles';
import type { ScopedValue } from '../scopedSettings';

/** The state key of the completion routes learnt, `{ "<origin> <model>": route }`; Reset Endpoint Adaptations clears it. */
export const COMPLETION_ROUTES_STATE = 'parley.completionRoutes';

/** Which completions win where GitHub Copilot's are on too. */
export type CopilotRule = 'parley' | 'copilot';

/** The `parley.completion.*` settings, as they apply. */
export interface CompletionSettings {
  /** `parley.completion.model`, from user settings only ('' when unset). */
  model: string;
  /** `parley.completion.endpoint`: the profile it is a model of, from user settings only ('' = the active profile). */
  endpoint: string;
  /** Off when the user, or a workspace, turned completions off. */
  enabled: boolean;
  /** Per language id (`*` for the rest): the user's map, with the languages a workspace turned off. */
  languages: Record<string, boolean>;
  /** `auto`, or a FIM family whose tokens to use whatever the model id says. */
  fimTokens: string;
  whenCopilotIsOn: CopilotRule;
}

/** The default of `parley.completion.languages` (package.json has the same). */
export const DEFAULT_LANGUAGES: Readonly<Record<string, boolean>> = { '*': true, plaintext: false, markdown: false, scminput: false };

const user = (i: ScopedValue | undefined) => (i?.globalValue !== undefined ? i.globalValue : i?.defaultValue);
const workspaceValues = (i: ScopedValue | undefined, trusted: boolean) => (trusted ? [i?.workspaceValue, i?.workspaceFolderValue].filter((v) => v !== undefined) : []);

function booleanMap(v: unknown): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, b] of Object.entries(v)) if (typeof b === 'boolean') out[k] = b;
  return out;
}

/** Reads `parley.completion.*` through `inspect` (VS Code's `WorkspaceConfiguration.inspect`, section `parley`). */
export function readCompletionSettings(inspect: (key: string) => ScopedValue | undefined, trusted: boolean): CompletionSettings {
  const text = (key: string) => {
    const v = user(inspect(`completion.${key}`));
    return typeof v === 'string' ? v.trim() : '';
  };
  const enabled = inspect('completion.enabled');
  const langs = inspect('completion.languages');
  const languages = { ...DEFAULT_LANGUAGES, ...booleanMap(user(langs)) };
  for (const w of workspaceValues(langs, trusted)) for (const [k, b] of Object.entries(booleanMap(w))) if (!b) languages[k] = false;
  const rule = user(inspect('completion.whenCopilotIsOn'));
  return {
    model: text('model'),
    endpoint: text('endpoint'),
    enabled: user(enabled) !== false && !workspaceValues(enabled, trusted).includes(false),
    languages,
    fimTokens: text('fimTokens') || 'auto',
    whenCopilotIsOn: rule === 'copilot' ? 'copilot' : 'parley',
  };
}

/** Whether completions are on for a language id. */
export function languageEnabled(s: CompletionSettings, languageId: string): boolean {
  return Object.prototype.hasOwnProperty.call(s.languages, languageId) ? s.languages[languageId] : s.languages['*'] !== false;
}

/** The completion model in effect: which profile's endpoint, which model, and which setting named it. */
export interface CompletionChoice {
  profile: string;
  model: string;
  /** The setting that named it, for the status bar and the log. */
  from: string;
}

/**
 * The completion model: `parley.completion.model` (with `parley.completion.endpoint`, else the active profile), or else
 * the active profile's `completionModel`. Only a profile of the user's own (or the implicit one) can serve: a
 * workspace's profile is never where completions go. Undefined, with the reason, when none is set or usable.
 */
export function completionChoice(s: CompletionSettings, profiles: readonly Profile[], activeProfile: string): CompletionChoice | { off: string } {
  const mine = (name: string) => profiles.find((p) => p.name === name && (p.source === 'user' || p.source === 'implicit'));
  const active = profiles.find((p) => p.name === activeProfile) ?? profiles[0];
  if (s.model) {
    const name = s.endpoint || active?.name;
    const p = name ? mine(name) : undefined;
    if (!p) return { off: `parley.completion.endpoint names "${name ?? ''}", which is not one of your own profiles (a workspace's profile cannot serve completions).` };
    return { profile: p.name, model: s.model, from: 'parley.completion.model' };
  }
  const cm = active?.completionModel;
  if (!active || !cm) return { off: 'No completion model is set: set parley.completion.model, or completionModel in a profile of parley.endpoints.' };
  if (active.source !== 'user' && active.source !== 'implicit') return { off: `The profile "${active.name}" comes from this workspace's settings: its completionModel is not used.` };
  const p = mine(cm.profile ?? active.name);
  if (!p) return { off: `The completionModel of "${active.name}" names the profile "${cm.profile ?? ''}", which is not one of your own.` };
  return { profile: p.name, model: cm.model, from: `completionModel of the profile "${active.name}"` };
}
