/**
 * Times the sync endpoints on the benchmark corpus, in-process (service call) and over HTTP:
 * a push of 1,000 creates, a push of 1,000 updates of existing notes, and a pull of every note
 * (since=0). `--profile DIR` writes a CPU profile of the pulls and one of the pushes there
 * (seeding and start-up left out): `node --import tsx bench/sync-profile.ts --profile /tmp/p`.
 * The notes are seeded through insertNote, the write path create and sync push use.
 */

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { sessionActor } from '../src/actor.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { findOwner } from '../src/model/users.js';
import type { SyncChange } from '../src/shared/api/sync.js';
import { generateCorpus } from './corpus.js';
import { BENCH_PASSWORD, seedDataDir } from './seed.js';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    profile: { type: 'string' },
  },
});
const count = Number(args.count);
const rounds = Number(args.rounds);
const BATCH = 1_000;
const SEED = 42;

/** Runs `phase` under the V8 profiler when --profile is given, writing DIR/<name>.cpuprofile. */
async function profiled(name: string, phase: () => Promise<void>): Promise<void> {
  if (!args.profile) return phase();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    await phase();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(args.profile, { recursive: true });
    fs.writeFileSync(path.join(args.profile, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

/** The client httpMs talks to: a line of JSON per request in, a line per answer out. */
const HTTP_CLIENT = `
import fs from 'node:fs';
import readline from 'node:readline';
for await (const line of readline.createInterface({ input: process.stdin })) {
  const { method, url, cookie, bodyFile } = JSON.parse(line);
  const headers = { cookie, ...(bodyFile ? { 'content-type': 'application/json' } : {}) };
  const body = bodyFile ? fs.readFileSync(bodyFile) : undefined;
  const started = performance.now();
  const response = await fetch(url, { method, headers, body });
  const size = (await response.arrayBuffer()).byteLength;
  process.stdout.write(JSON.stringify({ status: response.status, ms: performance.now() - started, size }) + '\\n');
}`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const format = (values: number[]) =>
  `min ${Math.min(...values).toFixed(0)}, ` +
  `median ${median(values).toFixed(0)} ms (${values.map((v) => v.toFixed(0)).join(', ')})`;

/**
 * Wall time, and the CPU time this process (the server) spent meanwhile: on a machine shared
 * with other work, the CPU time is the steadier number to compare code changes by.
 */
interface Timing {
  wall: number;
  cpu: number;
}

function cpuMs(since?: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

async function timed(run: () => Promise<unknown>): Promise<Timing> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await run();
  return { wall: performance.now() - started, cpu: cpuMs(cpu) };
}

let clockMs = Date.now();
const createChanges = (): SyncChange[] =>
  Array.from({ length: BATCH }, (_, i) => ({
    noteId: randomUUID(),
    operation: 'create',
    timestamp: clockMs++,
    data: { title: `Pushed note ${i}`, content: `Written offline #bench item ${i}\n- [ ] one\n- [x] two` },
  }));
const updateChanges = (ids: readonly string[]): SyncChange[] =>
  ids.slice(0, BATCH).map((noteId, i) => ({
    noteId,
    operation: 'update',
    timestamp: clockMs++,
    data: {
      title: `Edited offline ${clockMs}`,
      content: `New text ${i} #edited #bench`,
      pinned: i % 2 === 0,
    },
  }));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-sync-profile-'));
try {
  const seeded = await seedDataDir(dataDir, { seed: SEED, count, mode: 'batched' });
  console.log(`seeded ${count} notes in ${(seeded.ms / 1000).toFixed(1)} s`);
  const ids = [...generateCorpus(SEED, count)].map((n) => n.id);

  const app = await buildApp(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }), {
    logger: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  const url = `http://127.0.0.1:${address.port}`;
  const owner = await findOwner(app.db);
  if (!owner) throw new Error('no owner');
  const actor = sessionActor(owner);
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: BENCH_PASSWORD }),
  });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');

  /**
   * Milliseconds of one request as a client in its own process measures it, as autocannon is in
   * `npm run bench`, so that reading 10 MB does not share this process's CPU time. One client
   * for the whole run: a process started per request (curl, before) forked this one each time,
   * and the pages a fork leaves copy-on-write made the server's next writes to its memory fault
   * one page at a time (a push of 1,000 edits measured ~270 ms that way, ~140 ms without).
   */
  const bodyFile = path.join(dataDir, 'push.json');
  const client = spawn(process.execPath, ['--input-type=module', '-e', HTTP_CLIENT], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const answers = readline.createInterface({ input: client.stdout })[Symbol.asyncIterator]();
  const httpMs = async (method: string, pathname: string, body?: unknown): Promise<Timing> => {
    if (body) fs.writeFileSync(bodyFile, JSON.stringify(body));
    const cpu = process.cpuUsage();
    client.stdin.write(
      `${JSON.stringify({ method, url: url + pathname, cookie, bodyFile: body ? bodyFile : null })}\n`,
    );
    const answer = await answers.next();
    const serverCpu = cpuMs(cpu);
    if (answer.done) throw new Error('the HTTP client ended');
    const { status, ms, size } = JSON.parse(answer.value) as { status: number; ms: number; size: number };
    if (status !== 200) throw new Error(`${method} ${pathname}: ${status}`);
    lastBytes = size;
    return { wall: ms, cpu: serverCpu };
  };
  let lastBytes = 0;

  const results: Record<string, Timing[]> = {};
  const record = (name: string, timing: Timing) => {
    results[name] ??= [];
    results[name].push(timing);
  };
  // Pulls first, while the account holds exactly `count` notes; the pushes then add notes.
  await profiled('pull', async () => {
    for (let round = 0; round < rounds; round++) {
      record('pull since=0, in-process', await timed(() => app.services.sync.pull(actor, 0)));
      record('pull since=0, HTTP', await httpMs('GET', '/api/sync?since=0'));
    }
  });
  console.log(`pull: ${(lastBytes / 1e6).toFixed(1)} MB`);
  await profiled('push', async () => {
    for (let round = 0; round < rounds; round++) {
      record(
        'push 1,000 creates, in-process',
        await timed(() => app.services.sync.push(actor, createChanges())),
      );
      record('push 1,000 creates, HTTP', await httpMs('POST', '/api/sync', { changes: createChanges() }));
      record(
        'push 1,000 updates, in-process',
        await timed(() => app.services.sync.push(actor, updateChanges(ids))),
      );
      record(
        'push 1,000 updates, HTTP',
        await httpMs('POST', '/api/sync', { changes: updateChanges(ids.slice(BATCH)) }),
      );
    }
  });
  for (const [name, timings] of Object.entries(results)) {
    console.log(`${name.padEnd(34)} wall ${format(timings.map((t) => t.wall))}`);
    console.log(`${''.padEnd(34)} cpu  ${format(timings.map((t) => t.cpu))}`);
  }
  client.stdin.end();
  await app.close();
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
