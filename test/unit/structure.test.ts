// The shape of src/, read with the TypeScript parser: no import circle (type-only imports and lazily loaded bundles
// count), no import that runs back up a floor, no class with over 25 methods. Each failure names the files.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../support/repoRoot';


const root = repoRoot();

/** Every .ts file under src/ (declaration files aside), as a path from the root with `/`. */
function sourceFiles(dir = 'src'): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** The lazily loaded bundles of esbuild.mjs: `require('./<name>.js')` in src loads the bundle of that source file. */
function lazyModules(): Map<string, string> {
  const block = /const LAZY = \{([\s\S]*?)\n\};/.exec(fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8'))?.[1] ?? '';
  return new Map([...block.matchAll(/^\s+(\w+): '([^']+\.ts)',$/gm)].map((m) => [m[1], m[2]]));
}

/** Every module specifier a file names: imports and exports (type-only too), `import('x')` types and calls, `require('x')`. */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(path.join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference) && ts.isStringLiteral(n.moduleReference.expression)) out.push(n.moduleReference.expression.text);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) out.push(n.argument.literal.text);
    else if (ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === 'require'))) {
      const [arg] = n.arguments;
      if (arg && ts.isStringLiteralLike(arg)) out.push(arg.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

interface Graph {
  /** Each file's imports within src/, and `vscode` for the editor's API. */
  edges: Map<string, string[]>;
  /** Relative specifiers that name no file: `file: specifier`. */
  unresolved: string[];
}

/** The import graph of src/. A lazy bundle's `require('./x.js')` is an edge to the source LAZY names for it. */
function importGraph(): Graph {
  const lazy = lazyModules();
  const files = sourceFiles();
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const to = new Set<string>();
    for (const spec of specifiers(file)) {
      if (spec === 'vscode') to.add('vscode');
      if (!spec.startsWith('.')) continue;
      const bundle = /^\.\/(\w+)\.js$/.exec(spec)?.[1];
      const base = path.posix.join(path.posix.dirname(file), spec.replace(/\.js$/, ''));
      const target = bundle && lazy.has(bundle) ? lazy.get(bundle) : [`${base}.ts`, `${base}/index.ts`].find((f) => known.has(f));
      if (target && known.has(target)) to.add(target);
      else unresolved.push(`${file}: ${spec}`);
    }
    edges.set(file, [...to]);
  }
  return { edges, unresolved };
}

/** The import circles: each strongly connected group of files (Tarjan), with one circle through it. */
function circles(edges: Map<string, string[]>): Array<{ files: string[]; circle: string[] }> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (edges.get(v) ?? []).includes(v)) groups.push(group);
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return groups.map((g) => ({ files: g.sort(), circle: cycleThrough(g[0], new Set(g), edges) }));
}

/** A shortest way from `start` back to itself inside `group`: the circle as a reader follows it. */
function cycleThrough(start: string, group: Set<string>, edges: Map<string, string[]>): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift() as string;
    for (const w of edges.get(v) ?? []) {
      if (!group.has(w)) continue;
      if (w === start) {
        const way = [v];
        while (way[0] !== start) way.unshift(from.get(way[0]) as string);
        return [...way, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

type Floor = 'shared' | 'core' | 'webview' | 'vscode' | 'extension';

/**
 * The floors and what each may import, as docs/ARCHITECTURE.md draws them: src/shared (the host ↔ webview messages)
 * is the lowest; src/core (pure: Node, unit tests) and src/webview (the panel) build on it alone; the extension host
 * (src/vscode, then src/extension.ts) on core and shared, never on the webview; only the host imports `vscode`.
 */
const MAY_IMPORT: Record<Floor, readonly Floor[]> = {
  shared: ['shared'],
  core: ['shared', 'core'],
  webview: ['shared', 'webview'],
  vscode: ['shared', 'core', 'vscode'],
  extension: ['shared', 'core', 'vscode'],
};

function floorOf(file: string): Floor {
  if (file === 'vscode' || file.startsWith('src/vscode/')) return 'vscode';
  if (file === 'src/extension.ts') return 'extension';
  const floor = /^src\/(shared|core|webview)\//.exec(file)?.[1];
  if (!floor) throw new Error(`${file} is on no floor: add its folder to MAY_IMPORT`);
  return floor as Floor;
}

/** Counted as the structure viewer does: methods and accessors, not the constructor or fields. */
const MAX_METHODS = 25;

describe('structure of src/', () => {
  const graph = importGraph();

  it('every relative import names a file in src/ (or a lazy bundle of esbuild.mjs)', () => {
    assert.ok(graph.edges.size > 50, `${graph.edges.size} files read`);
    assert.deepEqual(graph.unresolved, [], `imports this test cannot follow:\n${graph.unresolved.join('\n')}`);
  });

  it('has no import circle, type-only imports and lazily loaded bundles included', () => {
    const found = circles(graph.edges);
    const words = found.map((c) => `${c.files.length} files: ${c.files.join(', ')}\n  for one: ${c.circle.join(' → ')}`);
    assert.deepEqual(found.map((c) => c.files), [], `import circles in src/:\n${words.join('\n')}`);
  });

  it('imports only down the floors (shared ← core, webview; core ← vscode ← extension.ts), and `vscode` only in the host', () => {
    const upward = [...graph.edges].flatMap(([file, to]) => to.filter((t) => !MAY_IMPORT[floorOf(file)].includes(floorOf(t))).map((t) => `${file} → ${t}`));
    assert.deepEqual(upward, [], `imports that run up a floor:\n${upward.join('\n')}`);
  });

  it(`has no class with over ${MAX_METHODS} methods`, () => {
    const big: string[] = [];
    for (const file of graph.edges.keys()) {
      const source = ts.createSourceFile(file, fs.readFileSync(path.join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (ts.isClassLike(n)) {
          const methods = n.members.filter((m) => ts.isMethodDeclaration(m) || ts.isGetAccessor(m) || ts.isSetAccessor(m)).length;
          if (methods > MAX_METHODS) big.push(`${file}: ${n.name?.text ?? '(anonymous class)'} has ${methods} methods`);
        }
        ts.forEachChild(n, visit);
      };
      visit(source);
    }
    assert.deepEqual(big, [], `classes over ${MAX_METHODS} methods:\n${big.join('\n')}`);
  });
});
