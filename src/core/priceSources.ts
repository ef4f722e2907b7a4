// Prices a server's model list (GET /models) gives, kept per ledger host, and the usage report's section on where each
// price came from. Part of the budget's bundle (dist/budget.js).
//
// Read where the meaning is clear, and nothing else (a per-token price read as per-million would make a model free):
// - OpenRouter: `pricing.prompt`, `pricing.completion` and `pricing.input_cache_read` (cached prompt tokens), dollars
//   per token as decimal strings. Its Models API page: "All pricing values are in USD per token/request/unit. A value
//   of "0" indicates the feature is free". Its routers (`openrouter/auto`) list "-1": no fixed price, so none is read.
// - Vercel's AI Gateway: `pricing.input`, `pricing.output` and `pricing.input_cache_read`, the same per-token strings
//   ("0.000003" for $3 per million) in its /v1/models answer.
// - Together AI: `pricing.input`, `pricing.output` and `pricing.cached_input` as numbers beside `hourly`, `base` and
//   `finetune`. Its docs call them per token, but its values are its per-million prices (0.3 for a 13B model), so they
//   are read per million, and only with `hourly` beside them.
import { codeCell, codeSpan } from './markdownText';
import type { ModelInfo } from './types';
import { dayOf, type Ledger, type Price } from './usageLedger';

/** What one ledger host's model list gave: when it was read, and each priced model's price per million tokens. */
export interface ListedPrices {
  at: number;
  models: Record<string, Price>;
}

/** The model lists' prices by ledger host (`host`, or `profile (host)`), as kept in global state. */
export type LearnedPrices = Record<string, ListedPrices>;

/** Where a model's price came from, in the order they are used (see findPrice in core/budget.ts). */
export type PriceSource = 'profile' | 'pricing' | 'list' | 'workspace' | 'none';

/** A model's price for one ledger host's requests and where it came from; `at`: when the model list gave it. */
export interface FoundPrice {
  price?: Price;
  source: PriceSource;
  at?: number;
}

/** The user's answer about a model with no known price: block its requests, or send them uncounted in dollars. */
export type UnpricedAnswer = 'block' | 'uncounted';

/** How the usage report prices ledger rows (made by the budget's bundle, in the budget's order). */
export interface ReportPrices {
  /** A model's price for a ledger host's requests, and where it came from. */
  find(host: string, model: string): FoundPrice;
  /** The user's answers about models with no known price, by `host|model`. */
  answers: Record<string, UnpricedAnswer>;
}

/** The most models kept of one list, and the most lists (the oldest go first): what a gateway lists fits. */
const MODELS_KEPT = 2000;
const LISTS_KEPT = 16;

/** Sets an own property, whatever the key (a model named `__proto__` stays a model). */
function put<T>(o: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(o, key, { value, enumerable: true, configurable: true, writable: true });
}

/** A price field as listed: a decimal string or a number, 0 or more; anything else (or "-1") is no price. */
function amount(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*[\d.]+(e-?\d+)?\s*$/i.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** A model list entry's `pricing` as a price per million tokens, or undefined when it gives no clear price. */
export function listedPrice(pricing: unknown): Price | undefined {
  if (!pricing || typeof pricing !== 'object' || Array.isArray(pricing)) return undefined;
  const p = pricing as Record<string, unknown>;
  const together = typeof p.hourly === 'number' && typeof p.input === 'number' && typeof p.output === 'number';
  const [input, output, cached, scale] = together ? [p.input, p.output, p.cached_input, 1]
    : 'prompt' in p ? [p.prompt, p.completion, p.input_cache_read, 1_000_000]
    : typeof p.input === 'string' ? [p.input, p.output, p.input_cache_read, 1_000_000] : [];
  const i = amount(input);
  const o = amount(output);
  if (i === undefined || o === undefined || scale === undefined) return undefined;
  // Rounded: 0.000003 × 1,000,000 is 2.9999999999999996 in floating point.
  const perMillion = (n: number) => Number((n * scale).toPrecision(12));
  const c = amount(cached);
  return { input: perMillion(i), output: perMillion(o), ...(c === undefined ? {} : { cached: perMillion(c) }) };
}

/** The priced models of a model list, by id (the first entry of an id wins). */
export function listedPrices(list: readonly ModelInfo[]): Record<string, Price> {
  const out: Record<string, Price> = {};
  for (const m of list) {
    if (Object.keys(out).length >= MODELS_KEPT) break;
    const price = listedPrice(m.pricing);
    if (price && !Object.prototype.hasOwnProperty.call(out, m.id)) put(out, m.id, price);
  }
  return out;
}

/** A list read again this soon with the same prices is not written again (a gateway lists hundreds of models). */
const REWRITE_AFTER_MS = 60 * 60 * 1000;

/**
 * The learnt prices with one host's list put in (read `at`), replacing what that host's list gave before. Undefined
 * when nothing needs writing: the list prices nothing (a local server's), or it gave the same prices within the hour.
 */
export function withListed(learnt: LearnedPrices, host: string, list: readonly ModelInfo[], at: number): LearnedPrices | undefined {
  const models = listedPrices(list);
  if (Object.keys(models).length === 0) return undefined;
  const had = Object.prototype.hasOwnProperty.call(learnt, host) ? learnt[host] : undefined;
  if (had && at - had.at < REWRITE_AFTER_MS && JSON.stringify(had.models) === JSON.stringify(models)) return undefined;
  const others = Object.entries(learnt).filter(([h]) => h !== host).sort((a, b) => b[1].at - a[1].at).slice(0, LISTS_KEPT - 1);
  return Object.fromEntries([...others, [host, { at, models }]]);
}

/** Learnt prices as read from global state: whatever is not a list of prices (a damaged or hand-edited value) is dropped. */
export function learnedFrom(raw: unknown): LearnedPrices {
  const out: LearnedPrices = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [host, l] of Object.entries(raw as Record<string, unknown>)) {
    const at = (l as Partial<ListedPrices> | null)?.at;
    const models = (l as Partial<ListedPrices> | null)?.models;
    if (typeof at !== 'number' || !models || typeof models !== 'object') continue;
    const ok: Record<string, Price> = {};
    for (const [id, p] of Object.entries(models)) {
      const input = amount((p as Price | null)?.input);
      const output = amount((p as Price | null)?.output);
      const cached = amount((p as Price | null)?.cached);
      if (input !== undefined && output !== undefined) put(ok, id, { input, output, ...(cached === undefined ? {} : { cached }) });
    }
    put(out, host, { at, models: ok });
  }
  return out;
}

/** A rate per million tokens in words: `$3`, `$0.075`. */
function rate(n: number): string {
  return `$${Number(n.toPrecision(4))}`;
}

/** A price in words: `$3 prompt, $0.3 cached, $15 reply`. */
export function priceWords(p: Price): string {
  return `${rate(p.input)} prompt, ${p.cached === undefined ? '' : `${rate(p.cached)} cached, `}${rate(p.output)} reply`;
}

const SOURCE_WORDS: Record<PriceSource, string> = {
  profile: "the profile's `models.<id>.price`",
  pricing: '`parley.pricing`',
  list: "the server's model list",
  workspace: "the workspace's settings (its profile's `models.<id>.price` or its `parley.pricing`; nothing of yours or the server's prices it)",
  none: 'none: set one in `parley.pricing`',
};

/**
 * The usage report's section on prices: each endpoint and model in the ledger with its price per million tokens and
 * where it came from (a model list's with the day it was read), then the models the user allowed uncounted in dollars
 * and those blocked until they have a price. Host and model names are the settings' and servers' strings: code cells.
 */
export function priceSourcesMarkdown(ledger: Ledger, find: (host: string, model: string) => FoundPrice, answers: Record<string, UnpricedAnswer>): string {
  const pairs = new Map<string, [string, string]>();
  for (const key of Object.keys(ledger)) {
    const [, host, ...rest] = key.split('|');
    pairs.set(`${host}|${rest.join('|')}`, [host, rest.join('|')]);
  }
  const out = ['## Prices', '', 'Per million tokens. Cached prompt tokens cost the cached price where one is known, else the prompt price.', '',
    '| Endpoint | Model | Price | From |', '|---|---|---|---|'];
  for (const [host, model] of [...pairs.values()].sort((a, b) => a.join('|').localeCompare(b.join('|')))) {
    const f = find(host, model);
    const from = SOURCE_WORDS[f.source] + (f.source === 'list' && f.at !== undefined ? `, read ${dayOf(f.at)}` : '');
    out.push(`| ${codeCell(host)} | ${codeCell(model)} | ${f.price ? priceWords(f.price) : 'none'} | ${from} |`);
  }
  const listed = (answer: UnpricedAnswer) => Object.entries(answers).filter(([, a]) => a === answer).map(([k]) => {
    const cut = k.indexOf('|');
    return `- ${codeSpan(k.slice(cut + 1))} at ${codeSpan(k.slice(0, cut))}`;
  }).sort();
  const uncounted = listed('uncounted');
  const blocked = listed('block');
  if (uncounted.length > 0) out.push('', 'Allowed **uncounted in dollars** (your answer while they had no price; their tokens still count, and a price set for one counts it again):', '', ...uncounted);
  if (blocked.length > 0) out.push('', 'Blocked while a dollar limit applies, until they have a price (your answer):', '', ...blocked);
  return out.join('\n');
}
