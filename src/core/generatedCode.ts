// Generate Code's reply: the JSON object a model returns in JSON mode (or wraps in prose), checked and made safe.

/** What Generate Code opens: the code, its language id and a suggested plain file name. */
export interface GeneratedCode {
  language: string;
  filename: string;
  code: string;
}

/**
 * The first complete JSON object in text: the whole text when it parses, else the first balanced
 * `{…}` (string-aware) that parses. Models without JSON mode wrap it in prose or fences.
 */
export function firstJsonObject(text: string): unknown {
  const trimmed = text.trim();
  try {
    const v = JSON.parse(trimmed);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    // fall through to scanning
  }
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        try {
          return JSON.parse(text.slice(start, i + 1));
        } catch {
          break;
        }
      }
    }
  }
  return undefined;
}

/** Parses a Generate Code reply, or says in words what is wrong with it. */
export function parseGenerated(text: string): { ok: true; value: GeneratedCode } | { ok: false; reason: string } {
  const v = firstJsonObject(text);
  if (v === undefined || typeof v !== 'object' || v === null) return { ok: false, reason: 'The reply is not valid JSON.' };
  const o = v as Record<string, unknown>;
  if (typeof o.code !== 'string') return { ok: false, reason: 'The reply is JSON but has no "code" string.' };
  const language = typeof o.language === 'string' && /^[\w.+#-]{1,64}$/.test(o.language) ? o.language : 'plaintext';
  // Keep only a plain file name: a model must not choose where a file is saved.
  const filename = typeof o.filename === 'string' ? (o.filename.split(/[\\/]/).pop() ?? '').replace(/[^\w.+-]/g, '_').slice(0, 128) : '';
  return { ok: true, value: { language, filename, code: o.code } };
}
