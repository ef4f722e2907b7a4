// Spend limits that cannot be read (src/core/budgetMistakes.ts, set aside by src/core/budgetSettings.ts) in plain Node:
// for each kind of mistake, the warning names the entry, says what is wrong in plain words and that it is not
// enforced; each is said once per window (src/vscode/budgetCheck.ts sayBudgetMistakes), and its button opens its setting.
import * as assert from 'node:assert/strict';
import { mistakeNotice, mistakeSetting, mistakeWords } from '../../src/core/budgetMistakes';
import { parseLimits, type BudgetMistake, type BudgetSource } from '../../src/core/budgetSettings';
import { budgetTooltip, sayBudgetMistakes } from '../../src/vscode/budgetCheck';

/** The mistake parseLimits finds in a list of one entry (or in a value that is not a list). */
function mistakeIn(raw: unknown, source: BudgetSource = 'user', profile?: string): BudgetMistake {
  const mistakes: BudgetMistake[] = [];
  parseLimits(raw, source, profile, mistakes);
  assert.equal(mistakes.length, 1, JSON.stringify(raw));
  return mistakes[0];
}

const NOT_ENFORCED = /^Parley: a spend limit is not enforced, because it cannot be read: /;

describe('spend limits that cannot be read, in words', () => {
  it('a period that is not day, week or month names the one meant', () => {
    const text = mistakeNotice(mistakeIn([{ period: 'daily', dollars: 5 }]));
    assert.match(text, NOT_ENFORCED);
    assert.equal(text, 'Parley: a spend limit is not enforced, because it cannot be read: parley.budget, limit 1, {"period":"daily","dollars":5}. "period" must be "day", "week" or "month", not "daily" (write "day").');
    assert.match(mistakeNotice(mistakeIn([{ period: 'Monthly', tokens: 5 }])), /not "Monthly" \(write "month"\)\.$/);
    assert.match(mistakeNotice(mistakeIn([{ period: 'year', tokens: 5 }])), /not "year"\.$/, 'nothing meant: no guess');
    assert.match(mistakeNotice(mistakeIn([{ dollars: 5 }])), /It has no "period": add "period": "day", "week" or "month"\.$/);
  });

  it('an amount written as text says to write the number', () => {
    assert.equal(mistakeNotice(mistakeIn([{ period: 'day', dollars: '5' }])), 'Parley: a spend limit is not enforced, because it cannot be read: parley.budget, limit 1, {"period":"day","dollars":"5"}. "dollars" must be a number, not text: write 5, not "5".');
    assert.match(mistakeNotice(mistakeIn([{ period: 'day', tokens: 'lots' }])), /"tokens" must be a number, 0 or more, not "lots"\.$/);
  });

  it('no amount at all, and a field Parley does not read', () => {
    assert.equal(mistakeNotice(mistakeIn([{ period: 'day' }])), 'Parley: a spend limit is not enforced, because it cannot be read: parley.budget, limit 1, {"period":"day"}. It sets no amount: add "dollars" or "tokens".');
    assert.match(mistakeNotice(mistakeIn([{ period: 'day', dollar: 5 }])), /It sets no amount: add "dollars" or "tokens" \(Parley does not read "dollar"\)\.$/);
  });

  it('a negative amount', () => {
    assert.match(mistakeNotice(mistakeIn([{ period: 'week', tokens: -100 }])), /"tokens" cannot be negative \(-100\)\.$/);
    assert.match(mistakeNotice(mistakeIn([{ period: 'week', dollars: -0.5 }])), NOT_ENFORCED);
  });

  it('an unknown action', () => {
    assert.equal(mistakeNotice(mistakeIn([{ period: 'day', dollars: 5, action: 'stop' }])), 'Parley: a spend limit is not enforced, because it cannot be read: parley.budget, limit 1, {"period":"day","dollars":5,"action":"stop"}. "action" must be "block" or "warn", not "stop".');
  });

  it('an entry that is not an object, and a budget that is not a list', () => {
    assert.match(mistakeNotice(mistakeIn(['day'])), /limit 1, "day"\. Each limit must be an object, such as \{ "period": "day", "dollars": 5 \}\.$/);
    assert.match(mistakeNotice(mistakeIn({ period: 'day', dollars: 5 })), /parley\.budget, \{"period":"day","dollars":5\}\. It must be a list of limits: put the limit inside \[ \]\.$/);
  });

  it('every mistake of an entry at once; a right amount beside a wrong one still applies, and says so', () => {
    assert.match(mistakeNotice(mistakeIn([{ period: 'days', tokens: 'x', action: 1 }])), /"period" must be .* \(write "day"\); "action" must be "block" or "warn", not 1; "tokens" must be a number, 0 or more, not "x"\.$/);
    const part = mistakeIn([{ period: 'day', dollars: 5, tokens: '100000' }]);
    assert.equal(mistakeNotice(part), 'Parley: part of a spend limit is not enforced, because it cannot be read: parley.budget, limit 1, {"period":"day","dollars":5,"tokens":"100000"}. "tokens" must be a number, not text: write 100000, not "100000". Its dollar limit applies; its token limit does not.');
    assert.match(mistakeWords(part), /Its dollar limit applies; its token limit does not\.$/);
  });

  it("names a profile's own budget and a workspace's, and opens the setting it is in", () => {
    const work = mistakeIn([{ period: 'day' }, { period: 'day', tokens: 5 }].reverse(), 'workspace', 'Work');
    assert.match(mistakeNotice(work), /: the budget of the profile "Work" in parley\.endpoints \(this workspace's settings\), limit 2, \{"period":"day"\}\./);
    assert.equal(mistakeSetting(work), 'parley.endpoints');
    assert.equal(mistakeSetting(mistakeIn([{ period: 'day' }])), 'parley.budget');
    assert.match(mistakeWords(mistakeIn([{ period: 'day' }], 'folder')), /^parley\.budget \(this folder's settings\), limit 1, \{"period":"day"\}: it sets no amount: add "dollars" or "tokens"\. Not enforced\.$/);
  });

  it('cuts a long entry short', () => {
    const text = mistakeNotice(mistakeIn([{ period: 'day', note: 'x'.repeat(500) }]));
    assert.ok(text.length < 300, text);
    assert.match(text, /…\. It sets no amount/);
  });
});

describe('spend limits that cannot be read, said once per window and in the tooltip', () => {
  it('each mistake is warned of once, with a button that opens its setting; the log says it too', async () => {
    const warned: string[] = [];
    const logged: string[] = [];
    const opened: string[] = [];
    const log = { warn: (s: string) => void logged.push(s) };
    const warn = (text: string, button: string) => {
      warned.push(text);
      return Promise.resolve<string | undefined>(button);
    };
    const a = mistakeIn([{ period: 'fortnight', dollars: 1 }]);
    const b = mistakeIn([{ period: 'fortnight', dollars: 2 }], 'user', 'Home');
    sayBudgetMistakes([a], log, warn, (id) => opened.push(id));
    sayBudgetMistakes([a, b], log, warn, (id) => opened.push(id));
    sayBudgetMistakes([b, a], log, warn, (id) => opened.push(id));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(warned, [mistakeNotice(a), mistakeNotice(b)], 'each once, across settings changes');
    assert.deepEqual(opened, ['parley.budget', 'parley.endpoints']);
    assert.deepEqual(logged, [`Spend limit not enforced: ${mistakeWords(a)}`, `Spend limit not enforced: ${mistakeWords(b)}`]);
  });

  it('the tooltip lists the limits that cannot be read, as text, below the ones in force', () => {
    const bad = mistakeIn([{ period: '[x](command:evil)', dollars: 1 }], 'workspace');
    const settings = { budget: [], budgetMistakes: [bad], pricing: {}, profiles: [] };
    const { markdown } = budgetTooltip(settings, {}, Date.now());
    assert.match(markdown, /^\*\*Not enforced\*\*: these limits cannot be read\n\n- parley\.budget \(this workspace's settings\), limit 1, /);
    assert.ok(!markdown.includes('[x](command:'), 'a workspace\'s words are not a link');
    const both = budgetTooltip({ ...settings, budget: [{ period: 'day', unit: 'tokens', amount: 10, action: 'block', source: 'user' }] }, {}, Date.now()).markdown;
    assert.match(both, /^\*\*Budgets\*\*[\s\S]*\n\n\*\*Not enforced\*\*: these limits cannot be read\n\n- /);
  });
});
