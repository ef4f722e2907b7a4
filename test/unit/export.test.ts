// Export Chat: the conversation as it was written, with only the exact stored keys taken out.
import * as assert from 'node:assert/strict';
import { exportMarkdown, type Conversation } from '../../src/core/conversation';
import { redactSecrets } from '../../src/core/redact';

const STORED_A = 'sk-proj-STOREDKEY0123456789abcdef';
// A key of no known shape, stored for another origin that this session never used.
const STORED_B = 'plainKey_for_other_origin_7f3a9c';

const WRITTEN = [
  'Make this ***bold italic*** and this **bold**.',
  'curl -H "Authorization: Bearer $OPENAI_API_KEY" https://api.example.com/v1/models',
  'Use https://maps.example.com/api?key=YOUR_KEY&token=YOUR_TOKEN in the docs.',
  'A masked key looks like sk-ab***wxyz; a long made-up one: sk-thisIsNotARealKeyJustAnExample1234.',
].join('\n');

function conversation(): Conversation {
  return {
    id: 'c',
    title: 'Keys and placeholders',
    createdAt: 0,
    updatedAt: 0,
    turns: [
      { id: 'u1', role: 'user', text: `${WRITTEN}\nMy keys: ${STORED_A} and ${STORED_B}.`, status: 'done' },
      { id: 'a1', role: 'assistant', text: `Quoted back: ${WRITTEN}\nand ${STORED_B}`, status: 'done', model: 'm' },
    ],
  } as Conversation;
}

describe('export', () => {
  it('keeps the conversation as written: bold italics, Bearer placeholders, ?key= placeholders, key-like examples', () => {
    const md = exportMarkdown(conversation(), [STORED_A, STORED_B]);
    for (const line of WRITTEN.split('\n')) assert.equal(md.split(line).length - 1, 2, `unchanged, in both turns: ${line}`);
  });

  it('takes out every stored key exactly, for any origin, and nothing else', () => {
    const md = exportMarkdown(conversation(), [STORED_A, STORED_B]);
    assert.equal(md.includes(STORED_A), false);
    assert.equal(md.includes(STORED_B), false);
    assert.match(md, /My keys: \[redacted\] and \[redacted\]\./);
    assert.match(md, /and \[redacted\]/);
  });

  it('redactSecrets: a key that contains another goes whole; short or empty secrets are ignored', () => {
    assert.equal(redactSecrets('k=abcdef123456', ['abcdef', 'abcdef123456']), 'k=[redacted]');
    assert.equal(redactSecrets('the cat sat', ['cat', '']), 'the cat sat');
    assert.equal(redactSecrets('a.b*c a.b*c', ['a.b*c+']), 'a.b*c a.b*c', 'a secret is matched literally, not as a pattern');
  });
});
