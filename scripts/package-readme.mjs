// The README the .vsix carries (dist/README.md): the manual with its reference pages (docs/*.md, the pages the README
// links to) after it, each link between them turned into a link within the page. VS Code's extension page opens only
// web links, and docs/ is not packaged, so the installed extension shows the whole manual offline. `npm run package`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A heading's anchor as GitHub and VS Code's Markdown preview make it. */
export function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The reference pages the README links to, in the order it first names them. */
export function linkedPages(readme) {
  const pages = [];
  for (const m of readme.matchAll(/\]\(docs\/([\w-]+)\.md(?:#[^)]*)?\)/g)) {
    if (m[1] !== 'ARCHITECTURE' && !pages.includes(m[1])) pages.push(m[1]);
  }
  return pages;
}

/** The README's sections about working in the repository (running it from a clone, its tests): not for the installed extension. */
const REPOSITORY_SECTIONS = [/^## Try it: `npm start`$/, /^## Developing Parley/];

/** The README without its REPOSITORY_SECTIONS (each up to the next `## ` heading). */
export function withoutRepositorySections(readme) {
  const parts = readme.split(/^(?=## )/m);
  return parts.filter((p) => !REPOSITORY_SECTIONS.some((re) => re.test(p.split('\n')[0]))).join('');
}

/**
 * The packaged manual from the README and its pages (`pages`: name → text). Links to a page go to its heading, links
 * to a heading of a page to that heading, links back to the README to its heading; links to what the package does not
 * carry (the map, CONTRIBUTING) keep their words without the link.
 */
export function packagedReadme(readme, pages) {
  const titles = new Map(Object.entries(pages).map(([name, text]) => [name, slug(/^# (.+)$/m.exec(text)?.[1] ?? name)]));
  const relink = (text, fromDocs) =>
    text.replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, words, target) => {
      if (/^(https?:|mailto:|#)/.test(target)) return whole;
      // An image of a page is in docs/ beside it: from the manual's top, docs/ leads to it.
      if (/\.(png|gif|jpe?g|svg)$/i.test(target)) return fromDocs && !target.startsWith('../') ? `[${words}](docs/${target})` : whole;
      const [path, anchor] = target.split('#');
      const name = /(?:^|\/)([\w-]+)\.md$/.exec(path)?.[1];
      if (name === 'README' || (fromDocs && path === '../README.md')) return `[${words}](#${anchor ?? 'parley'})`;
      if (name && titles.has(name)) return `[${words}](#${anchor ?? titles.get(name)})`;
      return words;
    });
  const body = Object.entries(pages).map(([, text]) =>
    relink(text, true)
      // One level down: each page is a section of the one manual.
      .replace(/^(#{1,5}) /gm, '#$1 ')
      // The pointer back to the README's short version: the reader is in it.
      .replace(/^A page of Parley's manual;.*\n\n?/m, ''));
  const head = relink(withoutRepositorySections(readme), false).replace(/The longer reference pages are in `docs\/` in Parley's repository:/, 'The longer reference pages follow below:');
  return `${head.trimEnd()}\n\n${body.map((b) => b.trim()).join('\n\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const pages = Object.fromEntries(linkedPages(readme).map((name) => [name, readFileSync(join(ROOT, 'docs', `${name}.md`), 'utf8')]));
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  writeFileSync(join(ROOT, 'dist', 'README.md'), packagedReadme(readme, pages));
  console.log(`dist/README.md: the README and ${Object.keys(pages).length} reference pages (${Object.keys(pages).join(', ')})`);
}
