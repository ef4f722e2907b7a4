// The question before a workspace's system prompt is used: the text it shows, and the digest its answer is kept under.
import { noticeText } from './markdownText';
import { visibleText } from './toolArguments';

/** Most characters of a workspace's system prompt the question shows. */
export const PROMPT_SHOWN_CHARS = 2000;

/** The SHA-256 of a prompt, in hex: an answer is kept for the exact text, so a changed prompt is asked about again. */
export async function promptDigest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A workspace's prompt as the question shows it: characters that hide or reorder text (controls, bidi
 * controls, zero-width, tag and variation characters) written as `⟦U+202E⟧` as the approval question writes them, no
 * `[label](target)` link left (the text is the workspace's), cut at PROMPT_SHOWN_CHARS with a note saying so.
 */
export function promptForQuestion(text: string): string {
  const visible = noticeText(visibleText(text));
  if (!visible.trim()) return '(an empty prompt)';
  if (visible.length <= PROMPT_SHOWN_CHARS) return visible;
  return `${visible.slice(0, PROMPT_SHOWN_CHARS)}…\n[${(visible.length - PROMPT_SHOWN_CHARS).toLocaleString('en-US')} more characters not shown: read the whole prompt in the workspace's .vscode/settings.json (parley.systemPrompt).]`;
}
