/** Share-link tokens are bearer secrets; they never reach the log in a URL (D-OPS-4). */
const TOKEN_IN_PATH = /^(\/api\/shared\/|\/s\/)[^/?#]+/;

export function redactUrl(url: string): string {
  return url.replace(TOKEN_IN_PATH, '$1[redacted]');
}
