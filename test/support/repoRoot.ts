// The repository root for tests that read the repository's own files (the map, the sources, the package).
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository root: the nearest folder above this file (src or bundle) holding package.json. */
export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}
