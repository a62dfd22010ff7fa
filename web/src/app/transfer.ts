/**
 * Moving in and out (docs/backup.md): upload an archive to POST /api/import with progress, and
 * this device's own copy of its notes as a zip the import reads back (for signing out with
 * changes the server does not have yet). The server's export is a plain download of /api/export.
 */
import { Zip, ZipPassThrough } from 'fflate';
import type { ImportSummary } from '../../../src/shared/api/transfer.js';
import type { LocalNote } from '../sync/index.js';
import { ApiError } from './api.js';

/** fetch() cannot report upload progress; XMLHttpRequest can. `onProgress` gets 0..1. */
export function uploadImport(file: Blob, onProgress: (fraction: number) => void): Promise<ImportSummary> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', '/api/import');
    request.responseType = 'json';
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    request.addEventListener('load', () => {
      const body = request.response ?? {};
      if (request.status === 200) resolve(body as ImportSummary);
      else reject(new ApiError(request.status, body.message ?? `The server answered ${request.status}`));
    });
    request.addEventListener('error', () => reject(new Error('The upload failed: is the server reachable?')));
    const form = new FormData();
    form.append('file', file, file instanceof File ? file.name : 'archive.zip');
    request.send(form);
  });
}

/**
 * The device's notes, as they are here (unsynced changes included), in our export's notes.json
 * format (docs/backup.md), zipped: the import reads it. Attachments stay on the server.
 */
export function deviceExport(notes: Iterable<LocalNote>, now = new Date()): Blob {
  const exported = [...notes].map(({ pending: _pending, attachments: _attachments, ...note }) => ({
    ...note,
    attachments: [],
  }));
  const json = JSON.stringify({
    format: 'keepsake-notes-export',
    version: 1,
    exportedAt: now.toISOString(),
    notes: exported,
  });
  return storedZip('notes.json', new TextEncoder().encode(json));
}

/**
 * A zip of one file, stored rather than deflated: fflate's streaming classes without its
 * compressor keep ~2 KB (brotli) out of the app's JavaScript, and the file is only downloaded.
 */
function storedZip(name: string, data: Uint8Array): Blob {
  const parts: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    parts.push(chunk);
  });
  const file = new ZipPassThrough(name);
  zip.add(file);
  file.push(data, true);
  zip.end();
  return new Blob(parts as BlobPart[], { type: 'application/zip' });
}

/** Offers `data` as a download named `filename`. */
export function download(data: Blob, filename: string): void {
  const url = URL.createObjectURL(data);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
