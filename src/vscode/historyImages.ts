// Images of saved conversations, kept beside them in files of their own: content-addressed, written once.
//
// Why: a conversation is saved every 2 s while a reply streams (so a crash loses at most that), and images as data
// URLs inside its JSON made each of those saves write them all again (50 MB of images: about 300 ms per save, with
// the extension host busy turning them into JSON). Here an image is written once, to `images/<sha-256>.<type>`, and
// the conversation file holds only that name. Built into dist/historyImages.js, loaded by the first conversation
// with images.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { Conversation } from '../core/conversation';
import type { ImageView } from '../shared/protocol';
import { createFileOnce } from './files';

/** An image as the conversation file holds it: its name and the file with its bytes (`dataUrl` empty). */
type StoredImage = ImageView & { ref?: string };

const REF = /^[0-9a-f]{64}\.(png|jpeg|gif|webp)$/;
const DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,/;

/** The file each image in memory is stored in, so that a save does not hash the same 5 MB again. */
const refs = new WeakMap<ImageView, string>();

/** The conversation as it is written: each image's data URL replaced by the file that holds it, written first if new. */
export async function withImageRefs(c: Conversation, dir: string): Promise<Conversation> {
  let made = false;
  const ref = async (img: ImageView): Promise<StoredImage> => {
    let name = refs.get(img);
    // A file written earlier is checked for (a stat): Clear all in another window may have removed it since.
    if (!name || !(await fs.stat(join(dir, name)).then(() => true, () => false))) {
      const m = DATA_URL.exec(img.dataUrl);
      if (!m) return img;
      const b64 = img.dataUrl.slice(m[0].length);
      name = `${createHash('sha256').update(b64).digest('hex')}.${m[1]}`;
      if (!made) await fs.mkdir(dir, { recursive: true });
      made = true;
      await createFileOnce(join(dir, name), Buffer.from(b64, 'base64'));
      refs.set(img, name);
    }
    return { name: img.name, dataUrl: '', ref: name };
  };
  const turns = await Promise.all(c.turns.map(async (t) => (t.images?.length ? { ...t, images: await Promise.all(t.images.map(ref)) } : t)));
  return { ...c, turns };
}

/**
 * Puts each stored image's data back from its file, in place. An image whose file is gone is left out, and its turn
 * says so, so the conversation still opens and can be sent.
 */
export async function withImageData(c: Conversation, dir: string): Promise<void> {
  for (const t of c.turns) {
    if (!t.images?.length) continue;
    const kept: ImageView[] = [];
    for (const img of t.images as StoredImage[]) {
      if (img.ref === undefined) {
        kept.push(img);
        continue;
      }
      const bytes = REF.test(img.ref) ? await fs.readFile(join(dir, img.ref)).catch(() => undefined) : undefined;
      if (!bytes) {
        t.note = `${t.note ? `${t.note} ` : ''}(The image ${img.name} is missing from Parley's storage.)`;
        continue;
      }
      const view = { name: img.name, dataUrl: `data:image/${img.ref.split('.')[1]};base64,${bytes.toString('base64')}` };
      refs.set(view, img.ref);
      kept.push(view);
    }
    t.images = kept.length ? kept : undefined;
  }
}

/** Whether a conversation read from disk has images stored in files. */
export function hasImageRefs(c: Conversation): boolean {
  return c.turns.some((t) => (t.images as StoredImage[] | undefined)?.some((i) => i.ref !== undefined));
}
