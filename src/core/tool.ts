// The one shape of a tool the chat offers (built-in, propose_edit, other extensions' and MCP servers'), and the rules
// that decide whether tools are offered at all and whether a call runs, asks the reader, or opens its own review.
import type { ToolArgs } from './toolText';
import type { ToolDefinition } from './types';

/**
 * What a tool does before it runs, by its own nature: `read` runs unasked (it only reads the workspace, through the
 * workspace gate), `ask` waits for the reader's answer in the panel, `review` asks the reader itself, in a review in
 * the editor that only the reader's Accept or Reject ends (propose_edit), so the panel does not ask first as well.
 */
export type ToolPolicy = 'read' | 'ask' | 'review';

/** Where a tool comes from: Parley's own, or another extension or an MCP server (`vscode.lm.tools`). */
export type ToolSource = 'builtin' | 'external';

/** A tool the chat can offer: its definition for the model, its policy, the words of its card, and the call itself. */
export interface Tool {
  definition: ToolDefinition;
  policy: ToolPolicy;
  source: ToolSource;
  /** The card's words for a call: its main argument (a path, a query); '' when there is none. */
  summary(args: ToolArgs): string;
  /** The result text for the model. Throws for a failure whose message the model should read. */
  run(args: ToolArgs, signal: AbortSignal): Promise<string>;
}

/** What the reader set, and chose in this window, that a call's approval depends on. */
export interface ApprovalContext {
  /** `parley.tools.askBeforeReading`: built-in read tools ask too. */
  askBeforeReading: boolean;
  /** The reader answered "always" for this tool in this window (ToolSession); nothing a model says can set it. */
  alwaysAllowed: boolean;
}

/** How a call goes on: it runs now, the panel asks the reader first, or it runs and its own review asks. */
export type Approval = 'run' | 'ask' | 'review';

/**
 * Whether a call of `tool` runs, asks the reader in the panel, or opens its review. A tool from another extension or
 * an MCP server always asks (until the reader allows it always), whatever policy it claims: its policy can only make
 * it stricter. A review is never skipped, not even for a tool allowed always.
 */
export function approval(tool: Pick<Tool, 'policy' | 'source'>, ctx: ApprovalContext): Approval {
  const policy = tool.source === 'external' ? 'ask' : tool.policy;
  if (policy === 'review') return 'review';
  if (ctx.alwaysAllowed) return 'run';
  return policy === 'read' && !ctx.askBeforeReading ? 'run' : 'ask';
}

/** Whether a turn offers any tool: only when tools are on, and never in Restricted Mode (a workspace not trusted). */
export function offersTools(settings: { enabled: boolean }, trusted: boolean): boolean {
  return settings.enabled && trusted;
}
