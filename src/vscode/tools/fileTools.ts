// The read_file and list_directory tools: one file's text within a budget, one folder's entries.
import * as vscode from 'vscode';
import type { Tool } from '../../core/tool';
import { ToolError } from '../../core/toolPaths';
import { cappedList, decodeText, fileExcerpt, looksBinary, optionalInt, optionalString, requiredString } from '../../core/toolText';
import { MAX_READ_BYTES, WorkspaceGate, notFound, type BuiltinToolSettings, type ToolTarget } from '../workspaceGate';

/** How a path argument is described to the model, in every tool that takes one. */
export const PATH_HELP = 'Relative to the workspace folder (with several folders, start with the folder name), or absolute inside it.';

/** Most entries list_directory returns. */
const MAX_ENTRIES = 500;

const MAX_LINE = 1_000_000_000;

/** The read_file tool: a text file, or a range of its lines, cut to parley.tools.maxResultChars. */
export function readFileTool(settings: BuiltinToolSettings): Tool {
  return {
    policy: 'read',
    source: 'builtin',
    definition: {
      type: 'function',
      function: {
        name: 'read_file',
        description: `Reads a text file in the workspace, whole or a range of lines. Results longer than ${settings.maxResultChars} characters are cut at a line end, and the result then says which startLine reads on.`,
        parameters: {
          type: 'object',
          properties: {
            path: { type: 'string', description: `The file. ${PATH_HELP}` },
            startLine: { type: 'integer', minimum: 1, description: 'First line to read (1-based). Default: 1.' },
            endLine: { type: 'integer', minimum: 1, description: 'Last line to read (1-based, inclusive). Default: the end of the file.' },
          },
          required: ['path'],
          additionalProperties: false,
        },
      },
    },
    summary: (args) => {
      const path = typeof args.path === 'string' ? args.path : '';
      const range = args.startLine != null || args.endLine != null ? `:${String(args.startLine ?? 1)}-${String(args.endLine ?? '')}` : '';
      return path && path + range;
    },
    async run(args, signal) {
      const path = requiredString('read_file', args, 'path', 'the file to read, relative to the workspace');
      const start = optionalInt('read_file', args, 'startLine', 1, MAX_LINE);
      const end = optionalInt('read_file', args, 'endLine', 1, MAX_LINE);
      const ws = new WorkspaceGate(settings);
      const t = ws.target(path);
      await ws.checkLinks(t);
      const { text, label } = await readText(ws, t);
      signal.throwIfAborted();
      return fileExcerpt(label, text, settings.maxResultChars, start, end);
    },
  };
}

/** A file's text: the editor's when it has unsaved changes (what the user sees), else the disk's (read as checked). */
async function readText(ws: WorkspaceGate, t: ToolTarget): Promise<{ text: string; label: string }> {
  const open = vscode.workspace.textDocuments.find((d) => d.isDirty && d.uri.toString() === t.uri.toString());
  if (open) return { text: open.getText(), label: `${t.shown} (with unsaved changes)` };
  const bytes = await ws.readBytes(t, MAX_READ_BYTES);
  if (looksBinary(bytes)) throw new ToolError(`"${t.shown}" is a binary file (${bytes.length} bytes); read_file reads text files only.`);
  return { text: decodeText(bytes), label: t.shown };
}

/** The list_directory tool: a folder's entries, folders first and marked with a trailing `/`. */
export function listDirectoryTool(settings: BuiltinToolSettings): Tool {
  return {
    policy: 'read',
    source: 'builtin',
    definition: {
      type: 'function',
      function: {
        name: 'list_directory',
        description: `Lists the files and folders in a workspace folder (folders end with "/"). At most ${MAX_ENTRIES} entries.`,
        parameters: {
          type: 'object',
          properties: { path: { type: 'string', description: `The folder; "." (the default) is the workspace folder. ${PATH_HELP}` } },
          additionalProperties: false,
        },
      },
    },
    summary: (args) => (typeof args.path === 'string' && args.path) || '.',
    async run(args, signal) {
      const path = optionalString('list_directory', args, 'path', 'the folder to list, relative to the workspace') ?? '.';
      const ws = new WorkspaceGate(settings);
      if (ws.folders.length > 1 && /^[./\\]*$/.test(path)) {
        return `The workspace has ${ws.folders.length} folders; start a path with a folder's name:\n${ws.folders.map((f) => `${f.name}/`).join('\n')}`;
      }
      const t = ws.target(path);
      await ws.checkLinks(t);
      const stat = await ws.stat(t);
      if (!(stat.type & vscode.FileType.Directory)) throw new ToolError(`"${t.shown}" is a file, not a folder: use read_file to read it.`);
      let entries: [string, vscode.FileType][];
      try {
        entries = await vscode.workspace.fs.readDirectory(t.uri);
      } catch (e) {
        throw notFound(t, e);
      }
      signal.throwIfAborted();
      return directoryText(ws, t, entries);
    },
  };
}

function directoryText(ws: WorkspaceGate, t: ToolTarget, entries: [string, vscode.FileType][]): string {
  const shown = entries.filter(([name]) => !ws.exclude.match(t.relative ? `${t.relative}/${name}` : name));
  const hidden = entries.length - shown.length;
  const isDir = (type: vscode.FileType) => (type & vscode.FileType.Directory) !== 0;
  shown.sort(([a, at], [b, bt]) => Number(isDir(bt)) - Number(isDir(at)) || a.localeCompare(b));
  const lines = shown.slice(0, MAX_ENTRIES).map(([name, type]) => `${name}${isDir(type) ? '/' : ''}${type & vscode.FileType.SymbolicLink ? ' (symbolic link)' : ''}`);
  const notes: string[] = [];
  if (shown.length > MAX_ENTRIES) notes.push(`[${shown.length - MAX_ENTRIES} more entries not shown: use find_files with a glob to narrow down.]`);
  if (hidden > 0) notes.push(`[${hidden} ${hidden === 1 ? 'entry' : 'entries'} hidden by parley.tools.exclude.]`);
  const header = `${t.shown === '.' ? '.' : `${t.shown}/`}: ${shown.length} ${shown.length === 1 ? 'entry' : 'entries'}`;
  if (shown.length === 0) return [`${header} (empty)`, ...notes].join('\n');
  return [header, cappedList(lines, ws.settings.maxResultChars - 200, 'Use find_files with a glob to narrow down.'), ...notes].join('\n');
}
