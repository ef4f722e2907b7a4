// The six built-in, read-only workspace tools, in the order they are offered to the model.
import { diagnosticsTool, openEditorsTool } from './editorTools';
import { listDirectoryTool, readFileTool } from './fileTools';
import { findFilesTool, searchTextTool } from './searchTools';
import type { Tool } from '../../core/tool';
import type { BuiltinToolSettings } from '../workspaceGate';

export { ToolError } from '../../core/toolPaths';
export type { BuiltinToolSettings } from '../workspaceGate';

/**
 * The built-in tools: read_file, list_directory, find_files, search_text, get_diagnostics, get_open_editors. Each reads
 * through vscode.workspace.fs (remotes work), only inside the workspace folders, never a path matching
 * `settings.exclude`. Settings are fixed for the tools made: make them again when the settings change.
 */
export function builtinTools(settings: BuiltinToolSettings): Tool[] {
  return [readFileTool(settings), listDirectoryTool(settings), findFilesTool(settings), searchTextTool(settings), diagnosticsTool(settings), openEditorsTool(settings)];
}
