/**
 * The "live" section of `npm run bench` (issue 28): how soon a write's hint reaches the open
 * GET /api/events streams of the note's owner and collaborator, on SQLite (one process, the
 * memory bus) and, with BENCH_DATABASE_URL, on PostgreSQL with two processes (LISTEN/NOTIFY:
 * the write on one, streams on both); what holding many idle streams costs the server in memory
 * and CPU; and a burst of creates reaching many streams while GET /api/health is polled. The
 * streams are read over real sockets by test/helpers/events.ts, which stamps each event with
 * performance.now() as it arrives in this process. MCP sessions subscribed to the note
 * (decision 0045) listen alongside, on GET /api/mcp: their `notifications/resources/updated`
 * comes from the same hints.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type EventStream, idsOf, naming, openEvents, type ReceivedEvent } from '../test/helpers/events.js';
import { type Session, twoUsers, watchHealth } from './abuse.js';
import { type ServerArgs, type ServerProcess, startProcess } from './processes.js';
import { number } from './report.js';
import { withAdmin } from './scaleOut.js';
import { percentile } from './stats.js';

interface LiveOptions {
  quick: boolean;
  serverArgs: ServerArgs;
  workDir: string;
  /** A PostgreSQL role that may create databases (BENCH_DATABASE_URL); without it, SQLite only. */
  adminUrl?: string;
  log: (message: string) => void;
}

const SIZES = {
  quick: {
    streams: 10,
    mcpStreams: 2,
    writes: 20,
    idleStreams: 200,
    idleSeconds: 1,
    idleSettleSeconds: 1,
    burstStreams: 20,
    burstChanges: 100,
  },
  full: {
    streams: 100,
    mcpStreams: 10,
    writes: 200,
    idleStreams: 1_000,
    idleSeconds: 10,
    // Opening 1,000 streams leaves the server collecting garbage and compiling for seconds:
    // 29 ms of CPU a second 0.5 s after, 8 after 15 s (3 without streams), measured with a script.
    idleSettleSeconds: 15,
    burstStreams: 100,
    burstChanges: 1_000,
  },
};
type Sizes = (typeof SIZES)['full'];

/** A hint slower than this counts as lost, and fails the run: hints must arrive, however slowly. */
const HINT_TIMEOUT_MS = 30_000;
/** Concurrent requests of the burst, as the other scenarios' 10 connections. */
const BURST_CONNECTIONS = 10;
/** Streams opened at once. */
const OPEN_BATCH = 50;

export interface LatencyRow {
  setup: string;
  streams: number;
  writes: number;
  /** Milliseconds from the write's 200 to its hint on one stream, one per stream and write. */
  samples: number[];
}

interface IdleResult {
  streams: number;
  openMs: number;
  addedRssMb: number;
  /** The server's CPU time per second of wall time, without and with the streams open, in ms. */
  cpuMsPerSecondBefore: number;
  cpuMsPerSecondWith: number;
  seconds: number;
}

interface BurstResult {
  streams: number;
  changes: number;
  burstMs: number;
  /** Per stream: from the burst's last 200 to the stream having heard every created note. */
  trailingMs: number[];
  eventsPerStream: number;
  longestHealthMs: number;
}

export interface LiveReport {
  latency: LatencyRow[];
  idle: IdleResult;
  burst: BurstResult;
  failures: string[];
}

/** A stream and where it is held, for grouping its samples. */
interface Listener {
  stream: EventStream;
  group: string;
  /** Whether an event tells of the note. */
  hears: (event: ReceivedEvent) => boolean;
}

/** Event-stream listeners of `session`'s user: `count` GET /api/events on `url`. */
async function eventListeners(url: string, session: Session, count: number, group: string, noteId: string) {
  const streams = await openStreams(url, session, count);
  return streams.map((stream): Listener => ({ stream, group, hears: naming(noteId) }));
}

/**
 * An MCP session of `session`'s user (a new API key), subscribed to `noteId` through `url`, its
 * GET /api/mcp stream held on `streamUrl`.
 */
async function mcpListener(url: string, streamUrl: string, session: Session, noteId: string, group: string) {
  const { key } = await session.json<{ key: string }>('POST', '/api/settings/api-keys', { name: 'bench' });
  const headers = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const post = async (body: unknown, sessionId?: string) => {
    const response = await fetch(`${url}/api/mcp`, {
      method: 'POST',
      headers: { ...headers, ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`POST /api/mcp answered ${response.status}`);
    return response;
  };
  const initialize = {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  };
  const sessionId = (
    await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initialize })
  ).headers.get('mcp-session-id')!;
  const uri = `note://${noteId}`;
  await post({ jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri } }, sessionId);
  const stream = await openEvents(
    streamUrl,
    { authorization: headers.authorization, accept: 'text/event-stream', 'mcp-session-id': sessionId },
    '/api/mcp',
  );
  if (stream.status !== 200) throw new Error(`GET /api/mcp answered ${stream.status}`);
  return { stream, group, hears: (event: ReceivedEvent) => event.data.includes(uri) };
}

function startServer(options: LiveOptions, dataDir: string, env: Record<string, string> = {}) {
  return startProcess(
    options.serverArgs,
    {
      DATA_DIR: path.join(options.workDir, dataDir),
      LOG_LEVEL: 'warn',
      // The idle and burst streams are one user's; the default allows 32 (docs/sync.md).
      EVENTS_MAX_STREAMS_PER_USER: String(SIZES.full.idleStreams),
      ...env,
    },
    '/api/health',
  );
}

/** Opens `count` streams as `session`'s user on `url`, OPEN_BATCH at a time; each must answer 200. */
export async function openStreams(
  url: string,
  session: Pick<Session, 'cookie'>,
  count: number,
): Promise<EventStream[]> {
  const streams: EventStream[] = [];
  try {
    while (streams.length < count) {
      const batch = Math.min(OPEN_BATCH, count - streams.length);
      streams.push(
        ...(await Promise.all(
          Array.from({ length: batch }, () => openEvents(url, { cookie: session.cookie })),
        )),
      );
    }
    const refused = streams.filter((stream) => stream.status !== 200);
    if (refused.length > 0)
      throw new Error(`GET /api/events answered ${refused.map((s) => s.status).join(', ')}`);
    return streams;
  } catch (err) {
    closeAll(streams);
    throw err;
  }
}

export function closeAll(streams: readonly EventStream[]): void {
  for (const stream of streams) stream.close();
}

/** The owner's note shared with the other user: both hear of its edits. */
async function sharedNote(owner: Session, otherId: number): Promise<string> {
  const note = await owner.json<{ id: string }>('POST', '/api/notes', {
    title: 'live',
    content: 'a shared list',
  });
  await owner.json('POST', `/api/notes/${note.id}/collaborators`, { userId: otherId });
  return note.id;
}

/**
 * `writes` edits of `noteId`, one after the other: each waits until every listener has heard of
 * it, and gives one sample per listener, from the PATCH's 200 to the event's arrival (0 when the
 * hint arrived before the answer).
 */
async function measureLatency(
  writer: Session,
  noteId: string,
  listeners: readonly Listener[],
  writes: number,
  failures: string[],
): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(listeners.map(({ group }) => [group, []]));
  for (let i = 0; i < writes; i++) {
    const from = listeners.map(({ stream }) => stream.events.length);
    const status = await writer.send('PATCH', `/api/notes/${noteId}`, { content: `edit ${i}` });
    const acknowledged = performance.now();
    if (status !== 200) {
      failures.push(`live: PATCH answered ${status}`);
      return samples;
    }
    const heard = await Promise.allSettled(
      listeners.map(({ stream, hears }, j) => stream.next(hears, HINT_TIMEOUT_MS, from[j])),
    );
    for (const [j, result] of heard.entries()) {
      const { group } = listeners[j]!;
      if (result.status === 'rejected') {
        failures.push(`live: ${group}: no hint of an edit within ${HINT_TIMEOUT_MS / 1000} s`);
        return samples;
      }
      samples.get(group)!.push(Math.max(0, result.value.at - acknowledged));
    }
  }
  return samples;
}

/** RSS and idle CPU of the server before and with `count` idle streams. */
async function measureIdle(server: ServerProcess, session: Session, sizes: Sizes): Promise<IdleResult> {
  const cpuPerSecond = async () => {
    const before = server.cpuMicros();
    await sleep(sizes.idleSeconds * 1000);
    return (server.cpuMicros() - before) / 1000 / sizes.idleSeconds;
  };
  await sleep(500);
  const rssBefore = server.rssMb();
  const cpuMsPerSecondBefore = await cpuPerSecond();
  const started = performance.now();
  const streams = await openStreams(server.url, session, sizes.idleStreams);
  const openMs = performance.now() - started;
  try {
    // RSS at once, garbage of the opening included (the larger figure); CPU once it has settled.
    await sleep(500);
    const addedRssMb = server.rssMb() - rssBefore;
    await sleep(sizes.idleSettleSeconds * 1000);
    const cpuMsPerSecondWith = await cpuPerSecond();
    return {
      streams: sizes.idleStreams,
      openMs,
      addedRssMb,
      cpuMsPerSecondBefore,
      cpuMsPerSecondWith,
      seconds: sizes.idleSeconds,
    };
  } finally {
    closeAll(streams);
  }
}

/**
 * `changes` creates from BURST_CONNECTIONS concurrent clients while `burstStreams` streams of the
 * same user listen and a worker polls /api/health; until every stream has heard of every note.
 */
async function measureBurst(
  server: ServerProcess,
  session: Session,
  sizes: Sizes,
  failures: string[],
): Promise<BurstResult> {
  const streams = await openStreams(server.url, session, sizes.burstStreams);
  const health = watchHealth(server.url);
  let heard: Omit<BurstResult, 'longestHealthMs'>;
  let longestHealthMs: number;
  try {
    heard = await burstUntilHeard(session, streams, sizes, failures);
  } finally {
    longestHealthMs = await health.stop();
    closeAll(streams);
  }
  return { ...heard, longestHealthMs };
}

async function burstUntilHeard(
  session: Session,
  streams: readonly EventStream[],
  sizes: Sizes,
  failures: string[],
): Promise<Omit<BurstResult, 'longestHealthMs'>> {
  const started = performance.now();
  const created = new Set<string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: BURST_CONNECTIONS }, async () => {
      while (next < sizes.burstChanges) {
        const n = next++;
        created.add((await session.json<{ id: string }>('POST', '/api/notes', { title: `burst ${n}` })).id);
      }
    }),
  );
  const written = performance.now();
  // Each stream's events are read as they come: how far, what it heard, when it had heard all.
  const progress = streams.map(() => ({
    read: 0,
    heard: new Set<string>(),
    at: undefined as number | undefined,
  }));
  while (progress.some((p) => p.at === undefined) && performance.now() < written + HINT_TIMEOUT_MS) {
    for (const [j, stream] of streams.entries()) {
      const p = progress[j]!;
      for (; p.read < stream.events.length && p.at === undefined; p.read++) {
        const event = stream.events[p.read]!;
        if (event.event !== 'notes') continue;
        for (const id of idsOf(event)) if (created.has(id)) p.heard.add(id);
        if (p.heard.size === created.size) p.at = event.at;
      }
    }
    await sleep(20);
  }
  const missing = progress.filter((p) => p.at === undefined).length;
  if (missing > 0)
    failures.push(
      `live: burst: ${missing} streams did not hear of every note within ${HINT_TIMEOUT_MS / 1000} s`,
    );
  return {
    streams: sizes.burstStreams,
    changes: sizes.burstChanges,
    burstMs: written - started,
    trailingMs: progress.flatMap((p) => (p.at === undefined ? [] : [Math.max(0, p.at - written)])),
    eventsPerStream: streams.reduce((sum, s) => sum + s.events.length, 0) / streams.length,
  };
}

/** SQLite, one process: latency, then idle streams, then the burst, on one fresh server. */
async function onSqlite(options: LiveOptions, sizes: Sizes, failures: string[]) {
  const server = await startServer(options, 'live-sqlite');
  try {
    const { owner, other, otherId } = await twoUsers(server.url);
    const noteId = await sharedNote(owner, otherId);
    const listeners: Listener[] = [];
    const group = 'SQLite, 1 process (in memory)';
    for (let i = 0; i < sizes.streams; i++)
      listeners.push(...(await eventListeners(server.url, i % 2 ? other : owner, 1, group, noteId)));
    for (let i = 0; i < sizes.mcpStreams; i++) {
      const user = i % 2 ? other : owner;
      listeners.push(
        await mcpListener(server.url, server.url, user, noteId, `${group}, MCP resources/updated`),
      );
    }
    options.log(`live: SQLite: ${sizes.writes} edits heard on ${listeners.length} streams …`);
    const samples = await measureLatency(owner, noteId, listeners, sizes.writes, failures);
    closeAll(listeners.map((l) => l.stream));
    options.log(`live: SQLite: ${sizes.idleStreams} idle streams …`);
    const idle = await measureIdle(server, owner, sizes);
    options.log(`live: SQLite: a burst of ${sizes.burstChanges} creates to ${sizes.burstStreams} streams …`);
    const burst = await measureBurst(server, owner, sizes, failures);
    const latency = [...samples].map(
      ([setup, values]): LatencyRow => ({
        setup,
        streams: listeners.filter((l) => l.group === setup).length,
        writes: sizes.writes,
        samples: values,
      }),
    );
    return { latency, idle, burst };
  } finally {
    await server.stop();
  }
}

/**
 * PostgreSQL, two processes on one database: the owner writes on the first; the listeners of
 * both users are spread over both processes, so that the hints cross processes through
 * LISTEN/NOTIFY, and every hint, even to the writing process, goes through PostgreSQL.
 */
async function onPostgres(options: LiveOptions, adminUrl: string, sizes: Sizes, failures: string[]) {
  const database = `notes_live_bench_${process.pid}`;
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${database}`;
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE "${database}"`));
  const servers: ServerProcess[] = [];
  try {
    // One after the other, so that the second finds the schema migrated.
    for (let i = 0; i < 2; i++)
      servers.push(await startServer(options, 'live-postgres', { DATABASE_URL: databaseUrl.toString() }));
    const [writing, another] = servers as [ServerProcess, ServerProcess];
    const { owner, other, otherId } = await twoUsers(writing.url);
    const noteId = await sharedNote(owner, otherId);
    const listeners: Listener[] = [];
    const groupOf = (server: ServerProcess) =>
      `PostgreSQL (LISTEN/NOTIFY), the stream on ${server === writing ? 'the writing process' : 'another process'}`;
    for (let i = 0; i < sizes.streams; i++) {
      const server = i % 4 < 2 ? writing : another;
      listeners.push(
        ...(await eventListeners(server.url, i % 2 ? other : owner, 1, groupOf(server), noteId)),
      );
    }
    // MCP sessions opened and subscribed on the writing process, their streams on the other.
    for (let i = 0; i < sizes.mcpStreams; i++) {
      const user = i % 2 ? other : owner;
      const group = `${groupOf(another)}, MCP resources/updated`;
      listeners.push(await mcpListener(writing.url, another.url, user, noteId, group));
    }
    options.log(
      `live: PostgreSQL: ${sizes.writes} edits heard on ${listeners.length} streams over 2 processes …`,
    );
    const samples = await measureLatency(owner, noteId, listeners, sizes.writes, failures);
    closeAll(listeners.map((l) => l.stream));
    return [...samples].map(
      ([setup, values]): LatencyRow => ({
        setup,
        streams: listeners.filter((l) => l.group === setup).length,
        writes: sizes.writes,
        samples: values,
      }),
    );
  } finally {
    for (const server of servers) await server.stop();
    await withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
  }
}

export async function runLive(options: LiveOptions): Promise<LiveReport> {
  const sizes = options.quick ? SIZES.quick : SIZES.full;
  const failures: string[] = [];
  const sqlite = await onSqlite(options, sizes, failures);
  const latency = [...sqlite.latency];
  if (options.adminUrl) latency.push(...(await onPostgres(options, options.adminUrl, sizes, failures)));
  else options.log('live: PostgreSQL skipped (set BENCH_DATABASE_URL)');
  return { latency, idle: sqlite.idle, burst: sqlite.burst, failures };
}

const ms = (value: number) => `${number(value, value < 10 ? 1 : 0)} ms`;

export function liveTable(report: LiveReport): string {
  const { idle, burst } = report;
  const lines = [
    "Live hints (issue 28; goal: every change on every device within a second): from a write's 200 to its `event: notes` on each open GET /api/events stream of the note's owner and collaborator (or its `notifications/resources/updated` on the GET /api/mcp stream of an MCP session subscribed to the note), edits one after the other.",
    '',
    '| Write acknowledged → hint received | Streams | Edits | p50 | p95 | p99 | max | Goal |',
    '|---|--:|--:|--:|--:|--:|--:|---|',
    ...report.latency.map((row) => {
      const at = (p: number) => (row.samples.length === 0 ? '—' : ms(percentile(row.samples, p)));
      return `| ${row.setup} | ${row.streams} | ${row.writes} | ${at(50)} | ${at(95)} | ${at(99)} | ${row.samples.length === 0 ? '—' : ms(Math.max(...row.samples))} | p99 < 250 ms |`;
    }),
    '',
    '| Live streams, SQLite | Measured | Goal |',
    '|---|--:|---|',
    `| ${number(idle.streams)} idle streams: added RSS (VmRSS) | ${number(idle.addedRssMb, 1)} MiB | < 40 MiB |`,
    `| ${number(idle.streams)} idle streams: server CPU over ${idle.seconds} s, without / with them | ${number(idle.cpuMsPerSecondBefore, 1)} / ${number(idle.cpuMsPerSecondWith, 1)} ms per s | ~0 |`,
    `| ${number(idle.streams)} idle streams: opening them (${OPEN_BATCH} at a time) | ${ms(idle.openMs)} | — |`,
    `| Burst: ${number(burst.changes)} creates, ${BURST_CONNECTIONS} at a time, ${burst.streams} streams listening: the creates | ${ms(burst.burstMs)} | — |`,
    `| Burst: from the last create's 200 to each stream having heard of every note, p50 / max | ${burst.trailingMs.length === 0 ? '—' : `${ms(percentile(burst.trailingMs, 50))} / ${ms(Math.max(...burst.trailingMs))}`} | within 1 s |`,
    `| Burst: events per stream (ids batched) | ${number(burst.eventsPerStream, 1)} | — |`,
    `| Burst: longest GET /api/health round trip (polled every 50 ms) | ${ms(burst.longestHealthMs)} | no stall |`,
  ];
  return lines.join('\n');
}
