// Random ids for conversations, turns and context items.

/** A fresh random id: 16 hex digits. */
export function newId(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}
