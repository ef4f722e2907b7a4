// The esbuild options of every bundle, in one place: esbuild.mjs builds the extension and the tests with them, and
// the webview tests and the render benchmark build the same webview bundle (test/webview-harness/build.mjs).
import * as esbuild from 'esbuild';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** What every bundle shares (minified, without a source map, with `production`). */
export function commonBuildOptions(production) {
  return {
    bundle: true,
    minify: production,
    sourcemap: production ? false : 'linked',
    sourcesContent: false,
    logLevel: 'warning',
    legalComments: 'none',
  };
}

/** A bundle for a browser page: the webview's, the worker it starts, or the render benchmark's stand-in host. */
export function browserBuildOptions(production) {
  return { ...commonBuildOptions(production), platform: 'browser', format: 'iife', target: 'es2022' };
}

/** Options that bundle src/webview/main.ts to `outfile` (minified with `production`). */
export function webviewBuildOptions({ outfile, production = false }) {
  return {
    ...browserBuildOptions(production),
    entryPoints: [join(root, 'src/webview/main.ts')],
    outfile,
    // markdown-it only decodes entities (decodeHTML, decodeHTMLStrict): src/webview/entities.ts does it with the
    // browser's own table of names, in place of the package's generated decode tables (~48 KB).
    alias: { entities: join(root, 'src/webview/entities.ts'), 'punycode.js': join(root, 'src/webview/punycode.ts') },
  };
}

/**
 * Options that bundle the highlighting worker's script (src/webview/highlightWorkerScript.ts: the worker's source as
 * a string) to `outfile`, which the webview loads when highlighting is first wanted.
 */
export function highlightWorkerBuildOptions({ outfile, production = false }) {
  return {
    ...browserBuildOptions(production),
    // The worker's own source is inlined without one; a map of this wrapper would be no help.
    sourcemap: false,
    entryPoints: [join(root, 'src/webview/highlightWorkerScript.ts')],
    outfile,
    plugins: [highlightWorkerPlugin(production)],
  };
}

/**
 * Resolves `parley:highlight-worker` to the source of the highlighting worker (src/webview/highlightWorker.ts,
 * bundled on its own), as a string: a webview can start a worker only from a blob: or data: URL, not from a file.
 */
function highlightWorkerPlugin(production) {
  return {
    name: 'parley-highlight-worker',
    setup(build) {
      build.onResolve({ filter: /^parley:highlight-worker$/ }, () => ({ path: 'highlight-worker', namespace: 'parley-worker' }));
      build.onLoad({ filter: /.*/, namespace: 'parley-worker' }, async () => {
        const result = await esbuild.build({
          ...browserBuildOptions(production),
          // Inlined as a string: a source map file would not be found from the blob: URL.
          sourcemap: false,
          entryPoints: [join(root, 'src/webview/highlightWorker.ts')],
          write: false,
          metafile: true,
        });
        return {
          contents: result.outputFiles[0].text,
          loader: 'text',
          watchFiles: Object.keys(result.metafile.inputs).map((f) => resolve(f)),
        };
      });
    },
  };
}
