// The tools a chat turn may offer right now: the built-in read-only ones, when tools are on, the workspace is trusted
// (Restricted Mode turns them off) and there is a folder to read.
import * as vscode from 'vscode';
import type { SettingsSnapshot } from './config';
import type { ToolSettings, TurnTool } from './toolTurn';
import { builtinTools } from './tools/builtinTools';

/** What ChatController asks before each turn: the tools to offer (none when off), and their settings. */
export type Toolbox = () => { tools: TurnTool[]; settings: ToolSettings };

/** The window's toolbox, read afresh for each turn so that a changed setting or trust applies at once. */
export function workspaceToolbox(settings: SettingsSnapshot): Toolbox {
  return () => {
    const s = settings.current.tools;
    const on = s.enabled && vscode.workspace.isTrusted && (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
    const tools: TurnTool[] = on
      ? builtinTools(s).map((t) => ({ definition: t.definition, readOnly: t.kind === 'read', summary: (a) => t.summary(a), run: (a, signal) => t.run(a, signal) }))
      : [];
    return { tools, settings: s };
  };
}
