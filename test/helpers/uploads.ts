import { attachmentStorageFor } from '../../src/features/attachments/storageFor.js';
import type { TestClient } from './client.js';
import type { TestServer } from './server.js';

/** POST /api/notes/{noteId}/attachments with one `file` part. */
export function uploadImage(client: TestClient, noteId: string, file: Buffer, filename = 'photo.png') {
  const body = new FormData();
  body.append('file', new Blob([file]), filename);
  return client.request('POST', `/api/notes/${noteId}/attachments`, { body });
}

/** The keys in a test server's attachment store, whichever it is (a directory or the database), sorted. */
export async function storedKeys(server: Pick<TestServer, 'app'>): Promise<string[]> {
  const keys: string[] = [];
  for await (const { key } of attachmentStorageFor(server.app.appConfig, server.app.db).list())
    keys.push(key);
  return keys.sort();
}
