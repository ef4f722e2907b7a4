// Checks that an attached "image" really is one, by its first bytes rather than its name.
import type { ImageView } from '../shared/protocol';

const SIGNATURES: Array<{ mime: string; test: (b: Uint8Array) => boolean }> = [
  { mime: 'image/png', test: (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 },
  { mime: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: 'image/gif', test: (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38 },
  {
    mime: 'image/webp',
    test: (b) => b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50,
  },
];

/** The image type the bytes are, or undefined when they are not PNG, JPEG, GIF or WebP. */
export function sniffImage(bytes: Uint8Array): string | undefined {
  return SIGNATURES.find((s) => bytes.length >= 12 && s.test(bytes))?.mime;
}

/** Decodes the start of a base64 data URL's payload (enough for sniffImage). */
export function dataUrlHead(dataUrl: string, bytes = 16): Uint8Array {
  const b64 = dataUrl.slice(dataUrl.indexOf(',') + 1, dataUrl.indexOf(',') + 1 + Math.ceil(bytes / 3) * 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Images labelled by their bytes, not by what the file or the clipboard claimed, or why one is refused. */
export function checkImages(images: ImageView[]): ImageView[] | string {
  const checked: ImageView[] = [];
  for (const img of images) {
    let kind: string | undefined;
    try {
      kind = sniffImage(dataUrlHead(img.dataUrl));
    } catch {
      kind = undefined;
    }
    if (!kind) return `${img.name} is not a PNG, JPEG, GIF or WebP image. Nothing was sent.`;
    // Servers reject a JPEG sent as PNG.
    checked.push({ name: img.name, dataUrl: `data:${kind};base64,${img.dataUrl.slice(img.dataUrl.indexOf(',') + 1)}` });
  }
  return checked;
}
