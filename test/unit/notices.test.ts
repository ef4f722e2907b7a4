// Text for VS Code's notifications, quick inputs and status bar (src/vscode/notices.ts applies these to every string):
// no payload becomes a live link or an icon, read the way VS Code reads it, and the reader sees the text as written.
import * as assert from 'node:assert/strict';
import MarkdownIt from 'markdown-it';
import { iconFreeText, noticeText, promptText } from '../../src/core/markdownText';

/** The payload of issue 32: one click on it would type a command into the terminal. */
const PAYLOAD = '[Open the workspace settings](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22echo%20pwned%5Cn%22%7D)';

/** Link forms, in a notification's text and as Markdown would read it. */
const LINK_PAYLOADS = [
  PAYLOAD,
  `Hunk at line 3 contained invalid line ${PAYLOAD}`,
  '[x](command:workbench.action.quit "Title")',
  "[x](command:workbench.action.quit 'Title')",
  '[x](https://evil.example/p)',
  '[x](file:///etc/passwd)',
  '[[nested]](command:workbench.action.quit)',
  '[\\]](command:workbench.action.quit)',
  '<command:workbench.action.quit>',
  'see <COMMAND:workbench.action.quit> now',
  '<https://evil.example/p>',
  '[x][1]\n\n[1]: command:workbench.action.quit',
  '[1]: command:workbench.action.quit\n\n[x][1]',
  '   [x]: command:workbench.action.quit\n[x]',
  '[x\\]y]: command:workbench.action.quit\n\n[x\\]y]',
  '[x]\n\n[x]: <command:workbench.action.quit>',
  '[a\nb]: command:workbench.action.quit\n\n[a b]',
  '[a\r\n  b]:\n  command:workbench.action.quit\n\n[a b]',
  '<a href="command:workbench.action.quit">click</a>',
  '![i](command:workbench.action.quit)',
  '[x](<command:workbench.action.quit>)',
  '[x]\r\n(command:workbench.action.quit)',
];

/**
 * How VS Code finds links in a notification's message and a quick input's prompt (src/vs/base/common/linkedText.ts,
 * VS Code 1.139, the one the integration tests run): `[label](https:…|command:…|file:…)` with an optional title.
 */
const LINKED_TEXT = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

function vscodeLinks(text: string): string[] {
  // VS Code shows a notification's line breaks as spaces before it looks for links.
  return [...text.replace(/(\r\n|\n|\r)/gm, ' ').matchAll(LINKED_TEXT)].map((m) => m[0]);
}

/** CommonMark (markdown-it, HTML off as in VS Code's MarkdownString): the links and images it would draw. */
function markdownLinks(text: string): string[] {
  const out: string[] = [];
  for (const t of new MarkdownIt().parse(text, {})) {
    for (const c of t.children ?? []) if (c.type === 'link_open' || c.type === 'image') out.push(`${c.type} ${c.attrGet('href') ?? c.attrGet('src')}`);
  }
  return out;
}

/**
 * How VS Code draws `$(name)` as an icon (renderLabelWithIcons, src/vs/base/browser/ui/iconLabel/iconLabels.ts):
 * `\$(name)` is the escape, drawn as the text `$(name)`. Returns the icons drawn and the text a reader sees.
 */
function drawIcons(text: string): { icons: string[]; visible: string } {
  const icons: string[] = [];
  const visible = text.replace(/(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g, (_m, escaped: string | undefined, name: string) => {
    if (escaped) return `$(${name})`;
    icons.push(name);
    return '';
  });
  return { icons, visible };
}

describe('noticeText: notifications and modal dialogs', () => {
  it('the payloads are links as they stand (else these tests prove nothing)', () => {
    assert.ok(vscodeLinks(PAYLOAD).length === 1);
    const linked = LINK_PAYLOADS.filter((p) => vscodeLinks(p).length > 0 || markdownLinks(p).length > 0);
    assert.deepEqual(LINK_PAYLOADS.filter((p) => !linked.includes(p)), ['<a href="command:workbench.action.quit">click</a>', '[x]\r\n(command:workbench.action.quit)']);
  });

  for (const payload of LINK_PAYLOADS) {
    it(`no link, for VS Code or for Markdown: ${JSON.stringify(payload)}`, () => {
      const text = noticeText(payload);
      assert.deepEqual(vscodeLinks(text), []);
      assert.deepEqual(markdownLinks(text), []);
    });
  }

  it('reads as written: only a space is added where a link would start; line breaks stay', () => {
    assert.equal(noticeText(PAYLOAD), PAYLOAD.replace('](', '] ('));
    assert.equal(noticeText('[1]: command:x'), '[1] : command:x');
    assert.equal(noticeText('open <command:x>'), 'open < command:x>');
    assert.equal(noticeText('Be brief.\n\tThen [open](command:x).'), 'Be brief.\n\tThen [open] (command:x).');
  });

  it('leaves ordinary text alone: paths, IPv6 origins, generics, icons, backslashes', () => {
    for (const s of ['Parley: API key stored for http://[::1]:8080.', 'src/a[0].ts: Map<string, number>', 'arr[0]: 1', '$(zap) C:\\dir\\[x]\\(y)', 'a < b:c']) {
      assert.equal(noticeText(s), s);
    }
  });

  it('is idempotent, so text that went through it once is unchanged by a second time', () => {
    for (const p of LINK_PAYLOADS) assert.equal(noticeText(noticeText(p)), noticeText(p));
  });
});

describe('iconFreeText: quick pick items and status bar text', () => {
  const ICONS = ['$(zap)', '$(sync~spin)', 'model-$(debug-alt)-7b', '$(a)$(b)', '\\$(escaped)', `${PAYLOAD} $(terminal)`];

  for (const s of ICONS) {
    it(`no icon, and the text as written: ${JSON.stringify(s)}`, () => {
      assert.ok(drawIcons(s).icons.length > 0 || s.startsWith('\\$('), 'the payload draws an icon as it stands');
      const drawn = drawIcons(iconFreeText(s));
      assert.deepEqual(drawn.icons, []);
      // A lone `\$(x)` drawn raw shows `$(x)`; escaped, the reader sees the backslash that was there.
      assert.equal(drawn.visible, s);
    });
  }

  it('leaves what is not an icon alone, links included (quick picks draw none)', () => {
    for (const s of ['$(not an icon)', '$x', 'cost: $(5', PAYLOAD, 'C:\\path\\file']) assert.equal(iconFreeText(s), s);
  });
});

describe('promptText: a quick input prompt or validation message (links and icons)', () => {
  it('neither a link nor an icon is drawn', () => {
    for (const s of [...LINK_PAYLOADS, `${PAYLOAD} $(zap)`, 'src/[Open](command:x)$(zap).ts']) {
      const text = promptText(s);
      assert.deepEqual(vscodeLinks(text), []);
      assert.deepEqual(drawIcons(text).icons, []);
    }
  });
});
