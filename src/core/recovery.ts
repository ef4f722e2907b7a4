// A reply that was streaming when its window's extension host went away (reload, crash, power loss): which turns
// found on disk are orphans, and the usage their interrupted request is counted with, exactly once.
//
// The rule: a streaming turn on disk names its owner (extension host session, process id, machine) and when the owner
// last saved it (`beat`; a streaming reply is saved at least every few seconds). It was interrupted when no live
// window is streaming it: its owner is this same process in an earlier session, or a process that no longer runs on
// this machine, or it has not been saved for STALE_MS (another machine, or a process id used again). A turn that a
// live window streams is left as it is.
import { estimateTokens } from './tokenEstimate';
import type { UsageRecord } from './usageLedger';
import type { Conversation, Turn, TurnOwner } from './conversation';

/** The owner and the request a streaming turn carries are part of the stored turn, in conversation.ts. */
export type { InflightRequest, TurnOwner } from './conversation';

/** How long an owner may go without saving its streaming turn before the turn counts as interrupted anyway. */
export const STALE_MS = 30_000;

/** This window, as the rule sees it. */
export interface Here {
  session: string;
  pid: number;
  hostname: string;
  now: number;
  /** Whether a process runs with this id on this machine. */
  alive(pid: number): boolean;
  /** Whether this window is streaming the turn right now. */
  streaming(turnId: string): boolean;
}

/** Whether no live window streams a turn owned by `owner` (see the rule above). A turn with no owner is an orphan. */
export function ownerGone(owner: TurnOwner | undefined, turnId: string, here: Here): boolean {
  if (here.streaming(turnId)) return false;
  if (!owner || typeof owner.beat !== 'number' || here.now - owner.beat > STALE_MS) return true;
  if (owner.session === here.session) return true;
  if (owner.hostname !== here.hostname) return false;
  return owner.pid === here.pid || !here.alive(owner.pid);
}

/**
 * Marks each orphaned streaming turn of `c` as interrupted, keeping its text, and returns the usage to record for the
 * requests they were waiting on: an estimate with the request's id, so that it counts once however many windows
 * recover it, and not at all when the request's real count made it to the log first.
 */
export function recoverInterrupted(c: Conversation, here: Here): UsageRecord[] {
  const out: UsageRecord[] = [];
  for (const t of c.turns) {
    if (t.status !== 'streaming' || !ownerGone(t.owner, t.id, here)) continue;
    t.status = 'interrupted';
    delete t.owner;
    const r = t.inflight;
    delete t.inflight;
    if (!r) continue;
    const completion = estimateTokens(t.text + (t.reasoning ?? ''));
    const record: UsageRecord = {
      at: here.now, model: r.model, host: r.host, prompt: r.prompt, completion, total: r.prompt + completion,
      estimated: true, durationMs: 0, source: r.source, id: r.id,
    };
    out.push(record);
    addToTurn(t, record);
  }
  return out;
}

function addToTurn(t: Turn, r: UsageRecord): void {
  const u = t.usage;
  // Usage already on the turn is its earlier requests' (a tool loop's rounds): this one is one more.
  if (u) t.requests = (t.requests ?? 1) + 1;
  t.usage = u
    ? { prompt: u.prompt + r.prompt, completion: u.completion + r.completion, total: u.total + r.total, estimated: true }
    : { prompt: r.prompt, completion: r.completion, total: r.total, estimated: true };
}
