// Server text inside Parley's Markdown reports and notifications: shown literally, never as a link, an image, HTML
// or formatting.

/**
 * `s` as one inline code span, whatever it holds: the fence is one backtick longer than the longest run inside,
 * and a space pads each side when the text starts or ends with a backtick or a space (markdown-it strips exactly
 * one from each side, also from text that is only spaces, so the text comes out as it went in). Line breaks become spaces: a code span cannot hold
 * one, and a line break could end the list item or the paragraph it is in. Empty text shows as `(empty)`.
 */
export function codeSpan(s: string): string {
  const text = oneLine(s);
  if (text === '') return '(empty)';
  const fence = backtickFence(text, 1);
  const pad = /^[` ]|[` ]$/.test(text) ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/**
 * A run of backticks longer than any inside `text`, and at least `min` long: a code span (min 1) or a fenced block
 * (min 3) around the text then cannot be closed early by the text itself.
 */
export function backtickFence(text: string, min: number): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(min, longest + 1));
}

/** A code span for a table cell: a `|` would end the cell even inside a code span, so it is escaped. */
export function codeCell(s: string): string {
  return codeSpan(s).replace(/\|/g, '\\|');
}

// Bare URLs and e-mail addresses (VS Code's Markdown preview links `https://…`, `//host` and `a@b.c`).
const LINKISH = /\S*(?::\/\/|^\/\/|@|\bwww\.)\S*/;

/**
 * Prose that may hold server words (an error message), for the middle of a line: one line, with every character
 * that Markdown or HTML could read as syntax there backslash-escaped, and any word that a preview would turn into
 * a link (a URL, an e-mail address) put in a code span instead. What the reader sees is the text itself.
 */
export function markdownProse(s: string, max = 500): string {
  const text = oneLine(s).slice(0, max);
  const out = text
    .split(/( +)/)
    .map((word) => {
      if (!LINKISH.test(word)) return escapeInline(word);
      // Sentence punctuation after a URL stays outside its code span.
      const m = word.match(/^(.*?)([.,;:!?)]*)$/) as RegExpMatchArray;
      return `${codeSpan(m[1])}${escapeInline(m[2])}`;
    })
    .join('');
  // At the start of a list item, these would begin a heading, a quote, a list or a thematic break.
  return out.replace(/^([#>+=-]|\d+(?=[.)]))/, (m) => (/^\d/.test(m) ? `${m}\\` : `\\${m}`));
}

/**
 * Backslash-escapes what has meaning inside a line: code, emphasis, strikethrough, links and images, HTML and
 * autolinks, entities, table cells and math (VS Code's preview renders `$…$`).
 */
function escapeInline(s: string): string {
  return s.replace(/[\\`*_[\]<>&~$|]/g, (ch) => `\\${ch}`);
}

function oneLine(s: string): string {
  // \r, \n and the other characters a browser or an editor may break a line at.
  return s.replace(/[\r\n\u2028\u2029\u0085\v\f]+/g, ' ');
}

/**
 * Text for a VS Code notification or modal dialog (showInformationMessage and the like, a progress notification's
 * title and message). VS Code draws `[label](https:…)`, `[label](command:…)` and `[label](file:…)` in a notification
 * as a live link (its parseLinkedText); a `command:` link runs the command when clicked. Server, model and workspace
 * words in it must not become one: a space between `]` and `(` leaves the text readable and no longer a link. The
 * other Markdown link forms (an autolink `<command:…>`, a reference definition `[1]: command:…`, its label on one line
 * or several), which VS Code does not draw there, get a space too, so the text stays inert under a Markdown reading.
 * Line breaks stay (a notification shows them as spaces; a modal keeps them). Icons (`$(name)`) are not drawn in a
 * notification: they are left as they are.
 */
export function noticeText(s: string): string {
  return s
    .replace(/\]\(/g, '] (')
    // A definition's label, on its line (`[1]: …`) or ending one that began on an earlier line (`…1]: …`).
    .replace(/^( {0,3}\[(?:\\.|[^\]\\\r\n\u2028\u2029])*\]):/gm, '$1 :')
    .replace(/^([^[\r\n\u2028\u2029]*\]):/gm, '$1 :')
    .replace(/<(?=[a-z][a-z0-9+.-]{1,31}:)/gi, '< ');
}

/**
 * Text for a place VS Code draws `$(name)` as an icon (its renderLabelWithIcons): a quick pick item's label,
 * description and detail, status bar text. Each `$(name)` is escaped as `\$(name)`, which VS Code shows as written;
 * a backslash already before one stays visible too. Nothing else is drawn there: no links, no Markdown.
 */
export function iconFreeText(s: string): string {
  return s.replace(/\$\((?=[A-Za-z0-9-]+(?:~[A-Za-z]+)?\))/g, '\\$(');
}

/**
 * Text for a quick input's prompt or validation message, where VS Code draws both links (as in a notification) and
 * icons (renderQuickInputDescription): both made inert.
 */
export function promptText(s: string): string {
  return iconFreeText(noticeText(s));
}
