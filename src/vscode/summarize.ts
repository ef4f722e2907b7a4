// Compaction's summary request: the same model summarizes the older turns, and the summary goes in front of the turns
// kept word for word. Built into dist/summarize.js (LAZY in esbuild.mjs), loaded by the first compaction.
import type { CompactionPlan } from '../core/compaction';
import { summaryRequest, summaryTurn } from '../core/compaction';
import type { WindowInfo } from '../core/contextWindow';
import type { Conversation } from '../core/conversation';
import { newId } from '../core/ids';
import { profileName } from '../core/profiles';
import type { ChatResult } from '../core/types';
import type { Log } from './log';
import type { ReadyTarget, Requester } from './requester';

/**
 * Asks for the summary of `plan` and puts it into `c`. The request is sized to fit the window (a 2,048-token local model
 * too; the summary within `budget`, but no shorter than 128 tokens) and its usage is counted. Returns true, or the
 * result that brought no summary.
 */
export async function summarize(
  host: { requester: Pick<Requester, 'run'>; log: Log },
  c: Conversation,
  t: ReadyTarget,
  at: { plan: CompactionPlan; budget: number; window: WindowInfo },
  signal?: AbortSignal,
): Promise<true | ChatResult> {
  const s = t.settings;
  const { plan, budget, window: w } = at;
  const req = summaryRequest({ summarize: plan.summarize, window: w.window, reserveHint: Math.min(w.reserve, Math.max(128, budget)) });
  host.log.info(`Compacting: ${plan.summarize.length} turns into a summary (max_tokens ${req.maxTokens}${req.cut ? ', oldest text cut to fit' : ''}).`);
  const out = await host.requester.run(t, { messages: req.messages, source: 'compact', signal, overrides: { maxTokens: req.maxTokens } });
  const r = out.result;
  if (r.ended !== 'done' || !r.text.trim()) return r;
  const turn = summaryTurn(newId(), r.text.trim(), plan.keepFrom, s.model);
  if (out.usage) turn.usage = { prompt: out.usage.prompt, completion: out.usage.completion, total: out.usage.total, estimated: out.usage.estimated };
  turn.profile = profileName(s);
  c.turns.splice(plan.keepFrom, 0, turn);
  c.lastPrompt = undefined;
  c.updatedAt = Date.now();
  return true;
}
