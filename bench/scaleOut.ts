import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { apiClient, login } from './client.js';
import { type LoadResult, measure } from './load.js';
import { type ServerArgs, type ServerProcess, startProcess } from './processes.js';
import { machineLine, number } from './report.js';
import { type LoadRequest, SCENARIOS } from './scenarios.js';
import { seedDataDir } from './seed.js';

/**
 * The scenarios of the notes corpus that many clients run at once (10 connections), measured on
 * SQLite with one server process and on PostgreSQL with 1, 2 and 3 processes sharing one
 * database and one DATA_DIR (decision 0022). The connections are spread over the processes
 * as a load balancer would; the load generator runs on the same machine.
 */
const SCALE_SCENARIOS = [
  'GET /api/notes/{id}',
  'GET /api/sync?since=… (the last 50 changes)',
  'GET /api/shared/{token}',
  'POST /api/notes',
  'PATCH /api/notes/{id}',
];

interface Setup {
  label: string;
  processes: number;
  databaseUrl?: string;
  dataDir: string;
}

interface ScaleOutOptions {
  /** A PostgreSQL URL whose role may create databases; the run creates and drops its own. */
  adminUrl: string;
  notes: number;
  seed: number;
  seconds: number;
  warmupSeconds: number;
  serverArgs: ServerArgs;
  workDir: string;
  only?: string;
  log(message: string): void;
}

/** `total` connections spread over `parts` processes: 10 over 3 is 4, 3, 3. */
function spread(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

/** Each process gets its share of the connections, all at once; requests/s summed, the worst p99. */
async function measureSpread(
  servers: ServerProcess[],
  request: LoadRequest,
  totalConnections: number,
  cookie: string,
  options: ScaleOutOptions,
) {
  const connections = spread(totalConnections, servers.length);
  const results: LoadResult[] = await Promise.all(
    servers.map((server, i) =>
      measure(server.url, request, {
        connections: connections[i]!,
        seconds: options.seconds,
        warmupSeconds: options.warmupSeconds,
        headers: { cookie },
      }),
    ),
  );
  return {
    rps: results.reduce((sum, r) => sum + r.rps, 0),
    p99: Math.max(...results.map((r) => r.p99)),
    failures: results.flatMap((r) => r.failures),
  };
}

export async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

interface ScaleOutReport {
  table: string;
  failures: string[];
}

export async function runScaleOut(options: ScaleOutOptions): Promise<ScaleOutReport> {
  const scenarios = SCENARIOS.filter(
    (s) => SCALE_SCENARIOS.includes(s.name) && (!options.only || s.name.includes(options.only)),
  );
  const database = `notes_bench_${process.pid}`;
  const databaseUrl = new URL(options.adminUrl);
  databaseUrl.pathname = `/${database}`;
  await withAdmin(options.adminUrl, (client) => client.query(`CREATE DATABASE "${database}"`));
  try {
    const sqliteDir = path.join(options.workDir, 'scale-sqlite');
    const postgresDir = path.join(options.workDir, 'scale-postgres');
    const seeds = [{ dataDir: sqliteDir }, { dataDir: postgresDir, databaseUrl: databaseUrl.toString() }];
    const seeded = [];
    for (const { dataDir, databaseUrl: url } of seeds) {
      const result = await seedDataDir(dataDir, {
        seed: options.seed,
        count: options.notes,
        mode: 'batched',
        databaseUrl: url,
      });
      options.log(
        `scale-out: seeded ${options.notes} notes on ${url ? 'PostgreSQL' : 'SQLite'} in ${(result.ms / 1000).toFixed(1)} s`,
      );
      seeded.push(result);
    }
    const setups: Setup[] = [
      { label: 'SQLite, 1 process', processes: 1, dataDir: sqliteDir },
      ...[1, 2, 3].map((n) => ({
        label: `PostgreSQL, ${n} process${n > 1 ? 'es' : ''}`,
        processes: n,
        dataDir: postgresDir,
        databaseUrl: databaseUrl.toString(),
      })),
    ];
    const cells = new Map<string, string[]>(scenarios.map((s) => [s.name, []]));
    const failures: string[] = [];
    for (const setup of setups) {
      const servers: ServerProcess[] = [];
      try {
        for (let i = 0; i < setup.processes; i++) {
          servers.push(
            await startProcess(
              options.serverArgs,
              {
                DATA_DIR: setup.dataDir,
                LOG_LEVEL: 'warn',
                TRUST_PROXY: '127.0.0.1',
                ...(setup.databaseUrl ? { DATABASE_URL: setup.databaseUrl } : {}),
              },
              '/api/health',
            ),
          );
        }
        const cookie = await login(servers[0]!.url);
        const seedResult = seeded[setup.databaseUrl ? 1 : 0]!;
        for (const scenario of scenarios) {
          options.log(`scale-out: ${setup.label}: ${scenario.name} …`);
          const request = await scenario.request({
            seed: options.seed,
            activeIds: seedResult.activeIds,
            imageNoteIds: [],
            api: apiClient(servers[0]!.url, cookie),
          });
          const result = await measureSpread(servers, request, scenario.connections, cookie, options);
          for (const failure of result.failures)
            failures.push(`${setup.label}: ${scenario.name}: ${failure}`);
          cells.get(scenario.name)!.push(`${number(result.rps)} (${number(result.p99)})`);
        }
      } finally {
        for (const server of servers) await server.stop();
      }
    }
    const header = `| Scenario (10 connections) | ${setups.map((s) => s.label).join(' | ')} |`;
    const table = [
      `Machine: ${machineLine(new Date())}; load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(', ')}.`,
      '',
      `Requests/s (p99 ms); ${options.notes.toLocaleString('en-US')} notes seeded in batches on each engine, ${options.seconds} s per scenario after a ${options.warmupSeconds} s warm-up, the load generator on the same machine.`,
      '',
      header,
      `|---|${setups.map(() => '--:').join('|')}|`,
      ...scenarios.map((s) => `| ${s.name} | ${cells.get(s.name)!.join(' | ')} |`),
    ].join('\n');
    return { table, failures };
  } finally {
    await withAdmin(options.adminUrl, (client) =>
      client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
    );
  }
}
