// Tool definitions sized to the model's window: in a small one they are sent short, or fewer, so that they leave
// room for the conversation (seven built-in tools take about 1,250 tokens: 60 % of a 2,048-token window).
import type { WindowInfo } from './contextWindow';
import { estimateTokens } from './tokenEstimate';
import type { ToolDefinition } from './types';

/** The share of the prompt's room (the window less the reply's reserve) that tool definitions may take. */
export const TOOLS_SHARE = 0.25;

/** The definitions to send, and what fitting them cost. */
export interface ToolFit {
  definitions: ToolDefinition[];
  /** Estimated tokens of `definitions`, as the meter counts them. */
  tokens: number;
  /** How many tools were offered before fitting. */
  offered: number;
  /** Whether the definitions were shortened. */
  short: boolean;
}

/** The tokens tool definitions cost in a request, by Parley's estimate. */
export function toolTokens(definitions: readonly ToolDefinition[]): number {
  return definitions.length ? estimateTokens(JSON.stringify(definitions)) : 0;
}

/** What a schema keeps when short: its shape and names, not its words or limits. */
const SHAPE = new Set(['type', 'properties', 'items', 'required', 'enum', 'anyOf', 'oneOf', 'const']);

function shape(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(shape);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties' && typeof v === 'object' && v !== null) out[k] = Object.fromEntries(Object.entries(v).map(([name, p]) => [name, shape(p)]));
    else if (SHAPE.has(k)) out[k] = k === 'enum' || k === 'required' ? v : shape(v);
  }
  return out;
}

/** A definition in short form: its description's first sentence, and its parameters' shape without their descriptions. */
export function shortTool(d: ToolDefinition): ToolDefinition {
  const f = d.function;
  const description = /^[\s\S]*?[.!?](?=\s|$)/.exec(f.description ?? '')?.[0] ?? f.description;
  return { type: 'function', function: { name: f.name, ...(description ? { description } : {}), ...(f.parameters ? { parameters: shape(f.parameters) as Record<string, unknown> } : {}) } };
}

/**
 * The definitions for a request in window `w`. They may take TOOLS_SHARE of the prompt's room: past it they are sent
 * short, and if the short ones are still past it, the last ones offered are left out until the rest fit. With the
 * window unknown, all are sent whole.
 */
export function fitTools(definitions: readonly ToolDefinition[], w: WindowInfo): ToolFit {
  const whole = { definitions: [...definitions], tokens: toolTokens(definitions), offered: definitions.length, short: false };
  if (w.window === undefined || definitions.length === 0) return whole;
  const budget = Math.floor((w.window - w.reserve) * TOOLS_SHARE);
  if (whole.tokens <= budget) return whole;
  const short = definitions.map(shortTool);
  while (short.length > 0 && toolTokens(short) > budget) short.pop();
  return { definitions: short, tokens: toolTokens(short), offered: definitions.length, short: true };
}
