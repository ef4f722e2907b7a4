// The loader of dist/usageReport.js (LAZY in esbuild.mjs): the one place that requires it, so that the extension's own
// bundle leaves it for first use.
import type * as UsageReportModule from '../../core/usageReport';

/** The usage report's Markdown: loaded when the report is first shown. */
export const usageReport = (): typeof UsageReportModule => require('./usageReport.js');
