// Usage bookkeeping: one record per request, totals by day/endpoint/model, cost, and the status bar's tooltip (the
// report is usageReport.ts).
import { codeSpan } from './markdownText';
import type { ChatResult, Usage } from './types';

/** One request's usage, as counted. Holds no content and no key. */
export interface UsageRecord {
  at: number;
  model: string;
  /** Endpoint host, e.g. api.openai.com or 127.0.0.1:11434. */
  host: string;
  prompt: number;
  completion: number;
  total: number;
  reasoning?: number;
  cached?: number;
  estimated: boolean;
  durationMs: number;
  /** What asked: Parley's panel (`chat`), its editor commands, Test Connection, VS Code's chat and `vscode.lm` callers, or inline completions. */
  source: 'chat' | 'explain' | 'generate' | 'test' | 'vscode-chat' | 'compact' | 'complete';
  /**
   * The request's id, when a crash could make it counted twice: a reply's request, and the estimate recorded for it
   * after a crash (core/recovery.ts). The merge counts one record per id (the server's count over an estimate).
   */
  id?: string;
}

/**
 * Summed counts. `estimatedTokens` is the part of `total` that was estimated; `cached`, the part of `prompt` the server
 * read from its prompt cache (absent in ledgers and logs older than it, which then count none).
 */
export interface Totals {
  requests: number;
  prompt: number;
  completion: number;
  total: number;
  estimatedTokens: number;
  cached?: number;
}

/** All-time totals, keyed `day|host|model`, as kept in global state. */
export type Ledger = Record<string, Totals>;

/** A model's price in dollars per million tokens; `cached`: of prompt tokens read from the cache (else `input`). */
export interface Price {
  input: number;
  output: number;
  cached?: number;
}

export function emptyTotals(): Totals {
  return { requests: 0, prompt: 0, completion: 0, total: 0, estimatedTokens: 0 };
}

/** A record from a result's usage. */
export function recordFrom(usage: Usage, ctx: { model: string; host: string; durationMs: number; source: UsageRecord['source']; at: number; id?: string }): UsageRecord {
  const r: UsageRecord = {
    at: ctx.at,
    model: ctx.model,
    host: ctx.host,
    prompt: nonNegative(usage.prompt_tokens),
    completion: nonNegative(usage.completion_tokens),
    // Some servers (xAI) count reasoning outside prompt+completion: trust total_tokens when given.
    total: nonNegative(usage.total_tokens) || nonNegative(usage.prompt_tokens) + nonNegative(usage.completion_tokens),
    estimated: usage.estimated === true,
    durationMs: ctx.durationMs,
    source: ctx.source,
  };
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (typeof reasoning === 'number' && reasoning > 0) r.reasoning = reasoning;
  if (typeof cached === 'number' && cached > 0) r.cached = cached;
  if (ctx.id) r.id = ctx.id;
  return r;
}

/** Whether a request's result is billed: a failed request that produced nothing costs nothing; everything else is counted. */
export function billed(r: Pick<ChatResult, 'ended' | 'text' | 'reasoning' | 'usage'>): boolean {
  return r.ended !== 'error' || r.text.length > 0 || r.reasoning.length > 0 || r.usage.estimated !== true;
}

function nonNegative(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

export function addTo(t: Totals, r: UsageRecord): Totals {
  const cached = (t.cached ?? 0) + nonNegative(r.cached);
  return {
    requests: t.requests + 1,
    prompt: t.prompt + r.prompt,
    completion: t.completion + r.completion,
    total: t.total + r.total,
    estimatedTokens: t.estimatedTokens + (r.estimated ? r.total : 0),
    ...(cached > 0 && { cached }),
  };
}

/** Local calendar day, YYYY-MM-DD. */
export function dayOf(at: number): string {
  const d = new Date(at);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The ledger key a record counts under, `day|host|model`. Keys are built by us, never taken from the wire alone. */
export function ledgerKey(r: UsageRecord): string {
  return `${dayOf(r.at)}|${r.host}|${r.model}`;
}

/** A new ledger with the record added. */
export function addToLedger(ledger: Ledger, r: UsageRecord): Ledger {
  const key = ledgerKey(r);
  const next: Ledger = { ...ledger };
  next[key] = addTo(Object.prototype.hasOwnProperty.call(ledger, key) ? ledger[key] : emptyTotals(), r);
  return next;
}

/**
 * Cost in dollars, or undefined when no price is set for the model. A price of 0 gives 0. Cached prompt tokens cost
 * the cached rate where the price has one.
 */
export function costOf(t: Pick<Totals, 'prompt' | 'completion' | 'cached'>, price: Price | undefined): number | undefined {
  if (!price || typeof price.input !== 'number' || typeof price.output !== 'number') return undefined;
  const cached = Math.min(nonNegative(t.cached), t.prompt);
  const rate = typeof price.cached === 'number' && price.cached >= 0 ? price.cached : price.input;
  return ((t.prompt - cached) * price.input + cached * rate + t.completion * price.output) / 1_000_000;
}

export function formatTokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatCost(c: number | undefined): string {
  if (c === undefined) return 'no price set';
  if (c === 0) return '$0';
  return c < 0.01 ? `$${c.toFixed(4)}` : `$${c.toFixed(2)}`;
}

/** The status bar tooltip: last request, this window, and all-time totals by endpoint and model. */
export function tooltipMarkdown(last: UsageRecord, windowTotals: Totals, ledger: Ledger): string {
  const est = last.estimated ? ' (estimated)' : '';
  const secs = last.durationMs / 1000;
  const tps = secs > 0 && last.completion > 0 ? ` · ${(last.completion / secs).toFixed(1)} tokens/s` : '';
  const lines = [
    `**Last request**${est}`,
    '',
    `- Prompt: ${formatTokens(last.prompt)}${last.cached ? ` (cached ${formatTokens(last.cached)})` : ''}`,
    `- Completion: ${formatTokens(last.completion)}${last.reasoning ? ` (reasoning ${formatTokens(last.reasoning)})` : ''}`,
    `- Total: ${last.estimated ? '≈' : ''}${formatTokens(last.total)}`,
    `- ${codeSpan(last.model)} at ${codeSpan(last.host)} · ${secs.toFixed(1)} s${tps}`,
    '',
    `**This window**: ${formatTokens(windowTotals.total)} tokens in ${plural(windowTotals.requests, 'request')}`,
    '',
    '**All time**',
    '',
  ];
  const byEndpointModel = group(ledger, (_day, host, model) => `${host} · ${model}`);
  for (const [name, t] of byEndpointModel) lines.push(`- ${codeSpan(name)}: ${formatTokens(t.total)} tokens`);
  lines.push('', 'Click for the full report.');
  return lines.join('\n');
}

/** Sums ledger rows under a key made from (day, host, model), sorted by key. */
export function group(ledger: Ledger, keyOf: (day: string, host: string, model: string) => string): Array<[string, Totals]> {
  const out = new Map<string, Totals>();
  for (const [k, t] of Object.entries(ledger)) {
    const [day, host, ...rest] = k.split('|');
    const key = keyOf(day, host, rest.join('|'));
    const prev = out.get(key) ?? emptyTotals();
    out.set(key, {
      requests: prev.requests + t.requests,
      prompt: prev.prompt + t.prompt,
      completion: prev.completion + t.completion,
      total: prev.total + t.total,
      estimatedTokens: prev.estimatedTokens + t.estimatedTokens,
    });
  }
  return [...out.entries()].sort((a, b) => a[0].localeCompare(b[0]));
}

/** `n word`, with an s unless n is 1. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

