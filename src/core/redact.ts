// Removes API keys from text meant for people or logs (the exact keys, Bearer tokens, masked key echoes), or only the exact keys.

const MIN_SECRET = 6;

/** The text as a regular expression that matches it literally. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Returns text with every known secret, every `Bearer <token>`, every key-shaped token (`sk-…`, `gsk_…`)
 * and every masked echo of a key (OpenAI's 401 says "Incorrect API key provided: sk-ab***wxyz")
 * replaced by `[redacted]`, and so is the value of a key-like query parameter (`?key=…`, `&api-key=…`).
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  return redactSecrets(text, secrets)
    .replace(/([?&](?:api[-_]?key|key|token|access_token|auth)=)[^&\s#"']+/gi, '$1[redacted]')
    .replace(/\b(Bearer)\s+[^\s"',;]+/gi, '$1 [redacted]')
    .replace(/(API key provided:\s*)[^\s"',;]+/gi, '$1[redacted]')
    // Groq's keys are gsk_… (an underscore), the others sk-…, pk-…, rk-…, xai-….
    .replace(/\b(?:(?:sk|pk|rk|xai)-|gsk_)[A-Za-z0-9_-]{16,}/g, '[redacted]')
    .replace(/\b[A-Za-z0-9_-]{2,}\*{3,}[A-Za-z0-9_-]*/g, '[redacted]');
}

/**
 * Returns text with only the exact `secrets` replaced by `[redacted]`, and nothing else touched: for text that
 * must stay as written, such as an exported conversation, where key-shaped guesses would rewrite the user's words
 * (`***bold***`, `Bearer $OPENAI_API_KEY`, `?key=YOUR_KEY`). Longer secrets go first, so one that contains
 * another is removed whole; secrets shorter than 6 characters are ignored (they would match ordinary words).
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...new Set(secrets)].sort((a, b) => b.length - a.length)) {
    if (s && s.length >= MIN_SECRET) out = out.replace(new RegExp(escapeRegExp(s), 'g'), '[redacted]');
  }
  return out;
}
