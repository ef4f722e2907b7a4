// The tools' path rules (src/core/toolPaths.ts) and text helpers (src/core/toolText.ts), in plain Node.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_TOOL_EXCLUDE, ToolError, displayToolPath, excludeMatcher, isInside, resolveToolPath, type ToolFolder } from '../../src/core/toolPaths';
import { matchingLines } from '../../src/core/lineMatch';
import { cappedList, compileQuery, fileExcerpt, looksBinary, optionalInt, requiredString } from '../../src/core/toolText';

const ONE: ToolFolder[] = [{ name: 'app', path: '/home/u/app' }];
const TWO: ToolFolder[] = [
  { name: 'app', path: '/home/u/app' },
  { name: 'lib', path: '/home/u/lib' },
];
const WIN: ToolFolder[] = [{ name: 'proj', path: '/c:/Users/u/proj' }];

/** The ToolError message of a call that must throw one. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ToolError, `a ToolError, not ${String(e)}`);
    return e.message;
  }
  assert.fail('expected a ToolError');
}

describe('tool paths (resolveToolPath)', () => {
  it('resolves relative paths inside the folder, applying . and ..', () => {
    assert.deepEqual(resolveToolPath('src/a.ts', ONE), { folderIndex: 0, relative: 'src/a.ts', path: '/home/u/app/src/a.ts' });
    assert.equal(resolveToolPath('./src/../lib/./b.ts', ONE).relative, 'lib/b.ts');
    assert.equal(resolveToolPath('.', ONE).relative, '');
    assert.equal(resolveToolPath('', ONE).path, '/home/u/app');
  });

  it('refuses .. that leaves the folder, however it is spelt', () => {
    for (const p of ['../x', '..', 'src/../../x', './a/b/../../../etc/passwd', '..\\x', 'src\\..\\..\\x']) {
      assert.match(refusal(() => resolveToolPath(p, ONE)), /leaves the workspace folder "app" through "\.\."/, p);
    }
  });

  it('accepts absolute paths inside a folder and refuses those outside every folder', () => {
    assert.equal(resolveToolPath('/home/u/app/src/a.ts', ONE).relative, 'src/a.ts');
    assert.equal(resolveToolPath('file:///home/u/app/x', ONE).relative, 'x');
    for (const p of ['/etc/passwd', '/home/u/app2/x', '/home/u', '/home/u/app/../lib/x', 'file:///etc/hosts']) {
      assert.match(refusal(() => resolveToolPath(p, ONE)), /is outside the workspace folder "app"; tools read only inside the workspace/, p);
    }
  });

  it('with several folders, a leading folder name selects the folder; otherwise the first', () => {
    assert.deepEqual(resolveToolPath('lib/src/x.ts', TWO), { folderIndex: 1, relative: 'src/x.ts', path: '/home/u/lib/src/x.ts' });
    assert.equal(resolveToolPath('./lib', TWO).folderIndex, 1);
    assert.equal(resolveToolPath('lib', TWO).relative, '');
    assert.deepEqual(resolveToolPath('src/x.ts', TWO), { folderIndex: 0, relative: 'src/x.ts', path: '/home/u/app/src/x.ts' });
    assert.equal(resolveToolPath('/home/u/lib/a', TWO).folderIndex, 1);
    assert.match(refusal(() => resolveToolPath('lib/../../x', TWO)), /through "\.\."/);
    assert.equal(displayToolPath(TWO, 1, 'src/x.ts'), 'lib/src/x.ts');
    assert.equal(displayToolPath(ONE, 0, 'src/x.ts'), 'src/x.ts');
    assert.equal(displayToolPath(ONE, 0, ''), '.');
  });

  it('the longest folder wins for nested folders', () => {
    const nested = [{ name: 'outer', path: '/w' }, { name: 'inner', path: '/w/pkg' }];
    assert.deepEqual(resolveToolPath('/w/pkg/a', nested), { folderIndex: 1, relative: 'a', path: '/w/pkg/a' });
  });

  it('takes Windows separators and drive letters in any case', () => {
    assert.equal(resolveToolPath('src\\a.ts', WIN).relative, 'src/a.ts');
    assert.equal(resolveToolPath('C:\\Users\\u\\proj\\src\\a.ts', WIN).relative, 'src/a.ts');
    assert.equal(resolveToolPath('c:/Users/u/proj/b', WIN).path, '/c:/Users/u/proj/b');
    assert.equal(resolveToolPath('/C:/Users/u/proj/b', WIN).relative, 'b');
    assert.match(refusal(() => resolveToolPath('D:\\secrets\\x', WIN)), /outside/);
    assert.match(refusal(() => resolveToolPath('C:\\Users\\u\\proj\\..\\other', WIN)), /outside/);
  });

  it('refuses with no folder open, and NUL characters', () => {
    assert.match(refusal(() => resolveToolPath('a', [])), /No folder is open/);
    assert.match(refusal(() => resolveToolPath('a\0b', ONE)), /NUL/);
  });

  it('isInside compares whole segments', () => {
    assert.equal(isInside('/a/b/c', '/a/b'), true);
    assert.equal(isInside('/a/b', '/a/b'), true);
    assert.equal(isInside('/a/bc', '/a/b'), false);
    assert.equal(isInside('C:\\x\\y', 'c:/x'), true);
  });
});

describe('tool paths (excludeMatcher)', () => {
  const m = excludeMatcher(DEFAULT_TOOL_EXCLUDE);

  it('each default glob excludes what it should, at any depth', () => {
    const cases: Array<[string, string]> = [
      ['.env', '**/.env*'],
      ['config/.env.local', '**/.env*'],
      ['certs/server.pem', '**/*.pem'],
      ['a/b/private.key', '**/*.key'],
      ['id_rsa', '**/id_rsa*'],
      ['home/.ssh/id_rsa.pub', '**/id_rsa*'],
      ['.git', '**/.git/**'],
      ['.git/config', '**/.git/**'],
      ['sub/.git/HEAD', '**/.git/**'],
      ['node_modules', '**/node_modules/**'],
      ['packages/x/node_modules/y/index.js', '**/node_modules/**'],
    ];
    for (const [p, glob] of cases) assert.equal(m.match(p), glob, p);
  });

  it('the default keeps out the common credential files, with the home folder as the workspace', () => {
    const secrets = [
      '.ssh/id_ed25519', '.ssh/id_ecdsa', '.ssh/id_rsa', '.ssh/id_dsa', '.ssh/config', '.ssh/known_hosts', '.ssh/my-server-key',
      'work/id_ed25519', 'deploy/id_ecdsa.pub',
      'certs/client.p12', 'certs/server.pfx', 'android/release.jks', 'android/app/debug.keystore',
      '.aws/credentials', '.aws/config', '.aws/sso/cache/token.json', '.azure/msal_token_cache.json',
      '.config/gcloud/application_default_credentials.json', '.kube/config', '.docker/config.json', '.config/gh/hosts.yml',
      '.npmrc', 'project/.npmrc', '.pypirc', '.cargo/credentials.toml', '.cargo/credentials', '.gem/credentials',
      '.netrc', '_netrc', '.git-credentials', '.pgpass', '.vault-token', 'site/.htpasswd', '.gnupg/private-keys-v1.d/A1.key',
      'credentials.json', 'api/credentials.json',
      'infra/terraform.tfstate', 'infra/terraform.tfstate.backup', '.env.local', '.git/config',
      'deploy/prod.env', 'keys/server.ppk', 'Passwords.kdbx', '.terraform.d/credentials.tfrc.json', '.s3cfg', '.boto',
      '.config/rclone/rclone.conf', '.m2/settings.xml', '.gradle/gradle.properties', '.composer/auth.json', '.config/composer/auth.json',
      '.bash_history', '.zsh_history', '.psql_history', '.mysql_history', '.python_history', '.node_repl_history',
    ];
    for (const p of secrets) assert.ok(m.match(p), `${p} is excluded by default`);
  });

  it('the default lets ordinary files in a home folder or project through', () => {
    const ordinary = [
      '.bashrc', '.profile', '.gitconfig', '.gitignore', '.github/workflows/ci.yml', '.config/gh/config.yml', '.docker/daemon.json',
      'src/ssh.ts', 'src/id_utils.ts', 'src/identity.ts', 'keystore.ts', 'docs/credentials.md', 'credentials.ts', 'main.tf', 'vars.tfvars',
      'package.json', 'src/npmrc.ts', 'notes/netrc.md', 'README.md',
      'settings.xml', 'gradle.properties', 'src/environment.ts', 'docs/history.md', 'auth.json', 'src/history_test.py',
    ];
    for (const p of ordinary) assert.equal(m.match(p), undefined, p);
  });

  it("package.json's default for parley.tools.exclude is the code's fallback list", () => {
    // The bundle runs from out/test/unit: package.json is in the nearest folder above that holds one.
    let dir = __dirname;
    while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, { default?: unknown }> } } };
    assert.deepEqual(pkg.contributes.configuration.properties['parley.tools.exclude'].default, [...DEFAULT_TOOL_EXCLUDE]);
  });

  it('matches case-insensitively and with Windows separators', () => {
    assert.equal(m.match('Config\\.ENV'), '**/.env*');
    assert.equal(m.match('NODE_MODULES\\x.js'), '**/node_modules/**');
  });

  it('lets ordinary files through', () => {
    for (const p of ['src/env.ts', 'environment.md', 'keys.ts', 'a.keyboard', 'git/notes', 'docs/node_modules.md', 'README.md', '']) {
      assert.equal(m.match(p), undefined, p);
    }
  });

  it('a folder that matches excludes what it holds; an empty list excludes nothing', () => {
    const own = excludeMatcher(['secrets', 'build/*.log']);
    assert.equal(own.match('secrets/a/b.txt'), 'secrets');
    assert.equal(own.match('build/x.log'), 'build/*.log');
    assert.equal(own.match('build/x.txt'), undefined);
    assert.equal(excludeMatcher([]).match('.env'), undefined);
    const syntax = excludeMatcher(['**/*.{crt,p12}', 'tmp/[ab]?.txt']);
    assert.equal(syntax.match('x/y.CRT'), '**/*.{crt,p12}');
    assert.equal(syntax.match('a.p12'), '**/*.{crt,p12}');
    assert.equal(syntax.match('tmp/a1.txt'), 'tmp/[ab]?.txt');
    assert.equal(syntax.match('tmp/c1.txt'), undefined);
  });
});

describe('tool text (toolText)', () => {
  const text = Array.from({ length: 100 }, (_, i) => `line ${i + 1} ${'x'.repeat(40)}`).join('\n') + '\n';

  it('reads a whole file, or a range, with a header', () => {
    const all = fileExcerpt('a.txt', text, 20_000);
    assert.match(all, /^a\.txt: lines 1–100 of 100\nline 1 x+\n/);
    assert.ok(all.endsWith(`line 100 ${'x'.repeat(40)}`));
    assert.equal(fileExcerpt('a.txt', text, 20_000, 5, 6), `a.txt: lines 5–6 of 100\nline 5 ${'x'.repeat(40)}\nline 6 ${'x'.repeat(40)}`);
    assert.equal(fileExcerpt('e.txt', '', 20_000), 'e.txt: (empty file)');
  });

  it('cuts at a line end within the budget and says how to read on', () => {
    const cut = fileExcerpt('a.txt', text, 1500);
    assert.ok(cut.length <= 1500, `${cut.length} characters`);
    const m = /lines 1–(\d+) of 100/.exec(cut);
    assert.ok(m, cut.slice(0, 80));
    const last = Number(m[1]);
    assert.ok(last > 5 && last < 100);
    assert.ok(cut.includes(`[Cut at line ${last} to stay within 1500 characters (parley.tools.maxResultChars). Read the rest with startLine ${last + 1}.]`));
    const on = fileExcerpt('a.txt', text, 1500, last + 1);
    assert.ok(on.startsWith(`a.txt: lines ${last + 1}–`));
  });

  it('a single line longer than the budget is cut inside it, saying so', () => {
    const r = fileExcerpt('min.js', 'y'.repeat(5000), 1000);
    assert.ok(r.length <= 1000 + 200);
    assert.match(r, /line 1 of 1, cut after \d+ of 5000 characters/);
  });

  it('refuses ranges past the end', () => {
    assert.match(refusal(() => fileExcerpt('a.txt', text, 1000, 101)), /startLine 101 is past the end of a\.txt \(100 lines\)/);
    assert.match(refusal(() => fileExcerpt('a.txt', text, 1000, 10, 5)), /endLine 5 is before startLine 10/);
  });

  it('validates arguments with messages for the model', () => {
    assert.match(refusal(() => requiredString('read_file', {}, 'path', 'the file')), /read_file: "path" is required: the file/);
    assert.match(refusal(() => requiredString('read_file', { path: 3 }, 'path', 'the file')), /"path" is required/);
    assert.equal(optionalInt('read_file', { startLine: 5 }, 'startLine', 1, 10), 5);
    assert.equal(optionalInt('read_file', { startLine: '7' }, 'startLine', 1, 10), 7, 'a numeric string, as some models send');
    assert.equal(optionalInt('read_file', {}, 'startLine', 1, 10), undefined);
    assert.match(refusal(() => optionalInt('read_file', { startLine: 0 }, 'startLine', 1, 10)), /"startLine" must be an integer from 1 to 10 \(got 0\)/);
    assert.match(refusal(() => optionalInt('read_file', { startLine: 1.5 }, 'startLine', 1, 10)), /must be an integer/);
  });

  it('detects binary by NUL bytes; compiles literal and regex queries; reports a bad regex', () => {
    assert.equal(looksBinary(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x00, 0x01])), true);
    assert.equal(looksBinary(new TextEncoder().encode('héllo')), false);
    assert.deepEqual(matchingLines('a.b\naxb\nA.B', compileQuery('a.b', false, false), 10).matches.map((m) => m.line), [1, 3]);
    assert.deepEqual(matchingLines('a.b\naxb', compileQuery('a.b', true, true), 10).matches.map((m) => m.line), [1, 2]);
    assert.match(refusal(() => compileQuery('foo(', true, false)), /not a valid regular expression.*set isRegex to false/);
  });

  it('caps lists, saying how many were left out', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `file${i}.ts`);
    const r = cappedList(lines, 500, 'Narrow the glob.');
    assert.ok(r.length <= 500);
    assert.match(r, /\[Cut: \d+ more lines not shown, to stay within 500 characters \(parley\.tools\.maxResultChars\)\. Narrow the glob\.\]$/);
  });
});
