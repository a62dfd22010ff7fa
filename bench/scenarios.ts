/**
 * Every benchmark scenario is one entry in SCENARIOS: what to request, against which corpus,
 * with how many connections, and the target it is held to. run.ts does the rest.
 */
import { randomUUID } from 'node:crypto';
import { MAX_SYNC_CHANGES } from '../src/shared/api/limits.js';
import { type CorpusNote, generateCorpus, RARE_WORD } from './corpus.js';

export type CorpusName = 'notes' | 'search';

/** What a scenario may use to build its request: the seeded corpus and the running server. */
export interface ScenarioContext {
  seed: number;
  /** Ids of the notes in the default list, in corpus order. */
  activeIds: string[];
  /** Ids of the notes with an image attachment. */
  imageNoteIds: string[];
  /** Calls the server as the signed-in owner (before any load), e.g. to create a share link. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

/** One request shape; `next` (when given) varies path, body or headers per request. */
export interface LoadRequest {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: unknown;
  next?: () => { path?: string; body?: unknown; headers?: Record<string, string> };
}

export type Target =
  /** Requests/s at least this fraction of the bare-Fastify ceiling's. */
  | { kind: 'ceiling'; minRatio: number }
  /** A latency percentile under a bound, measured with one connection so it is service time. */
  | { kind: 'latency'; percentile: 'p50' | 'p99'; maxMs: number };

export interface Scenario {
  name: string;
  corpus: CorpusName;
  connections: number;
  /** Called once, before any scenario of the corpus runs, so captured state predates the writes. */
  request(context: ScenarioContext): LoadRequest | Promise<LoadRequest>;
  /** Also run against the ceiling server, which answers the same path with the same bytes. */
  ceiling?: boolean;
  target?: Target;
}

/** A note body for POST: the next note of a corpus the server has not seen. */
function freshNotes(context: ScenarioContext): () => Omit<CorpusNote, 'withImage' | 'id'> {
  const notes = generateCorpus(context.seed + 1, Number.POSITIVE_INFINITY);
  return () => {
    const { withImage: _image, id: _id, ...note } = notes.next().value as CorpusNote;
    return note;
  };
}

function search(name: string, q: string): Scenario {
  return {
    name: `GET /api/search (${name})`,
    corpus: 'search',
    connections: 1,
    request: () => ({ method: 'GET', path: `/api/search?q=${encodeURIComponent(q)}` }),
    target: { kind: 'latency', percentile: 'p99', maxMs: 10 },
  };
}

/** The largest push D-ERR-5 allows. */
const SYNC_BATCH = MAX_SYNC_CHANGES;

export const SCENARIOS: Scenario[] = [
  {
    name: 'GET /api/notes/{id}',
    corpus: 'notes',
    connections: 10,
    request: ({ activeIds }) => ({ method: 'GET', path: `/api/notes/${activeIds[0]}` }),
    ceiling: true,
    target: { kind: 'ceiling', minRatio: 0.5 },
  },
  {
    name: 'GET /api/notes (all notes)',
    corpus: 'notes',
    connections: 1,
    request: () => ({ method: 'GET', path: '/api/notes' }),
    ceiling: true,
    target: { kind: 'latency', percentile: 'p50', maxMs: 150 },
  },
  {
    name: 'GET /api/sync?since=0 (every note)',
    corpus: 'notes',
    connections: 1,
    request: () => ({ method: 'GET', path: '/api/sync?since=0' }),
    target: { kind: 'latency', percentile: 'p50', maxMs: 300 },
  },
  {
    name: 'GET /api/sync?since=… (the last 50 changes)',
    corpus: 'notes',
    connections: 10,
    request: async ({ api }) => {
      const notes = await api<{ updatedAt: string }[]>('GET', '/api/sync?since=0');
      const times = notes.map((n) => Date.parse(n.updatedAt)).sort((a, b) => b - a);
      return { method: 'GET', path: `/api/sync?since=${times[Math.min(49, times.length - 1)]}` };
    },
  },
  {
    name: 'POST /api/notes',
    corpus: 'notes',
    connections: 10,
    request: (context) => {
      const next = freshNotes(context);
      return { method: 'POST', path: '/api/notes', next: () => ({ body: next() }) };
    },
  },
  {
    name: 'PATCH /api/notes/{id}',
    corpus: 'notes',
    connections: 10,
    request: ({ activeIds }) => {
      let n = 0;
      return {
        method: 'PATCH',
        path: `/api/notes/${activeIds[0]}`,
        next: () => {
          n++;
          return { path: `/api/notes/${activeIds[n % activeIds.length]}`, body: { title: `edited ${n}` } };
        },
      };
    },
  },
  search('common word', 'meeting'),
  search('rare word', RARE_WORD),
  search('prefix', 'proj'),
  search('two words', 'meeting budget'),
  {
    name: `POST /api/sync (${SYNC_BATCH.toLocaleString('en-US')} changes)`,
    corpus: 'notes',
    connections: 1,
    request: (context) => {
      const next = freshNotes(context);
      let round = 0;
      return {
        method: 'POST',
        path: '/api/sync',
        next: () => {
          round++;
          const timestamp = Date.now();
          // A device back online: edits of notes it knows, and some notes it made while offline.
          const changes = Array.from({ length: SYNC_BATCH }, (_, i) =>
            i < SYNC_BATCH * 0.9
              ? {
                  noteId: context.activeIds[i % context.activeIds.length],
                  operation: 'update',
                  timestamp,
                  data: { title: `synced ${round}.${i}` },
                }
              : { noteId: randomUUID(), operation: 'create', timestamp, data: next() },
          );
          return { body: { changes } };
        },
      };
    },
    target: { kind: 'latency', percentile: 'p50', maxMs: 200 },
  },
  {
    name: 'GET /api/shared/{token}',
    corpus: 'notes',
    connections: 10,
    request: async ({ api, imageNoteIds, activeIds }) => {
      const noteId = imageNoteIds[0] ?? activeIds[0];
      const { token } = await api<{ token: string }>('POST', `/api/notes/${noteId}/share`);
      // D-SHARE-2 allows 60 requests a minute per client IP. Each request comes from its own
      // address, as the readers of a shared note would (the server trusts 127.0.0.1 as a proxy).
      let n = 0;
      return {
        method: 'GET',
        path: `/api/shared/${token}`,
        next: () => {
          n++;
          return { headers: { 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` } };
        },
      };
    },
  },
  {
    name: 'GET /api/notes/{id}/attachments?attachmentId=…&thumb=1',
    corpus: 'notes',
    connections: 10,
    request: async ({ api, imageNoteIds }) => {
      const noteId = imageNoteIds[0];
      if (!noteId) throw new Error('the corpus has no note with an image');
      const [attachment] = await api<{ id: string }[]>('GET', `/api/notes/${noteId}/attachments`);
      return {
        method: 'GET',
        path: `/api/notes/${noteId}/attachments?attachmentId=${attachment!.id}&thumb=1`,
      };
    },
  },
];
