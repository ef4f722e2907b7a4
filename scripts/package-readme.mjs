// Writes dist/README.md, the README shipped in the .vsix: the user's manual, without the sections for developers
// (the architecture and the tests), which stay in the repository's README. The Marketplace page and VS Code's
// extension view show this one.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
/** The first heading of the part for developers: it and everything after it are left out. */
const DEVELOPER_PART = '\n## Architecture: how the pieces fit\n';

/** The README for the package, made from the repository's; throws if the developer part's heading has moved. */
export function packageReadme(full) {
  const cut = full.indexOf(DEVELOPER_PART);
  if (cut < 0) throw new Error(`README.md has no "${DEVELOPER_PART.trim()}" heading: update scripts/package-readme.mjs`);
  return `${full.slice(0, cut)}\n## For developers\n\nThe architecture and the tests are described in the README of Parley's source repository.\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  writeFileSync(join(ROOT, 'dist', 'README.md'), packageReadme(readFileSync(join(ROOT, 'README.md'), 'utf8')));
}
