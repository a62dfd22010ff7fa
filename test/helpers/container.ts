import assert from 'node:assert/strict';
import { signIn, type TestClient } from './client.js';

/**
 * The steps test/container.test.ts takes with every running image, the image's own and
 * compose.yaml's: wait until healthy, sign in as the owner the container set up from its secret
 * file, take a note, and read it back after a restart or an upgrade.
 */

/** The owner the containers set up (OWNER_EMAIL and OWNER_PASSWORD_FILE). */
export const CONTAINER_OWNER = { email: 'owner@example.com', password: 'container owner password' };

/** Milliseconds from `since` until /api/health answers 200 (throws after a minute). */
export async function untilHealthy(url: string, since = Date.now()): Promise<number> {
  while (Date.now() - since < 60_000) {
    const ok = await fetch(`${url}/api/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return Date.now() - since;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not become healthy within a minute`);
}

/** A client of `origin` signed in as CONTAINER_OWNER. */
export const signInAsOwner = (origin: string): Promise<TestClient> =>
  signIn(origin, CONTAINER_OWNER.email, CONTAINER_OWNER.password);

/** A note `client` creates: its id and text, for readBack(). */
export async function takeNote(
  client: TestClient,
  fields: { content: string; title?: string },
): Promise<{ id: string; content: string }> {
  const created = await client.post('/api/notes', fields);
  assert.equal(created.status, 201, created.text);
  return { id: created.body.id, content: fields.content };
}

/** Signs in to `origin` and reads `note` back, with its text unchanged: the note as served. */
export async function readBack(origin: string, note: { id: string; content: string }) {
  const read = await (await signInAsOwner(origin)).get(`/api/notes/${note.id}`);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.content, note.content);
  return read.body;
}
