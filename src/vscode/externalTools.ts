// Tools from other extensions and from MCP servers (`vscode.lm.tools`): off until the reader turns each one on in a
// picker, always asked for in the panel before they run (with every argument shown; a call with an argument the
// tool's schema does not declare is refused first, in turn.ts), and run with `vscode.lm.invokeTool`, which shows a
// tool's own confirmation (its `prepareInvocation`) as well.
import * as vscode from 'vscode';
import { argumentSummary } from '../core/toolArguments';
import type { Tool } from '../core/tool';
import type { ToolDefinition } from '../core/types';
import { pickMany, showInfo } from './notices';

const ENABLED_STATE = 'parley.tools.external';

/** A function name the chat API accepts (`^[a-zA-Z0-9_-]{1,64}$`), made from a tool's own name. */
export function functionName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'tool';
}

/** The text of a tool's result: its text parts; other parts are named, not shown. */
function resultText(result: vscode.LanguageModelToolResult): string {
  const parts: string[] = [];
  for (const p of result.content) {
    if (p instanceof vscode.LanguageModelTextPart) parts.push(p.value);
    else parts.push('[a part that is not text]');
  }
  return parts.join('\n');
}

/** The tools other extensions and MCP servers offer, and which of them the reader turned on (kept in global state). */
export class ExternalTools {
  constructor(private readonly state: vscode.Memento) {}

  /** Names of the tools turned on. */
  enabled(): string[] {
    const v = this.state.get<unknown>(ENABLED_STATE);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  }

  async setEnabled(names: readonly string[]): Promise<void> {
    await this.state.update(ENABLED_STATE, names.length ? [...new Set(names)] : undefined);
  }

  /** The tools turned on that VS Code lists now (an MCP server's tools appear once it has started), minus `taken` names. */
  tools(taken: ReadonlySet<string>): Tool[] {
    const on = new Set(this.enabled());
    const out: Tool[] = [];
    const used = new Set(taken);
    for (const info of vscode.lm.tools) {
      if (!on.has(info.name)) continue;
      const name = functionName(info.name);
      if (used.has(name)) continue;
      used.add(name);
      const parameters = (info.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} };
      const definition: ToolDefinition = { type: 'function', function: { name, description: info.description.slice(0, 1024), parameters } };
      out.push({
        definition,
        policy: 'ask',
        source: 'external',
        // Every argument, named, in the schema's order: not whichever the model put first.
        summary: (args) => argumentSummary(args, parameters),
        run: async (input, signal) => {
          const cancel = new vscode.CancellationTokenSource();
          const onAbort = () => cancel.cancel();
          signal.addEventListener('abort', onAbort, { once: true });
          try {
            return resultText(await vscode.lm.invokeTool(info.name, { input, toolInvocationToken: undefined }, cancel.token));
          } finally {
            signal.removeEventListener('abort', onAbort);
            cancel.dispose();
          }
        },
      });
    }
    return out;
  }

  /** "Parley: Choose Tools from Other Extensions": a picker of every listed tool, the ones on ticked. */
  async choose(): Promise<void> {
    const on = new Set(this.enabled());
    const items = vscode.lm.tools.map((t) => ({ label: t.name, description: t.tags.join(', '), detail: t.description.slice(0, 200), picked: on.has(t.name) }));
    if (items.length === 0) {
      void showInfo('Parley: no other extension or MCP server offers tools right now. An MCP server lists its tools once it has started.');
      return;
    }
    const picked = await pickMany(items, {
      title: 'Tools Parley may offer the model (each call still asks in the panel)',
      placeHolder: 'Tick the tools to turn on',
    });
    if (picked) await this.setEnabled(picked.map((p) => p.label));
  }
}
