// When the host posts a streaming reply's new text to the webview: as a handful of paced updates, not per token.
//
// Every message to a webview is relayed by the workbench's own main thread and then dispatched in the webview,
// and each update there costs a style and layout pass whatever changed. So the text waits here and goes out
// as one delta per update the reader sees: never closer than MIN_INTERVAL_MS (~15 a second still reads as
// streaming); while text keeps arriving, after a pause of QUIET_MS in it, and at the latest MAX_INTERVAL_MS
// after the last post. A fast stream is posted ~8 times a second (measured in the webview in A/B runs: a sixth
// less render work than every 96 ms, 30 % less than every 64 ms), a slow one as often as every 64 ms, and the
// last text of a burst goes out QUIET_MS after it arrived. The first text of a reply goes out at once.

export const MIN_INTERVAL_MS = 64;
export const QUIET_MS = 24;
export const MAX_INTERVAL_MS = 128;

/** The clock and timers a pacer uses: the real ones, or a test's. */
export interface PacerClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

const realClock: PacerClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Decides when waiting text is posted; the caller keeps the text. `add()` says more text is waiting; `post` is
 * called when it is due. `postNow()` posts at once (the stream ended, or other text must go first), and
 * `cancel()` forgets that anything waits (a snapshot carries it).
 */
export class DeltaPacer {
  private lastPost = -Infinity;
  private lastAdd = -Infinity;
  private timer: unknown;
  private waiting = false;

  constructor(private readonly post: () => void, private readonly clock: PacerClock = realClock) {}

  /** More text is waiting to be posted. */
  add(): void {
    this.waiting = true;
    this.lastAdd = this.clock.now();
    this.check();
  }

  /** Posts what is waiting now, if anything. */
  postNow(): void {
    this.stopTimer();
    if (!this.waiting) return;
    this.waiting = false;
    this.lastPost = this.clock.now();
    this.post();
  }

  /** Nothing waits any more (no post follows). */
  cancel(): void {
    this.stopTimer();
    this.waiting = false;
  }

  private dueAt(): number {
    return Math.max(this.lastPost + MIN_INTERVAL_MS, Math.min(this.lastAdd + QUIET_MS, this.lastPost + MAX_INTERVAL_MS));
  }

  /**
   * Posts if due, or makes sure a timer wakes for the due time. A timer that wakes to find that more text came
   * meanwhile (so the due time moved on) sets itself again: at most one wake-up per QUIET_MS, however many
   * pieces of text arrive.
   */
  private check(): void {
    const wait = this.dueAt() - this.clock.now();
    if (wait <= 0) {
      this.postNow();
      return;
    }
    this.timer ??= this.clock.setTimer(() => {
      this.timer = undefined;
      if (this.waiting) this.check();
    }, Math.ceil(wait));
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }
}
