// Prompt files in plain Node: front matter, `/name` arguments, variables, the files a body mentions, what is ignored.
import * as assert from 'node:assert/strict';
import { fillPrompt, ignoredWords, mentionPath, missingWords, parseArguments, parsePromptFile, promptInputs, promptMentions, splitFrontMatter } from '../../src/core/promptFiles';

const FILE = [
  '---',
  "description: 'Write a test for a function'",
  'model: small-model',
  "tools: ['read_file', search_text, runInTerminal]",
  'mode: agent',
  'agent: coder',
  '---',
  'Write a test for ${input:fn:the function name} in ${file}.',
  'Use #file:src/a.ts and @docs/guide.md as examples.',
  '',
].join('\n');

describe('prompt files', () => {
  it('reads the front matter Parley honours and names the keys it ignores', () => {
    const p = parsePromptFile('/w/.github/prompts/write-test.prompt.md', FILE);
    assert.equal(p.name, 'write-test');
    assert.equal(p.description, 'Write a test for a function');
    assert.equal(p.model, 'small-model');
    assert.deepEqual(p.tools, ['read_file', 'search_text', 'runInTerminal']);
    assert.deepEqual(p.ignored, ['mode', 'agent']);
    assert.ok(p.body.startsWith('Write a test for ${input:fn'));
    assert.equal(ignoredWords(p, ['runInTerminal']), 'Prompt file /write-test: ignored mode, agent (Parley has nothing for them); the tools runInTerminal (Parley has no tool of that name).');
  });

  it('reads a block list, a front matter name, CRLF line ends, and a file with no front matter', () => {
    const p = parsePromptFile('x.prompt.md', '---\r\nname: my prompt\r\ntools:\r\n  - read_file\r\n  - "list_files"\r\n---\r\nBody');
    assert.equal(p.name, 'my-prompt');
    assert.deepEqual(p.tools, ['read_file', 'list_files']);
    assert.equal(p.body, 'Body');
    assert.equal(ignoredWords(p, []), undefined);
    const plain = parsePromptFile('plain.prompt.md', 'Just text\n---\nnot front matter');
    assert.equal(plain.name, 'plain');
    assert.equal(plain.body, 'Just text\n---\nnot front matter');
    assert.equal(plain.tools, undefined);
    assert.equal(splitFrontMatter('---\nunclosed: yes\nbody').body, '---\nunclosed: yes\nbody');
  });

  it('lists the inputs once each, with their placeholders', () => {
    assert.deepEqual(promptInputs('${input:a} ${input:b:the b} ${input:a:again}'), [{ name: 'a', placeholder: '' }, { name: 'b', placeholder: 'the b' }]);
  });

  it('takes key=value arguments, quoted ones whole, and the whole text for a single input', () => {
    const two = promptInputs('${input:a} ${input:b}');
    assert.deepEqual([...parseArguments('a=1 b="two words" c=3', two)], [['a', '1'], ['b', 'two words']]);
    const one = promptInputs('${input:fn}');
    assert.deepEqual([...parseArguments('  parseDate in utils ', one)], [['fn', 'parseDate in utils']]);
    assert.deepEqual([...parseArguments('fn=x', one)], [['fn', 'x']]);
    assert.equal(parseArguments('some words', two).size, 0);
  });

  it('fills inputs, the selection and the file, and says which inputs are missing', () => {
    const body = 'Test ${input:fn:name} in ${file}: ${selection} ${input:fn}';
    assert.deepEqual(fillPrompt(body, new Map([['fn', 'parse']]), { selection: 'code()', file: 'src/a.ts' }), { text: 'Test parse in src/a.ts: code() parse' });
    // A replacement's `$&` is text, not a pattern.
    assert.deepEqual(fillPrompt('${input:x}', new Map([['x', '$&$1']]), {}), { text: '$&$1' });
    const r = fillPrompt(body, new Map(), {});
    assert.ok('missing' in r);
    assert.equal(missingWords('write-test', r.missing), '/write-test needs fn (name): type /write-test <fn> and send again.');
    assert.equal(missingWords('p', promptInputs('${input:a} ${input:b}')), '/p needs a, b: type /p a=… b=… and send again.');
  });

  it('finds the files a body mentions, and not a person or the special mentions', () => {
    assert.deepEqual(promptMentions('See #file:src/a.ts, @docs/guide.md and @README.md. Ask @alice. Use @selection.\n#file:b'), ['src/a.ts', 'docs/guide.md', 'README.md', 'b']);
  });

  it('reads ./ and ../ mentions from the prompt file\'s folder, others from the root', () => {
    assert.equal(mentionPath('.github/prompts', '../../src/a.ts'), 'src/a.ts');
    assert.equal(mentionPath('.github/prompts', './shared.md'), '.github/prompts/shared.md');
    assert.equal(mentionPath('.github/prompts', 'src/a.ts'), 'src/a.ts');
    assert.equal(mentionPath('', '../../etc/passwd'), '../../etc/passwd');
  });
});
