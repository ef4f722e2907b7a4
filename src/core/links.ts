// Which chat links may leave VS Code: http and https only. Pure, so it is unit-tested without VS Code.

/** The normalised URL to hand to openExternal, or why the link is refused (words for the log). */
export function externalLink(url: string): { ok: true; href: string } | { ok: false; reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'Refused to open a link that is not a URL.' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, reason: `Refused to open a ${parsed.protocol} link from the chat.` };
  }
  return { ok: true, href: parsed.href };
}
