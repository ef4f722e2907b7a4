// Recent completions by where they were shown: typing the start of one keeps the rest, going back to a point shows
// what was shown there, and neither sends a request.

/** Where a completion was asked for: the document, the cursor's offset in it, and the text sent around it. */
export interface CompletionPlace {
  /** The document's URI, as a string. */
  doc: string;
  /** The cursor's offset in the document. */
  offset: number;
  /** Text before the cursor (it may start anywhere; it ends at the cursor). */
  prefix: string;
  /** Text after the cursor. */
  suffix: string;
}

interface Entry {
  doc: string;
  offset: number;
  /** The last characters before the cursor: with the offset, they tell this place apart from another. */
  tail: string;
  suffixHead: string;
  completion: string;
}

/** How much of the text before the cursor must match for an entry to count as the same place. */
const TAIL = 512;
/** How much of the suffix must be unchanged: beyond it, an edit far below does not invalidate a suggestion. */
const SUFFIX_HEAD = 512;

/**
 * A small LRU of completions by place (llama.vscode keeps 250; typing needs far fewer). `lookup` finds what to show:
 * the completion shown at this very place, or the rest of one whose start was typed since, in the same document with
 * the same text after the cursor.
 */
export class CompletionCache {
  private entries: Entry[] = [];

  constructor(private readonly size = 64) {}

  /** Remembers what was shown at `place`; an empty completion is remembered too (nothing to show there). */
  put(place: CompletionPlace, completion: string): void {
    const e: Entry = { doc: place.doc, offset: place.offset, tail: place.prefix.slice(-TAIL), suffixHead: place.suffix.slice(0, SUFFIX_HEAD), completion };
    const same = (x: Entry) => x.doc === e.doc && x.offset === e.offset && x.tail === e.tail && x.suffixHead === e.suffixHead;
    this.entries = [e, ...this.entries.filter((x) => !same(x))].slice(0, this.size);
  }

  /**
   * What to show at `place` with no request, or undefined when nothing recent covers it. `replace` counts the closing
   * brackets and quotes right after the cursor that the editor typed for the person since (auto-closing): the rest
   * of the suggestion holds them, so it takes their place rather than writing them twice.
   */
  lookup(place: CompletionPlace): { text: string; replace: number } | undefined {
    const closers = /^[)\]}"'`]*/.exec(place.suffix)![0];
    for (let i = 0; i < this.entries.length; i++) {
      const e = this.entries[i];
      if (e.doc !== place.doc) continue;
      const replace = place.suffix.slice(0, SUFFIX_HEAD) === e.suffixHead ? 0 : place.suffix.slice(closers.length, closers.length + SUFFIX_HEAD) === e.suffixHead ? closers.length : -1;
      if (replace < 0) continue;
      const typed = place.offset - e.offset;
      if (typed < 0 || typed > place.prefix.length || (typed > 0 && typed >= e.completion.length)) continue;
      const before = place.prefix.slice(0, place.prefix.length - typed);
      if (typed > 0 && place.prefix.slice(before.length) !== e.completion.slice(0, typed)) continue;
      if (!before.endsWith(e.tail) || (before.length > e.tail.length && e.tail.length < TAIL)) continue;
      const text = e.completion.slice(typed);
      if (replace > 0 && !holdsInOrder(text, closers)) continue;
      // Most recent first, so that the next keystroke finds it at once.
      if (i > 0) this.entries = [e, ...this.entries.slice(0, i), ...this.entries.slice(i + 1)];
      return { text, replace };
    }
    return undefined;
  }

  clear(): void {
    this.entries = [];
  }
}

/** Whether every character of `chars` is in `text`, in that order. */
function holdsInOrder(text: string, chars: string): boolean {
  let at = 0;
  for (const c of chars) {
    at = text.indexOf(c, at) + 1;
    if (at === 0) return false;
  }
  return true;
}
