// ESLint (flat config) with typescript-eslint: rules that catch real bugs, not style. Type-aware over every .ts in
// src/, test/ and bench/, and over the .mjs scripts (their types inferred through tsconfig.eslint.json).
// `npm run lint`; CI runs it too (.ci/run).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Built output, installs, and test/e2e/workspaces/ (the files of the workspace the UI tests open: content, not code).
  { ignores: ['node_modules/', 'dist/', 'out/', '.vscode-test/', 'test-results/', 'bench/results/', 'test/e2e/workspaces/', '**/*.d.ts', '**/*.d.mts'] },
  {
    files: ['**/*.ts', '**/*.mjs'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // Each file is typed by the project it is built with: the DOM only for the webview and the Chromium tests.
        project: ['./tsconfig.json', './src/webview/tsconfig.json', './test/tsconfig.json', './test/webview/tsconfig.json', './tsconfig.eslint.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // A promise nobody awaits: its rejection is lost and the code after it runs too early (a test that passes
      // before its assertion ran, a write that a later read overtakes). `void p` says "on purpose".
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: true }],
      // An async function where a void callback is expected (an event handler, forEach): its rejection is unhandled.
      '@typescript-eslint/no-misused-promises': 'error',
      // `await` on something that is not a promise: usually a missing call or the wrong function.
      '@typescript-eslint/await-thenable': 'error',
      // `return promise` inside try: the catch and the finally run before the promise settles.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // A dead name is often a misspelt or forgotten one; `_` marks one on purpose (a parameter a signature requires,
      // a loop that only counts).
      '@typescript-eslint/no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // A switch over a union that misses a member: a new message type or error kind silently does nothing.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Throwing a string or object: no stack, and `instanceof Error` checks downstream fail.
      '@typescript-eslint/only-throw-error': 'error',
      // A statement that does nothing (`a && b;`, a comparison on its own line): usually a missing call or assignment.
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-array-delete': 'error',
      // `==` only where it means "null or undefined".
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-fallthrough': 'error',
      'no-unreachable': 'error',
      'no-self-compare': 'error',
      'no-dupe-keys': 'error',
      'no-duplicate-case': 'error',
      'no-dupe-else-if': 'error',
      'no-constant-binary-expression': 'error',
      'no-async-promise-executor': 'error',
      'no-unsafe-finally': 'error',
      'no-cond-assign': ['error', 'except-parens'],
      'no-self-assign': 'error',
      'no-unsafe-optional-chaining': 'error',
      'use-isnan': 'error',
      'valid-typeof': 'error',
      // Notifications, dialogs, quick picks, input boxes, progress and the status bar draw links and icons from the
      // text they are given: only src/vscode/notices.ts calls them, and it makes model, server and workspace words
      // inert first. Any `x.showErrorMessage` (also `const { showErrorMessage } = vscode.window`) is refused here.
      'no-restricted-properties': ['error', ...[
        'showErrorMessage', 'showWarningMessage', 'showInformationMessage', 'showQuickPick', 'createQuickPick',
        'showInputBox', 'createInputBox', 'showOpenDialog', 'showSaveDialog', 'showWorkspaceFolderPick',
        'createStatusBarItem', 'setStatusBarMessage', 'withProgress',
      ].map((property) => ({ property, message: 'Use src/vscode/notices.ts, which makes the text inert for the way VS Code draws it.' }))],
    },
  },
  {
    files: ['src/vscode/notices.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // A function a reader can hold in view: over 60 lines of code (blank and comment lines not counted), split it.
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }] },
  },
);
