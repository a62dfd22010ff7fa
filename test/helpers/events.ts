import assert from 'node:assert/strict';
import http from 'node:http';
import type { TestClient } from './client.js';

/** A note made over REST, for a stream to hear of: its id. */
export async function createNote(client: TestClient, title: string): Promise<string> {
  const created = await client.post('/api/notes', { title });
  assert.equal(created.status, 201, created.text);
  return created.body.id;
}

/** An edit of a note's content over REST, for a stream to hear of. */
export async function edit(client: TestClient, noteId: string, content: string): Promise<void> {
  const updated = await client.patch(`/api/notes/${noteId}`, { content });
  assert.equal(updated.status, 200, updated.text);
}

/** One Server-Sent Event as received. */
export interface ReceivedEvent {
  event: string;
  id: string | undefined;
  data: string;
  at: number;
}

/** An open GET /api/events (or another event stream), read over a real socket, event by event (the SSE format). */
export interface EventStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Everything received so far, comments included. */
  text(): string;
  events: ReceivedEvent[];
  /** The first event (from `from` on) that `match` accepts, waiting up to `timeoutMs`. */
  next(match?: (event: ReceivedEvent) => boolean, timeoutMs?: number, from?: number): Promise<ReceivedEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens the stream with the client's cookies (or `headers`, e.g. a Bearer key). */
export function openEvents(
  target: string | TestClient,
  headers: Record<string, string> = {},
  path = '/api/events',
): Promise<EventStream> {
  const baseUrl = typeof target === 'string' ? target : target.baseUrl;
  const all: Record<string, string> = { ...headers };
  if (typeof target !== 'string' && target.cookies.size > 0 && !all.cookie) {
    all.cookie = [...target.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  return new Promise((resolve, reject) => {
    const request = http.get(new URL(path, baseUrl), { headers: all }, (response) => {
      response.setEncoding('utf8');
      let text = '';
      let pending = '';
      const events: ReceivedEvent[] = [];
      const waiters = new Set<() => void>();
      const ended = new Promise<void>((done) => {
        response.on('close', done);
        response.on('end', done);
      });
      response.on('data', (chunk: string) => {
        text += chunk;
        pending += chunk;
        let end = pending.indexOf('\n\n');
        while (end >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':') || line === '') continue;
            const colon = line.indexOf(':');
            fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          if (fields.has('data')) {
            events.push({
              event: fields.get('event') ?? 'message',
              id: fields.get('id'),
              data: fields.get('data')!,
              at: performance.now(),
            });
          }
          end = pending.indexOf('\n\n');
        }
        for (const wake of waiters) wake();
      });
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        text: () => text,
        events,
        ended,
        next(match = () => true, timeoutMs = 3_000, from = 0) {
          return new Promise((found, fail) => {
            const check = () => {
              const event = events.slice(from).find(match);
              if (!event) return false;
              waiters.delete(check);
              clearTimeout(timer);
              found(event);
              return true;
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching event within ${timeoutMs} ms; got: ${text}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close() {
          request.destroy();
        },
      });
    });
    request.on('error', reject);
  });
}

/** The note ids of an `event: notes`. */
export function idsOf(event: ReceivedEvent): string[] {
  return (JSON.parse(event.data) as { ids: string[] }).ids;
}

/** An event naming `noteId`. */
export const naming = (noteId: string) => (event: ReceivedEvent) =>
  event.event === 'notes' && idsOf(event).includes(noteId);
