const MAX_FILENAME_LENGTH = 255; // D-ATT-3

/** C0/C1 controls and the invisible direction marks used to disguise names ("gpj.exe"). */
const UNSAFE_CHARACTERS = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'avif',
};

/**
 * The stored filename (D-ATT-3): the client's name without path parts or control characters,
 * at most 255 characters. It is only ever shown, never used as a path. A name left empty
 * becomes `image.<ext>` from the detected type.
 */
export function sanitizeFilename(clientName: string, mimeType: string): string {
  const lastPart = clientName.normalize('NFC').split(/[/\\]/).pop() ?? '';
  const cleaned = lastPart.replace(UNSAFE_CHARACTERS, '').trim();
  const name = Array.from(cleaned).slice(0, MAX_FILENAME_LENGTH).join('').trim();
  if (name === '' || name === '.' || name === '..') return `image.${EXTENSIONS[mimeType] ?? 'bin'}`;
  return name;
}

/** The thumbnail's download name: the original's stem with `.webp`. */
export function thumbnailFilename(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return `${dot > 0 ? filename.slice(0, dot) : filename}-thumbnail.webp`;
}

/**
 * `inline` with an ASCII fallback name and the exact name in RFC 5987 form, so that no quote,
 * backslash or non-ASCII character of a stored name can break the header (D-ATT-4).
 */
export function inlineDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `inline; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
