/**
 * The "abuse" section of `npm run bench`: one signed-in user misbehaving while the server must
 * keep serving everyone else. Each scenario runs against the built server (dist/main.js) on a
 * fresh DATA_DIR and reports the server's peak RSS during the scenario (VmHWM, reset before it)
 * and the longest GET /api/health round trip of a poll every 50 ms from this process (a stall:
 * the event loop or the database was busy for that long).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { declaredPng, fullPng } from '../test/helpers/pngBomb.js';
import { resetPeakRss, type ServerArgs, type ServerProcess, startProcess } from './processes.js';

interface AbuseOptions {
  quick: boolean;
  serverArgs: ServerArgs;
  /** A directory for the servers' DATA_DIRs. */
  workDir: string;
  log: (message: string) => void;
}

export interface AbuseRow {
  name: string;
  peakRssMb: number;
  longestStallMs: number;
  /** What the abusive requests were answered, e.g. "413 ×5". */
  statuses: string;
  /** What the other users' requests were answered, when the scenario sends some. */
  otherTraffic?: string;
  /** Peak RSS target in MiB, if any. */
  maxRssMb?: number;
  /** Longest health stall target in ms, if any (reported, never failing: the machine may be busy). */
  maxStallMs?: number;
  /** Statuses that fail the run. */
  failures: string[];
}

const POLL_INTERVAL_MS = 50;
const PASSWORD = 'abuse bench password';

/**
 * Polls /api/health every 50 ms until stopped; resolves to the longest round trip in ms. The
 * polling runs in a worker thread with its own event loop and HTTP client, so the time this
 * process spends reading a huge answer is never counted as the server's stall.
 */
export function watchHealth(url: string): { stop(): Promise<number> } {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    let running = true;
    let longest = 0;
    parentPort.on('message', () => { running = false; });
    (async () => {
      while (running) {
        const started = performance.now();
        try {
          await (await fetch(workerData.url + '/api/health')).arrayBuffer();
        } catch {
          // a refused poll counts by its time like any other
        }
        longest = Math.max(longest, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, workerData.interval));
      }
      parentPort.postMessage(longest);
    })();
    `,
    { eval: true, workerData: { url, interval: POLL_INTERVAL_MS } },
  );
  const longest = new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const result = await longest;
      await worker.terminate();
      return result;
    },
  };
}

const megabytes = (bytes: number) =>
  bytes < 100_000 ? `${Math.ceil(bytes / 1000)} kB` : `${(bytes / 1e6).toFixed(1)} MB`;

/** Counts of each status, e.g. "201 ×3, 413 ×2". */
function statusCounts(statuses: readonly number[]): string {
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status} ×${count}`)
    .join(', ');
}

export class Session {
  /** The session cookie (`session=…`) once signed in. */
  cookie = '';

  constructor(readonly url: string) {}

  private async request(method: string, requestPath: string, body?: unknown): Promise<Response> {
    const form = body instanceof FormData;
    const response = await fetch(`${this.url}${requestPath}`, {
      method,
      headers: {
        cookie: this.cookie,
        ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}),
      },
      body: form ? body : body === undefined ? undefined : JSON.stringify(body),
    });
    const session = response.headers.getSetCookie().find((c) => c.startsWith('session='));
    if (session) this.cookie = session.split(';')[0]!;
    return response;
  }

  /** Sends a request and reads the whole answer without keeping it; returns the status. */
  async send(method: string, requestPath: string, body?: unknown): Promise<number> {
    const response = await this.request(method, requestPath, body);
    if (response.body) for await (const _chunk of response.body);
    return response.status;
  }

  /** Like send, for a request that must succeed; returns the JSON answer. */
  async json<T = any>(method: string, requestPath: string, body?: unknown): Promise<T> {
    const response = await this.request(method, requestPath, body);
    if (!response.ok)
      throw new Error(`${method} ${requestPath}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<T>;
  }
}

/** The owner, signed in, and a second user, signed in, on a fresh server. */
export async function twoUsers(url: string): Promise<{ owner: Session; other: Session; otherId: number }> {
  const owner = new Session(url);
  await owner.json('POST', '/api/auth/setup', { password: PASSWORD });
  const { id } = await owner.json('POST', '/api/users', {
    email: 'other@example.com',
    displayName: 'Other',
    password: PASSWORD,
  });
  const other = new Session(url);
  await other.json('POST', '/api/auth/login', { email: 'other@example.com', password: PASSWORD });
  return { owner, other, otherId: id };
}

/** Runs `during` with the peak RSS reset before and the health poll around it. */
async function observe<T>(
  server: ServerProcess,
  during: () => Promise<T>,
): Promise<{ result: T; peakRssMb: number; longestStallMs: number }> {
  resetPeakRss(server.pid);
  const health = watchHealth(server.url);
  let longestStallMs: number;
  let result: T;
  try {
    result = await during();
  } finally {
    longestStallMs = await health.stop();
  }
  return { result, peakRssMb: server.peakRssMb(), longestStallMs };
}

/** (a) Decode bombs: 5 uploads of a 16383×16383 interlaced 16-bit PNG at once, plus normal traffic. */
async function decodeBombs(server: ServerProcess, options: AbuseOptions): Promise<AbuseRow> {
  const { owner, other } = await twoUsers(server.url);
  // Quick runs send only the header (refused from it all the same); full runs the whole image.
  const bomb = options.quick ? declaredPng(16383, 16383) : await fullPng(16383, 16383);
  const target = await owner.json('POST', '/api/notes', { title: 'bombed' });
  const mine = await other.json('POST', '/api/notes', { title: 'normal', content: 'a #normal note' });
  let uploading = true;
  const observed = await observe(server, async () => {
    const normal: number[] = [];
    const traffic = (async () => {
      // The other user keeps reading, listing, searching and writing while the bombs are handled.
      for (let i = 0; uploading || i < 5; i++) {
        normal.push(await other.send('GET', `/api/notes/${mine.id}`));
        normal.push(await other.send('GET', '/api/notes'));
        normal.push(await other.send('GET', '/api/search?q=normal'));
        normal.push(await other.send('PATCH', `/api/notes/${mine.id}`, { content: `a #normal note ${i}` }));
      }
    })();
    const uploads = await Promise.all(
      Array.from({ length: 5 }, () => {
        const form = new FormData();
        form.append('file', new Blob([bomb]), 'bomb.png');
        return owner.send('POST', `/api/notes/${target.id}/attachments`, form);
      }),
    );
    uploading = false;
    await traffic;
    return { uploads, normal };
  });
  const { uploads, normal } = observed.result;
  const failures = [
    ...uploads.filter((s) => s !== 413).map((s) => `bomb upload answered ${s}`),
    ...normal.filter((s) => s >= 300).map((s) => `normal request answered ${s}`),
  ];
  return {
    name: `5 decode-bomb uploads at once (16383×16383 16-bit PNG, ${megabytes(bomb.length)} each) + normal traffic`,
    peakRssMb: observed.peakRssMb,
    longestStallMs: observed.longestStallMs,
    statuses: `uploads: ${statusCounts(uploads)}`,
    otherTraffic: statusCounts(normal),
    maxRssMb: 400,
    failures,
  };
}

/** (b) A huge list: notes of 1,000,000 `"` each (2 MB of JSON each), shared with another user. */
async function hugeList(server: ServerProcess, options: AbuseOptions): Promise<AbuseRow> {
  const { owner, other, otherId } = await twoUsers(server.url);
  const count = options.quick ? 10 : 283;
  const content = '"'.repeat(1_000_000);
  for (let i = 0; i < count; i++) {
    const note = await owner.json('POST', '/api/notes', { title: `quotes ${i}`, content });
    await owner.json('POST', `/api/notes/${note.id}/collaborators`, { userId: otherId });
  }
  options.log(`abuse: ${count} notes of 1,000,000 quotes shared`);
  const observed = await observe(server, async () => {
    const answers: string[] = [];
    for (const requestPath of ['/api/notes', '/api/sync?since=0', '/api/search?q=quotes&limit=100']) {
      answers.push(`${requestPath.split('?')[0]} ${await other.send('GET', requestPath)}`);
    }
    return answers;
  });
  return {
    name: `GET /api/notes, /api/sync?since=0 and search over ${count} shared notes of 1,000,000 \`"\` (${megabytes(count * 2_000_000)} of JSON)`,
    peakRssMb: observed.peakRssMb,
    longestStallMs: observed.longestStallMs,
    statuses: observed.result.join(', '),
    failures: observed.result.filter((answer) => !/ 2\d\d$/.test(answer)),
  };
}

/** (c) The largest allowed sync push: 1,000 creates (16 MiB) with many distinct hashtags each. */
async function largestPush(server: ServerProcess, options: AbuseOptions): Promise<AbuseRow> {
  const { other } = await twoUsers(server.url);
  const changes = options.quick ? 100 : 1_000;
  // Just under the 16 MiB body limit in full runs: ~16.7 kB of 10-character hashtags per change.
  const perChange = options.quick ? 2_000 : Math.floor((16 * 1024 * 1024 - 200_000) / changes);
  const tags = (length: number) => {
    const words: string[] = [];
    for (let size = 0; size < length; size += 10) words.push(`#${randomBytes(4).toString('hex')}`);
    return words.join(' ');
  };
  const body = {
    changes: Array.from({ length: changes }, (_, i) => ({
      noteId: randomUUID(),
      operation: 'create',
      timestamp: 1_000 + i,
      data: { title: `tags ${i}`, content: tags(perChange) },
    })),
  };
  const bytes = JSON.stringify(body).length;
  const observed = await observe(server, () => other.send('POST', '/api/sync', body));
  return {
    name: `POST /api/sync: ${changes.toLocaleString('en-US')} creates, ${(bytes / 2 ** 20).toFixed(1)} MiB, ~${Math.round(perChange / 10).toLocaleString('en-US')} distinct hashtags each`,
    peakRssMb: observed.peakRssMb,
    longestStallMs: observed.longestStallMs,
    statuses: String(observed.result),
    maxStallMs: 1_000,
    failures: observed.result >= 300 ? [`sync push answered ${observed.result}`] : [],
  };
}

const SCENARIOS = [decodeBombs, hugeList, largestPush];

/** Runs every abuse scenario, each on its own fresh server. */
export async function runAbuse(options: AbuseOptions): Promise<AbuseRow[]> {
  const rows: AbuseRow[] = [];
  for (const [index, scenario] of SCENARIOS.entries()) {
    const server = await startProcess(
      options.serverArgs,
      { DATA_DIR: path.join(options.workDir, `abuse-${index}`), LOG_LEVEL: 'warn' },
      '/api/health',
    );
    try {
      options.log(`abuse: ${scenario.name} …`);
      rows.push(await scenario(server, options));
    } finally {
      await server.stop();
    }
  }
  return rows;
}

export function abuseTable(rows: readonly AbuseRow[]): string {
  const lines = [
    '| Abuse scenario | Abusive requests answered | Other traffic | Peak RSS | Longest /api/health stall | Target | Result |',
    '|---|---|---|--:|--:|---|---|',
  ];
  for (const row of rows) {
    const targets = [
      ...(row.maxRssMb === undefined ? [] : [`RSS < ${row.maxRssMb} MiB`]),
      ...(row.maxStallMs === undefined ? [] : [`stall < ${row.maxStallMs / 1000} s`]),
    ];
    const met =
      row.failures.length === 0 &&
      (row.maxRssMb === undefined || row.peakRssMb < row.maxRssMb) &&
      (row.maxStallMs === undefined || row.longestStallMs < row.maxStallMs);
    const target = targets.length === 0 ? '—' : targets.join(', ');
    const result = targets.length === 0 && row.failures.length === 0 ? '—' : met ? 'pass' : '**miss**';
    const { statuses } = row;
    lines.push(
      `| ${row.name} | ${statuses} | ${row.otherTraffic ?? '—'} | ${Math.round(row.peakRssMb)} MiB | ${Math.round(row.longestStallMs).toLocaleString('en-US')} ms | ${target} | ${result} |`,
    );
  }
  return lines.join('\n');
}
