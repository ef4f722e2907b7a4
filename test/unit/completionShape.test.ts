// Issue 36: what reaches ghost text. One line or a block by where the cursor is, cut at the block's end, never
// repeating what follows the cursor, and never a code fence, prose or a <think> block from a chat model.
import * as assert from 'node:assert/strict';
import { lineMode, shapeCompletion, withoutThinking, type ShapeContext } from '../../src/core/completion/shape';

const ts = (lineBefore: string, suffix: string, mode = lineMode(lineBefore, suffix.split('\n', 1)[0])): ShapeContext => ({ mode, lineBefore, suffix, languageId: 'typescript' });

describe('completion shape (issue 36)', () => {
  it('single-line where the line has text after the cursor; multi-line at an empty line or after an opening bracket', () => {
    assert.equal(lineMode('  const x = foo(', ');'), 'single');
    assert.equal(lineMode('  const total = ', ''), 'single');
    assert.equal(lineMode('    ', ''), 'multi');
    assert.equal(lineMode('function add(a: number, b: number) {', ''), 'multi');
    assert.equal(lineMode('def add(a, b):', ''), 'multi');
    assert.equal(lineMode('items.map((x) =>', ''), 'multi');
    assert.equal(lineMode('  call(', '  '), 'multi');
  });

  it('single-line keeps the first line only', () => {
    assert.equal(shapeCompletion('a + b;\nconsole.log(1);', ts('  return ', '\n}\n')), 'a + b;');
    assert.equal(shapeCompletion('\nnext line', ts('  foo();', '\n')), '', 'a completion that starts on the next line shows nothing on this one');
  });

  it('multi-line stops at the end of the block, keeping the closing line the suffix does not have', () => {
    const ctx = ts('function add(a: number, b: number) {', '\n\nexport const x = 1;\n');
    assert.equal(shapeCompletion('\n  return a + b;\n}\n\nfunction sub() {\n  return 0;\n}', ctx), '\n  return a + b;\n}');
    const closed = ts('function add(a: number, b: number) {', '\n}\n');
    assert.equal(shapeCompletion('\n  return a + b;\n}\n', closed), '\n  return a + b;', 'the suffix already closes the block');
  });

  it('multi-line in a body stops where the code leaves the block, at a blank line, and at the suffix\'s next line', () => {
    const body = ts('  ', '\n  return total;\n}\n');
    assert.equal(shapeCompletion('let total = 0;\n  for (const x of xs) total += x;\n  return total;\n}', body), 'let total = 0;\n  for (const x of xs) total += x;');
    assert.equal(shapeCompletion('a();\n  b();\n\n  c();', ts('  ', '\n}\n')), 'a();\n  b();');
    assert.equal(shapeCompletion('a();\n}\nfoo();', ts('  ', '\n')), 'a();', 'a line less indented than the cursor leaves the block');
  });

  it('never repeats the text after the cursor', () => {
    assert.equal(shapeCompletion('x, y)', ts('  draw(', ')')), 'x, y', 'the rest of the line, written out again, is dropped');
    assert.equal(shapeCompletion('bar(1)', ts('  foo(', ')')), 'bar(1)', "a closing bracket the completion opened itself stays");
    assert.equal(shapeCompletion('42;', ts('  const n = ', ';')), '42');
    assert.equal(shapeCompletion('\n  return total;\n}', ts('  ', '\n  return total;\n}\n')), '', 'only what follows already: nothing');
    assert.equal(shapeCompletion('}', ts('  ', '\n}\n')), '');
  });

  it('<think> blocks go; an unclosed one drops the rest; a lone </think> drops what came before it', () => {
    assert.equal(shapeCompletion('<think>The user wants a sum.</think>\na + b', ts('  return ', '\n')), 'a + b');
    assert.equal(shapeCompletion('a + b<think>hmm', ts('  return ', '\n')), 'a + b');
    assert.equal(withoutThinking('so the answer is the sum\n</think>\n\n    a + b'), '    a + b', 'its indentation kept');
    assert.equal(shapeCompletion('<think>only thinking', ts('  return ', '\n')), '');
  });

  it('FIM tokens a server let through are cut off', () => {
    assert.equal(shapeCompletion('a + b<|endoftext|>garbage', ts('  return ', '\n')), 'a + b');
    assert.equal(shapeCompletion('a + b<|file_sep|>other.py', ts('  return ', '\n')), 'a + b');
    assert.equal(shapeCompletion('a + b<｜fim▁end｜>', ts('  return ', '\n')), 'a + b');
    assert.equal(shapeCompletion('a + b[PREFIX]x', { ...ts('  return ', '\n'), stops: ['[PREFIX]'] }), 'a + b', "the family's own tokens when its prompt was used");
    assert.equal(shapeCompletion('arr[PREFIX]', ts('  return ', '\n')), 'arr[PREFIX]', 'other families\' bracket tokens can be code');
  });

  // What chat models asked for FIM answer (shapes seen in Continue's and llama.vscode's trackers): none of it may
  // reach ghost text as a fence or as prose.
  const CHAT_REPLIES: Array<[string, string, ShapeContext]> = [
    ['```typescript\nreturn a + b;\n```', 'return a + b;', ts('  ', '\n}\n')],
    ['```\na + b\n```\nThis adds the numbers.', 'a + b', ts('  return ', '\n')],
    ["Here's the completed code:\n```ts\nreturn a + b;\n```", 'return a + b;', ts('  ', '\n}\n')],
    ['Sure! Here is the missing line:\n\n```python\n    return a + b\n```\nLet me know if you need more.', '    return a + b', { ...ts('    ', '\n'), languageId: 'python' }],
    ['The completed code is:\na + b', '', ts('  return ', '\n')],
    ['Certainly. To complete this function, add the two numbers.', '', ts('  ', '\n}\n')],
    ['I can help with that! ```js\nx\n```', '', ts('  ', '\n')],
    ['a + b\n```\n\nExplanation: adds.', 'a + b', ts('  return ', '\n')],
    ['<think>\nThe function should add.\n</think>\n```ts\nreturn a + b;\n```', 'return a + b;', ts('  ', '\n}\n')],
    ['~~~\nconst y = 2;\n~~~', 'const y = 2;', ts('', '\n')],
  ];

  it(`no fence and no prose from chat models reaches ghost text (${CHAT_REPLIES.length} replies)`, () => {
    for (const [raw, expected, ctx] of CHAT_REPLIES) {
      const out = shapeCompletion(raw, ctx);
      assert.equal(out, expected, JSON.stringify(raw));
      assert.ok(!/```|~~~/.test(out), `a fence got through: ${JSON.stringify(raw)}`);
      assert.ok(!/^\s*(sure|here|certainly|the completed|let me|i can)/i.test(out), `prose got through: ${JSON.stringify(raw)}`);
    }
  });

  it('in Markdown, fences are text like any other', () => {
    assert.equal(shapeCompletion('```js\nx\n```', { ...ts('', '\n'), languageId: 'markdown' }), '```js\nx\n```');
  });

  it('a line the chat model restates is not written twice', () => {
    assert.equal(shapeCompletion('function add(a, b) {\n  return a + b;\n}', ts('function add(a, b) {', '\n')), '  return a + b;\n}');
  });
});
