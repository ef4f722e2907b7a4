// What Parley knows of prices beyond the settings, in global state: what servers' model lists priced (by ledger host,
// with when each list was read), and the user's answers about models with no known price. Part of dist/budget.js.
import type * as vscode from 'vscode';
import { learnedFrom, withListed, type LearnedPrices, type UnpricedAnswer } from '../core/priceSources';
import type { ModelInfo } from '../core/types';
import { promptQuestion } from './lazy/promptQuestion';

const LISTED_STATE = 'parley.listedPrices';
/** The answers, by `host|model` (the ledger host, then the model). */
const ANSWERS_STATE = 'parley.unpricedModels';
const ANSWERS_KEPT = 500;
/** A list's prices older than this are asked for again before a request counted in dollars (prices change seldom). */
export const LIST_FRESH_MS = 24 * 60 * 60 * 1000;
/** A host's list is not asked for again sooner by this window (its list may not price the model at all). */
const LIST_AGAIN_MS = 10 * 60 * 1000;
/** How long a request waits for the model list before it goes on without it. */
const LIST_WAIT_MS = 10_000;

/**
 * Asks the user what to do with the requests of `model` at `host` (a ledger host), which has no known price while the
 * dollar limit named `limit` applies: block them, or send them uncounted in dollars. Undefined: dismissed.
 */
export type UnknownPriceQuestion = (model: string, host: string, limit: string) => Promise<UnpricedAnswer | undefined>;

/** The question as VS Code asks it, a modal (Prompts.unknownPrice, when a test sets it, asks instead). */
export const askUnknownPrice: UnknownPriceQuestion = (model, host, limit) => promptQuestion().askUnknownPrice(model, host, limit);

/** The prices servers' model lists gave, by ledger host. */
export function learnedPrices(state: Pick<vscode.Memento, 'get'>): LearnedPrices {
  return learnedFrom(state.get(LISTED_STATE));
}

/** Keeps the prices of a model list `host` (a ledger host) answered; a list that prices nothing changes nothing. */
export async function learnPrices(state: Pick<vscode.Memento, 'get' | 'update'>, host: string, list: readonly ModelInfo[], now = Date.now()): Promise<void> {
  try {
    const next = withListed(learnedPrices(state), host, list, now);
    if (next) await state.update(LISTED_STATE, next);
  } catch {
    // Global state could not be written: the list's prices are learnt the next time it is read.
  }
}

/** When this window last asked each host's model list for its prices, and that request. */
const listAsked = new Map<string, { at: number; done: Promise<void> }>();

/**
 * Asks `host`'s model list once (again only after LIST_AGAIN_MS) and learns its prices; a failure or a slow answer
 * (LIST_WAIT_MS) leaves them as they were.
 */
export function askListOnce(state: Pick<vscode.Memento, 'get' | 'update'>, host: string, models: (signal: AbortSignal) => Promise<ModelInfo[]>, now: number): Promise<void> {
  const had = listAsked.get(host);
  if (had && now - had.at < LIST_AGAIN_MS) return had.done;
  const done = models(AbortSignal.timeout(LIST_WAIT_MS)).then((list) => learnPrices(state, host, list), () => undefined);
  listAsked.set(host, { at: now, done });
  return done;
}

/** The user's answers about models with no known price, by `host|model`. */
export function unpricedAnswers(state: Pick<vscode.Memento, 'get'>): Record<string, UnpricedAnswer> {
  const raw = state.get<unknown>(ANSWERS_STATE);
  const out: Record<string, UnpricedAnswer> = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [k, v] of Object.entries(raw)) {
    if (v === 'block' || v === 'uncounted') Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
  }
  return out;
}

/** Questions being asked, by `host|model`: requests at once share one question. */
const asking = new Map<string, Promise<UnpricedAnswer | undefined>>();

/**
 * The user's answer for `model` at `host`: the one remembered, else asked with `ask` (and remembered), else `not
 * asked` when the request may not ask; undefined when the question was dismissed (asked again next time).
 */
export async function unpricedAnswer(state: Pick<vscode.Memento, 'get' | 'update'>, host: string, model: string, limit: string, ask: UnknownPriceQuestion | undefined): Promise<UnpricedAnswer | 'not asked' | undefined> {
  const key = `${host}|${model}`;
  const known = unpricedAnswers(state);
  if (Object.prototype.hasOwnProperty.call(known, key)) return known[key];
  if (!ask) return 'not asked';
  let question = asking.get(key);
  if (!question) {
    question = ask(model, host, limit).catch(() => undefined).finally(() => asking.delete(key));
    asking.set(key, question);
    const answer = await question;
    if (answer) await state.update(ANSWERS_STATE, Object.fromEntries([...Object.entries(unpricedAnswers(state)).filter(([k]) => k !== key).slice(-(ANSWERS_KEPT - 1)), [key, answer]]));
    return answer;
  }
  return question;
}
