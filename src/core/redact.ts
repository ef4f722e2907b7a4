// Removes API keys from any text meant for people or logs: the exact keys, Bearer tokens and masked key echoes.

const MIN_SECRET = 6;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Returns text with every known secret, every `Bearer <token>`, every key-shaped token (`sk-…`, `gsk_…`)
 * and every masked echo of a key (OpenAI's 401 says "Incorrect API key provided: sk-ab***wxyz")
 * replaced by `[redacted]`, and so is the value of a key-like query parameter (`?key=…`, `&api-key=…`).
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= MIN_SECRET) out = out.replace(new RegExp(escapeRegExp(s), 'g'), '[redacted]');
  }
  return out
    .replace(/([?&](?:api[-_]?key|key|token|access_token|auth)=)[^&\s#"']+/gi, '$1[redacted]')
    .replace(/\b(Bearer)\s+[^\s"',;]+/gi, '$1 [redacted]')
    .replace(/(API key provided:\s*)[^\s"',;]+/gi, '$1[redacted]')
    // Groq's keys are gsk_… (an underscore), the others sk-…, pk-…, rk-…, xai-….
    .replace(/\b(?:(?:sk|pk|rk|xai)-|gsk_)[A-Za-z0-9_-]{16,}/g, '[redacted]')
    .replace(/\b[A-Za-z0-9_-]{2,}\*{3,}[A-Za-z0-9_-]*/g, '[redacted]');
}
