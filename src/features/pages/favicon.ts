// The site icon (/favicon.ico): a calendar mark drawn as SVG, rasterised by sharp and packed as a Windows icon of PNG images.

/** The mark in the pages' accent colour; a white sheet with two rings and a tick. */
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#0b57d0"/>
<rect x="6" y="8" width="20" height="18" rx="3" fill="#ffffff"/>
<rect x="6" y="8" width="20" height="5" rx="2" fill="#c2d7fa"/>
<rect x="10" y="5" width="3" height="6" rx="1.5" fill="#ffffff"/>
<rect x="19" y="5" width="3" height="6" rx="1.5" fill="#ffffff"/>
<path d="M11 19.5l3.2 3.2 6.8-6.8" fill="none" stroke="#0b57d0" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round"/>
</svg>`;

/** The sizes browsers and the OS ask a favicon for: tab, taskbar, desktop. */
const SIZES = [16, 32, 48] as const;

/**
 * An ICO file holding one PNG per size (the PNG form of ICO entries, read by every browser since IE 11): a
 * 6-byte header, a 16-byte entry per image, then the images.
 */
function packIco(images: readonly { size: number; png: Buffer }[]): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // 1 = icon
  header.writeUInt16LE(images.length, 4);
  const entries: Buffer[] = [];
  let offset = 6 + 16 * images.length;
  for (const { size, png } of images) {
    const entry = Buffer.alloc(16);
    entry.writeUInt8(size >= 256 ? 0 : size, 0); // width (0 means 256)
    entry.writeUInt8(size >= 256 ? 0 : size, 1); // height
    entry.writeUInt8(0, 2); // no palette
    entry.writeUInt8(0, 3);
    entry.writeUInt16LE(1, 4); // colour planes
    entry.writeUInt16LE(32, 6); // bits per pixel
    entry.writeUInt32LE(png.length, 8);
    entry.writeUInt32LE(offset, 12);
    offset += png.length;
    entries.push(entry);
  }
  return Buffer.concat([header, ...entries, ...images.map((i) => i.png)]);
}

/** The icon, made when the assets are bundled (at build, or once at start). */
export async function faviconIco(): Promise<Buffer> {
  const { default: sharp } = await import("sharp");
  const images = await Promise.all(
    SIZES.map(async (size) => ({ size, png: await sharp(Buffer.from(SVG), { density: (72 * size) / 32 }).resize(size, size).png({ compressionLevel: 9 }).toBuffer() })),
  );
  return packIco(images);
}
