// The get_diagnostics and get_open_editors tools: what the language extensions report, and what the user has open.
import * as vscode from 'vscode';
import type { Tool } from '../../core/tool';
import { cappedList, optionalString } from '../../core/toolText';
import { PATH_HELP } from './fileTools';
import { WorkspaceGate, type BuiltinToolSettings, type ToolTarget } from '../workspaceGate';

/** Most diagnostics get_diagnostics returns. */
const MAX_DIAGNOSTICS = 200;

const SEVERITY = ['error', 'warning', 'info', 'hint'] as const;

/** `path:line:col severity message (source code)`, 1-based, on one line. */
function diagnosticLine(shown: string, d: vscode.Diagnostic): string {
  const code = typeof d.code === 'object' ? d.code.value : d.code;
  const origin = [d.source, code].filter((x) => x !== undefined && x !== '').join(' ');
  const message = d.message.replace(/\s*\n\s*/g, ' ');
  return `${shown}:${d.range.start.line + 1}:${d.range.start.character + 1} ${SEVERITY[d.severity] ?? 'info'} ${message}${origin ? ` (${origin})` : ''}`;
}

/** The get_diagnostics tool: problems of one file, or of every workspace file that has some, errors first. */
export function diagnosticsTool(settings: BuiltinToolSettings): Tool {
  return {
    policy: 'read',
    source: 'builtin',
    definition: {
      type: 'function',
      function: {
        name: 'get_diagnostics',
        description: `Lists the problems (errors, warnings, infos, hints) that language extensions report, for one file or, without a path, for the whole workspace, as "path:line:col severity message". Errors first; at most ${MAX_DIAGNOSTICS}. Language extensions usually report only on files that were opened.`,
        parameters: {
          type: 'object',
          properties: { path: { type: 'string', description: `A file, or leave out for the whole workspace. ${PATH_HELP}` } },
          additionalProperties: false,
        },
      },
    },
    summary: (args) => (typeof args.path === 'string' && args.path) || 'workspace',
    async run(args, signal) {
      const path = optionalString('get_diagnostics', args, 'path', 'the file whose problems to list, or leave it out for the whole workspace');
      const ws = new WorkspaceGate(settings);
      const entries: [ToolTarget, readonly vscode.Diagnostic[]][] = [];
      if (path) {
        const t = ws.target(path);
        await ws.checkLinks(t);
        entries.push([t, vscode.languages.getDiagnostics(t.uri)]);
      } else {
        for (const [uri, diags] of vscode.languages.getDiagnostics()) {
          const t = diags.length > 0 ? ws.fromUri(uri) : undefined;
          if (t) entries.push([t, diags]);
        }
      }
      signal.throwIfAborted();
      return diagnosticsText(entries, path ? `"${entries[0][0].shown}"` : 'the workspace', settings.maxResultChars);
    },
  };
}

/** Problems as text, errors first, within `budget` characters (also what an `@problems` mention sends). */
export function diagnosticsText(entries: [ToolTarget, readonly vscode.Diagnostic[]][], where: string, budget: number): string {
  const all = entries.flatMap(([t, diags]) => diags.map((d) => ({ t, d })));
  if (all.length === 0) return `No diagnostics for ${where}. (Language extensions usually report only on files that were opened.)`;
  all.sort((a, b) => a.d.severity - b.d.severity || (a.t.shown < b.t.shown ? -1 : a.t.shown > b.t.shown ? 1 : 0) || a.d.range.start.line - b.d.range.start.line);
  const counts = SEVERITY.map((s, i) => [s, all.filter((x) => x.d.severity === i).length] as const).filter(([, n]) => n > 0);
  const header = `${all.length} ${all.length === 1 ? 'diagnostic' : 'diagnostics'} for ${where} (${counts.map(([s, n]) => `${n} ${s}${n === 1 ? '' : 's'}`).join(', ')}):`;
  const lines = all.slice(0, MAX_DIAGNOSTICS).map((x) => diagnosticLine(x.t.shown, x.d));
  const more = all.length > MAX_DIAGNOSTICS ? `\n[${all.length - MAX_DIAGNOSTICS} more not shown: ask for one file's diagnostics.]` : '';
  return `${header}\n${cappedList(lines, budget - 200, "Ask for one file's diagnostics.")}${more}`;
}

/** The URI a tab shows, when it shows a file or document. */
function tabUri(tab: vscode.Tab): vscode.Uri | undefined {
  const input = tab.input;
  if (input instanceof vscode.TabInputText || input instanceof vscode.TabInputNotebook || input instanceof vscode.TabInputCustom) return input.uri;
  if (input instanceof vscode.TabInputTextDiff || input instanceof vscode.TabInputNotebookDiff) return input.modified;
  return undefined;
}

/** A tab as the model sees it: a workspace path when it has one; files outside or excluded only by their label. */
function tabName(ws: WorkspaceGate, tab: vscode.Tab, uri: vscode.Uri | undefined): string {
  if (!uri) return `${tab.label} (not a file)`;
  if (uri.scheme === 'untitled') return `${tab.label} (untitled, not saved)`;
  const t = ws.fromUri(uri);
  if (t) return t.shown;
  return vscode.workspace.getWorkspaceFolder(uri) ? `${tab.label} (excluded by parley.tools.exclude)` : `${tab.label} (outside the workspace)`;
}

function selectionText(editor: vscode.TextEditor): string {
  const s = editor.selection;
  const at = (p: vscode.Position) => `${p.line + 1}:${p.character + 1}`;
  return s.isEmpty ? `cursor at ${at(s.active)}` : `selection ${at(s.start)}–${at(s.end)}`;
}

/** The get_open_editors tool: the open tabs by group, the active one with its selection or cursor. */
export function openEditorsTool(settings: BuiltinToolSettings): Tool {
  return {
    policy: 'read',
    source: 'builtin',
    definition: {
      type: 'function',
      function: {
        name: 'get_open_editors',
        description: 'Lists the editors open in VS Code, by editor group; the active one is marked, with its selection or cursor (line:column, 1-based).',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
      },
    },
    summary: () => '',
    run(_args, signal) {
      signal.throwIfAborted();
      const ws = new WorkspaceGate(settings);
      const active = vscode.window.activeTextEditor;
      const groups = vscode.window.tabGroups.all;
      const lines: string[] = [];
      groups.forEach((group, i) => {
        if (groups.length > 1) lines.push(`Group ${i + 1}${group.isActive ? ' (active group)' : ''}:`);
        for (const tab of group.tabs) {
          const uri = tabUri(tab);
          const flags = [tab.isActive && group.isActive ? 'active' : '', tab.isDirty ? 'unsaved changes' : ''].filter(Boolean);
          const editor = tab.isActive && group.isActive && active && uri && active.document.uri.toString() === uri.toString() ? active : undefined;
          if (editor && ws.fromUri(uri as vscode.Uri)) flags.push(selectionText(editor));
          lines.push(`${groups.length > 1 ? '  ' : ''}${tabName(ws, tab, uri)}${flags.length ? ` (${flags.join(', ')})` : ''}`);
        }
      });
      const count = groups.reduce((n, g) => n + g.tabs.length, 0);
      if (count === 0) return Promise.resolve('No editors are open.');
      return Promise.resolve(`${count} open ${count === 1 ? 'editor' : 'editors'}:\n${cappedList(lines, settings.maxResultChars - 200, '')}`);
    },
  };
}
