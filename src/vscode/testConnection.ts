// "Parley: Test Connection": runs the diagnosis with a cancellable progress notification and opens the report.
import * as vscode from 'vscode';
import type * as Diagnosis from '../core/diagnose';
import type { DiagnosisReport } from '../core/diagnose';
import { resolveEndpoint } from '../core/endpoint';
import { noticeText } from '../core/markdownText';
import type { Settings } from './config';
import { readyTarget, type ReadyTarget } from './requester';
import type { Services } from './services';

/**
 * The checks and the report, loaded the first time Test Connection runs: the build puts src/core/diagnose.ts in a file
 * of its own, dist/diagnose.js (esbuild.mjs), so the extension's own bundle does not carry them.
 */
function diagnosis(): typeof Diagnosis {
  return require('./diagnose.js') as typeof Diagnosis;
}

/**
 * Tests the current endpoint and shows a Markdown report the user can copy. Without a stored key
 * (and no "needs no key" mark) it still tests, without one, and the report says so.
 */
export async function testConnection(s: Services): Promise<void> {
  const found = await testTarget(s);
  if (!found) return;
  const { target, keyMissing } = found;
  const { requester, log } = s;
  log.info(`Test Connection: ${target.endpoint.url} model=${target.settings.model}${keyMissing ? ' (no key set; testing without one)' : ''}`);
  const abort = new AbortController();
  const report = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Parley: testing ${target.host}…`, cancellable: true },
    async (_progress, token): Promise<DiagnosisReport | undefined> => {
      const sub = token.onCancellationRequested(() => abort.abort());
      try {
        return await diagnosis().diagnose({
          endpoint: target.endpoint,
          apiKey: target.apiKey,
          model: target.settings.model,
          adaptations: requester.adaptations(target),
          timeoutMs: target.settings.requestTimeoutSeconds * 1000,
          settings: requester.requestSettings(target, { stream: true }),
          keyMissing,
          signal: abort.signal,
        });
      } catch (e) {
        log.error(`Test Connection failed unexpectedly: ${e instanceof Error ? e.message : String(e)}`);
        return undefined;
      } finally {
        sub.dispose();
      }
    },
  );
  if (abort.signal.aborted) {
    log.info('Test Connection cancelled.');
    return;
  }
  if (!report) {
    void vscode.window.showErrorMessage('Parley: Test Connection could not run. See the log ("Parley: Show Log").');
    return;
  }
  // What the probe learnt (a refused parameter) serves the next chat request too.
  if (JSON.stringify(report.adaptations) !== JSON.stringify(requester.adaptations(target) ?? {})) {
    await requester.rememberAdaptations(target, report.adaptations);
  }
  await showReport(s, target, report);
}

/** The target to test: the ready one, or without a key when none is set; undefined (and said) when there is none. */
async function testTarget(s: Services): Promise<{ target: ReadyTarget; keyMissing: boolean } | undefined> {
  const t = await s.requester.target();
  if (t.kind === 'ready') return { target: t, keyMissing: false };
  if (t.kind === 'no-key') {
    const found = targetWithoutKey(t.settings, t.origin);
    if (!found) {
      void vscode.window.showErrorMessage(`Parley: cannot test ${t.origin}: the base URL no longer resolves to it.`);
      return undefined;
    }
    return { target: found, keyMissing: true };
  }
  s.log.warn(`Test Connection: ${t.error.message}`);
  void vscode.window.showErrorMessage(noticeText(`Parley: ${t.error.message}`), 'Open Settings').then((a) => {
    if (a) void vscode.commands.executeCommand('workbench.action.openSettings', 'parley.baseUrl');
  });
  return undefined;
}

/** Opens the report as a read-only document and says in a notification whether the connection works. */
async function showReport(s: Services, target: ReadyTarget, report: DiagnosisReport): Promise<void> {
  const log = s.log;
  // diagnose() already redacts the key; the log's cleaner also knows every key seen this session.
  const { reportMarkdown, reportSummary } = diagnosis();
  const markdown = log.clean(reportMarkdown(report));
  log.info(log.clean(reportSummary(report)));
  // A read-only document: selectable and copyable, with nothing to save when it is closed.
  const doc = await s.reports.show('Parley Test Connection.md', markdown);
  await vscode.window.showTextDocument(doc, { preview: false });
  try {
    await vscode.commands.executeCommand('markdown.showPreview', doc.uri);
  } catch {
    // The built-in Markdown extension can be disabled; the document itself is the report.
  }

  const copy = 'Copy Report';
  const headline = report.ok
    ? `Parley: the connection to ${target.host} works.${report.chat.dropped.length ? ` Adapted: ${report.chat.dropped.join(', ')}.` : ''}`
    : `Parley: the connection to ${target.host} fails.${report.causes[0] ? ` ${report.causes[0].fix}` : ''}`;
  // Not awaited: the command finishes when the report is open, not when the notification closes.
  void vscode.window.showInformationMessage(noticeText(log.clean(headline)), copy).then(async (choice) => {
    if (choice === copy) {
      await vscode.env.clipboard.writeText(markdown);
      void vscode.window.showInformationMessage('Parley: report copied to the clipboard.');
    }
  });
}

/** The target Requester would use for `origin` if a key were set: same settings, no key. */
function targetWithoutKey(settings: Settings, origin: string): ReadyTarget | undefined {
  for (const base of [settings.baseUrl, settings.userBaseUrl]) {
    try {
      const endpoint = resolveEndpoint(base);
      if (endpoint.origin === origin) return readyTarget(settings, endpoint);
    } catch {
      // try the next one
    }
  }
  return undefined;
}
