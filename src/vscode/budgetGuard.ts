// The spend budget around each request: the state around the decision (the thresholds already warned about, the
// reader's "Send once anyway" passes); the work (the decision, the watch of a stream, the thresholds a request
// crossed) is budgetCheck.ts, loaded once a limit is set. Plain Node.
import type * as vscode from 'vscode';
import type { Conversation } from '../core/conversation';
import type { BudgetWarning } from '../core/budget';
import type { GuardedDecision, GuardedRequest } from './budgetCheck';
import type { Log } from './log';
import { budget } from './lazy/budget';
import type { UsageStore } from './usageStore';

export type { GuardedDecision, GuardedRequest } from './budgetCheck';

/** The thresholds said already, by warningKey(): once each per period, across reloads. */
const WARNED_STATE = 'parley.budgetWarned';
/** Enough for every threshold of many limits; older periods' keys drop off first. */
const WARNED_KEPT = 300;

/** The budget check every request passes through (Requester.run, and inline completions). */
export class BudgetGuard {
  private readonly passes = new Set<string>();

  /** `log` is told when a check goes on without the lock across windows. */
  constructor(private readonly usage: Pick<UsageStore, 'ledger' | 'dir'>, private readonly state: vscode.Memento, private readonly log?: Pick<Log, 'warn'>) {}

  /** Lets exactly the next request under `key` (a conversation) through a blocking limit: only the reader's click calls this. */
  allowOnce(key: string): void {
    this.passes.add(key);
  }

  /**
   * The decision for a request, counting the requests in flight in every window. A block is turned into a send when
   * the reader gave this conversation a pass (used up here): the pass covers that request whole, so its stream is not
   * watched. Warnings are remembered as said, so each threshold is said once per period. A request let go under a limit holds a reservation until `release` (call it once its usage
   * is recorded, or it ended without any); with no limit set nothing is read or written.
   */
  async check(r: GuardedRequest): Promise<GuardedDecision> {
    if (r.settings.budget.length === 0) return { kind: 'send' };
    const d = await budget().guardRequest(r, { usage: this.usage, warned: new Set(this.state.get<string[]>(WARNED_STATE, [])), passes: this.passes, log: this.log, state: this.state });
    if (d.kind !== 'send' && d.warnings.length > 0) {
      try {
        await this.remember(d.warnings);
      } catch (e) {
        // The caller never gets the decision: its reservation is let go here.
        await d.release?.();
        throw e;
      }
    }
    return d;
  }

  /** After a request was counted: the thresholds its spend crossed, said now rather than at the next check (once each per period). */
  async crossed(s: GuardedRequest['settings']): Promise<BudgetWarning[]> {
    if (s.budget.length === 0) return [];
    const warnings = budget().budgetWarnings(s, await this.usage.ledger(), new Set(this.state.get<string[]>(WARNED_STATE, [])), Date.now(), this.state);
    if (warnings.length > 0) await this.remember(warnings);
    return warnings;
  }

  private async remember(warnings: readonly BudgetWarning[]): Promise<void> {
    const said = this.state.get<string[]>(WARNED_STATE, []);
    const next = [...said, ...warnings.flatMap((w) => w.keys).filter((k) => !said.includes(k))];
    await this.state.update(WARNED_STATE, next.slice(-WARNED_KEPT));
  }
}

/** What "Send once anyway" asks of the chat (ChatController). */
export interface PassChat {
  readonly current: Conversation;
  stop(): Promise<void>;
  regenerate(): Promise<void>;
  continueReply(): Promise<void>;
}

/**
 * "Send once anyway" on a spend limit's card (the reader's click only: no other route gives a pass): lets exactly the
 * next request of this conversation past the limit, whole. A reply stopped before its first request is asked again;
 * one stopped between tool rounds, or while its text streamed, continues from its steps and text (asking it again
 * would repeat what was already paid for). Does nothing unless the last reply was stopped by the budget.
 */
export async function sendOnceAnyway(chat: PassChat, budget: Pick<BudgetGuard, 'allowOnce'>): Promise<void> {
  await chat.stop();
  const turns = chat.current.turns;
  const last = turns[turns.length - 1];
  if (last?.role !== 'assistant' || last.error?.kind !== 'budget') return;
  budget.allowOnce(chat.current.id);
  await (last.steps?.length || last.text ? chat.continueReply() : chat.regenerate());
}
