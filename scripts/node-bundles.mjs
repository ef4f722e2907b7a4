// Builds the extension's Node bundles (dist/extension.js and one file per lazily loaded module) so that they share the
// code they have in common: a lazy bundle takes a module dist/extension.js carries from it, and a module two lazy
// bundles need goes to dist/shared.js. So each class is defined once in dist/ (`instanceof` holds across a bundle
// border) and each module's state is one state. (A module of which extension.js carries only some functions, and
// the lazy bundles others, is the one exception: each has the functions it uses. test/unit/packaging.test.ts checks
// that no class is defined twice.)
//
// How: esbuild has no code splitting for CommonJS, so the layout is found by building twice. First each bundle on its
// own (its metafile says which modules it carries), then, with the modules another bundle provides marked external,
// as ESM (whose import statements name exactly what it uses of them, after tree-shaking). A provider exports those
// names, positionally, in one table (`shared`): extension.js's costs a few bytes a name and keeps no code it would
// not carry anyway (a module lazy bundles use more of than extension.js carries is left out: its code stays in them).
// In a lazy bundle each provided module is a stub that reads the table: `require('./extension.js')` is the module
// the extension host loaded (Node's module cache), so its classes and state are the very ones the extension uses.
import * as esbuild from 'esbuild';
import { rmSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** The provided modules' stubs in a lazy bundle (and, marked external, in the probing builds). */
const NAMESPACE = 'parley-shared';
/** The one module per provider that requires it, in a bundle it provides to. */
const PROVIDER = 'parley-provider';
/** dist/shared.js: what two lazy bundles need and extension.js does not carry. */
const CHUNK = 'shared';
/** The table's name among the exports of extension.js and shared.js. */
const TABLE = 'shared';
/** pluginData of the share plugin's own resolve calls. */
const SKIP = Symbol('parley-shared-skip');

/**
 * Builds `main` to `<outdir>/<mainName>.js`, each `lazy` entry to `<outdir>/<name>.js`, and dist/shared.js when two
 * lazy bundles share a module extension.js does not carry.
 * @param {{ options: import('esbuild').BuildOptions, plugins: () => import('esbuild').Plugin[], main: string,
 *   mainName: string, lazy: Record<string, string>, outdir: string }} o  `options`: node, cjs (minify and source
 *   map as wanted); `plugins`: fresh ones for each build; entries as paths relative to the working directory.
 */
export async function buildNodeBundles({ options, plugins, main, mainName, lazy, outdir }) {
  const entries = new Map(Object.entries(lazy).map(([name, path]) => [keyOf(resolve(path)), name]));
  const probe = { ...options, minify: false, sourcemap: false, write: false, metafile: true };

  // Alone: which modules each bundle carries.
  const alone = async (entryPoint) => carriedBytes(await esbuild.build({ ...probe, entryPoints: [entryPoint], plugins: plugins() }));
  const mainAlone = await alone(main);
  const lazyAlone = await Promise.all(Object.values(lazy).map(alone));
  const fromMain = new Set([...mainAlone.keys()].filter((k) => isFile(k) && lazyAlone.some((c) => c.has(k))));
  // A first guess at shared.js, which the rounds below correct: what two lazy bundles carry and extension.js does not.
  const chunk = new Set([...new Set(lazyAlone.flatMap((c) => [...c.keys()]))].filter((k) => isFile(k) && !fromMain.has(k) && !entries.has(k) && lazyAlone.filter((c) => c.has(k)).length > 1));

  for (let round = 0; ; round++) {
    if (round > 20) throw new Error('node-bundles: the layout does not settle');
    const layout = new Layout(fromMain, chunk, entries, mainName);
    // As ESM, with what others provide external: the names each bundle uses, and the code it still carries.
    const names = new Map();
    const consumers = Object.entries(lazy).map(([name, path]) => ({ name, entryPoints: [path] }));
    const texts = await Promise.all(consumers.map((c) => buildText(c, layout, probe, plugins, 'probe')));
    texts.forEach((t) => collectNames(t.text, names));
    let chunkCarried = new Map();
    if (chunk.size > 0) {
      const t = await buildText({ name: CHUNK, stdin: layout.tableEntry(CHUNK, names) }, layout, probe, plugins, 'probe');
      collectNames(t.text, names);
      chunkCarried = t.carried;
    }
    // A module carried by two of them (lazy bundles, shared.js) moves to shared.js.
    const seen = new Map();
    for (const c of [...texts.map((t) => t.carried), chunkCarried]) for (const k of c.keys()) if (isFile(k)) seen.set(k, (seen.get(k) ?? 0) + 1);
    const twice = [...seen].filter(([k, n]) => n > 1 && !entries.has(k) && !chunk.has(k)).map(([k]) => k);
    if (twice.length > 0) {
      twice.forEach((k) => chunk.add(k));
      continue;
    }
    // extension.js with its table: a module of which it would carry more than alone is left out of the table.
    const mainWith = await buildText({ name: mainName, stdin: layout.tableEntry(mainName, names, main) }, layout, probe, plugins, 'probe');
    const grown = [...fromMain].filter((k) => (mainWith.carried.get(k) ?? 0) > (mainAlone.get(k) ?? 0));
    if (grown.length > 0) {
      grown.forEach((k) => fromMain.delete(k));
      continue;
    }
    return writeBundles({ layout, names, options, plugins, main, mainName, lazy, outdir });
  }
}

/** Where each shared module comes from, and the tables that hand it over. */
class Layout {
  /**
   * @param {Set<string>} fromMain modules extension.js provides
   * @param {Set<string>} chunk    modules shared.js provides
   * @param {Map<string, string>} entries  lazy entry module → its bundle's name (which provides it: its exports)
   * @param {string} mainName
   */
  constructor(fromMain, chunk, entries, mainName) {
    this.fromMain = fromMain;
    this.chunk = chunk;
    this.entries = entries;
    this.mainName = mainName;
  }

  /** The bundle that provides module `key` to bundle `self`, or undefined: `self` carries its code. */
  provider(key, self) {
    const from = this.fromMain.has(key) ? this.mainName : this.chunk.has(key) ? CHUNK : this.entries.get(key);
    // extension.js provides to others only; shared.js takes only from extension.js (no circle of requires).
    if (from === undefined || from === self || self === this.mainName) return undefined;
    if (self === CHUNK && from !== this.mainName) throw new Error(`node-bundles: a module shared by lazy bundles imports ${key}, the lazy module dist/${from}.js`);
    return from;
  }

  /** The modules a table provider (extension.js, shared.js) hands over, in table order: those whose names are used. */
  tabled(provider, names) {
    const mine = provider === CHUNK ? this.chunk : provider === this.mainName ? this.fromMain : new Set();
    return [...mine].filter((k) => names.has(k)).sort();
  }

  /** Where module `key`'s names start in `provider`'s table (one flat array: each module's used names in turn). */
  offset(provider, key, names) {
    let at = 0;
    for (const k of this.tabled(provider, names)) {
      if (k === key) return at;
      at += names.get(k).size;
    }
    throw new Error(`node-bundles: ${key} is not in the table of dist/${provider}.js`);
  }

  /** The entry of a table provider: `main`'s exports (for extension.js), then the table of the used names' values. */
  tableEntry(provider, names, main) {
    const lines = main ? [`export * from ${JSON.stringify(resolve(main))};`] : [];
    const values = [];
    this.tabled(provider, names).forEach((k, i) => {
      const used = [...names.get(k)].map((n, j) => `${n} as m${i}_${j}`);
      values.push(...[...names.get(k)].map((_, j) => `m${i}_${j}`));
      lines.push(`import { ${used.join(', ')} } from ${JSON.stringify(resolve(k))};`);
    });
    lines.push(`const parleySharedTable = [${values.join(', ')}];`, `export { parleySharedTable as ${TABLE} };`);
    return { contents: lines.join('\n'), resolveDir: process.cwd(), sourcefile: `${provider}-entry.js`, loader: 'js' };
  }

  /** The stub that stands for `key` in a bundle it is provided to: its used names, read from the provider. */
  stub(key, provider, names) {
    // Imported, but only by code tree-shaking drops (the probe kept no import of it): nothing to read.
    if (!names.has(key)) return '';
    const used = [...names.get(key)];
    const lazyEntry = this.entries.get(key) === provider;
    const at = lazyEntry ? 0 : this.offset(provider, key, names);
    const read = used.map((n, j) => `const v${j} = m[${lazyEntry ? JSON.stringify(n) : at + j}];`);
    return [`import { m } from "${PROVIDER}:${provider}";`, ...read, `export { ${used.map((n, j) => `v${j} as ${n}`).join(', ')} };`].join('\n');
  }

  /** Notes that bundle `self` requires bundle `provider` as it loads (its stubs' one require). */
  takes(self, provider) {
    this.loads ??= new Map();
    this.loads.set(self, new Set([...(this.loads.get(self) ?? []), provider]));
  }

  /**
   * Throws when lazy bundles require each other as they load, in a circle: Node would hand the second its first's
   * exports half made (undefined names), in the packaged extension only (a test bundle inlines them).
   */
  checkNoCircle() {
    const loads = this.loads ?? new Map();
    const visit = (name, path) => {
      if (path.includes(name)) throw new Error(`node-bundles: lazy bundles require each other as they load: ${[...path.slice(path.indexOf(name)), name].map((n) => `dist/${n}.js`).join(' → ')}; move what they share into a module of its own`);
      for (const next of loads.get(name) ?? []) visit(next, [...path, name]);
    };
    for (const name of loads.keys()) visit(name, []);
  }

  /** The one require of a provider in a bundle, which its stubs share: its exports, or its table. */
  providerModule(provider) {
    const lazyEntry = [...this.entries.values()].includes(provider);
    return `export const m = require("./${provider}.js")${lazyEntry ? '' : `.${TABLE}`};`;
  }
}

/**
 * Builds one bundle as `mode` says: 'probe' is ESM with provided modules external (for their names), 'final' is the
 * real format with provided modules as stubs. Resolves to its text and the modules whose code it carries.
 */
async function buildText({ name, entryPoints, stdin }, layout, base, plugins, mode, names, extra = {}) {
  const result = await esbuild.build({
    ...base,
    // A probe of a bundle that takes from others is ESM, whose import statements name what it uses.
    ...(mode === 'probe' && name !== layout.mainName ? { format: 'esm' } : {}),
    ...(stdin ? { stdin } : { entryPoints }),
    ...extra,
    metafile: true,
    plugins: [sharePlugin(layout, name, mode, names), ...plugins()],
  });
  const js = result.outputFiles?.find((f) => !f.path.endsWith('.map'));
  return { text: js?.text ?? '', carried: carriedBytes(result) };
}

/** Resolves each module another bundle provides to its stub ('final') or to an external `parley-shared:` path. */
function sharePlugin(layout, self, mode, names) {
  return {
    name: 'parley-shared',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === SKIP || args.kind === 'entry-point' || args.namespace !== 'file') return undefined;
        const r = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: SKIP });
        if (r.errors.length > 0 || r.external || r.namespace !== 'file') return undefined;
        const key = keyOf(r.path);
        if (layout.provider(key, self) === undefined) return undefined;
        return mode === 'probe' ? { path: `${NAMESPACE}:${key}`, external: true } : { path: key, namespace: NAMESPACE };
      });
      build.onResolve({ filter: new RegExp(`^${PROVIDER}:`), namespace: NAMESPACE }, (args) => ({ path: args.path.slice(PROVIDER.length + 1), namespace: PROVIDER }));
      build.onLoad({ filter: /.*/, namespace: PROVIDER }, (args) => {
        if (mode === 'final') layout.takes(self, args.path);
        return { contents: layout.providerModule(args.path), loader: 'js' };
      });
      // The provider's require stays a require of the file beside it in dist/.
      build.onResolve({ filter: /.*/, namespace: PROVIDER }, (args) => ({ path: args.path, external: true }));
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: layout.stub(args.path, layout.provider(args.path, self), names),
        loader: 'js',
      }));
    },
  };
}

/** Adds to `names` what an ESM probe imports of each provided module, by name. */
function collectNames(text, names) {
  const re = new RegExp(`^(?:import|export)\\b([^;]*?)\\bfrom\\s*"${NAMESPACE}:([^"]+)";|^import\\s*"${NAMESPACE}:([^"]+)";`, 'gm');
  for (const m of text.matchAll(re)) {
    const key = m[2] ?? m[3];
    const set = names.get(key) ?? new Set();
    names.set(key, set);
    const clause = (m[1] ?? '').trim();
    if (clause.includes('*')) throw new Error(`node-bundles: \`import * as\` or \`export *\` of ${key}, which another bundle provides: import its names`);
    const braces = /\{([^}]*)\}/.exec(clause);
    if (/^\w+/.test(clause.replace(/^\{[\s\S]*$/, ''))) set.add('default');
    for (const part of (braces?.[1] ?? '').split(',')) {
      const name = part.trim().split(/\s+as\s+/)[0];
      if (name) set.add(name);
    }
  }
}

/** The final builds: extension.js (with its table), shared.js when it has modules, and the lazy bundles. */
async function writeBundles({ layout, names, options, plugins, main, mainName, lazy, outdir }) {
  const out = (name) => ({ outfile: join(outdir, `${name}.js`) });
  const builds = [
    buildText({ name: mainName, stdin: layout.tableEntry(mainName, names, main) }, layout, options, plugins, 'final', names, out(mainName)),
    ...Object.entries(lazy).map(([name, path]) => buildText({ name, entryPoints: [path] }, layout, options, plugins, 'final', names, out(name))),
  ];
  if (layout.chunk.size > 0) builds.push(buildText({ name: CHUNK, stdin: layout.tableEntry(CHUNK, names) }, layout, options, plugins, 'final', names, out(CHUNK)));
  else for (const f of [`${CHUNK}.js`, `${CHUNK}.js.map`]) rmSync(join(outdir, f), { force: true });
  await Promise.all(builds);
  layout.checkNoCircle();
}

/** The inputs whose code a build's output carries, with their bytes in it. */
function carriedBytes(result) {
  const output = Object.entries(result.metafile.outputs).find(([path]) => !path.endsWith('.map'))[1];
  return new Map(Object.entries(output.inputs).filter(([, v]) => v.bytesInOutput > 0).map(([k, v]) => [k, v.bytesInOutput]));
}

/** A module on disk (not a plugin's virtual one, `namespace:path`, nor a table's entry). */
function isFile(key) {
  return !/^[\w-]+:/.test(key) && key !== '<stdin>';
}

/** A module's key, as esbuild's metafile names it: its path from the working directory, with forward slashes. */
function keyOf(path) {
  return relative(process.cwd(), path).split(sep).join('/');
}
