// Reading a local file by a handle proven to be the checked file (src/vscode/tools/localRead.ts), on real files and
// symbolic links in a temp folder, both ways of proving it: Linux's /proc/self/fd and the device-and-inode fallback.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isOpenedPath, readUpTo } from '../../src/vscode/tools/localRead';

describe('local reads (localRead)', () => {
  let dir: string;
  let inside: string;
  let outside: string;

  beforeEach(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'parley-localread-')));
    inside = path.join(dir, 'ws');
    outside = path.join(dir, 'outside');
    await fs.mkdir(path.join(inside, 'sub'), { recursive: true });
    await fs.mkdir(outside);
    await fs.writeFile(path.join(inside, 'sub', 'a.txt'), 'inside');
    await fs.writeFile(path.join(outside, 'a.txt'), 'outside');
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** Opens `real` as the tools do after their check, runs `between` (the swap), and asks whether it is still the file. */
  async function opened(real: string, procFd: boolean, between: () => Promise<void> = async () => {}): Promise<{ same: boolean; text: string }> {
    const file = await fs.open(real, 'r');
    try {
      await between();
      const stat = await file.stat();
      return { same: await isOpenedPath(file, stat, real, procFd), text: Buffer.from(await readUpTo(file, stat.size, 100)).toString() };
    } finally {
      await file.close();
    }
  }

  for (const procFd of [true, false]) {
    const how = procFd ? '/proc/self/fd where there is one' : 'device and inode';
    const real = () => path.join(inside, 'sub', 'a.txt');

    it(`the checked file itself is proven (${how})`, async () => {
      assert.deepEqual(await opened(real(), procFd), { same: true, text: 'inside' });
    });

    it(`a path swapped for a link after the open: the handle still reads the inside file, and the proof refuses it anyway (${how})`, async function () {
      // Skipped only where the OS refuses symbolic links (canLink: EPERM on Windows without Developer Mode); CI runs it.
      if (!(await canLink(dir))) this.skip();
      const r = await opened(real(), procFd, async () => {
        await fs.rm(real());
        await fs.symlink(path.join(outside, 'a.txt'), real());
      });
      // Nothing from outside could come through this handle; the refusal is the cautious answer to a path that moved.
      assert.equal(r.text, 'inside');
      assert.equal(r.same, false);
    });

    it(`a folder on the way swapped for a link to outside before the open is caught (${how})`, async function () {
      // Skipped only where the OS refuses symbolic links (canLink: EPERM on Windows without Developer Mode); CI runs it.
      if (!(await canLink(dir))) this.skip();
      // Checked as ws/sub/a.txt; by the open, ws/sub is a link to the outside folder, which has an a.txt too.
      await fs.rm(path.join(inside, 'sub'), { recursive: true });
      await fs.symlink(outside, path.join(inside, 'sub'), 'dir');
      const r = await opened(real(), procFd);
      assert.equal(r.text, 'outside', 'the open followed the link on the way');
      assert.equal(r.same, false, 'and the proof refuses it');
    });
  }

  it('readUpTo reads to the end, or to the limit, whatever the size measured before', async () => {
    const p = path.join(inside, 'sub', 'a.txt');
    await fs.writeFile(p, 'x'.repeat(5000));
    const file = await fs.open(p, 'r');
    try {
      assert.equal((await readUpTo(file, 5000, 10_000)).length, 5000);
      assert.equal((await readUpTo(file, 10, 10_000)).length, 5000, 'grown since measured: read on to the end');
      assert.equal((await readUpTo(file, 5000, 1001)).length, 1001, 'never past the limit');
      assert.equal((await readUpTo(file, 0, 10)).length, 10);
    } finally {
      await file.close();
    }
  });
});

/** Whether this OS lets the test make symbolic links (Windows without Developer Mode does not: EPERM). */
async function canLink(dir: string): Promise<boolean> {
  try {
    await fs.symlink(dir, path.join(dir, 'probe-link'), 'dir');
    await fs.rm(path.join(dir, 'probe-link'));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EPERM') return false;
    throw e;
  }
}
