// The integration runs: each one is a VS Code started with its own workspace, settings and trust, running some of the test files.
//
// Read by scripts/run-integration.mjs (which starts the VS Code) and bundled into index.ts (which picks the test
// files): the run's name reaches the extension host as the environment variable PARLEY_TEST_SUITE.

/**
 * @typedef {object} IntegrationRun
 * @property {string} name         Also the value of PARLEY_TEST_SUITE inside the extension host.
 * @property {string} workspace    Folder under test/integration/workspaces/, copied to a temp dir and opened.
 * @property {string} [workspaceFile]  A `.code-workspace` file inside that folder: opened instead of the folder (a
 *                                 multi-root window with the folders it lists).
 * @property {boolean} trust       Workspace trust stays on in both cases. true: the copied folder is trusted by
 *                                 the user's decision before the suite starts (the runner clicks Trust in the
 *                                 Workspace Trust editor, then opens the suite in the same browser profile).
 *                                 false: the folder stays untrusted, so VS Code opens it in Restricted Mode.
 *                                 (Desktop VS Code, where the runner cannot click, runs trust: true with
 *                                 --disable-workspace-trust.)
 * @property {Record<string, unknown>} settings  User settings seeded into the fresh profile.
 * @property {string[]} tests      Test files by name (path under test/integration without `.test.ts`). `*` matches
 *                                 any run of characters; a leading `!` excludes. Later patterns win.
 */

/** @type {IntegrationRun[]} */
export const runs = [
  {
    name: 'main',
    workspace: 'main',
    trust: true,
    // VS Code in a browser saves after a second by default (desktop VS Code does not): tests that check that Accept
    // leaves a document unsaved must not depend on how quickly they look.
    settings: { 'files.autoSave': 'off' },
    tests: ['*', '!restricted', '!policy', '!searchLarge', '!rules', '!multiroot'],
  },
  {
    name: 'restricted',
    workspace: 'restricted',
    trust: false,
    settings: {},
    tests: ['smoke', 'restricted'],
  },
  {
    // A trusted repository whose .vscode/settings.json tries to loosen the tools' settings and replace the system prompt.
    name: 'policy',
    workspace: 'policy',
    trust: true,
    settings: {},
    tests: ['smoke', 'policy'],
  },
  {
    // A trusted repository with one rule file of each format (issue 38), one of them excluded by its settings.
    name: 'rules',
    workspace: 'rules',
    trust: true,
    settings: {},
    tests: ['smoke', 'rules'],
  },
  {
    // 20,000 files written at the start (issue 33): in a run of their own, so that the main run's suites and its time
    // limit never share a folder with them.
    name: 'large',
    workspace: 'large',
    trust: true,
    settings: {},
    tests: ['smoke', 'searchLarge', 'mentionsLarge'],
  },
  {
    // A multi-root window: a .code-workspace with two folders, each with its own AGENTS.md and files (rules, `@`
    // mentions, the tools' paths and prompt files across folders).
    name: 'multiroot',
    workspace: 'multiroot',
    workspaceFile: 'multiroot.code-workspace',
    trust: true,
    settings: {},
    tests: ['smoke', 'multiroot'],
  },
];

/** The test names of `all` that `run` selects, in the order of `all`. */
export function selectTests(run, all) {
  const toRegExp = (glob) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return all.filter((name) => {
    let selected = false;
    for (const pattern of run.tests) {
      const exclude = pattern.startsWith('!');
      if (toRegExp(exclude ? pattern.slice(1) : pattern).test(name)) selected = !exclude;
    }
    return selected;
  });
}
