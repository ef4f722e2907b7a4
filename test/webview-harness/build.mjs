// Builds only the webview bundle (same options as esbuild.mjs), so webview tests and the render benchmark
// do not depend on the extension host's build.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Bundles src/webview/main.ts to `${outdir}/webview.js` and copies the stylesheet; returns the outdir. */
export async function buildWebview({ outdir = join(root, 'dist'), production = false } = {}) {
  mkdirSync(outdir, { recursive: true });
  await esbuild.build({
    entryPoints: [join(root, 'src/webview/main.ts')],
    outfile: join(outdir, 'webview.js'),
    bundle: true,
    minify: production,
    sourcemap: production ? false : 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'warning',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  });
  copyFileSync(join(root, 'media/webview.css'), join(outdir, 'webview.css'));
  return outdir;
}
