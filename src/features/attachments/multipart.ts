import path from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { AppError, errors } from '../../errors.js';
import { PRIVATE_FILE_MODE } from '../../fileModes.js';
import { writeHashed } from '../../files.js';
import { MAX_CLIENT_THUMBNAIL_BYTES, MAX_FILE_BYTES } from './images.js';
import type { ReceivedFile, ReceivedUpload, ReceiveUpload } from './service.js';

/** Room for the form's boundaries and part headers next to the file and a client thumbnail. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
export const MAX_UPLOAD_BYTES = MAX_FILE_BYTES + MAX_CLIENT_THUMBNAIL_BYTES + FORM_OVERHEAD_BYTES;

/**
 * Parser limits for busboy. Every file part stops at 10 MiB while it streams (a longer one
 * is refused at that byte, never buffered); text fields are tiny and ignored.
 */
export const MULTIPART_LIMITS = {
  fileSize: MAX_FILE_BYTES,
  files: 4,
  fields: 16,
  fieldSize: 1024,
  parts: 20,
  headerPairs: 32,
};

type UploadField = 'file' | 'thumbnail';
/** The upload route's answer to a body over its limit (D-ATT-1). */
export const uploadTooLarge = () => errors.fileTooLarge(MAX_FILE_BYTES);

const TOO_LARGE: Record<UploadField, () => AppError> = {
  file: () => uploadTooLarge(), // D-ATT-1
  thumbnail: () =>
    errors.invalidThumbnail(`The thumbnail is larger than ${MAX_CLIENT_THUMBNAIL_BYTES} bytes`), // D-ATT-2
};

/** Streams one part to `target`, hashing it; busboy's size limit ends it with `tooLarge`. */
export async function saveLimited(
  source: Readable,
  target: string,
  tooLarge: () => AppError,
): Promise<Omit<ReceivedFile, 'filename'>> {
  source.once('limit', () => source.destroy(tooLarge()));
  return { path: target, ...(await writeHashed(source, target, PRIVATE_FILE_MODE)) };
}

/**
 * Broken multipart (no boundary, a truncated part...) is the client's fault: 400, never 500
 * (D-ERR-3). Errors with a status pass through; file-system errors stay server errors.
 */
export function asClientError(err: unknown): unknown {
  if (err instanceof AppError || !(err instanceof Error)) return err;
  if ('statusCode' in err || 'syscall' in err) return err;
  return errors.invalidMultipart(`The multipart body is malformed: ${err.message}`);
}

/**
 * Reads POST /api/notes/{id}/attachments: the `file` and `thumbnail` parts go to files in the
 * given directory, anything else is skipped. Nothing larger than one part's chunk is held in
 * memory. (A declared Content-Length beyond MAX_UPLOAD_BYTES never gets here: it is the route's
 * bodyLimit, refused before the request is authenticated.)
 */
export function receiveMultipart(request: FastifyRequest): ReceiveUpload {
  return async (directory) => {
    const upload: ReceivedUpload = {};
    try {
      for await (const part of request.parts({ limits: MULTIPART_LIMITS })) {
        if (part.type !== 'file') continue;
        const field = part.fieldname;
        if (field !== 'file' && field !== 'thumbnail') {
          part.file.resume();
          await finished(part.file);
          continue;
        }
        if (upload[field]) throw errors.invalidFile(`Send one \`${field}\` part, not several`);
        const saved = await saveLimited(part.file, path.join(directory, field), TOO_LARGE[field]);
        upload[field] = { ...saved, filename: part.filename };
      }
    } catch (err) {
      throw asClientError(err);
    }
    return upload;
  };
}
