/**
 * Share-link tokens are bearer secrets; they never reach the log in a URL (D-OPS-4). The token
 * is the segment after an `s` or `shared` segment anywhere in the path, found on the decoded
 * path: the router decodes `/%73/<token>` and `/api/%73hared/<token>` before matching, and a
 * mistyped `//s/<token>` carries the token just the same.
 */
const TOKEN_SEGMENT = /(^|\/)(s|shared)(\/+)[^/]+/gi;

/** Decodes %XX escapes; a malformed one is kept as it is rather than failing the log line. */
function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
}

/** The URL to log: as received, or its decoded path with share tokens replaced (query kept). */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const decoded = decodePath(path);
  const redacted = decoded.replace(TOKEN_SEGMENT, '$1$2$3[redacted]');
  return redacted === decoded ? url : redacted + url.slice(path.length);
}
