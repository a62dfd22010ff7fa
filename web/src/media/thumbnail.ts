/**
 * The client thumbnail sent with an upload (docs/attachments.md: WebP, at most 512 px a side):
 * drawn on an (Offscreen)Canvas. Browsers without a WebP encoder hand back a PNG for
 * `image/webp`; that would be refused (400 invalid_thumbnail), so then none is sent and the
 * server makes its own.
 */
const THUMBNAIL_SIDE = 512;

interface ImageFacts {
  width: number;
  height: number;
  thumbnail: Blob | null;
}

/** The image's size and its thumbnail; null when the browser cannot decode it. */
export async function readImage(file: Blob): Promise<ImageFacts | null> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    return null;
  }
  const { width, height } = bitmap;
  const scale = Math.min(1, THUMBNAIL_SIDE / Math.max(width, height));
  const size = [Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale))] as const;
  const thumbnail = await drawWebp(bitmap, ...size).catch(() => null);
  bitmap.close();
  return { width, height, thumbnail: thumbnail?.type === 'image/webp' ? thumbnail : null };
}

async function drawWebp(bitmap: ImageBitmap, width: number, height: number): Promise<Blob | null> {
  if (typeof OffscreenCanvas !== 'undefined') {
    const canvas = new OffscreenCanvas(width, height);
    canvas.getContext('2d')?.drawImage(bitmap, 0, 0, width, height);
    return canvas.convertToBlob({ type: 'image/webp', quality: 0.8 });
  }
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0, width, height);
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/webp', 0.8));
}
