import autocannon from 'autocannon';
import type { LoadRequest } from './scenarios.js';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** Mean bytes per response, headers included. */
  bytesPerResponse: number;
  /** Non-2xx answers, connection errors and timeouts, by kind; empty when every request succeeded. */
  failures: string[];
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  headers: Record<string, string>;
  /** Called between the warm-up and the measured run (e.g. to read the server's CPU time). */
  afterWarmup?: () => void;
}

function encode(body: unknown): string | undefined {
  return body === undefined ? undefined : JSON.stringify(body);
}

/** How long autocannon runs: for a duration, or until `amount` requests have been answered. */
type Limit = { seconds: number } | { amount: number };

async function fire(
  url: string,
  request: LoadRequest,
  options: Pick<LoadOptions, 'connections' | 'headers'>,
  limit: Limit,
) {
  const headers = { ...options.headers };
  if (request.body !== undefined || request.next) headers['content-type'] = 'application/json';
  const { next } = request;
  // autocannon takes an explicit `undefined` as a value, so absent options are left out.
  const body = encode(request.body);
  const setupRequest = (raw: { path?: string; body?: string | Buffer; headers?: Record<string, string> }) => {
    const varied = next!();
    return {
      ...raw,
      path: varied.path ?? raw.path,
      body: encode(varied.body) ?? raw.body,
      headers: varied.headers ? { ...raw.headers, ...varied.headers } : raw.headers,
    };
  };
  return autocannon({
    url,
    connections: options.connections,
    ...('seconds' in limit ? { duration: limit.seconds } : { amount: limit.amount, timeout: 120 }),
    headers,
    requests: [
      {
        method: request.method,
        path: request.path,
        ...(body === undefined ? {} : { body }),
        ...(next ? { setupRequest } : {}),
      },
    ],
  });
}

function failures(result: Awaited<ReturnType<typeof autocannon>>): string[] {
  const found: string[] = [];
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) {
    if (!status.startsWith('2')) found.push(`${count}× HTTP ${status}`);
  }
  if (result.errors > 0) found.push(`${result.errors} errors`);
  if (result.timeouts > 0) found.push(`${result.timeouts} timeouts`);
  return found;
}

/**
 * Sends `amount` requests, untimed: V8 compiles a server's hot paths over its first thousands of
 * requests, whatever the time they take. Returns their failures.
 */
export async function warmUp(
  url: string,
  request: LoadRequest,
  options: Pick<LoadOptions, 'connections' | 'headers'>,
  amount: number,
): Promise<string[]> {
  return failures(await fire(url, request, options, { amount }));
}

/** Warms up, then measures `request` against `url` with autocannon. Failures in either count. */
export async function measure(url: string, request: LoadRequest, options: LoadOptions): Promise<LoadResult> {
  const warmup = await fire(url, request, options, { seconds: options.warmupSeconds });
  options.afterWarmup?.();
  let result = await fire(url, request, options, { seconds: options.seconds });
  // A request slower than the whole run (a loaded CI machine): wait for one, so that its status
  // is still checked and its time still reported.
  if (result.requests.total === 0) {
    result = await fire(url, request, { ...options, connections: 1 }, { amount: 1 });
  }
  const none = result.requests.total === 0 ? ['no request completed'] : [];
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    bytesPerResponse: result.requests.total === 0 ? 0 : result.throughput.total / result.requests.total,
    failures: [...failures(warmup).map((f) => `warm-up: ${f}`), ...failures(result), ...none],
  };
}
