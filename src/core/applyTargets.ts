// What Apply and propose_edit check about a target's path before the review opens: characters that would make the
// review's title lie, and the files whose content VS Code, git or CI run, which the review warns about.

/** Bidi controls and marks: they reorder how the text around them is drawn (`exe.txt` can read `txt.exe`). */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
/** C0 and C1 controls, DEL, and the line and paragraph separators: not drawn as themselves. */
const CONTROL = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;
const HIDDEN = new RegExp(`${BIDI.source}|${CONTROL.source}`, 'gu');

/** The path with each control or bidi character written as `<U+202E>`, so that it can be shown as it is. */
export function visiblePath(path: string): string {
  return path.replace(HIDDEN, (ch) => `<U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}>`);
}

/**
 * Why a path cannot be an Apply or propose_edit target, or undefined when it can: a control character (a line break,
 * an escape…) or a bidi control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) would hide or reorder part of
 * the name in the review's title, so the file the user reads there need not be the one written.
 */
export function unsafePathReason(path: string): string | undefined {
  const bidi = BIDI.test(path);
  if (!bidi && !CONTROL.test(path)) return undefined;
  const what = bidi ? 'a bidirectional text control, which reorders how the name is drawn' : 'a control character, which is not drawn as itself';
  return `The path "${visiblePath(path)}" holds ${what}: the review could show another name than the file it changes, so Parley does not apply changes to it.`;
}

/**
 * The files whose content runs as code, or decides what runs, without the user running that file: VS Code (tasks,
 * some when the folder opens; debug launches; settings that name programs; MCP servers it starts; recommended
 * extensions), dev containers, git hooks and config, CI pipelines, package scripts, direnv. Matched anywhere in the
 * path (a nested project has its own), ignoring case (as on case-insensitive file systems).
 */
const RUNS_CODE: ReadonlyArray<readonly [RegExp, string]> = [
  [/(^|\/)\.vscode\//, 'VS Code reads it: tasks (some run as soon as the folder opens), debug launches, settings that name programs to run, MCP servers it starts, extensions it recommends'],
  [/\.code-workspace$/, 'it is a VS Code workspace file: its settings, tasks and launch configurations act as the .vscode folder\'s do'],
  [/(^|\/)\.devcontainer(\/|\.json$)/, 'it defines a dev container, whose commands run when the container is built or opened'],
  [/(^|\/)\.github\/(workflows|actions)\//, 'GitHub Actions run it on a push or a pull request, with the repository\'s secrets'],
  [/(^|\/)(\.gitlab-ci\.ya?ml|\.travis\.ya?ml|azure-pipelines\.ya?ml|bitbucket-pipelines\.ya?ml|jenkinsfile)$|(^|\/)\.(circleci|buildkite)\//, 'a CI pipeline runs it'],
  [/(^|\/)\.git\//, 'git runs its hooks, and the programs its config names, on everyday commands'],
  [/(^|\/)\.(husky|githooks)\/|(^|\/)\.pre-commit-config\.ya?ml$|(^|\/)lefthook\.ya?ml$/, 'it holds or lists git hooks, which run on commit or push'],
  [/(^|\/)package\.json$/, 'its scripts run on npm install and from VS Code\'s NPM Scripts'],
  [/(^|\/)\.envrc$/, 'direnv runs it when a shell enters the folder'],
  [/(^|\/)(\.yarnrc(\.ya?ml)?|\.pnpmfile\.c?js|\.npmrc)$/, 'the package manager reads it on every install: it can name a program or a hook to run'],
  [/(^|\/)(eslint\.config\.[cm]?[jt]s|\.eslintrc\.c?js|prettier\.config\.[cm]?[jt]s|\.prettierrc\.c?js|stylelint\.config\.[cm]?js|\.stylelintrc\.c?js)$/, 'it is JavaScript that the linter or formatter extensions run when a file opens or is saved'],
  [/(^|\/)(build\.rs|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|directory\.build\.(props|targets))$/, 'the language server builds with it when the folder opens, running what it says'],
  [/(^|\/)(\.bashrc|\.bash_profile|\.bash_login|\.profile|\.zshrc|\.zshenv|\.zprofile|\.config\/fish\/config\.fish)$/, 'a shell runs it when it starts (a terminal in VS Code, with the home folder as the workspace)'],
];

/**
 * Why the file at `path` (relative to its workspace folder) runs as code without the user running it, in words for
 * the review's warning; undefined for an ordinary file. The one list of such files.
 */
export function runsCodeReason(path: string): string | undefined {
  // Windows drops trailing dots and spaces from a name, and a colon starts a stream of it (`name::$INDEX_ALLOCATION`,
  // `name:$I30:$INDEX_ALLOCATION` are the folder itself): `.vscode. /tasks.json` is `.vscode/tasks.json` there, so each
  // part is read the way Windows reads it. Case is folded as case-insensitive file systems fold it (`ſ` is `s`).
  const parts = path.replace(/\\/g, '/').toUpperCase().toLowerCase().split('/')
    .map((s) => s.replace(/:.*$/, '').replace(/[. ]+$/, (m) => (m === s ? m : '')));
  const reason = RUNS_CODE.find(([re]) => re.test(parts.join('/')))?.[1];
  if (reason) return reason;
  // An 8.3 short name (`VSCODE~1`, `PACKAG~1.JSO`) may be another name of any of these on Windows.
  if (parts.some((s) => /^[^.]{1,6}~\d+(\.[^.]{0,3})?$/.test(s))) return 'on Windows a name such as this is the short (8.3) name of another file or folder, which may be one that runs code (.vscode, package.json…)';
  return undefined;
}
