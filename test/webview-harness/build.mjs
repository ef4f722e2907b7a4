// Builds only the webview bundle (with esbuild.mjs's options, scripts/webview-build.mjs), so webview tests and the
// render benchmark do not depend on the extension host's build.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { highlightWorkerBuildOptions, webviewBuildOptions } from '../../scripts/webview-build.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Bundles src/webview/main.ts to `${outdir}/webview.js` and the highlighting worker's script to
 * `${outdir}/highlightWorker.js`, and copies the stylesheet; returns the outdir.
 */
export async function buildWebview({ outdir = join(root, 'dist'), production = false } = {}) {
  mkdirSync(outdir, { recursive: true });
  await Promise.all([
    esbuild.build(webviewBuildOptions({ outfile: join(outdir, 'webview.js'), production })),
    esbuild.build(highlightWorkerBuildOptions({ outfile: join(outdir, 'highlightWorker.js'), production })),
  ]);
  copyFileSync(join(root, 'media/webview.css'), join(outdir, 'webview.css'));
  return outdir;
}

/** Bundles one module of src for a page, as an iife that puts its exports on `window[globalName]`; returns its text. */
export async function bundleForPage(entry, globalName) {
  const result = await esbuild.build({ entryPoints: [join(root, entry)], bundle: true, format: 'iife', globalName, platform: 'browser', target: 'es2022', write: false });
  return result.outputFiles[0].text;
}
