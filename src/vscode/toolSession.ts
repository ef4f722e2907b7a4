// The window's tool state: the calls waiting for the reader's answer, and the tools the reader chose to always allow.
// Approval comes only from the reader's click or key in the panel (answer), for exactly the call the question showed.
import type { ToolDecision } from '../shared/protocol';

/** What the reader decided for one waiting call, or that the turn was stopped while it waited. */
export type Answer = ToolDecision | 'stopped';

/** A call as its question shows it: Parley's id for it, its tool's name and its arguments (the JSON text). */
export interface AskedCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * The window's tool state: calls waiting for the reader, and the tools the reader chose to always allow (for this
 * window's session; nothing a model or a tool result says can add to it).
 */
export class ToolSession {
  private readonly always = new Set<string>();
  private readonly waiting = new Map<string, { call: AskedCall; settle: (a: Answer) => void }>();

  /** Waits for the reader's answer to `call` (by Parley's id, unique in the conversation); a stop answers `stopped`. */
  ask(call: AskedCall, signal: AbortSignal): Promise<Answer> {
    if (signal.aborted) return Promise.resolve('stopped');
    const asked = { ...call };
    return new Promise<Answer>((resolve) => {
      const onAbort = () => settle('stopped');
      const settle = (a: Answer) => {
        this.waiting.delete(asked.id);
        signal.removeEventListener('abort', onAbort);
        resolve(a);
      };
      this.waiting.set(asked.id, { call: asked, settle });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * The reader's click or key in the panel, on the question that showed `shown`. Acts only when the call waiting
   * under that id is that call, same tool and same arguments; returns false (and leaves any call waiting) otherwise.
   */
  answer(shown: AskedCall, decision: ToolDecision): boolean {
    const w = this.waiting.get(shown.id);
    if (!w || w.call.name !== shown.name || w.call.arguments !== shown.arguments) return false;
    w.settle(decision);
    return true;
  }

  isAlwaysAllowed(name: string): boolean {
    return this.always.has(name);
  }

  allowAlways(name: string): void {
    this.always.add(name);
  }
}
