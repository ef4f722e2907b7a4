// How a setting set at several levels combines: for the tools' safety settings a workspace may only tighten the user's.
import { DEFAULT_TOOL_EXCLUDE } from './toolPaths';

/** One setting's values at each level, as VS Code's `inspect()` reports them. */
export interface ScopedValue {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The `parley.tools.*` settings. */
export interface ToolsSettings {
  enabled: boolean;
  /** Globs (relative to each workspace folder) the built-in tools never read. */
  exclude: string[];
  maxResultChars: number;
  maxRounds: number;
  maxTurnTokens: number;
  /** Ask before the built-in read tools run too (other tools always ask). */
  askBeforeReading: boolean;
}

/** The limits of the numeric tool settings: [key, min, max, default] (package.json has the same). */
const TOOL_LIMITS = [
  ['maxResultChars', 1000, 1_000_000, 20_000],
  ['maxRounds', 1, 100, 10],
  ['maxTurnTokens', 1000, 100_000_000, 200_000],
] as const;

/**
 * Clamps a number setting: out of range takes the nearest limit, a mistyped value the fallback, each said in
 * `adjusted`. Settings that only tune limits are clamped rather than refused: a bad value must not block chat.
 */
export function clampNumber(key: string, v: unknown, min: number, max: number, fallback: number, adjusted: string[]): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    adjusted.push(`parley.${key} is not a number (${JSON.stringify(v)}); using ${fallback}.`);
    return fallback;
  }
  const used = Math.min(max, Math.max(min, v));
  if (used !== v) adjusted.push(`parley.${key} ${v} is out of range (${min} to ${max}); using ${used}.`);
  return used;
}

/**
 * The `parley.tools.*` settings, with a trusted workspace's values only tightening the user's (or the defaults):
 * its exclude globs are added to the user's list, it can turn the read question on but not off, turn tools off but not
 * on, and lower the three limits but not raise them. (In Restricted Mode, `trusted` false, its values are ignored.)
 * A workspace value that would loosen is ignored and said in `adjusted`, for the log (exclude globs are only added).
 */
export function readToolsSettings(inspect: (key: string) => ScopedValue | undefined, trusted: boolean, adjusted: string[]): ToolsSettings {
  const ignored = (key: string, where: string, what: string) => adjusted.push(`parley.tools.${key} in ${where} ${what}, so it is ignored: a workspace can only tighten the tools' settings.`);
  const levels = (key: string) => {
    const i = inspect(`tools.${key}`);
    const workspace: Array<{ value: unknown; where: string }> = [];
    if (trusted && i?.workspaceValue !== undefined) workspace.push({ value: i.workspaceValue, where: "this workspace's settings" });
    if (trusted && i?.workspaceFolderValue !== undefined) workspace.push({ value: i.workspaceFolderValue, where: "this folder's settings" });
    return { user: i?.globalValue !== undefined ? i.globalValue : i?.defaultValue, workspace };
  };

  const enabled = levels('enabled');
  const userEnabled = enabled.user !== false;
  for (const w of enabled.workspace) {
    if (w.value === true && !userEnabled) ignored('enabled', w.where, 'turns tools on, which you turned off');
  }

  const ask = levels('askBeforeReading');
  const userAsk = ask.user === true;
  for (const w of ask.workspace) {
    if (w.value === false && userAsk) ignored('askBeforeReading', w.where, 'turns the read question off, which you turned on');
  }

  const exclude = levels('exclude');
  const own = stringList(exclude.user, DEFAULT_TOOL_EXCLUDE);
  const added = exclude.workspace.flatMap((w) => stringList(w.value, []));

  const limits = Object.fromEntries(TOOL_LIMITS.map(([key, min, max, fallback]) => {
    const l = levels(key);
    const mine = Math.round(clampNumber(`tools.${key}`, l.user, min, max, fallback, adjusted));
    let used = mine;
    for (const w of l.workspace) {
      const theirs = Math.round(clampNumber(`tools.${key}`, w.value, min, max, mine, adjusted));
      if (theirs > mine) ignored(key, w.where, `(${theirs}) is above yours (${mine})`);
      used = Math.min(used, theirs);
    }
    return [key, used];
  })) as Record<(typeof TOOL_LIMITS)[number][0], number>;

  return {
    enabled: userEnabled && !enabled.workspace.some((w) => w.value === false),
    exclude: [...new Set([...own, ...added])],
    maxResultChars: limits.maxResultChars,
    maxRounds: limits.maxRounds,
    maxTurnTokens: limits.maxTurnTokens,
    askBeforeReading: userAsk || ask.workspace.some((w) => w.value === true),
  };
}

/** A list of strings from a setting; the fallback when it is not an array (non-strings dropped). */
function stringList(v: unknown, fallback: readonly string[]): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [...fallback];
}
