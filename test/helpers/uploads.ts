import type { TestClient } from './client.js';

/** POST /api/notes/{noteId}/attachments with one `file` part. */
export function uploadImage(client: TestClient, noteId: string, file: Buffer, filename = 'photo.png') {
  const body = new FormData();
  body.append('file', new Blob([file]), filename);
  return client.request('POST', `/api/notes/${noteId}/attachments`, { body });
}
