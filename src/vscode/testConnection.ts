// "Parley: Test Connection": runs the diagnosis with a cancellable progress notification and opens the report. Loaded
// the first time the command runs, with the checks (src/core/diagnose.ts): dist/testConnection.js, see LAZY in esbuild.mjs.
import * as vscode from 'vscode';
import { diagnose, reportMarkdown, reportSummary, type DiagnosisReport } from '../core/diagnose';
import { codeCell, codeSpan, markdownProse } from '../core/markdownText';
import { profileName } from '../core/profiles';
import type { Usage } from '../core/types';
import { recordFrom } from '../core/usageLedger';
import type { ChatController } from './chatController';
import type { Completions } from './completions';
import type { SettingsSnapshot } from './config';
import type { Log } from './log';
import { showError, showInfo, showProgress } from './notices';
import type { ReportDocuments } from './reports';
import { readyTarget, usageHost, type ReadyTarget, type Requester, type Target } from './requester';
import type { UsageStore } from './usageStore';

/** What Test Connection uses: the targets and what they learnt, the profiles, the report's document and the log. */
export interface TestConnectionDeps {
  requester: Requester;
  chat: Pick<ChatController, 'selection'>;
  settings: SettingsSnapshot;
  reports: ReportDocuments;
  log: Log;
  /** Tested too, when a completion model is set. */
  completions: Completions;
  /** Where the test's own requests are counted: they are billed like any other. */
  usage: UsageStore;
}

/**
 * Tests the current endpoint and shows a Markdown report the user can copy. Without a stored key
 * (and no "needs no key" mark) it still tests, without one, and the report says so.
 */
export async function testConnection(s: TestConnectionDeps): Promise<void> {
  const found = testTarget(s, await s.requester.target(undefined, false, s.chat.selection()));
  if (!found) return;
  const { target } = found;
  const abort = new AbortController();
  const report = await showProgress(
    { location: vscode.ProgressLocation.Notification, title: `Parley: testing ${target.host}…`, cancellable: true },
    (_progress, token) => {
      const sub = token.onCancellationRequested(() => abort.abort());
      return runDiagnosis(s, found, abort.signal).then(async (r) => r && { ...r, completion: await completionSection(s, abort.signal) }).finally(() => sub.dispose());
    },
  );
  if (abort.signal.aborted) {
    s.log.info('Test Connection cancelled.');
    return;
  }
  if (!report) {
    void showError('Parley: Test Connection could not run. See the log ("Parley: Show Log").');
    return;
  }
  await showReport(s, target, report);
}

/** Runs the checks against one target; what they learnt (a refused parameter) serves the next chat request too. */
async function runDiagnosis(s: TestConnectionDeps, found: { target: ReadyTarget; keyMissing: boolean }, signal: AbortSignal): Promise<DiagnosisReport | undefined> {
  const { target, keyMissing } = found;
  const { requester, log } = s;
  log.info(`Test Connection: ${target.endpoint.url} model=${target.settings.model}${keyMissing ? ' (no key set; testing without one)' : ''}`);
  const counted: Array<Promise<void>> = [];
  const onBilled = (usage: Usage, durationMs: number) => {
    const r = recordFrom(usage, { model: target.settings.model, host: usageHost(target), durationMs, source: 'test', at: Date.now() });
    counted.push(s.usage.record(r).catch((e: unknown) => log.warn(`Recording Test Connection's usage failed: ${e instanceof Error ? e.message : String(e)}`)));
  };
  try {
    const report = await diagnose({
      endpoint: target.endpoint,
      apiKey: target.apiKey,
      headers: target.headers,
      model: target.settings.model,
      adaptations: requester.adaptations(target),
      timeoutMs: target.settings.requestTimeoutSeconds * 1000,
      settings: requester.requestSettings(target, {}),
      stream: target.settings.profile?.stream !== false,
      profile: target.settings.profile && target.settings.profile.source !== 'implicit' ? target.settings.profile.name : undefined,
      keyMissing,
      responses: requester.clientOptions(target).responses,
      signal,
      onBilled,
    });
    if (JSON.stringify(report.adaptations) !== JSON.stringify(requester.adaptations(target) ?? {})) {
      await requester.rememberAdaptations(target, report.adaptations);
    }
    return report;
  } catch (e) {
    log.error(`Test Connection failed unexpectedly: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  } finally {
    await Promise.all(counted);
  }
}

/** Parley: Test Every Endpoint Profile: each profile in turn, one report with a summary table first. */
export async function testAllEndpoints(s: TestConnectionDeps): Promise<void> {
  const profiles = s.settings.current.profiles;
  const abort = new AbortController();
  const parts = await showProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Parley: testing every profile', cancellable: true },
    async (progress, token) => {
      const sub = token.onCancellationRequested(() => abort.abort());
      const out: Array<{ name: string; host: string; model: string; report?: DiagnosisReport; problem?: string }> = [];
      try {
        for (const p of profiles) {
          if (abort.signal.aborted) break;
          progress.report({ message: p.name, increment: 100 / profiles.length });
          const t = await s.requester.target(undefined, false, { profile: p.name });
          const found = testTarget(s, t, true);
          if (!found) {
            out.push({ name: p.name, host: String(p.baseUrl), model: t.settings.model, problem: t.kind === 'config' ? t.error.message : 'no endpoint' });
            continue;
          }
          out.push({ name: p.name, host: found.target.host, model: found.target.settings.model, report: await runDiagnosis(s, found, abort.signal) });
        }
      } finally {
        sub.dispose();
      }
      return out;
    },
  );
  if (abort.signal.aborted) return;
  const L = ['# Parley: Test every endpoint profile', '', '| Profile | Endpoint | Model | Result |', '|---|---|---|---|'];
  for (const p of parts) {
    const result = p.report ? (p.report.ok ? 'works' : `fails: ${markdownProse(p.report.causes[0]?.fix ?? 'see below')}`) : `not tested: ${markdownProse(p.problem ?? '')}`;
    L.push(`| ${codeCell(p.name)} | ${codeCell(p.host)} | ${codeCell(p.model)} | ${result} |`);
  }
  for (const p of parts) {
    if (!p.report) continue;
    // Each profile's own report, one heading level down.
    L.push('', `# Profile ${codeSpan(p.name)}`, '', reportMarkdown(p.report).replace(/^# .*\n/, '').replace(/^(#+) /gm, '#$1 '));
  }
  await s.reports.open('Parley Test Every Profile.md', s.log.clean(L.join('\n')));
}

/**
 * The target to test: the ready one, or without a key when none is set; undefined (and said, unless `quiet`) when
 * there is none.
 */
function testTarget(s: TestConnectionDeps, t: Target, quiet = false): { target: ReadyTarget; keyMissing: boolean } | undefined {
  if (t.kind === 'ready') return { target: t, keyMissing: false };
  // Without a key it is still tested, as chat would send it (the profile's headers too), and the report says so.
  if (t.kind === 'no-key') return { target: { ...readyTarget(t.settings, t.endpoint), headers: t.headers }, keyMissing: true };
  s.log.warn(`Test Connection: ${t.error.message}`);
  if (quiet) return undefined;
  void showError(`Parley: ${t.error.message}`, 'Open Settings').then((a) => {
    if (a) void vscode.commands.executeCommand('workbench.action.openSettings', 'parley.baseUrl');
  });
  return undefined;
}

/** Opens the report as a read-only document and says in a notification whether the connection works. */
async function showReport(s: TestConnectionDeps, target: ReadyTarget, report: DiagnosisReport & { completion?: string }): Promise<void> {
  const log = s.log;
  // diagnose() already redacts the key; the log's cleaner also knows every key seen this session.
  const markdown = log.clean(withProfile(reportMarkdown(report), target) + (report.completion ? `\n\n${report.completion}` : ''));
  log.info(log.clean(reportSummary(report)));
  // A read-only document: selectable and copyable, with nothing to save when it is closed.
  await s.reports.open('Parley Test Connection.md', markdown);

  const copy = 'Copy Report';
  const all = 'Test Every Profile';
  const buttons = s.settings.current.profiles.length > 1 ? [copy, all] : [copy];
  const headline = report.ok
    ? `Parley: the connection to ${target.host} works${report.chat.api ? ', on the Responses API' : ''}.${report.chat.dropped.length ? ` Adapted: ${report.chat.dropped.join(', ')}.` : ''}`
    : `Parley: the connection to ${target.host} fails.${report.causes[0] ? ` ${report.causes[0].fix}` : ''}`;
  // Not awaited: the command finishes when the report is open, not when the notification closes.
  void showInfo(log.clean(headline), ...buttons).then(async (choice) => {
    if (choice === all) return testAllEndpoints(s);
    if (choice === copy) {
      await vscode.env.clipboard.writeText(markdown);
      void showInfo('Parley: report copied to the clipboard.');
    }
  });
}

/** The completion model's routes (dist/completion.js, loaded only when a completion model is set), as a section. */
async function completionSection(s: TestConnectionDeps, signal: AbortSignal): Promise<string | undefined> {
  if (!s.completions.configured) return undefined;
  try {
    return await s.completions.engine.diagnose(signal);
  } catch (e) {
    return `## Inline completions\n\nNot tested: ${markdownProse(e instanceof Error ? e.message : String(e))}\n`;
  }
}

/**
 * The report with the profile it tested, and what the settings did not apply (a value set where this window ignores
 * it, a profile entry refused), with where to set it instead: right under the title.
 */
function withProfile(markdown: string, t: ReadyTarget): string {
  const notes = [...t.settings.unapplied, ...t.settings.profileProblems];
  const lines = [`- Profile: ${codeSpan(profileName(t.settings))}${t.headers ? ` (custom headers: ${Object.keys(t.headers).map(codeSpan).join(', ')})` : ''}`];
  if (notes.length) lines.push('', '## Settings not applied', '', ...notes.map((n) => `- ${markdownProse(n)}`));
  return markdown.replace(/^(# .*\n)/, `$1\n${lines.join('\n')}\n`);
}

