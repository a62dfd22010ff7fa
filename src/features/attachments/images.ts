import sharp, { type Metadata } from 'sharp';
import { errors } from '../../errors.js';

// Each upload is decoded once from a temporary file: libvips' operation cache would only keep
// those files open after they are deleted.
sharp.cache(false);

export const MAX_FILE_BYTES = 10 * 1024 * 1024; // D-ATT-1
export const MAX_CLIENT_THUMBNAIL_BYTES = 1024 * 1024; // D-ATT-2
export const MAX_CLIENT_THUMBNAIL_SIDE = 512; // D-ATT-2
export const THUMBNAIL_SIDE = 200; // D-ATT-2

export const ACCEPTED_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'] as const;

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
  try {
    return await sharp(file).metadata();
  } catch {
    return null;
  }
}

/**
 * Recognises an uploaded image by its bytes (D-ATT-1) and decodes it whole into a WebP
 * thumbnail (D-ATT-2: at most 200 px on the longer side, EXIF orientation applied, never
 * upscaled; the first frame of an animation). Decoding everything is also what catches a
 * corrupt or truncated file whose header alone looks fine.
 */
export async function readImage(file: string): Promise<{ mimeType: string; thumbnail: Buffer }> {
  const metadata = await metadataOf(file);
  const mimeType = metadata ? acceptedType(metadata) : null;
  if (!mimeType) throw errors.invalidFile('The file must be a JPEG, PNG, WebP, GIF or AVIF image');
  try {
    const thumbnail = await sharp(file, { failOn: 'truncated' })
      .autoOrient()
      .resize(THUMBNAIL_SIDE, THUMBNAIL_SIDE, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
    return { mimeType, thumbnail };
  } catch {
    throw errors.invalidFile('The image is corrupt or truncated');
  }
}

/** A client's own thumbnail must be a WebP image of at most 1 MiB and 512 px a side (D-ATT-2). */
export async function checkClientThumbnail(file: string, size: number): Promise<void> {
  if (size > MAX_CLIENT_THUMBNAIL_BYTES) throw errors.invalidThumbnail('The thumbnail is larger than 1 MiB');
  const metadata = await metadataOf(file);
  if (metadata?.format !== 'webp') throw errors.invalidThumbnail('The thumbnail must be a WebP image');
  const height = metadata.pageHeight ?? metadata.height;
  if (metadata.width > MAX_CLIENT_THUMBNAIL_SIDE || height > MAX_CLIENT_THUMBNAIL_SIDE) {
    throw errors.invalidThumbnail(
      `The thumbnail must be at most ${MAX_CLIENT_THUMBNAIL_SIDE} px on each side`,
    );
  }
  try {
    await sharp(file, { failOn: 'truncated' }).stats();
  } catch {
    throw errors.invalidThumbnail('The thumbnail is corrupt or truncated');
  }
}
