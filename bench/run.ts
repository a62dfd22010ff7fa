/**
 * `npm run bench [-- --quick] [-- --only <text>] [-- --profile]`: seeds two fresh DATA_DIRs
 * through the app's services, starts the built server (dist/main.js) on each as its own process,
 * and measures every scenario of scenarios.ts with autocannon over 127.0.0.1, next to a bare
 * Fastify ceiling; then the web app in Chromium (web.ts). Full runs write docs/benchmarks.md; every run exits non-zero when any request
 * was answered with a non-2xx status or failed, so CI's quick run keeps the suite honest.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type AbuseRow, abuseTable, runAbuse } from './abuse.js';
import { apiClient, login } from './client.js';
import { type LiveReport, liveTable, runLive } from './live.js';
import { type LoadOptions, measure } from './load.js';
import { type PeerReport, peerTable, runPeerComparison } from './peerCompare.js';
import { memoryLine, type ServerProcess, serverNodeFlags, startProcess } from './processes.js';
import {
  type ProcessRow,
  processTable,
  type RunInfo,
  resultsSection,
  type ScenarioRow,
  scenarioTable,
  writeResults,
} from './report.js';
import { runScaleOut } from './scaleOut.js';
import {
  type CorpusName,
  type LoadRequest,
  SCENARIOS,
  type Scenario,
  type ScenarioContext,
} from './scenarios.js';
import { type SeedResult, seedDataDir } from './seed.js';
import { runWeb, webTable } from './web.js';

const SEED = 20261121;

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
});

const sizes = args.quick
  ? { notes: 300, search: 1_000, seconds: 1, warmupSeconds: 0.25 }
  : { notes: 10_000, search: 100_000, seconds: 4, warmupSeconds: 1 };

const root = path.resolve(import.meta.dirname, '..');
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-bench-'));
const profileDir = path.join(root, '.tmp', 'profiles');

function log(message: string): void {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

async function seed(corpus: CorpusName, count: number, mode: 'service' | 'batched'): Promise<SeedResult> {
  const result = await seedDataDir(path.join(workDir, corpus), { seed: SEED, count, mode });
  log(`seeded ${count} notes (${mode}) in ${(result.ms / 1000).toFixed(1)} s`);
  return result;
}

/** The server's process arguments, as `npm start` runs it; with --profile, every server writes a CPU profile. */
const serverArgs = [
  ...(args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
  ...serverNodeFlags(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start),
  path.join(root, 'dist', 'main.js'),
];

function startServer(corpus: CorpusName): Promise<ServerProcess> {
  return startProcess(
    serverArgs,
    // TRUST_PROXY lets the shared-note scenario appear as many clients (see scenarios.ts).
    { DATA_DIR: path.join(workDir, corpus), LOG_LEVEL: 'warn', TRUST_PROXY: '127.0.0.1' },
    '/api/health',
  );
}

/** The bytes the real server answers for a GET, saved for the ceiling server to replay. */
async function capture(url: string, requestPath: string, cookie: string): Promise<string> {
  const response = await fetch(`${url}${requestPath}`, { headers: { cookie } });
  if (!response.ok) throw new Error(`GET ${requestPath}: ${response.status}`);
  const file = path.join(workDir, `ceiling-${Buffer.from(requestPath).toString('hex').slice(0, 60)}.json`);
  fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
  return file;
}

const loadOptions = (scenario: Scenario, headers: Record<string, string>): LoadOptions => ({
  connections: scenario.connections,
  seconds: sizes.seconds,
  warmupSeconds: sizes.warmupSeconds,
  headers,
});

interface CorpusRun {
  rows: ScenarioRow[];
  /** The request each scenario sent, for the ceiling to replay. */
  requests: Map<Scenario, LoadRequest>;
  startupMs: number;
  peakRssMb: number;
  /** Path → saved body, for the ceiling. */
  ceilingBodies: Record<string, string>;
}

async function runCorpus(corpus: CorpusName, seeded: SeedResult, scenarios: Scenario[]): Promise<CorpusRun> {
  const server = await startServer(corpus);
  log(
    `${corpus} server ready in ${server.startupMs.toFixed(0)} ms (pid ${server.pid}, RSS ${server.rssMb().toFixed(0)} MiB)`,
  );
  try {
    const cookie = await login(server.url);
    const context: ScenarioContext = {
      seed: SEED,
      activeIds: seeded.activeIds,
      imageNoteIds: seeded.imageNoteIds,
      api: apiClient(server.url, cookie),
    };
    // Every request is prepared, and the ceiling's bodies captured, before any write scenario runs.
    const requests = new Map<Scenario, LoadRequest>();
    const ceilingBodies: Record<string, string> = {};
    for (const scenario of scenarios) {
      const request = await scenario.request(context);
      requests.set(scenario, request);
      if (scenario.ceiling) ceilingBodies[request.path] = await capture(server.url, request.path, cookie);
    }
    const rows: ScenarioRow[] = [];
    for (const scenario of scenarios) {
      log(`${scenario.name} …`);
      const result = await measure(server.url, requests.get(scenario)!, loadOptions(scenario, { cookie }));
      rows.push({ scenario, result });
      // Which scenario raises the corpus's peak RSS (the docs give only the peak after them all).
      log(`  after it: ${memoryLine(server)}`);
    }
    return { rows, requests, startupMs: server.startupMs, peakRssMb: server.peakRssMb(), ceilingBodies };
  } finally {
    await server.stop();
  }
}

/** Runs the ceiling scenarios against the bare server; adds their results to the rows. */
async function runCeiling(run: CorpusRun) {
  const withCeiling = run.rows.filter((r) => r.scenario.ceiling);
  if (withCeiling.length === 0) return;
  const bodiesFile = path.join(workDir, 'ceiling-bodies.json');
  fs.writeFileSync(bodiesFile, JSON.stringify(run.ceilingBodies));
  const ceiling = await startProcess(
    ['--import', 'tsx', path.join(root, 'bench', 'ceiling.ts')],
    { CEILING_BODIES: bodiesFile },
    '/api/health',
  );
  try {
    for (const row of withCeiling) {
      log(`ceiling: ${row.scenario.name} …`);
      row.ceiling = await measure(
        ceiling.url,
        run.requests.get(row.scenario)!,
        loadOptions(row.scenario, {}),
      );
    }
  } finally {
    await ceiling.stop();
  }
}

function selected(corpus: CorpusName): Scenario[] {
  return SCENARIOS.filter((s) => s.corpus === corpus && (!args.only || s.name.includes(args.only)));
}

/** How each corpus is seeded; start-up is held to its target on the large one. */
const CORPORA: Record<CorpusName, { count: number; mode: 'service' | 'batched'; startupTargetMs?: number }> =
  {
    notes: { count: sizes.notes, mode: 'service' },
    search: { count: sizes.search, mode: 'batched', startupTargetMs: 1_500 },
  };
const PEAK_RSS_TARGET_MB = 200;

/**
 * SQLite next to PostgreSQL with 1, 2 and 3 server processes (scaleOut.ts), when
 * BENCH_DATABASE_URL names a PostgreSQL role that may create databases; a full run writes its
 * table to docs/benchmarks.md, also with `--only scale`.
 */
async function scaleOutRun() {
  const adminUrl = process.env.BENCH_DATABASE_URL;
  if (args.only && !'scale'.includes(args.only) && !SCENARIOS.some((s) => s.name.includes(args.only!)))
    return;
  if (!adminUrl) {
    log('scale-out: skipped (set BENCH_DATABASE_URL to a PostgreSQL role that may create databases)');
    return;
  }
  const report = await runScaleOut({
    adminUrl,
    notes: sizes.notes,
    seed: SEED,
    seconds: sizes.seconds,
    warmupSeconds: sizes.warmupSeconds,
    serverArgs,
    workDir,
    only: args.only === 'scale' ? undefined : args.only,
    log,
  });
  if (!args.quick && (!args.only || args.only === 'scale'))
    writeResults(path.join(root, 'docs', 'benchmarks.md'), report.table, 'scale-out');
  return report;
}

async function main(): Promise<number> {
  const date = new Date();
  const loadAtStart = os.loadavg();
  log(`${args.quick ? 'quick' : 'full'} run in ${workDir}`);
  const rows: ScenarioRow[] = [];
  const processes: ProcessRow[] = [];
  const seeded: string[] = [];
  for (const [corpus, { count, mode, startupTargetMs }] of Object.entries(CORPORA) as [
    CorpusName,
    (typeof CORPORA)[CorpusName],
  ][]) {
    const scenarios = selected(corpus);
    if (scenarios.length === 0) continue;
    const seedResult = await seed(corpus, count, mode);
    const how =
      mode === 'service'
        ? `one notes.create call each, ${seedResult.imageNoteIds.length} of them with a 640×480 JPEG through attachments.add,`
        : 'insertNote in transactions of 1,000 (no images)';
    seeded.push(
      `"${corpus}": ${count.toLocaleString('en-US')} notes seeded through ${how} in ${(seedResult.ms / 1000).toFixed(1)} s`,
    );
    const run = await runCorpus(corpus, seedResult, scenarios);
    await runCeiling(run);
    rows.push(...run.rows);
    const size = `${count.toLocaleString('en-US')} notes`;
    processes.push(
      {
        name: `Start-up, ${size} (spawn → /api/health 200)`,
        value: run.startupMs,
        unit: 'ms',
        max: startupTargetMs,
      },
      {
        name: `Peak RSS (VmHWM), ${size}, after its scenarios`,
        value: run.peakRssMb,
        unit: 'MiB',
        max: PEAK_RSS_TARGET_MB,
      },
    );
  }
  const peer: PeerReport | undefined =
    !args.only || 'peer'.includes(args.only)
      ? await runPeerComparison({
          quick: args.quick,
          serverArgs,
          workDir,
          log,
        })
      : undefined;
  const peerSection = peer ? `\n\n${peerTable(peer)}` : '';
  const abuse: AbuseRow[] =
    !args.only || 'abuse'.includes(args.only)
      ? await runAbuse({ quick: args.quick, serverArgs, workDir, log })
      : [];
  const abuseSection = abuse.length > 0 ? `\n\n${abuseTable(abuse)}` : '';
  const live: LiveReport | undefined =
    !args.only || 'live'.includes(args.only)
      ? await runLive({
          quick: args.quick,
          serverArgs,
          workDir,
          adminUrl: process.env.BENCH_DATABASE_URL,
          log,
        })
      : undefined;
  const liveSection = live ? `\n\n${liveTable(live)}` : '';
  const web =
    !args.only || 'web'.includes(args.only)
      ? await runWeb({ quick: args.quick, seed: SEED, workDir, log, ...(args.profile ? { profileDir } : {}) })
      : undefined;
  const webSection = web ? `\n\n${webTable(web)}` : '';
  const serverSection = rows.length > 0 ? `${scenarioTable(rows)}\n\n${processTable(processes)}` : '';
  const scaleOut = await scaleOutRun();
  if (scaleOut) console.log(`\n${scaleOut.table}\n`);
  console.log(`${serverSection}${peerSection}${abuseSection}${liveSection}${webSection}`.trim());

  if (!args.quick && !args.only) {
    const info: RunInfo = {
      date,
      corpora: [
        ...seeded,
        `seed ${SEED}; ${sizes.seconds} s per scenario after a ${sizes.warmupSeconds} s warm-up`,
      ],
      notes: [
        `Load average when the run started: ${loadAtStart.map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min); other work on the machine shows up here.`,
      ],
    };
    writeResults(
      path.join(root, 'docs', 'benchmarks.md'),
      `${resultsSection(info, rows, processes)}${peerSection}${abuseSection}${liveSection}${webSection}`,
    );
    log('wrote docs/benchmarks.md');
  }
  const failed = rows.filter((r) => r.result.failures.length > 0 || (r.ceiling?.failures.length ?? 0) > 0);
  for (const row of failed) {
    const failures = [...row.result.failures, ...(row.ceiling?.failures.map((f) => `ceiling: ${f}`) ?? [])];
    log(`FAILED: ${row.scenario.name}: ${failures.join(', ')}`);
  }
  for (const failure of scaleOut?.failures ?? []) log(`FAILED: scale-out: ${failure}`);
  const peerFailures = peer?.rows.flatMap((row) => row.failures.map((f) => `${row.name}: ${f}`)) ?? [];
  for (const failure of peerFailures) log(`FAILED: peer: ${failure}`);
  for (const row of abuse) {
    for (const failure of row.failures) log(`FAILED: ${row.name}: ${failure}`);
  }
  for (const failure of live?.failures ?? []) log(`FAILED: ${failure}`);
  return failed.length > 0 ||
    peerFailures.length > 0 ||
    abuse.some((row) => row.failures.length > 0) ||
    (live?.failures.length ?? 0) > 0 ||
    (scaleOut?.failures.length ?? 0) > 0
    ? 1
    : 0;
}

try {
  process.exitCode = await main();
} finally {
  fs.rmSync(workDir, { recursive: true, force: true });
}
