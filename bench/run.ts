/**
 * `npm run bench [-- --quick] [-- --only <text>] [-- --profile]`: seeds two fresh DATA_DIRs
 * through the app's services, starts the built server (dist/main.js) on each as its own process,
 * and measures every scenario of scenarios.ts with autocannon over 127.0.0.1, next to a bare
 * Fastify ceiling. Full runs write docs/benchmarks.md; every run exits non-zero when any request
 * was answered with a non-2xx status or failed, so CI's quick run keeps the suite honest.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type LoadOptions, measure } from './load.js';
import { type ServerProcess, startProcess } from './processes.js';
import {
  type ProcessRow,
  processTable,
  type RunInfo,
  resultsSection,
  type ScenarioRow,
  scenarioTable,
  writeResults,
} from './report.js';
import { type CorpusName, SCENARIOS, type Scenario, type ScenarioContext } from './scenarios.js';
import { BENCH_PASSWORD, type SeedResult, seedDataDir } from './seed.js';

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

function startServer(corpus: CorpusName): Promise<ServerProcess> {
  const profiling = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  return startProcess(
    [...profiling, path.join(root, 'dist', 'main.js')],
    { DATA_DIR: path.join(workDir, corpus), LOG_LEVEL: 'warn' },
    '/api/health',
  );
}

async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: BENCH_PASSWORD }),
  });
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith('session='));
  if (!response.ok || !cookie) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  return cookie.split(';')[0]!;
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
  startupMs: number;
  peakRssMb: number;
  /** Path → saved body, for the ceiling. */
  ceilingBodies: Record<string, string>;
}

async function runCorpus(
  corpus: CorpusName,
  context: ScenarioContext,
  scenarios: Scenario[],
): Promise<CorpusRun> {
  const server = await startServer(corpus);
  log(`${corpus} server ready in ${server.startupMs.toFixed(0)} ms (pid ${server.pid})`);
  try {
    const cookie = await login(server.url);
    const requests = scenarios.map((s) => s.request(context));
    // Captured before any write scenario changes the notes.
    const ceilingBodies: Record<string, string> = {};
    for (const [i, scenario] of scenarios.entries()) {
      if (scenario.ceiling)
        ceilingBodies[requests[i]!.path] = await capture(server.url, requests[i]!.path, cookie);
    }
    const rows: ScenarioRow[] = [];
    for (const [i, scenario] of scenarios.entries()) {
      log(`${scenario.name} …`);
      const result = await measure(server.url, requests[i]!, loadOptions(scenario, { cookie }));
      rows.push({ scenario, result });
    }
    return { rows, startupMs: server.startupMs, peakRssMb: server.peakRssMb(), ceilingBodies };
  } finally {
    await server.stop();
  }
}

/** Runs the ceiling scenarios against the bare server; adds their results to `rows`. */
async function runCeiling(rows: ScenarioRow[], context: ScenarioContext, bodies: Record<string, string>) {
  const withCeiling = rows.filter((r) => r.scenario.ceiling);
  if (withCeiling.length === 0) return;
  const bodiesFile = path.join(workDir, 'ceiling-bodies.json');
  fs.writeFileSync(bodiesFile, JSON.stringify(bodies));
  const ceiling = await startProcess(
    ['--import', 'tsx', path.join(root, 'bench', 'ceiling.ts')],
    { CEILING_BODIES: bodiesFile },
    '/api/health',
  );
  try {
    for (const row of withCeiling) {
      log(`ceiling: ${row.scenario.name} …`);
      row.ceiling = await measure(ceiling.url, row.scenario.request(context), loadOptions(row.scenario, {}));
    }
  } finally {
    await ceiling.stop();
  }
}

function selected(corpus: CorpusName): Scenario[] {
  return SCENARIOS.filter((s) => s.corpus === corpus && (!args.only || s.name.includes(args.only)));
}

async function main(): Promise<number> {
  const date = new Date();
  const loadAtStart = os.loadavg();
  log(`${args.quick ? 'quick' : 'full'} run in ${workDir}`);
  const notesSeed = await seed('notes', sizes.notes, 'service');
  const searchSeed = await seed('search', sizes.search, 'batched');

  const notes = await runCorpus('notes', { seed: SEED, activeIds: notesSeed.activeIds }, selected('notes'));
  await runCeiling(notes.rows, { seed: SEED, activeIds: notesSeed.activeIds }, notes.ceilingBodies);
  const search = await runCorpus(
    'search',
    { seed: SEED, activeIds: searchSeed.activeIds },
    selected('search'),
  );

  const rows = [...notes.rows, ...search.rows];
  const processes: ProcessRow[] = [
    {
      name: `Start-up, ${sizes.search.toLocaleString('en-US')} notes (spawn → /api/health 200)`,
      value: search.startupMs,
      unit: 'ms',
      max: 1_500,
    },
    { name: `Start-up, ${sizes.notes.toLocaleString('en-US')} notes`, value: notes.startupMs, unit: 'ms' },
    {
      name: `Peak RSS (VmHWM), ${sizes.notes.toLocaleString('en-US')}-note server after its scenarios`,
      value: notes.peakRssMb,
      unit: 'MiB',
      max: 200,
    },
    {
      name: `Peak RSS (VmHWM), ${sizes.search.toLocaleString('en-US')}-note server after its scenarios`,
      value: search.peakRssMb,
      unit: 'MiB',
      max: 200,
    },
  ];
  console.log(`${scenarioTable(rows)}\n\n${processTable(processes)}`);

  const failed = rows.filter((r) => r.result.failures.length > 0 || (r.ceiling?.failures.length ?? 0) > 0);
  if (!args.quick && !args.only) {
    const info: RunInfo = {
      quick: false,
      date,
      corpora: [
        `"notes": one owner, ${sizes.notes.toLocaleString('en-US')} notes seeded one notes.create call each in ${(notesSeed.ms / 1000).toFixed(1)} s`,
        `"search": one owner, ${sizes.search.toLocaleString('en-US')} notes seeded through insertNote in transactions of 1,000 in ${(searchSeed.ms / 1000).toFixed(1)} s`,
        `seed ${SEED}; ${sizes.seconds} s per scenario after a ${sizes.warmupSeconds} s warm-up`,
      ],
      notes: [
        `Load average when the run started: ${loadAtStart.map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min); other work on the machine shows up here.`,
      ],
    };
    writeResults(path.join(root, 'docs', 'benchmarks.md'), resultsSection(info, rows, processes));
    log('wrote docs/benchmarks.md');
  }
  for (const row of failed)
    log(
      `FAILED: ${row.scenario.name}: ${[...row.result.failures, ...(row.ceiling?.failures ?? [])].join(', ')}`,
    );
  return failed.length > 0 ? 1 : 0;
}

try {
  process.exitCode = await main();
} finally {
  fs.rmSync(workDir, { recursive: true, force: true });
}
