import assert from 'node:assert/strict';
import type { TestClient } from './client.js';

/** Sync test helpers over the real HTTP API (docs/sync.md). */

export interface Change {
  noteId: string;
  operation: 'create' | 'update' | 'delete';
  timestamp: number;
  baseVersion?: number;
  data?: Record<string, unknown>;
}

export interface PushResult {
  noteId: string;
  status: string;
  reason?: string;
  conflictCopyId?: string;
  version?: number;
  merged?: true;
}

export async function push(client: TestClient, changes: Change[]): Promise<PushResult[]> {
  const response = await client.post('/api/sync', { changes });
  assert.equal(response.status, 200, response.text);
  return response.body.results;
}

/** The owner shares a note through the collaboration endpoint. */
export async function share(owner: TestClient, noteId: string, userId: number) {
  const response = await owner.post(`/api/notes/${noteId}/collaborators`, { userId });
  assert.equal(response.status, 201, response.text);
}

export async function pullAll(client: TestClient) {
  const response = await client.get('/api/sync?since=0');
  assert.equal(response.status, 200);
  return response.body as any[];
}

/** The note as GET /api/notes/{id} answers it, or undefined when the client cannot see it. */
export async function noteOf(client: TestClient, id: string) {
  const response = await client.get(`/api/notes/${id}`);
  return response.status === 200 ? response.body : undefined;
}
