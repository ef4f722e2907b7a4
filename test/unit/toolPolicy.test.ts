// Which tool calls run, ask the reader or open their own review (src/core/tool.ts), over every combination of the
// tool's policy and source, parley.tools.askBeforeReading and "always allow"; and that Restricted Mode offers no tool.
import * as assert from 'node:assert/strict';
import { approval, offersTools, type Approval, type ToolPolicy, type ToolSource } from '../../src/core/tool';

/** One row: the tool, the reader's setting and choice, and how its call goes on. */
type Row = [ToolPolicy, ToolSource, { askBeforeReading: boolean; alwaysAllowed: boolean }, Approval];

const plain = { askBeforeReading: false, alwaysAllowed: false };
const askReads = { askBeforeReading: true, alwaysAllowed: false };
const always = { askBeforeReading: false, alwaysAllowed: true };
const both = { askBeforeReading: true, alwaysAllowed: true };

/** Every combination, each written out (not computed), as Parley decides today. */
const TABLE: Row[] = [
  // Built-in read tools (read_file, search_text…): run unasked, unless the reader set reads to ask.
  ['read', 'builtin', plain, 'run'],
  ['read', 'builtin', askReads, 'ask'],
  ['read', 'builtin', always, 'run'],
  ['read', 'builtin', both, 'run'],
  // A built-in tool that asks: until the reader allows it always.
  ['ask', 'builtin', plain, 'ask'],
  ['ask', 'builtin', askReads, 'ask'],
  ['ask', 'builtin', always, 'run'],
  ['ask', 'builtin', both, 'run'],
  // propose_edit: its review in the editor is the question, whatever the settings; "always" never skips it.
  ['review', 'builtin', plain, 'review'],
  ['review', 'builtin', askReads, 'review'],
  ['review', 'builtin', always, 'review'],
  ['review', 'builtin', both, 'review'],
  // Another extension's or an MCP server's tool asks, whatever policy it claims, until the reader allows it always.
  ['ask', 'external', plain, 'ask'],
  ['ask', 'external', askReads, 'ask'],
  ['ask', 'external', always, 'run'],
  ['ask', 'external', both, 'run'],
  ['read', 'external', plain, 'ask'],
  ['read', 'external', askReads, 'ask'],
  ['read', 'external', always, 'run'],
  ['read', 'external', both, 'run'],
  ['review', 'external', plain, 'ask'],
  ['review', 'external', askReads, 'ask'],
  ['review', 'external', always, 'run'],
  ['review', 'external', both, 'run'],
];

describe('tool approval (approval): one decision for every tool', () => {
  it('covers every combination of policy, source, askBeforeReading and always-allowed', () => {
    const seen = new Set(TABLE.map(([p, s, c]) => `${p} ${s} ${c.askBeforeReading} ${c.alwaysAllowed}`));
    assert.equal(seen.size, 3 * 2 * 2 * 2);
  });

  for (const [policy, source, ctx, expected] of TABLE) {
    const words = `${ctx.askBeforeReading ? 'reads ask' : 'reads run'}, ${ctx.alwaysAllowed ? 'allowed always' : 'not allowed always'}`;
    it(`${source === 'external' ? 'an external' : 'a built-in'} "${policy}" tool (${words}): ${expected}`, () => {
      assert.equal(approval({ policy, source }, ctx), expected);
    });
  }

  it('a tool from another extension never runs unasked the first time, whatever it claims and whatever the settings', () => {
    for (const policy of ['read', 'ask', 'review'] as const) {
      for (const askBeforeReading of [false, true]) {
        assert.equal(approval({ policy, source: 'external' }, { askBeforeReading, alwaysAllowed: false }), 'ask', `${policy}, askBeforeReading ${askBeforeReading}`);
      }
    }
  });
});

describe('tools offered (offersTools): none in Restricted Mode', () => {
  it('offers tools only when they are on and the workspace is trusted', () => {
    assert.equal(offersTools({ enabled: true }, true), true);
    assert.equal(offersTools({ enabled: false }, true), false, 'tools off');
    assert.equal(offersTools({ enabled: true }, false), false, 'Restricted Mode, tools on');
    assert.equal(offersTools({ enabled: false }, false), false, 'Restricted Mode, tools off');
  });
});
