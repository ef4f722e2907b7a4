// Apply's target paths: control and bidi characters are refused with a name the reader can see, and the files that
// run code are told apart from ordinary ones.
import * as assert from 'node:assert/strict';
import { runsCodeReason, unsafePathReason, visiblePath } from '../../src/core/applyTargets';

describe('unsafePathReason: control and bidi characters in an Apply target', () => {
  const BIDI = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u200E', '\u200F', '\u061C'];
  const CONTROL = ['\u0000', '\u0007', '\t', '\n', '\r', '\u001B', '\u007F', '\u0080', '\u009B', '\u009F', '\u2028', '\u2029'];

  for (const ch of BIDI) {
    it(`refuses U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} as a bidi control`, () => {
      const why = unsafePathReason(`src/${ch}gpj.exe`);
      assert.match(String(why), /bidirectional text control/);
    });
  }

  for (const ch of CONTROL) {
    it(`refuses U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} as a control character`, () => {
      assert.match(String(unsafePathReason(`src/a${ch}b.ts`)), /control character/);
    });
  }

  it('names the path with each such character written out, so the message itself is not reordered', () => {
    const why = String(unsafePathReason('docs/\u202Etxt.exe'));
    assert.ok(why.includes('"docs/<U+202E>txt.exe"'), why);
    assert.ok(!/[\u202A-\u202E\u2066-\u2069]/.test(why));
    assert.equal(visiblePath('a\u0000b\u2067c'), 'a<U+0000>b<U+2067>c');
  });

  it('lets ordinary names through, non-Latin scripts, joiners and spaces included', () => {
    for (const p of ['src/app.ts', 'docs/שלום.md', 'نص/ملف.txt', 'hi/नमस्ते.md', 'fa/می\u200Cخواهم.txt', 'emoji/👩\u200D💻.md', 'my file (1).txt', '[x](y).md']) {
      assert.equal(unsafePathReason(p), undefined, p);
    }
  });
});

describe('runsCodeReason: the files whose content runs as code', () => {
  const RUNS = [
    '.vscode/tasks.json', '.vscode/settings.json', '.vscode/launch.json', '.vscode/extensions.json', '.vscode/mcp.json',
    'packages/web/.vscode/tasks.json', '.VSCode/Tasks.json', 'project.code-workspace',
    '.devcontainer/devcontainer.json', '.devcontainer/Dockerfile', '.devcontainer.json',
    '.github/workflows/ci.yml', '.github/workflows/release.yaml', '.github/actions/setup/action.yml',
    '.gitlab-ci.yml', '.circleci/config.yml', 'azure-pipelines.yml', 'Jenkinsfile', '.travis.yml', 'bitbucket-pipelines.yml', '.buildkite/pipeline.yml',
    '.git/hooks/pre-commit', '.git/config', '.husky/pre-commit', '.githooks/pre-push', '.pre-commit-config.yaml', 'lefthook.yml',
    'package.json', 'packages/api/package.json', '.envrc',
    '.vscode\\tasks.json',
    // Names Windows reads as .vscode: trailing dots and spaces dropped, ::$INDEX_ALLOCATION naming the folder itself.
    '.vscode./tasks.json', '.vscode /tasks.json', '.vscode. . /tasks.json', '.vscode::$INDEX_ALLOCATION/tasks.json', 'package.json.', 'package.json::$DATA',
    '.vscode:$I30:$INDEX_ALLOCATION/tasks.json', '.envrc::$DATA .', 'VSCODE~1/tasks.json', 'GITHUB~1/workflows/x.yml', 'PACKAG~1.JSO', '.vſcode/tasks.json',
    // Package managers, linters and formatters, build scripts a language server runs, shell start-up files.
    '.yarnrc.yml', '.yarnrc', '.pnpmfile.cjs', '.npmrc', 'eslint.config.mjs', 'eslint.config.ts', '.eslintrc.js', 'prettier.config.js', '.prettierrc.cjs',
    'build.rs', 'build.gradle', 'app/build.gradle.kts', 'settings.gradle', 'Directory.Build.props', '.bashrc', '.profile', '.zshrc', '.config/fish/config.fish',
  ];
  const ORDINARY = [
    'src/app.ts', 'README.md', 'docs/vscode/tasks.json', 'src/package.json.ts', 'package-lock.json', 'github/workflows/ci.yml',
    '.github/ISSUE_TEMPLATE/bug.md', '.github/CODEOWNERS', 'my.vscode/tasks.json', 'tests/devcontainer.json', 'scripts/build.sh', '.gitignore',
    '.eslintrc.json', '.prettierrc', 'src/build.rs.md', 'docs/.bashrc.example', '..', 'a/./b.ts',
  ];

  for (const p of RUNS) {
    it(`warns for ${p}`, () => assert.ok(runsCodeReason(p), p));
  }

  for (const p of ORDINARY) {
    it(`is quiet for ${p}`, () => assert.equal(runsCodeReason(p), undefined));
  }

  it('says why in words: a folder-open task, a workflow, install scripts', () => {
    assert.match(String(runsCodeReason('.vscode/tasks.json')), /tasks \(some run as soon as the folder opens\)/);
    assert.match(String(runsCodeReason('.github/workflows/ci.yml')), /GitHub Actions run it/);
    assert.match(String(runsCodeReason('package.json')), /scripts run on npm install/);
  });
});
