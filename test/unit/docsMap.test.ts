// The map cannot go stale silently: every repository path docs/ARCHITECTURE.md and CONTRIBUTING.md name exists, every
// name in the architecture's "Where is X" table is declared in its row's file, the walks name only what that table
// lists, and the links between the README and the pages under docs/ lead somewhere.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../support/repoRoot';


const ROOT = repoRoot();
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** A page without its fenced code blocks: diagrams and examples name things loosely. */
function prose(md: string): string {
  return md.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
}

/** The text of each `code span`. */
function spans(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
}

/** A path in this repository, as the pages write one (no glob, no braces). */
const REPO_PATH = /^(?:src|test|scripts|bench)\/[\w./-]*$/;
/** Where a run writes its output: named as a destination, not expected in a fresh clone. */
const WRITTEN = /^bench\/results\//;
/** A name as the table writes one: `fn()`, `Class.method()`, or a bare class, interface or constant. */
const NAME = /^([A-Za-z_$][\w$]*)(?:\.([A-Za-z_$][\w$]*))?(\(\))?$/;

/** Every repository path in a page's code spans, commands included (`node scripts/x.mjs`). */
function pathsIn(md: string): string[] {
  const out = new Set<string>();
  for (const span of spans(md)) {
    for (const word of span.split(/\s+/)) {
      const p = word.replace(/^['"(]+|['"),:;]+$/g, '');
      if (REPO_PATH.test(p) && !WRITTEN.test(p)) out.add(p);
    }
  }
  return [...out];
}

const MODIFIERS = '(?:(?:export|default|declare|abstract|private|protected|public|static|async|readonly|override|get|set)\\s+)*';

/** The body of `class name` (up to the closing brace at the start of a line), or undefined. */
function classBody(source: string, name: string): string | undefined {
  const start = new RegExp(`^${MODIFIERS}class\\s+${name}\\b`, 'm').exec(source);
  if (!start) return undefined;
  const rest = source.slice(start.index);
  const end = rest.search(/^\}/m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** Whether `file` declares `name`: a function, class, interface, type or constant, or `Class.member` in that class. */
function declares(source: string, name: string): boolean {
  const m = NAME.exec(name);
  if (!m) return false;
  const [, owner, member] = m;
  if (member) {
    const body = classBody(source, owner);
    return body !== undefined && new RegExp(`^\\s+${MODIFIERS}${member}\\s*[(<]`, 'm').test(body);
  }
  return new RegExp(`^${MODIFIERS}(?:function\\*?\\s*|class\\s+|interface\\s+|type\\s+|const\\s+|let\\s+)${owner}\\b`, 'm').test(source);
}

interface Row {
  what: string;
  file: string;
  names: string[];
}

/** The rows of the "Where is X" table. */
function whereIsX(md: string): Row[] {
  const at = md.indexOf('\n## Where is X');
  assert.ok(at >= 0, 'docs/ARCHITECTURE.md has a "## Where is X" section');
  const lines = md.slice(at).split('\n').slice(1);
  const first = lines.findIndex((l) => l.startsWith('|'));
  const table: string[] = [];
  for (const l of lines.slice(first)) {
    if (!l.startsWith('|')) break;
    table.push(l);
  }
  return table.slice(2).map((l) => {
    const cells = l.split('|').slice(1, -1).map((c) => c.trim());
    assert.equal(cells.length, 3, `a row has three cells: ${l}`);
    const files = spans(cells[1]);
    assert.equal(files.length, 1, `one file per row: ${l}`);
    return { what: cells[0], file: files[0], names: spans(cells[2]) };
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a page's headings, numbered as GitHub numbers repeats. */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(md).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('docs: the map and the manual stay true', () => {
  const architecture = read('docs/ARCHITECTURE.md');
  const rows = whereIsX(architecture);

  it('every repository path in docs/ARCHITECTURE.md and CONTRIBUTING.md exists', () => {
    for (const page of ['docs/ARCHITECTURE.md', 'CONTRIBUTING.md']) {
      const paths = pathsIn(read(page));
      assert.ok(paths.length > 10, `${page} names paths (${paths.length} read)`);
      const missing = paths.filter((p) => !fs.existsSync(path.join(ROOT, p)));
      assert.deepEqual(missing, [], `${page}: paths that do not exist`);
    }
  });

  it('every name in the "Where is X" table is declared in the file of its row', () => {
    assert.ok(rows.length > 50, `rows read: ${rows.length}`);
    const wrong: string[] = [];
    for (const row of rows) {
      assert.match(row.file, /^src\/.+\.ts$/, `a row names one source file: ${row.file}`);
      if (!fs.statSync(path.join(ROOT, row.file), { throwIfNoEntry: false })?.isFile()) {
        wrong.push(`${row.file}: no such file`);
        continue;
      }
      const source = read(row.file);
      for (const name of row.names) if (!declares(source, name)) wrong.push(`${name} in ${row.file}`);
    }
    assert.deepEqual(wrong, [], 'names not declared in their row\'s file');
  });

  it('the table takes a newcomer to each behaviour the issue names', () => {
    const what = rows.map((r) => r.what).join('\n');
    for (const topic of ['retry backoff', 'Stop', 'status-bar text', 'Reading the key', 'JSON-mode fallback', '<think>', 'Tool approval', 'exclude gate', "Apply's search/replace", "Compaction's trigger", 'usage log merge']) {
      assert.ok(what.includes(topic), `a row for "${topic}"`);
    }
  });

  it('the walks name only functions and classes the table lists', () => {
    const at = architecture.indexOf('\n## Walks');
    assert.ok(at >= 0, 'docs/ARCHITECTURE.md has a "## Walks" section');
    const listed = new Set(rows.flatMap((r) => r.names.map((n) => n.replace(/\(\)$/, ''))));
    const owners = new Set([...listed].map((n) => n.split('.')[0]));
    const named = spans(prose(architecture.slice(at))).filter((s) => /^[A-Za-z_$][\w$]*(?:\.[\w$]+)?\(\)$/.test(s) || /^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$/.test(s) || /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(s));
    assert.ok(named.length > 50, `names read from the walks: ${named.length}`);
    const unlisted = [...new Set(named)].filter((n) => {
      const bare = n.replace(/\(\)$/, '');
      return !listed.has(bare) && !(n === bare && owners.has(bare));
    });
    assert.deepEqual(unlisted, [], 'walk names missing from the "Where is X" table');
  });

  it('links between the README, CONTRIBUTING.md and docs/ lead to a file and a heading that exist', () => {
    const pages = ['README.md', 'CONTRIBUTING.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const broken: string[] = [];
    let links = 0;
    for (const page of pages) {
      // Code spans show link syntax as text (`[label](command:…)`): not links.
      const text = prose(read(page)).replace(/`[^`\n]+`/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^(?:https?|mailto):/.test(target)) continue;
        links++;
        const [file, anchor] = target.split('#');
        const resolved = file ? path.posix.normalize(path.posix.join(path.posix.dirname(page), file)) : page;
        if (!fs.existsSync(path.join(ROOT, resolved))) {
          broken.push(`${page}: ${target} (no ${resolved})`);
          continue;
        }
        if (anchor && !anchors(read(resolved)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    assert.ok(links > 20, `links read: ${links}`);
    assert.deepEqual(broken, [], 'broken links');
  });
});
