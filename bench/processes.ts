import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';

/** A server running as its own process on 127.0.0.1. */
export interface ServerProcess {
  url: string;
  pid: number;
  /** Milliseconds from spawn to the first successful answer of `readyPath`. */
  startupMs: number;
  /** The process's peak resident set size so far (VmHWM), in MiB. */
  peakRssMb(): number;
  /** The process's resident set size now (VmRSS), in MiB. */
  rssMb(): number;
  /** CPU time (user + system) the process has used so far, in microseconds. */
  cpuMicros(): number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]) / 1024;
}

/** The server's process arguments: node's flags and dist/main.js, as `npm start` runs it. */
export type ServerArgs = string[];

/**
 * The node flags of the command in `startScript` (package.json's `start`) that runs
 * dist/main.js: the benchmarks and the documented commands run the server as `npm start` does.
 */
export function serverNodeFlags(startScript: string): string[] {
  const command = /\bnode((?: --\S+)*) dist\/main\.js\b/.exec(startScript);
  if (!command) throw new Error(`no "node … dist/main.js" in ${JSON.stringify(startScript)}`);
  return command[1]!.split(' ').filter(Boolean);
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of /proc/<pid>/stat (fields 14 and 15; the command name may hold spaces). */
function cpuMicros(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** The server's RSS now and its peak so far, for the bench's log: which step raised the peak. */
export function memoryLine(server: Pick<ServerProcess, 'rssMb' | 'peakRssMb'>): string {
  return `RSS ${server.rssMb().toFixed(0)} MiB, peak so far ${server.peakRssMb().toFixed(0)} MiB`;
}

/** Resets the process's peak RSS to its current RSS (Linux: 5 > /proc/<pid>/clear_refs). */
export function resetPeakRss(pid: number): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

async function waitUntilReady(child: ChildProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`server not ready at ${url} after ${timeoutMs} ms`);
}

/**
 * Spawns `node <args>` with `env` added and waits until GET `readyPath` answers 2xx. The child's
 * output goes to ours, so a crash or a warning is visible in the benchmark log.
 */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  readyPath: string,
): Promise<ServerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    await waitUntilReady(child, `${url}${readyPath}`, 30_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const startupMs = performance.now() - started;
  const pid = child.pid!;
  return {
    url,
    pid,
    startupMs,
    peakRssMb: () => statusMb(pid, 'VmHWM'),
    rssMb: () => statusMb(pid, 'VmRSS'),
    cpuMicros: () => cpuMicros(pid),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
