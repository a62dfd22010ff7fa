import type { ServerNote, SyncChange, SyncResult, Tombstone } from './types.js';

/** The three sync endpoints (docs/sync.md), with the answers the engine must tell apart. */

/** 401: the session is gone; everything stays on the device until the person signs in again. */
export class SignedOutError extends Error {}
/** 410 `resync_required`: the cursor is older than the server's 90 days of tombstones. */
export class ResyncRequiredError extends Error {}
/** No answer (network down, server stopped) or a 5xx/429: try again later, unchanged. */
export class UnreachableError extends Error {}
/**
 * 400 on a push (all or nothing, D-SYNC-4): `indices` are the changes the answer names in
 * `details[].path` (`/changes/3/data/title`), with the server's message for each.
 */
export class RejectedChangesError extends Error {
  constructor(readonly rejected: Map<number, string>) {
    super(`the server refused changes ${[...rejected.keys()].join(', ')}`);
  }
}

interface Pulled<T> {
  body: T;
  syncTime: number;
}

export class SyncApi {
  constructor(
    private readonly baseUrl: string,
    private readonly fetcher: typeof fetch,
  ) {}

  private async call(path: string, init?: RequestInit): Promise<Response> {
    let response: Response;
    try {
      response = await this.fetcher(`${this.baseUrl}${path}`, { credentials: 'same-origin', ...init });
    } catch (error) {
      throw new UnreachableError(error instanceof Error ? error.message : String(error));
    }
    if (response.ok) return response;
    const answer = await response.text().catch(() => '');
    if (response.status === 400 && init?.method === 'POST') rejectedChanges(answer);
    if (response.status === 401) throw new SignedOutError(answer);
    if (response.status === 410) throw new ResyncRequiredError(answer);
    if (response.status >= 500 || response.status === 429) throw new UnreachableError(`${response.status}`);
    throw new Error(`${init?.method ?? 'GET'} ${path}: ${response.status} ${answer}`);
  }

  private async pull<T>(path: string, since: number): Promise<Pulled<T>> {
    const response = await this.call(`${path}?since=${since}`);
    const syncTime = Number(response.headers.get('x-sync-time'));
    if (!Number.isSafeInteger(syncTime)) throw new Error(`${path}: no X-Sync-Time`);
    return { body: (await response.json()) as T, syncTime };
  }

  notes(since: number) {
    return this.pull<ServerNote[]>('/api/sync', since);
  }

  deleted(since: number) {
    return this.pull<Tombstone[]>('/api/sync/deleted', since);
  }

  /** The live hints stream (live.ts reads it): the raw answer, whatever its status. */
  events(init: RequestInit): Promise<Response> {
    return this.fetcher(`${this.baseUrl}/api/events`, {
      credentials: 'same-origin',
      cache: 'no-store',
      ...init,
    });
  }

  /** POST /api/notes/{id}/presence; `keepalive` so that a closing page still sends it. */
  async presence(noteId: string, here: boolean): Promise<void> {
    await this.call(`/api/notes/${encodeURIComponent(noteId)}/presence`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ here }),
      keepalive: true,
    });
  }

  async push(changes: SyncChange[]): Promise<SyncResult[]> {
    const response = await this.call('/api/sync', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ changes }),
    });
    return ((await response.json()) as { results: SyncResult[] }).results;
  }
}

/** Throws RejectedChangesError when a 400 answer (D-ERR-1 body) names changes by index. */
function rejectedChanges(answer: string) {
  let details: { path?: unknown; message?: unknown }[] = [];
  try {
    details = (JSON.parse(answer) as { details?: typeof details }).details ?? [];
  } catch {
    return;
  }
  const rejected = new Map<number, string>();
  for (const detail of details) {
    const index = /^\/changes\/(\d+)(\/|$)/.exec(String(detail.path))?.[1];
    if (index !== undefined) rejected.set(Number(index), `${detail.path} ${detail.message}`);
  }
  if (rejected.size > 0) throw new RejectedChangesError(rejected);
}
