import pLimit from 'p-limit';
import type { Metadata, Sharp } from 'sharp';
import { errors } from '../../errors.js';

type SharpFunction = typeof import('sharp')['default'];
let loadingSharp: Promise<SharpFunction> | undefined;

/**
 * sharp, loaded by the first image that needs it: libvips costs an idle server ~27 MiB of
 * memory, and most requests never touch an image (docs/decisions/0017-performance.md).
 */
function loadSharp(): Promise<SharpFunction> {
  loadingSharp ??= import('sharp').then(({ default: sharp }) => {
    // Each upload is decoded once from a temporary file: libvips' operation cache would only
    // keep those files open after they are deleted.
    sharp.cache(false);
    return sharp;
  });
  return loadingSharp;
}

/**
 * Image work (header reads and decodes) runs this many at a time in the whole process, the
 * rest wait in line: a decode may hold the whole image in memory (an interlaced 16-bit PNG at
 * the pixel limit: 8 bytes a pixel), so memory is bounded by this times the limit, however
 * many uploads arrive at once.
 */
export const DECODES_AT_ONCE = 2;
const decodeSlot = pLimit(DECODES_AT_ONCE);

export const MAX_FILE_BYTES = 10 * 1024 * 1024; // D-ATT-1
export const MAX_CLIENT_THUMBNAIL_BYTES = 1024 * 1024; // D-ATT-2
const MAX_CLIENT_THUMBNAIL_SIDE = 512; // D-ATT-2
const THUMBNAIL_SIDE = 200; // D-ATT-2

const ACCEPTED_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'] as const;

/** The accepted type of an image from what libvips found in its bytes; SVG, TIFF, HEIC... are not. */
function acceptedType(metadata: Metadata): (typeof ACCEPTED_TYPES)[number] | null {
  switch (metadata.format) {
    case 'jpeg':
      return 'image/jpeg';
    case 'png':
      return 'image/png';
    case 'webp':
      return 'image/webp';
    case 'gif':
      return 'image/gif';
    case 'heif':
      // AVIF is HEIF with AV1 inside; HEIC (HEVC inside) is not accepted.
      return metadata.compression === 'av1' ? 'image/avif' : null;
    default:
      return null;
  }
}

async function metadataOf(file: string): Promise<Metadata | null> {
  const sharp = await loadSharp();
  try {
    return await decodeSlot(() => sharp(file).metadata());
  } catch {
    return null;
  }
}

/** The height of one frame: only the first frame of an animation is decoded. */
const frameHeight = (metadata: Metadata) => metadata.pageHeight ?? metadata.height;

/**
 * Refuses, from the header alone, an image with more pixels than `maxPixels`: a small file can
 * declare a huge image (a decode bomb) that would take gigabytes and seconds to decode.
 */
function checkPixels(metadata: Metadata, maxPixels: number): void {
  if (metadata.width * frameHeight(metadata) > maxPixels) throw errors.imageTooLarge(maxPixels);
}

/**
 * Decodes in one of the DECODES_AT_ONCE slots. libvips checks the pixel limit again itself
 * (`limitInputPixels`), in case a format's decoder sees more than its header said.
 */
async function decode<T>(file: string, maxPixels: number, use: (image: Sharp) => Promise<T>): Promise<T> {
  const sharp = await loadSharp();
  return decodeSlot(() => use(sharp(file, { failOn: 'truncated', limitInputPixels: maxPixels })));
}

/**
 * The size an image is shown at: EXIF orientation applied (a portrait photo stored sideways is
 * taller than wide), and one frame of an animation.
 */
function shownSize(metadata: Metadata): { width: number; height: number } {
  const frame = { width: metadata.width, height: frameHeight(metadata) };
  const turned = (metadata.orientation ?? 1) >= 5; // EXIF 5 to 8 turn the image a quarter
  return turned ? { width: frame.height, height: frame.width } : frame;
}

/**
 * Recognises an uploaded image by its bytes (D-ATT-1) and decodes it whole into a WebP
 * thumbnail (D-ATT-2: at most 200 px on the longer side, EXIF orientation applied, never
 * upscaled; the first frame of an animation). Decoding everything is also what catches a
 * corrupt or truncated file whose header alone looks fine. Over `maxPixels`: 413, undecoded.
 * Also gives the size the image is shown at, for clients to size it before it loads.
 */
export async function readImage(
  file: string,
  maxPixels: number,
): Promise<{ mimeType: string; thumbnail: Buffer; width: number; height: number }> {
  const metadata = await metadataOf(file);
  const mimeType = metadata ? acceptedType(metadata) : null;
  if (!metadata || !mimeType)
    throw errors.invalidFile('The file must be a JPEG, PNG, WebP, GIF or AVIF image');
  checkPixels(metadata, maxPixels);
  try {
    const thumbnail = await decode(file, maxPixels, (image) =>
      image
        .autoOrient()
        .resize(THUMBNAIL_SIDE, THUMBNAIL_SIDE, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 80 })
        .toBuffer(),
    );
    return { mimeType, thumbnail, ...shownSize(metadata) };
  } catch {
    throw errors.invalidFile('The image is corrupt or truncated');
  }
}

/**
 * A client's own thumbnail must be a WebP image of at most 1 MiB and 512 px a side (D-ATT-2).
 * The pixel limit comes first, so a decode bomb is a 413 whatever its format.
 */
export async function checkClientThumbnail(file: string, size: number, maxPixels: number): Promise<void> {
  if (size > MAX_CLIENT_THUMBNAIL_BYTES) throw errors.invalidThumbnail('The thumbnail is larger than 1 MiB');
  const metadata = await metadataOf(file);
  if (metadata) checkPixels(metadata, maxPixels);
  if (metadata?.format !== 'webp') throw errors.invalidThumbnail('The thumbnail must be a WebP image');
  if (metadata.width > MAX_CLIENT_THUMBNAIL_SIDE || frameHeight(metadata) > MAX_CLIENT_THUMBNAIL_SIDE) {
    throw errors.invalidThumbnail(
      `The thumbnail must be at most ${MAX_CLIENT_THUMBNAIL_SIDE} px on each side`,
    );
  }
  try {
    await decode(file, maxPixels, (image) => image.stats());
  } catch {
    throw errors.invalidThumbnail('The thumbnail is corrupt or truncated');
  }
}
