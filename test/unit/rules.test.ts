// Project rules (src/core/rules.ts) in plain Node: front matter, globs against a question's files, the nearest
// AGENTS.md, the order they are sent in, the size caps and the system text.
import * as assert from 'node:assert/strict';
import {
  MAX_RULE_CHARS,
  MAX_RULES_CHARS,
  RULES_HEADING,
  agentsCandidates,
  foldersOfQuestion,
  nearestAgents,
  orderRules,
  parseFrontMatter,
  ruleApplies,
  sentRules,
  systemWithRules,
  type RuleFile,
} from '../../src/core/rules';

const ws = (path: string, text = `rules of ${path}`): RuleFile => ({ path, shown: path, source: 'workspace', text });

describe('project rules', () => {
  it('in a multi-root workspace, reads the folders that hold the files of the question (every folder for none)', () => {
    assert.deepEqual(foldersOfQuestion(['app', 'lib'], ['lib/src/a.ts']), [{ folder: 'lib', prefix: 'lib/', paths: ['src/a.ts'] }]);
    assert.deepEqual(foldersOfQuestion(['app', 'lib'], []).map((f) => f.folder), ['app', 'lib']);
    assert.deepEqual(foldersOfQuestion(['app', 'lib'], ['app/x.md', 'lib/y.md']).map((f) => [f.folder, f.paths]), [['app', ['x.md']], ['lib', ['y.md']]]);
    assert.deepEqual(foldersOfQuestion(['only'], ['src/a.ts']), [{ folder: 'only', prefix: '', paths: ['src/a.ts'] }]);
  });

  it('reads applyTo, globs (string, list, lines) and alwaysApply from the front matter', () => {
    assert.deepEqual(parseFrontMatter('---\napplyTo: "**/*.ts,**/*.tsx"\n---\nUse tabs.').globs, ['**/*.ts', '**/*.tsx']);
    const mdc = parseFrontMatter('---\ndescription: x\nglobs: ["src/**", "*.{js,jsx}"]\nalwaysApply: false\n---\nBody\n');
    assert.deepEqual(mdc.globs, ['src/**', '*.{js,jsx}']);
    assert.equal(mdc.alwaysApply, false);
    assert.equal(mdc.body, 'Body\n');
    assert.deepEqual(parseFrontMatter('---\nglobs:\n  - "a/**"\n  - b.md\nalwaysApply: true\n---\n').globs, ['a/**', 'b.md']);
    assert.equal(parseFrontMatter('---\r\nalwaysApply: true\r\n---\r\nx').alwaysApply, true);
    assert.deepEqual(parseFrontMatter('No front matter\n---\nglobs: x\n---'), { globs: [], body: 'No front matter\n---\nglobs: x\n---' });
  });

  it('applies a rule whose glob matches a file of the question, one with no globs always, alwaysApply always', () => {
    const ts = parseFrontMatter('---\napplyTo: "src/**/*.ts"\n---\nx');
    assert.equal(ruleApplies(ts, ['src/a/b.ts']), true);
    assert.equal(ruleApplies(ts, ['docs/b.md']), false);
    assert.equal(ruleApplies(ts, []), false);
    assert.equal(ruleApplies(parseFrontMatter('---\nglobs: "*.py"\n---\n'), ['deep/down/x.py']), true, 'a glob with no / matches a file name');
    assert.equal(ruleApplies(parseFrontMatter('plain'), []), true);
    assert.equal(ruleApplies(parseFrontMatter('---\nglobs: "*.py"\nalwaysApply: true\n---\n'), []), true);
    assert.equal(ruleApplies(parseFrontMatter('---\nalwaysApply: false\n---\n'), ['a.ts']), false);
    assert.equal(ruleApplies(parseFrontMatter('---\napplyTo: "[z-a]"\n---\n'), ['z']), false, 'a glob that cannot be read matches nothing');
  });

  it('takes the AGENTS.md nearest to each file of the question, the root one otherwise', () => {
    assert.deepEqual(agentsCandidates(['pkg/a/x.ts']), ['AGENTS.md', 'pkg/a/AGENTS.md', 'pkg/AGENTS.md']);
    const have = ['AGENTS.md', 'pkg/AGENTS.md'];
    assert.deepEqual(nearestAgents(have, ['pkg/a/x.ts']), ['pkg/AGENTS.md']);
    assert.deepEqual(nearestAgents(have, ['other/y.ts']), ['AGENTS.md']);
    assert.deepEqual(nearestAgents(have, []), ['AGENTS.md']);
    assert.deepEqual(nearestAgents(have, ['pkg/x.ts', 'z.ts']).sort(), ['AGENTS.md', 'pkg/AGENTS.md']);
    assert.deepEqual(nearestAgents(['pkg/AGENTS.md'], ['top.ts']), []);
  });

  it('orders rules the same way whatever order they were found in', () => {
    const files: RuleFile[] = [
      ws('.continue/rules/b.md'), ws('.cursorrules'), ws('.cursor/rules/a.mdc'), ws('CLAUDE.md'), ws('.github/instructions/z.instructions.md'),
      ws('.github/copilot-instructions.md'), ws('pkg/AGENTS.md'), ws('AGENTS.md'), { path: 'mine.md', shown: '~rules/mine.md', source: 'user', text: 'u' },
    ];
    const want = ['~rules/mine.md', 'AGENTS.md', 'pkg/AGENTS.md', '.github/copilot-instructions.md', 'CLAUDE.md', '.cursorrules',
      '.github/instructions/z.instructions.md', '.cursor/rules/a.mdc', '.continue/rules/b.md'];
    assert.deepEqual(orderRules(files).map((f) => f.shown), want);
    assert.deepEqual(orderRules([...files].reverse()).map((f) => f.shown), want);
  });

  it('cuts a long file, leaves out files past the total, and names each file in the system text', () => {
    const big = 'x'.repeat(MAX_RULE_CHARS + 10);
    const sent = sentRules([ws('AGENTS.md', big), ws('CLAUDE.md', '---\nalwaysApply: true\n---\nBe brief.')]);
    assert.equal(sent[0].cut, true);
    assert.ok(sent[0].text.length < MAX_RULE_CHARS + 100);
    assert.equal(sent[1].text, 'Be brief.');
    const many = sentRules(Array.from({ length: 4 }, (_, i) => ws(`.cursor/rules/${i}.mdc`, 'y'.repeat(MAX_RULE_CHARS))));
    assert.deepEqual(many.map((r) => r.over), [false, false, false, true]);
    assert.ok(many.reduce((n, r) => n + r.text.length, 0) <= MAX_RULES_CHARS + 400);
    const system = systemWithRules('You help.', sent);
    assert.ok(system.startsWith(`You help.\n\n${RULES_HEADING}\n\n## Rules from AGENTS.md\n\n`));
    assert.ok(system.endsWith('## Rules from CLAUDE.md\n\nBe brief.'));
    assert.equal(systemWithRules('You help.', []), 'You help.');
  });
});
