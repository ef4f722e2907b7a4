// The tools a chat turn may offer right now: the built-in read-only ones and propose_edit when there is a folder, and
// the tools of other extensions and MCP servers the reader turned on; none when tools are off or in Restricted Mode.
import * as vscode from 'vscode';
import type { SettingsSnapshot } from './config';
import type { ExternalTools } from './externalTools';
import type { ToolSettings, TurnTool } from './turn';
import type * as BuiltinToolsModule from './tools/builtinTools';
import { applyModule } from './apply/loader';

/** What ChatController asks before each turn: the tools to offer (none when off), and their settings. */
export type Toolbox = () => { tools: TurnTool[]; settings: ToolSettings };

/** The window's toolbox, read afresh for each turn so that a changed setting or trust applies at once. */
export function workspaceToolbox(settings: SettingsSnapshot, external: ExternalTools): Toolbox {
  return () => {
    const s = settings.current.tools;
    if (!s.enabled || !vscode.workspace.isTrusted) return { tools: [], settings: s };
    const folders = (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
    // dist/builtinTools.js (LAZY in esbuild.mjs): loaded by the first turn that offers tools, not at activation.
    const tools: TurnTool[] = folders
      ? (require('./builtinTools.js') as typeof BuiltinToolsModule).builtinTools(s).map((t) => ({ definition: t.definition, readOnly: t.kind === 'read', summary: (a) => t.summary(a), run: (a, signal) => t.run(a, signal) }))
      : [];
    // propose_edit (dist/apply.js): its review in the editor is its approval, and only Accept writes anything.
    if (folders) {
      const edit = applyModule().proposeEditTool(s);
      tools.push({ definition: edit.definition, readOnly: false, reviewed: true, summary: (a) => edit.summary(a), run: (a, signal) => edit.run(a, signal) });
    }
    tools.push(...external.turnTools(new Set(tools.map((t) => t.definition.function.name))));
    return { tools, settings: s };
  };
}
