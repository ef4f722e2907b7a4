// The usage report's pricing as the budget's bundle makes it (src/vscode/budgetCheck.ts), for tests that only need
// `parley.pricing`: no profiles, and learnt prices only from the state given.
import type { ReportPrices } from '../../src/core/priceSources';
import type { Price } from '../../src/core/usageLedger';
import { reportPricing } from '../../src/vscode/budgetCheck';
import { memoryState } from './memoryState';

/** Prices from `pricing` alone (and what `state` learnt from model lists). */
export function pricingOnly(pricing: Record<string, Price> = {}, state: { get<T>(key: string): T | undefined } = memoryState()): ReportPrices {
  return reportPricing({ pricing, profiles: [] }, state);
}
