/**
 * Notes as MCP resources (D-MCP-3): `note://{id}`. Kept apart from the SDK, which GET /api/mcp
 * (the update stream) does not load.
 */
export const NOTE_URI_TEMPLATE = 'note://{id}';

export function noteUri(noteId: string): string {
  return `note://${noteId}`;
}

/** The note id a `note://{id}` URI names, or null for any other URI. */
export function noteIdOfUri(uri: string): string | null {
  return /^note:\/\/([^/?#]+)$/.exec(uri)?.[1] ?? null;
}

/** The JSON-RPC notification telling a subscribed session that a note resource changed. */
export function resourceUpdated(noteId: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/resources/updated',
    params: { uri: noteUri(noteId) },
  });
}
