/**
 * The "peer" section of `npm run bench`: our server, the peer (bench/peer.ts: react-glass-keep's
 * request path on Express) and the bare-Fastify ceiling, each with the same 1,000 short notes
 * written through its own API, measured side by side in interleaved rounds (each scenario on
 * each server in turn, then the next round), with the server's CPU time per request from /proc. The machine is shared,
 * so the table reports medians over the rounds, and ratios taken within a round.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeAll, openStreams } from './live.js';
import { measure, warmUp } from './load.js';
import { memoryLine, type ServerArgs, type ServerProcess, startProcess } from './processes.js';
import type { LoadRequest } from './scenarios.js';

interface PeerOptions {
  quick: boolean;
  serverArgs: ServerArgs;
  workDir: string;
  log: (message: string) => void;
}

export interface PeerRow {
  name: string;
  ours: Measured;
  /** Absent where the peer has no such request (search). */
  peer?: Measured;
  /** Only for GETs: the ceiling replays our answer's bytes. */
  ceiling?: Measured;
  /** Medians over the rounds of the ratio within each round. */
  oursToPeer?: number;
  oursToCeiling?: number;
  failures: string[];
}

interface Measured {
  rps: number;
  cpuMicrosPerRequest: number;
}

export interface PeerReport {
  rows: PeerRow[];
  rounds: number;
  notes: number;
  idleRssMb: { ours: number; peer: number };
  /** After SETTLE_SECONDS without requests: what an idle server holds (issue 31's idle goal). */
  settledRssMb: { ours: number; peer: number };
  peakRssMb: { ours: number; peer: number };
}

const NOTES = 1_000;
/** The most streams one user may hold by default (EVENTS_MAX_STREAMS_PER_USER, docs/sync.md). */
const IDLE_STREAMS = 32;
const PASSWORD = 'peer bench password';
/**
 * How long both servers sit without requests before their settled RSS is read: the checkpointer's
 * worker stops after 10 s without writes (src/db/checkpointer.ts), V8 shrinks its heap a few
 * seconds after allocation stops. A home server spends most of its day like this.
 */
const SETTLE_SECONDS = 30;
const WORDS = 'milk eggs bread call mum plan trip book review budget meeting ideas garden'.split(' ');

/**
 * The word of the search scenario: in 12 of every 25 of the reader's 1,000 notes (480, issue 31's
 * 481), in none of the notes the create scenario adds for the other user, so that it matches 480
 * notes of the index however many the creates add (other users' matches cost a search a walk
 * through them: docs/decisions/0003-search-ranking-window.md, "The caller's window").
 */
const SEARCHED_WORD = 'lorem';

/** Short Keep-style notes: a title and a line or two, a hashtag in some, the searched word in half. */
function shortNote(n: number): { title: string; content: string } {
  const words = Array.from({ length: 8 + (n % 12) }, (_, i) => WORDS[(n * 7 + i * 3) % WORDS.length]);
  if (n < NOTES && n % 25 < 12) words[0] = SEARCHED_WORD;
  return { title: `Note ${n}`, content: `${words.join(' ')}${n % 3 === 0 ? ' #home' : ''}` };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Target {
  name: 'ours' | 'peer' | 'ceiling';
  server: ServerProcess;
  /** The reader's credentials: the user of the 1,000 notes. */
  headers: Record<string, string>;
  /** Another user's, who makes the creates, so that the list stays at 1,000 notes. */
  writerHeaders: Record<string, string>;
  ids: string[];
}

async function call(target: Target, method: string, requestPath: string, body?: unknown) {
  const response = await fetch(`${target.server.url}${requestPath}`, {
    method,
    headers: { ...target.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${target.name} ${method} ${requestPath}: ${response.status}`);
  return response;
}

async function seedThroughApi(target: Target): Promise<void> {
  for (let n = 0; n < NOTES; n++) {
    const note = (await (await call(target, 'POST', '/api/notes', shortNote(n))).json()) as { id: string };
    target.ids.push(note.id);
  }
}

interface Scenario {
  name: string;
  ceiling: boolean;
  /** False where the peer has no such request: it is measured on ours alone. */
  peer?: false;
  /** Live streams (GET /api/events) of the reader held open on ours while it is measured. */
  idleStreams?: number;
  /** Requests of the untimed warm-up round, on each server (a tenth in quick runs). */
  warmupRequests: number;
  /** Sent as the other user (Target.writerHeaders). */
  byWriter?: boolean;
  request(target: Target): LoadRequest;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'List all 1,000 notes',
    warmupRequests: 200,
    ceiling: true,
    request: () => ({ method: 'GET', path: '/api/notes' }),
  },
  {
    name: 'One note by id',
    warmupRequests: 10_000,
    ceiling: true,
    request: (target) => ({ method: 'GET', path: `/api/notes/${target.ids[0]}` }),
  },
  {
    name: 'Create',
    warmupRequests: 10_000,
    ceiling: false,
    byWriter: true,
    request: () => {
      let n = NOTES;
      return { method: 'POST', path: '/api/notes', next: () => ({ body: shortNote(n++) }) };
    },
  },
  {
    name: 'Update',
    warmupRequests: 10_000,
    ceiling: false,
    request: (target) => {
      let n = 0;
      return {
        method: 'PATCH',
        path: `/api/notes/${target.ids[0]}`,
        next: () => {
          n++;
          return { path: `/api/notes/${target.ids[n % target.ids.length]}`, body: { title: `edited ${n}` } };
        },
      };
    },
  },
  {
    // Issue 31's search goal: CPU per request, ours alone (the peer searches in the browser).
    name: `Search "${SEARCHED_WORD}" (480 matches)`,
    warmupRequests: 2_000,
    ceiling: false,
    peer: false,
    request: () => ({ method: 'GET', path: `/api/search?q=${SEARCHED_WORD}` }),
  },
  {
    // The same search, never asked twice in a row: trailing spaces (which no match depends on)
    // make each request's words new, so the ranking kept while nothing changes (decision 0027)
    // is never reused and every request ranks, as on a server where writes come all the time.
    name: `Search "${SEARCHED_WORD}", ranked every time`,
    warmupRequests: 2_000,
    ceiling: false,
    peer: false,
    request: () => {
      let n = 0;
      const path = () => `/api/search?q=${SEARCHED_WORD}${'%20'.repeat(1 + (n++ % 500))}`;
      return { method: 'GET', path: path(), next: () => ({ path: path() }) };
    },
  },
  // Issue 31: idle live streams must not raise the CPU of other requests. The reader's streams
  // stay idle: a read sends no hint, and the creates are the writer's.
  {
    name: `One note by id, ${IDLE_STREAMS} idle live streams open`,
    warmupRequests: 2_000,
    ceiling: false,
    peer: false,
    idleStreams: IDLE_STREAMS,
    request: (target) => ({ method: 'GET', path: `/api/notes/${target.ids[0]}` }),
  },
  {
    name: `Create, ${IDLE_STREAMS} idle live streams open`,
    warmupRequests: 2_000,
    ceiling: false,
    peer: false,
    byWriter: true,
    idleStreams: IDLE_STREAMS,
    request: () => {
      let n = 2 * NOTES;
      return { method: 'POST', path: '/api/notes', next: () => ({ body: shortNote(n++) }) };
    },
  },
];

async function startOurs(options: PeerOptions): Promise<Target> {
  const server = await startProcess(
    options.serverArgs,
    { DATA_DIR: path.join(options.workDir, 'peer-ours'), LOG_LEVEL: 'warn' },
    '/api/health',
  );
  const signIn = async (requestPath: string, body: object) => {
    const response = await fetch(`${server.url}${requestPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('session='));
    if (!response.ok || !cookie) throw new Error(`${requestPath} failed: ${response.status}`);
    return { cookie: cookie.split(';')[0]! };
  };
  const headers = await signIn('/api/auth/setup', { password: PASSWORD });
  const writer = { email: 'writer@example.com', displayName: 'Writer', password: PASSWORD };
  const added = await fetch(`${server.url}/api/users`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(writer),
  });
  if (!added.ok) throw new Error(`adding the writer failed: ${added.status}`);
  const writerHeaders = await signIn('/api/auth/login', { email: writer.email, password: PASSWORD });
  return { name: 'ours', server, headers, writerHeaders, ids: [] };
}

async function startPeer(options: PeerOptions): Promise<Target> {
  const server = await startProcess(
    ['--import', 'tsx', path.join(import.meta.dirname, 'peer.ts')],
    { PEER_DB: path.join(options.workDir, 'peer.db') },
    '/api/health',
  );
  const signIn = async (user: number) => {
    const response = await fetch(`${server.url}/login?user=${user}`, { method: 'POST' });
    return { authorization: `Bearer ${((await response.json()) as { token: string }).token}` };
  };
  return { name: 'peer', server, headers: await signIn(1), writerHeaders: await signIn(2), ids: [] };
}

async function startCeiling(options: PeerOptions, ours: Target): Promise<Target> {
  const bodies: Record<string, string> = {};
  for (const scenario of SCENARIOS.filter((s) => s.ceiling)) {
    const { path: requestPath } = scenario.request(ours);
    const file = path.join(options.workDir, `peer-ceiling-${Object.keys(bodies).length}.json`);
    fs.writeFileSync(file, Buffer.from(await (await call(ours, 'GET', requestPath)).arrayBuffer()));
    bodies[requestPath] = file;
  }
  const bodiesFile = path.join(options.workDir, 'peer-ceiling-bodies.json');
  fs.writeFileSync(bodiesFile, JSON.stringify(bodies));
  const server = await startProcess(
    ['--import', 'tsx', path.join(import.meta.dirname, 'ceiling.ts')],
    { CEILING_BODIES: bodiesFile },
    '/api/health',
  );
  return { name: 'ceiling', server, headers: {}, writerHeaders: {}, ids: ours.ids };
}

const CONNECTIONS = 10;

/** Runs `work` with the scenario's idle live streams of the reader open on `target`. */
async function withIdleStreams<T>(target: Target, scenario: Scenario, work: () => Promise<T>): Promise<T> {
  const cookie = target.headers.cookie ?? '';
  const streams = await openStreams(target.server.url, { cookie }, scenario.idleStreams ?? 0);
  try {
    return await work();
  } finally {
    closeAll(streams);
  }
}

/** One measured run of `request` against `target`: requests/s and the server's CPU µs per request. */
async function measureOn(target: Target, scenario: Scenario, seconds: number, failures: string[]) {
  return withIdleStreams(target, scenario, () => measureWithoutStreams(target, scenario, seconds, failures));
}

async function measureWithoutStreams(
  target: Target,
  scenario: Scenario,
  seconds: number,
  failures: string[],
) {
  let cpuBefore = 0;
  const result = await measure(target.server.url, scenario.request(target), {
    connections: CONNECTIONS,
    seconds,
    warmupSeconds: seconds / 4,
    headers: scenario.byWriter ? target.writerHeaders : target.headers,
    afterWarmup: () => {
      cpuBefore = target.server.cpuMicros();
    },
  });
  const cpu = target.server.cpuMicros() - cpuBefore;
  failures.push(...result.failures.map((f) => `${target.name}: ${f}`));
  return { rps: result.rps, cpuMicrosPerRequest: result.requests === 0 ? 0 : cpu / result.requests };
}

export async function runPeerComparison(options: PeerOptions): Promise<PeerReport> {
  const rounds = options.quick ? 1 : 3;
  const seconds = options.quick ? 0.5 : 3;
  const ours = await startOurs(options);
  const peer = await startPeer(options);
  const targets: Target[] = [ours, peer];
  try {
    const idleRssMb = { ours: ours.server.rssMb(), peer: peer.server.rssMb() };
    await sleep(SETTLE_SECONDS * 1000);
    const settledRssMb = { ours: ours.server.rssMb(), peer: peer.server.rssMb() };
    await seedThroughApi(ours);
    await seedThroughApi(peer);
    options.log(`peer: seeded ${NOTES} notes through each server's API`);
    const ceiling = await startCeiling(options, ours);
    targets.push(ceiling);
    const samples = SCENARIOS.map(() => ({
      ours: [] as Measured[],
      peer: [] as Measured[],
      ceiling: [] as Measured[],
    }));
    const failures = SCENARIOS.map(() => [] as string[]);
    // Which step raises our peak RSS (the docs give only the peak after them all).
    const logOurRss = (step: string) => options.log(`peer: ours after ${step}: ${memoryLine(ours.server)}`);
    logOurRss('seeding');
    const targetsOf = (scenario: Scenario) =>
      scenario.ceiling ? [ours, peer, ceiling] : scenario.peer === false ? [ours] : [ours, peer];
    // An untimed round first, a fixed number of requests per scenario and server: the CPU per
    // request is then the server's work, not V8 still compiling it (docs/benchmarks.md).
    for (const [i, scenario] of SCENARIOS.entries()) {
      const amount = options.quick ? scenario.warmupRequests / 10 : scenario.warmupRequests;
      for (const target of targetsOf(scenario)) {
        options.log(`peer: warm-up, ${scenario.name}, ${target.name}: ${amount} requests …`);
        const warmupFailures = await withIdleStreams(target, scenario, () =>
          warmUp(
            target.server.url,
            scenario.request(target),
            { connections: CONNECTIONS, headers: scenario.byWriter ? target.writerHeaders : target.headers },
            amount,
          ),
        );
        failures[i]!.push(...warmupFailures.map((f) => `${target.name}: warm-up round: ${f}`));
      }
      logOurRss(`the warm-up of ${scenario.name}`);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const [i, scenario] of SCENARIOS.entries()) {
        for (const target of targetsOf(scenario)) {
          options.log(`peer: round ${round}, ${scenario.name}, ${target.name} …`);
          samples[i]![target.name].push(await measureOn(target, scenario, seconds, failures[i]!));
        }
        logOurRss(`round ${round} of ${scenario.name}`);
      }
    }
    const summary = (measured: Measured[]): Measured => ({
      rps: median(measured.map((m) => m.rps)),
      cpuMicrosPerRequest: median(measured.map((m) => m.cpuMicrosPerRequest)),
    });
    const ratio = (a: Measured[], b: Measured[]) => median(a.map((m, r) => m.rps / b[r]!.rps));
    const rows = SCENARIOS.map((scenario, i): PeerRow => {
      const s = samples[i]!;
      return {
        name: scenario.name,
        ours: summary(s.ours),
        ...(scenario.peer === false ? {} : { peer: summary(s.peer), oursToPeer: ratio(s.ours, s.peer) }),
        ...(scenario.ceiling ? { ceiling: summary(s.ceiling), oursToCeiling: ratio(s.ours, s.ceiling) } : {}),
        failures: failures[i]!,
      };
    });
    const peakRssMb = { ours: ours.server.peakRssMb(), peer: peer.server.peakRssMb() };
    return { rows, rounds, notes: NOTES, idleRssMb, settledRssMb, peakRssMb };
  } finally {
    for (const target of targets) await target.server.stop();
  }
}

const number = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Which of bench/peer.ts's servers ran (PEER_HTTP), in words. */
function peerKind(): string {
  if (process.env.PEER_HTTP === 'node') return 'the node:http floor';
  if (process.env.PEER_HTTP === 'express-key') return 'Express + jsonwebtoken, the secret as a key object';
  return 'Express + jsonwebtoken as react-glass-keep calls it';
}

export function peerTable(report: PeerReport): string {
  const lines = [
    `Against the peer (bench/peer.ts: ${peerKind()}) and the bare-Fastify ceiling: ${number(report.notes)} short notes written through each server's API, 10 connections, ${report.rounds} interleaved round(s), medians; CPU is the server process's user + system time per request.`,
    '',
    '| Scenario | Ours req/s | Ours CPU µs/req | Peer req/s | Peer CPU µs/req | Ceiling req/s | Ceiling CPU µs/req | Ours / peer | Ours / ceiling |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const row of report.rows) {
    const failed = row.failures.length > 0 ? ` (${row.failures.join(', ')})` : '';
    const { ours, peer, ceiling } = row;
    lines.push(
      `| ${row.name}${failed} | ${number(ours.rps)} | ${number(ours.cpuMicrosPerRequest)} | ${peer ? number(peer.rps) : '—'} | ${peer ? number(peer.cpuMicrosPerRequest) : '—'} | ${ceiling ? number(ceiling.rps) : '—'} | ${ceiling ? number(ceiling.cpuMicrosPerRequest) : '—'} | ${row.oursToPeer === undefined ? '—' : `${number(row.oursToPeer, 2)}×`} | ${row.oursToCeiling === undefined ? '—' : `${number(100 * row.oursToCeiling)}%`} |`,
    );
  }
  lines.push(
    '',
    `| Measure | Ours | Peer |`,
    '|---|--:|--:|',
    `| Idle RSS after start-up (VmRSS) | ${number(report.idleRssMb.ours)} MiB | ${number(report.idleRssMb.peer)} MiB |`,
    `| Idle RSS settled, ${SETTLE_SECONDS} s later (VmRSS) | ${number(report.settledRssMb.ours)} MiB | ${number(report.settledRssMb.peer)} MiB |`,
    `| Peak RSS after the scenarios (VmHWM) | ${number(report.peakRssMb.ours)} MiB | ${number(report.peakRssMb.peer)} MiB |`,
  );
  return lines.join('\n');
}
