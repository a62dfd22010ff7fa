import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { configVariableNames } from '../src/config.js';
import { attach, image } from './helpers/archives.js';
import { TestClient } from './helpers/client.js';
import { onPostgres } from './helpers/postgres.js';

/**
 * The production image (Containerfile, decision 0035), built and run with Podman as
 * ../shared/design/containers.md shows: no registry is reachable, so the base image is a
 * stand-in made here (a Debian base from mmdebstrap, then this machine's Node.js copied in by
 * test/container/node-stand-in.Containerfile), both kept between runs on the same machine.
 * Costs several minutes the first time (most of it npm ci and the build inside the image), about
 * two when the layers are cached (docs/benchmarks.md, "Container image"), so it runs only with
 * TEST_CONTAINER_IMAGE=1: .ci/run gives it a step of its own, after the suite, so that the
 * image's build does not slow the suite's other tests.
 */

// Tests run from the repository root (npm test runs them bundled elsewhere).
const ROOT = process.cwd();
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
const DEBIAN_BASE = 'localhost/debian-base:bookworm';
const STAND_IN = `localhost/node:${process.version.slice(1)}-bookworm-slim-stand-in`;
/** Kept after the run: its layers make the next build on this machine quick. */
const IMAGE = 'localhost/keepsake-notes:test';
const OWNER_EMAIL = 'owner@example.com';
const OWNER_PASSWORD = 'container owner password';

/** Why the image cannot be built and run here, or null when it can. */
function whyNotRunnable(): string | null {
  if (process.env.TEST_CONTAINER_IMAGE !== '1') {
    return 'set TEST_CONTAINER_IMAGE=1 to build and run the image (minutes; .ci/run does, in a step of its own)';
  }
  if (onPostgres) return 'the image is tested without TEST_DATABASE_URL (it is the same on both)';
  if (process.platform !== 'linux') return 'Podman runs the image on Linux only';
  if (process.getuid?.() !== 0) return 'needs root for Podman with runc and chroot builds (as .ci/run runs)';
  for (const tool of ['podman', 'runc', 'mmdebstrap']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      return `${tool} is not installed (apt-get install podman mmdebstrap runc)`;
    }
  }
  return null;
}

const skip = whyNotRunnable();

/** Podman with the settings that work in this sandbox (containers.md, step 2). */
let containersConf = '';

/** Runs a program to its end without blocking the event loop: exit code and output. */
function runProgram(
  program: string,
  args: string[],
  { timeoutMs = 60_000, allowFailure = false, env = {} as Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: { ...process.env, ...env }, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-8000);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && !allowFailure) {
        reject(new Error(`${program} ${args.join(' ')} failed (${code}): ${stderr}`));
      } else resolve({ code, stdout: stdout.trim(), stderr });
    });
  });
}

const podman = (args: string[], options: { timeoutMs?: number; allowFailure?: boolean } = {}) =>
  runProgram('podman', args, { ...options, env: { CONTAINERS_CONF: containersConf } });

const imageExists = async (name: string) =>
  (await podman(['image', 'exists', name], { allowFailure: true })).code === 0;

/** The stand-in for node:20-bookworm-slim, built once per machine and Node.js version. */
async function buildStandIn(work: string): Promise<void> {
  if (!(await imageExists(DEBIAN_BASE))) {
    const rootfs = path.join(work, 'rootfs.tar');
    await runProgram('mmdebstrap', ['--variant=minbase', '--include=ca-certificates', 'bookworm', rootfs], {
      timeoutMs: 600_000,
    });
    await podman(['import', rootfs, DEBIAN_BASE], { timeoutMs: 300_000 });
    fs.rmSync(rootfs);
  }
  if (await imageExists(STAND_IN)) return;
  const context = path.join(work, 'stand-in');
  fs.mkdirSync(context);
  fs.copyFileSync(process.execPath, path.join(context, 'node'));
  fs.cpSync('/usr/lib/node_modules/npm', path.join(context, 'npm'), { recursive: true });
  fs.cpSync('/usr/include/node', path.join(context, 'include'), { recursive: true });
  fs.copyFileSync('/etc/ssl/certs/ca-certificates.crt', path.join(context, 'ca-certificates.crt'));
  const containerfile = path.join(ROOT, 'test/container/node-stand-in.Containerfile');
  await podman(['build', '--isolation=chroot', '-t', STAND_IN, '-f', containerfile, context], {
    timeoutMs: 600_000,
  });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Milliseconds until /api/health answers 200 (throws after a minute). */
async function untilHealthy(url: string, since = Date.now()): Promise<number> {
  while (Date.now() - since < 60_000) {
    const ok = await fetch(`${url}/api/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return Date.now() - since;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not become healthy within a minute`);
}

describe('the container image (Containerfile)', { skip: skip ?? false }, () => {
  let work: string;
  let port: number;
  let url: string;
  const name = `notes-test-${randomUUID().slice(0, 8)}`;
  const volume = `${name}-data`;
  const secret = `${name}-owner-password`;
  const measured: Record<string, number> = {};

  before(
    async () => {
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'notes-container-'));
      containersConf = path.join(work, 'containers.conf');
      fs.writeFileSync(
        containersConf,
        '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\n',
      );
      let started = Date.now();
      await buildStandIn(work);
      measured.standInSeconds = (Date.now() - started) / 1000;
      started = Date.now();
      const imageId = async () =>
        (await podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE], { allowFailure: true })).stdout;
      const previous = await imageId();
      await podman(
        [
          'build',
          '--isolation=chroot',
          '--network=host',
          // The OCI format has no HEALTHCHECK.
          '--format=docker',
          '--build-arg',
          `BASE_IMAGE=${STAND_IN}`,
          '-t',
          IMAGE,
          '-f',
          'Containerfile',
          ROOT,
        ],
        { timeoutMs: 1_500_000 },
      );
      measured.buildSeconds = (Date.now() - started) / 1000;
      // The last run's image, now untagged: its layers are cached, the image itself is not needed.
      if (previous !== '' && previous !== (await imageId())) {
        await podman(['rmi', previous], { allowFailure: true });
      }
    },
    { timeout: 1_800_000 },
  );

  after(async () => {
    if (skip) return;
    await podman(['rm', '--force', '--time', '0', name], { allowFailure: true });
    await podman(['volume', 'rm', '--force', volume], { allowFailure: true });
    await podman(['secret', 'rm', secret], { allowFailure: true });
    fs.rmSync(work, { recursive: true, force: true });
    console.log(`container image measurements: ${JSON.stringify(measured)}`);
  });

  it('is labelled with the version, runs as a user of its own, serves PORT 3000 on every interface', async () => {
    const [config] = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout);
    assert.equal(config.Config.Labels['org.opencontainers.image.version'], VERSION);
    assert.equal(config.Config.User, 'notes');
    for (const entry of ['HOST=0.0.0.0', 'PORT=3000', 'DATA_DIR=/data'])
      assert.ok(config.Config.Env.includes(entry), entry);
    assert.deepEqual(Object.keys(config.Config.Volumes), ['/data']);
    assert.equal(config.Config.StopSignal, 'SIGTERM');
    assert.deepEqual(config.Config.Entrypoint, ['node', '--max-semi-space-size=4', 'dist/main.js']);
    // What the image adds to its base (the stand-in is larger than node:20-bookworm-slim).
    const base = JSON.parse((await podman(['image', 'inspect', STAND_IN])).stdout)[0].Size as number;
    measured.imageMiB = Math.round(config.Size / 1024 / 1024);
    measured.addedToBaseMiB = Math.round((config.Size - base) / 1024 / 1024);
  });

  it('starts on a fresh volume with the owner from a secret file, keeps a note across a restart, not as root', async () => {
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const password = path.join(work, 'owner-password');
    fs.writeFileSync(password, `${OWNER_PASSWORD}\n`);
    await podman(['secret', 'create', secret, password]);
    await podman(['volume', 'create', volume]);
    // Host networking (port publishing does not work in this sandbox); 127.0.0.1 only, as the
    // port is on the machine's interfaces.
    const started = Date.now();
    await podman([
      '--runtime',
      'runc',
      'run',
      '--detach',
      '--name',
      name,
      '--network=host',
      '--cap-drop=ALL',
      '--security-opt=no-new-privileges',
      '--env',
      `PORT=${port}`,
      '--env',
      'HOST=127.0.0.1',
      '--env',
      `OWNER_EMAIL=${OWNER_EMAIL}`,
      '--env',
      `OWNER_PASSWORD_FILE=/run/secrets/${secret}`,
      '--secret',
      secret,
      '--volume',
      `${volume}:/data`,
      IMAGE,
    ]);
    measured.coldStartMs = await untilHealthy(url, started);

    const owner = new TestClient(url);
    const login = await owner.post('/api/auth/login', { email: OWNER_EMAIL, password: OWNER_PASSWORD });
    assert.equal(login.status, 200, login.text);
    const note = await owner.post('/api/notes', { title: 'Kept in the volume', content: 'across a restart' });
    assert.equal(note.status, 201, note.text);
    // The packages the bundle loads at run time are in the image: sharp (an image), swagger-ui.
    const photo = await attach(owner, note.body.id, await image(1));
    assert.equal(photo.status, 201, photo.text);
    assert.equal((await owner.get('/api/docs/static/swagger-ui-bundle.js')).status, 200);

    // The image's own HEALTHCHECK command answers healthy.
    const healthcheck = await podman(['--runtime', 'runc', 'healthcheck', 'run', name], {
      allowFailure: true,
    });
    assert.equal(healthcheck.code, 0, healthcheck.stderr);
    // PID 1 is the server, and not root.
    const status = (await podman(['exec', name, 'cat', '/proc/1/status'])).stdout;
    assert.match(status, /^Name:\s+node$/m);
    const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    assert.notEqual(uid, '0');
    assert.equal(uid, '10001');
    // A command beside the server, as docs/deploy.md shows: a backup into the volume.
    const backup = await podman(['exec', name, 'node', 'dist/main.js', 'backup', '/data/backup.zip'], {
      allowFailure: true,
    });
    assert.equal(backup.code, 0, backup.stderr);

    // SIGTERM stops it cleanly (exit 0), in well under podman's 10 s before SIGKILL.
    const stopping = Date.now();
    await podman(['stop', name]);
    measured.stopMs = Date.now() - stopping;
    assert.equal((await podman(['inspect', name, '--format', '{{.State.ExitCode}}'])).stdout, '0');
    assert.ok(measured.stopMs < 8000, `stopped after ${measured.stopMs} ms`);

    const restarted = Date.now();
    await podman(['--runtime', 'runc', 'start', name]);
    measured.warmStartMs = await untilHealthy(url, restarted);
    const again = new TestClient(url);
    assert.equal(
      (await again.post('/api/auth/login', { email: OWNER_EMAIL, password: OWNER_PASSWORD })).status,
      200,
    );
    const read = await again.get(`/api/notes/${note.body.id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.content, 'across a restart');
    const logs = (await podman(['logs', name])).stdout;
    assert.match(logs, /"msg":"Keepsake Notes [^ ]+ on SQLite \/data\/notes\.db; .*schema up to date"/);
  });

  it('runs with a read-only root file system (docs/security.md): it writes to /data only', async () => {
    await podman(['stop', name]);
    const readOnly = `${name}-read-only`;
    try {
      await podman([
        '--runtime',
        'runc',
        'run',
        '--detach',
        '--name',
        readOnly,
        '--network=host',
        '--read-only',
        '--tmpfs',
        '/tmp',
        '--cap-drop=ALL',
        '--security-opt=no-new-privileges',
        '--env',
        `PORT=${port}`,
        '--env',
        'HOST=127.0.0.1',
        '--volume',
        `${volume}:/data`,
        IMAGE,
      ]);
      await untilHealthy(url);
      const owner = new TestClient(url);
      assert.equal(
        (await owner.post('/api/auth/login', { email: OWNER_EMAIL, password: OWNER_PASSWORD })).status,
        200,
      );
      const note = await owner.post('/api/notes', { content: 'written on a read-only root' });
      assert.equal(note.status, 201, note.text);
      assert.equal((await attach(owner, note.body.id, await image(2))).status, 201);
    } finally {
      await podman(['rm', '--force', '--time', '0', readOnly], { allowFailure: true });
    }
  });
});

describe('compose.yaml', () => {
  const compose = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'));

  it('runs the app alone on SQLite by default; the postgres profile adds PostgreSQL and Redis', () => {
    assert.equal(compose.services.notes.profiles, undefined);
    assert.deepEqual(compose.services.postgres.profiles, ['postgres']);
    assert.deepEqual(compose.services.redis.profiles, ['postgres']);
    for (const dependency of ['postgres', 'redis']) {
      assert.deepEqual(compose.services.notes.depends_on[dependency], {
        condition: 'service_healthy',
        required: false,
      });
      assert.ok(compose.services[dependency].healthcheck.test, `${dependency} has a health check`);
    }
  });

  it('passes secrets as <NAME>_FILE only, and only variables the server reads', () => {
    const environment = compose.services.notes.environment as Record<string, string>;
    const known = new Set(configVariableNames.flatMap((name) => [name, `${name}_FILE`]));
    for (const variable of Object.keys(environment)) assert.ok(known.has(variable), variable);
    for (const secret of ['DATABASE_URL', 'REDIS_URL', 'METRICS_TOKEN', 'OWNER_PASSWORD']) {
      assert.equal(environment[secret], undefined, `${secret} in the environment`);
    }
    assert.equal(compose.services.postgres.environment.POSTGRES_PASSWORD, undefined);
  });
});

describe('Containerfile', () => {
  it("labels the image with package.json's version", () => {
    const containerfile = fs.readFileSync(path.join(ROOT, 'Containerfile'), 'utf8');
    assert.match(containerfile, new RegExp(`^ARG VERSION=${VERSION.replaceAll('.', '\\.')}$`, 'm'));
    assert.match(containerfile, /^ARG BASE_IMAGE=node:20-bookworm-slim$/m);
  });
});
