// The README the .vsix carries (scripts/package-readme.mjs): the manual with its reference pages, every link between
// them kept within the page, since VS Code's extension page opens only web links and docs/ is not packaged.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../support/repoRoot';

const root = repoRoot();

/** Anchors as scripts/package-readme.mjs and VS Code's Markdown make them. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

describe('the packaged README', () => {
  let text = '';
  before(() => {
    execFileSync(process.execPath, [path.join(root, 'scripts', 'package-readme.mjs')], { cwd: root });
    text = fs.readFileSync(path.join(root, 'dist', 'README.md'), 'utf8');
  });

  it('carries the README and every reference page it links to', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const pages = [...new Set([...readme.matchAll(/\]\(docs\/([\w-]+)\.md/g)].map((m) => m[1]).filter((p) => p !== 'ARCHITECTURE'))];
    assert.ok(pages.length >= 5, `the README links its pages (${pages.join(', ')})`);
    for (const p of pages) {
      const title = /^# (.+)$/m.exec(fs.readFileSync(path.join(root, 'docs', `${p}.md`), 'utf8'))?.[1];
      assert.ok(title && text.includes(`\n## ${title}\n`), `docs/${p}.md is in it, as a section: ${title}`);
    }
    assert.ok(text.startsWith(readme.slice(0, readme.indexOf('\n'))), 'the README comes first');
  });

  it('leaves out the sections about working in the repository (npm start from a clone, npm test), keeping the rest in order', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    assert.ok(headings.includes('Try it: `npm start`') && headings.some((h) => h.startsWith('Developing Parley')), 'the README has both');
    const kept = headings.filter((h) => h !== 'Try it: `npm start`' && !h.startsWith('Developing Parley'));
    const packaged = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    assert.deepEqual(packaged.slice(0, kept.length), kept);
    assert.ok(!/PARLEY_BASE_URL=|npm test` runs every test/.test(text));
  });

  it('links only within the page, or to the web: no link to a file the package does not carry', () => {
    const headings = new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
    const bad: string[] = [];
    for (const m of text.matchAll(/(?<!!)\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^(https?:|mailto:)/.test(target)) continue;
      if (!target.startsWith('#') || !headings.has(target.slice(1))) bad.push(target);
    }
    assert.deepEqual(bad, []);
  });

  it("its images are named from the repository's top (vsce makes them web links there), whichever page showed them", () => {
    const images = [...text.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^https?:/.test(t));
    assert.ok(images.length >= 5);
    assert.deepEqual(images.filter((t) => !fs.existsSync(path.join(root, t))), [], 'each is a file at that path');
  });
});
