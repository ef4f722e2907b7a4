// The spend budget's work for one request or one status bar render (core/budget.ts decides): its own bundle
// (dist/budget.js), loaded once a limit is set. The state around it (passes, thresholds said) is budgetGuard.ts.
import { budgetStatus, decide, limitStatus, priceOf, type BudgetDecision } from '../core/budget';
import type { BudgetPrices } from '../core/budgetSettings';
import { isWorkspaceProfile } from '../core/profiles';
import { estimatePromptTokens, estimateTokens } from '../core/tokenEstimate';
import type { ChatMessage, ToolDefinition } from '../core/types';
import type { Ledger, Price } from '../core/usageLedger';
import type { Settings } from './config';

/** What the budget needs of one request. */
export interface GuardedRequest {
  settings: Pick<Settings, 'budget' | 'pricing' | 'profiles' | 'model' | 'profile'>;
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  maxOutputTokens?: number;
  /** The conversation a "Send once anyway" pass was given for; undefined: no pass applies. */
  passKey?: string;
}

/** The decision for one request against the merged ledger, given the threshold keys already said. */
export function checkBudget(r: GuardedRequest, ledger: Ledger, warned: ReadonlySet<string>, now: number): BudgetDecision {
  const s = r.settings;
  const profile = s.profile && s.profile.source !== 'implicit' ? s.profile.name : undefined;
  const prices = pricesOf(s);
  return decide({
    limits: s.budget,
    ledger,
    prices,
    now,
    profile,
    request: {
      promptTokens: estimatePromptTokens(r.messages) + (r.tools?.length ? estimateTokens(JSON.stringify(r.tools)) : 0),
      maxOutputTokens: r.maxOutputTokens,
      price: priceOf(prices, profile?.replace(/\|/g, '/'), s.model),
    },
    warned,
  });
}

/** The status bar's budget lines and whether a warn limit is reached. */
export function budgetTooltip(s: Pick<Settings, 'budget' | 'pricing' | 'profiles'>, ledger: Ledger, now: number): { markdown: string; reached: boolean } {
  return budgetStatus(limitStatus(s.budget, ledger, pricesOf(s), now), now);
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
