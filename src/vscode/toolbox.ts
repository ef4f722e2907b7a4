// The tools a chat turn may offer right now: the built-in read-only ones and propose_edit when there is a folder, and
// the tools of other extensions and MCP servers the reader turned on; none when tools are off or in Restricted Mode.
import * as vscode from 'vscode';
import { offersTools, type Tool } from '../core/tool';
import type { SettingsSnapshot } from './config';
import type { ExternalTools } from './externalTools';
import type { ToolSettings } from './turn';
import { apply } from './lazy/apply';
import { builtinTools } from './lazy/builtinTools';

/** What a turn's preparation asks (ContextRoom.prepare): the tools to offer (none when off), and their settings. */
export type Toolbox = () => { tools: Tool[]; settings: ToolSettings };

/** The window's toolbox, read afresh for each turn so that a changed setting or trust applies at once. */
export function workspaceToolbox(settings: SettingsSnapshot, external: ExternalTools): Toolbox {
  return () => {
    const s = settings.current.tools;
    if (!offersTools(s, vscode.workspace.isTrusted)) return { tools: [], settings: s };
    const folders = (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
    // dist/builtinTools.js (LAZY in esbuild.mjs): loaded by the first turn that offers tools, not at activation.
    // propose_edit (dist/apply.js): its review in the editor is its approval, and only Accept writes anything.
    const tools: Tool[] = folders ? [...builtinTools().builtinTools(s), apply().proposeEditTool(s)] : [];
    tools.push(...external.tools(new Set(tools.map((t) => t.definition.function.name))));
    return { tools, settings: s };
  };
}
