// The spend budget before each request (core/budget.ts decides): the merged usage ledger, the prices, the thresholds
// already warned about, and the reader's "Send once anyway" passes. Plain Node (VS Code's types only).
import type * as vscode from 'vscode';
import { decide, priceOf, type BudgetDecision, type BudgetPrices, type BudgetWarning } from '../core/budget';
import { isWorkspaceProfile } from '../core/profiles';
import { estimatePromptTokens, estimateTokens } from '../core/tokenEstimate';
import type { ChatMessage, ToolDefinition } from '../core/types';
import type { Price } from '../core/usageLedger';
import type { Settings } from './config';
import type { UsageStore } from './usageStore';

/** The thresholds said already, by warningKey(): once each per period, across reloads. */
const WARNED_STATE = 'parley.budgetWarned';
/** Enough for every threshold of many limits; older periods' keys drop off first. */
const WARNED_KEPT = 300;

/** What the guard needs of one request. */
export interface GuardedRequest {
  settings: Pick<Settings, 'budget' | 'pricing' | 'profiles' | 'model' | 'profile'>;
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  maxOutputTokens?: number;
  /** The conversation a "Send once anyway" pass was given for; undefined: no pass applies. */
  passKey?: string;
}

/** The budget check every request passes through (Requester.run). */
export class BudgetGuard {
  private readonly passes = new Set<string>();

  constructor(private readonly usage: Pick<UsageStore, 'ledger'>, private readonly state: vscode.Memento) {}

  /** Lets exactly the next request under `key` (a conversation) through a blocking limit: only the reader's click calls this. */
  allowOnce(key: string): void {
    this.passes.add(key);
  }

  /**
   * The decision for a request. A block is turned into a send when the reader gave this conversation a pass (used up
   * here). Warnings are remembered as said, so each threshold is said once per period.
   */
  async check(r: GuardedRequest): Promise<BudgetDecision> {
    const s = r.settings;
    if (s.budget.length === 0) return { kind: 'send' };
    const profile = s.profile && s.profile.source !== 'implicit' ? s.profile.name : undefined;
    const prices = pricesOf(s);
    const decision = decide({
      limits: s.budget,
      ledger: await this.usage.ledger(),
      prices,
      now: Date.now(),
      profile,
      request: {
        promptTokens: estimatePromptTokens(r.messages) + (r.tools?.length ? estimateTokens(JSON.stringify(r.tools)) : 0),
        maxOutputTokens: r.maxOutputTokens,
        price: priceOf(prices, profile?.replace(/\|/g, '/'), s.model),
      },
      warned: new Set(this.state.get<string[]>(WARNED_STATE, [])),
    });
    const warnings = decision.kind === 'send' ? [] : decision.warnings;
    if (warnings.length > 0) await this.remember(warnings);
    if (decision.kind === 'block' && r.passKey !== undefined && this.passes.delete(r.passKey)) {
      return warnings.length > 0 ? { kind: 'warn', warnings } : { kind: 'send' };
    }
    return decision;
  }

  private async remember(warnings: readonly BudgetWarning[]): Promise<void> {
    const said = this.state.get<string[]>(WARNED_STATE, []);
    const next = [...said, ...warnings.flatMap((w) => w.keys).filter((k) => !said.includes(k))];
    await this.state.update(WARNED_STATE, next.slice(-WARNED_KEPT));
  }
}

/** The prices the budget counts with: `parley.pricing` and each profile's models' own. */
export function pricesOf(s: Pick<Settings, 'pricing' | 'profiles'>): BudgetPrices {
  const profiles: BudgetPrices['profiles'] = {};
  for (const p of s.profiles) {
    if (p.source === 'implicit') continue;
    const models: Record<string, Price> = {};
    for (const [id, o] of Object.entries(p.models)) if (o.price) models[id] = o.price;
    profiles[p.name.replace(/\|/g, '/')] = { workspace: isWorkspaceProfile(p), models };
  }
  return { pricing: s.pricing, profiles };
}
