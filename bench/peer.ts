/**
 * The peer: a stand-in, written by us, for the simplest self-hosted Keep clone
 * (react-glass-keep: Express + better-sqlite3 + jsonwebtoken). Its code is not ours to commit,
 * so this does what its early server does, read from its public source (docs/benchmarks.md,
 * "The peer as Express"): express.json() parses every body, jsonwebtoken checks the bearer
 * token of every request (no database read), one notes table with JSON columns parsed per row,
 * `SELECT *` lists, a create is one INSERT answered from what was sent, an update a SELECT and
 * an UPDATE with COALESCE per field; no full-text index, no tags table, no sync metadata, no
 * validation beyond JSON. It has no read of one note; ours has, so the peer gets one (a SELECT).
 * The database is in WAL mode with synchronous = NORMAL (better-sqlite3's default in WAL, and
 * ours), so writes are compared at the same durability.
 *
 * Two variants, to tell the peer's parts apart (docs/benchmarks.md): `PEER_HTTP=express-key`
 * gives jsonwebtoken the secret as a KeyObject (react-glass-keep passes a string, which
 * jsonwebtoken 9 first tries to parse as a public key, ~350 µs per request on this machine);
 * `PEER_HTTP=node` serves the same requests on node:http with a hand-checked HMAC token and
 * reads each written row back: the faster floor this bench compared against until 2026-11-27.
 *
 * Run as its own process: PEER_DB=<file> PORT=... node --import tsx bench/peer.ts
 * POST /login?user=<n> → { token }; GET/POST /api/notes; GET/PATCH /api/notes/:id; GET /api/health.
 */
import { createHmac, createSecretKey, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import SQLite from 'better-sqlite3';
import express from 'express';
import jwt from 'jsonwebtoken';

const SECRET = 'peer benchmark secret';
const db = new SQLite(process.env.PEER_DB!);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  CREATE TABLE IF NOT EXISTS notes (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL,
    type TEXT NOT NULL DEFAULT 'text',
    title TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL DEFAULT '',
    items_json TEXT NOT NULL DEFAULT '[]',
    tags_json TEXT NOT NULL DEFAULT '[]',
    images_json TEXT NOT NULL DEFAULT '[]',
    color TEXT NOT NULL DEFAULT 'default',
    pinned INTEGER NOT NULL DEFAULT 0,
    position REAL NOT NULL DEFAULT 0,
    timestamp TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS notes_user ON notes (user_id, pinned, position);
`);

const listNotes = db.prepare('SELECT * FROM notes WHERE user_id = ? ORDER BY pinned DESC, position DESC');
const getNote = db.prepare('SELECT * FROM notes WHERE id = ? AND user_id = ?');
const insertNote = db.prepare(
  `INSERT INTO notes (id, user_id, type, title, content, items_json, tags_json, images_json, color, pinned, position, timestamp, updated_at)
   VALUES (@id, @user_id, @type, @title, @content, @items_json, @tags_json, @images_json, @color, @pinned, @position, @timestamp, @updated_at)`,
);
const updateNote = db.prepare(
  `UPDATE notes SET title = COALESCE(@title, title), content = COALESCE(@content, content),
   color = COALESCE(@color, color), pinned = COALESCE(@pinned, pinned), updated_at = @updated_at
   WHERE id = @id AND user_id = @user_id`,
);

interface Row {
  [column: string]: unknown;
  items_json: string;
  tags_json: string;
  images_json: string;
  pinned: number;
}

function view(row: Row) {
  const { items_json, tags_json, images_json, ...rest } = row;
  return {
    ...rest,
    pinned: row.pinned === 1,
    items: JSON.parse(items_json),
    tags: JSON.parse(tags_json),
    images: JSON.parse(images_json),
  };
}

/** A new note's row from a request body, as the clone stores it. */
function newNote(userId: number, body: Record<string, unknown>) {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    user_id: userId,
    type: 'text',
    title: String(body.title ?? ''),
    content: String(body.content ?? ''),
    items_json: JSON.stringify(body.items ?? []),
    tags_json: JSON.stringify(body.tags ?? []),
    images_json: '[]',
    color: String(body.color ?? 'default'),
    pinned: body.pinned ? 1 : 0,
    position: Date.now(),
    timestamp: now,
    updated_at: now,
  };
}

/** The UPDATE's parameters: each field sent, or null to keep the stored one. */
function patchOf(id: string, userId: number, body: Record<string, unknown>) {
  return {
    id,
    user_id: userId,
    title: typeof body.title === 'string' ? body.title : null,
    content: typeof body.content === 'string' ? body.content : null,
    color: typeof body.color === 'string' ? body.color : null,
    pinned: typeof body.pinned === 'boolean' ? Number(body.pinned) : null,
    updated_at: new Date().toISOString(),
  };
}

const port = Number(process.env.PORT);

if (process.env.PEER_HTTP === 'node') serveOnNodeHttp();
else serveOnExpress();

/** As react-glass-keep: Express, express.json(), jsonwebtoken's verify in an auth middleware. */
function serveOnExpress(): void {
  const key = process.env.PEER_HTTP === 'express-key' ? createSecretKey(Buffer.from(SECRET)) : SECRET;
  const app = express();
  app.use(express.json({ limit: '20mb' }));
  app.get('/api/health', (_request, response) => {
    response.json({ status: 'ok' });
  });
  app.post('/login', (request, response) => {
    const user = Number(request.query.user ?? 1);
    response.json({ token: jwt.sign({ uid: user }, SECRET, { expiresIn: '7d' }) });
  });
  const auth: express.RequestHandler = (request, response, next) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token) {
      response.status(401).json({ error: 'Missing token' });
      return;
    }
    try {
      response.locals.userId = (jwt.verify(token, key) as { uid: number }).uid;
      next();
    } catch {
      response.status(401).json({ error: 'Invalid token' });
    }
  };
  app.get('/api/notes', auth, (_request, response) => {
    response.json((listNotes.all(response.locals.userId) as Row[]).map(view));
  });
  app.post('/api/notes', auth, (request, response) => {
    const note = newNote(response.locals.userId, request.body ?? {});
    insertNote.run(note);
    // The clone answers with the note it built from the request; it reads nothing back.
    response.status(201).json(view(note));
  });
  app.get('/api/notes/:id', auth, (request, response) => {
    const row = getNote.get(String(request.params.id), response.locals.userId) as Row | undefined;
    if (row) response.json(view(row));
    else response.status(404).json({ error: 'Note not found' });
  });
  app.patch('/api/notes/:id', auth, (request, response) => {
    const userId = response.locals.userId;
    if (!getNote.get(String(request.params.id), userId)) {
      response.status(404).json({ error: 'Note not found' });
      return;
    }
    updateNote.run(patchOf(String(request.params.id), userId, request.body ?? {}));
    response.json({ ok: true });
  });
  app.listen(port, '127.0.0.1');
}

/** The floor: node:http, a JWT-shaped token checked with one HMAC, the row read back after a write. */
function serveOnNodeHttp(): void {
  http
    .createServer((request, response) => {
      handle(request, response).catch(() => send(response, 500, { error: 'server error' }));
    })
    .listen(port, '127.0.0.1');
}

/** A JWT-shaped token: base64url payload and its HMAC-SHA256, as jsonwebtoken checks per request. */
function sign(userId: number): string {
  const payload = Buffer.from(JSON.stringify({ sub: userId })).toString('base64url');
  return `${payload}.${createHmac('sha256', SECRET).update(payload).digest('base64url')}`;
}

function userOf(request: http.IncomingMessage): number | undefined {
  const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const [payload, signature] = token?.split('.') ?? [];
  if (!payload || !signature) return undefined;
  const expected = Buffer.from(createHmac('sha256', SECRET).update(payload).digest('base64url'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return JSON.parse(Buffer.from(payload, 'base64url').toString()).sub;
}

function send(response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

async function readJson(request: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const { method, url = '/' } = request;
  if (url === '/api/health') return send(response, 200, { status: 'ok' });
  if (method === 'POST' && url.startsWith('/login')) {
    return send(response, 200, {
      token: sign(Number(new URL(url, 'http://peer').searchParams.get('user') ?? 1)),
    });
  }
  const userId = userOf(request);
  if (userId === undefined) return send(response, 401, { error: 'unauthorized' });
  const id = /^\/api\/notes\/([^/?]+)$/.exec(url)?.[1];
  if (url === '/api/notes' && method === 'GET') {
    return send(response, 200, (listNotes.all(userId) as Row[]).map(view));
  }
  if (url === '/api/notes' && method === 'POST') {
    const note = newNote(userId, await readJson(request));
    insertNote.run(note);
    return send(response, 201, view(getNote.get(note.id, userId) as Row));
  }
  if (id && method === 'GET') {
    const row = getNote.get(id, userId) as Row | undefined;
    return row ? send(response, 200, view(row)) : send(response, 404, { error: 'not found' });
  }
  if (id && method === 'PATCH') {
    const changed = updateNote.run(patchOf(id, userId, await readJson(request)));
    if (changed.changes === 0) return send(response, 404, { error: 'not found' });
    return send(response, 200, view(getNote.get(id, userId) as Row));
  }
  send(response, 404, { error: 'not found' });
}
