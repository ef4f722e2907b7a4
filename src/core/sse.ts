// Response text -> SSE events, on eventsource-parser, with the end-of-body rules Parley keeps (a held CR, a last event without its blank line).
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Whether text, leading whitespace trimmed, starts as an event stream does: a field line or a comment. */
export const SSE_START = /^(data|event|id|retry)\s*:|^:/;
/** Whether any line of a text is an SSE line. */
export const SSE_LINE = new RegExp(SSE_START.source, 'm');

/**
 * Decoded text in, whole events out. `feed()` returns the events a piece of text completed, so a reader handles
 * one network read's events together (one await per read, not per event, as the bench shows). Push, not an async
 * iterable, because the body's first bytes decide whether it is an event stream at all (see chat.ts).
 */
export class SseDecoder {
  private events: EventSourceMessage[] = [];
  // Whether the text fed last ended in CR: a line end the parser still holds (a CRLF may follow).
  private heldCR = false;
  private readonly parser = createParser({ onEvent: (ev) => void this.events.push(ev) });

  /** Feeds text; returns the events it completed. */
  feed(text: string): EventSourceMessage[] {
    if (text) {
      this.parser.feed(text);
      this.heldCR = text.endsWith('\r');
    }
    return this.take();
  }

  /**
   * At the end of the body, after its last text: a held CR ends its line as it is (an LF after it changes nothing),
   * so an event the body did end is read as usual; then a last event without its blank line still counts. Returns
   * both lots: `whole`, and `cut`, the events only the end of the body completed, which it may have cut mid-line.
   */
  end(): { whole: EventSourceMessage[]; cut: EventSourceMessage[] } {
    if (this.heldCR) this.parser.feed('\n');
    const whole = this.take();
    this.parser.feed('\n\n');
    return { whole, cut: this.take() };
  }

  private take(): EventSourceMessage[] {
    if (this.events.length === 0) return EMPTY;
    const out = this.events;
    this.events = [];
    return out;
  }
}

const EMPTY: EventSourceMessage[] = [];
