import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { freePort, serverNodeFlags } from '../bench/processes.js';
import { configVariableNames } from '../src/config.js';
import { attach, image } from './helpers/archives.js';
import { ComposeProject } from './helpers/compose.js';
import { CONTAINER_OWNER, readBack, signInAsOwner, takeNote, untilHealthy } from './helpers/container.js';
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
const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const VERSION: string = PACKAGE.version;
const DEBIAN_BASE = 'localhost/debian-base:bookworm';
const STAND_IN = `localhost/node:${process.version.slice(1)}-bookworm-slim-stand-in`;
/** Stand-ins for compose.yaml's postgres and redis images, built on the Debian base. */
const SERVICE_STAND_INS = {
  POSTGRES_IMAGE: { name: 'postgres', files: ['postgres-stand-in.Containerfile', 'postgres-entrypoint.sh'] },
  REDIS_IMAGE: { name: 'redis', files: ['redis-stand-in.Containerfile'] },
} satisfies Record<string, { name: string; files: [string, ...string[]] }>;
/**
 * The previous image, for the upgrade tests: main just before migration 0015, so that upgrading
 * from it migrates. Built from that commit's files as they are, its package.json and
 * package-lock.json included: an image of today's dependencies with that commit's code stopped
 * building once the web app dropped a package the commit imports (`diff`), and only a machine
 * without the image cached saw it. Its own `npm ci` makes it ~2.5 minutes, once per machine
 * (docs/benchmarks.md, "Container image"). Move it to the previous release's tag once releases
 * are tagged (docs/releasing.md).
 */
const PREVIOUS_COMMIT = '59f9d7e9fde3aed2b352752a6d123161d784f8c9';
const MIGRATIONS_SINCE_PREVIOUS = '0015_revision_age_index';
const PREVIOUS_IMAGE = `localhost/keepsake-notes:previous-${PREVIOUS_COMMIT.slice(0, 12)}`;
/** Kept after the run: its layers make the next build on this machine quick. */
const IMAGE = 'localhost/keepsake-notes:test';

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

/**
 * The PostgreSQL and Redis stand-ins (test/container/), each built once per machine and content
 * of its files: the image names, by the variable compose.yaml reads them from.
 */
async function buildServiceStandIns(): Promise<Record<keyof typeof SERVICE_STAND_INS, string>> {
  const images = {} as Record<keyof typeof SERVICE_STAND_INS, string>;
  const context = path.join(ROOT, 'test/container');
  for (const [variable, { name, files }] of Object.entries(SERVICE_STAND_INS)) {
    const hash = createHash('sha256');
    for (const file of files) hash.update(fs.readFileSync(path.join(context, file)));
    const image = `localhost/${name}:stand-in-${hash.digest('hex').slice(0, 12)}`;
    if (!(await imageExists(image))) {
      await podman(
        [
          'build',
          '--isolation=chroot',
          '--network=host',
          '-t',
          image,
          '-f',
          path.join(context, files[0]),
          context,
        ],
        {
          timeoutMs: 600_000,
        },
      );
    }
    images[variable as keyof typeof SERVICE_STAND_INS] = image;
  }
  return images;
}

/** The previous image (PREVIOUS_COMMIT), built once per machine. */
async function buildPrevious(work: string): Promise<void> {
  if (await imageExists(PREVIOUS_IMAGE)) return;
  const context = path.join(work, 'previous');
  fs.mkdirSync(context);
  // Needs the commit in the clone (a shallow clone must fetch it first).
  await runProgram('sh', ['-c', 'git -C "$0" archive "$1" | tar -x -C "$2"', ROOT, PREVIOUS_COMMIT, context]);
  await podman(
    [
      'build',
      '--isolation=chroot',
      '--network=host',
      '--format=docker',
      '--build-arg',
      `BASE_IMAGE=${STAND_IN}`,
      '-t',
      PREVIOUS_IMAGE,
      '-f',
      path.join(context, 'Containerfile'),
      context,
    ],
    { timeoutMs: 1_500_000 },
  );
  fs.rmSync(context, { recursive: true, force: true });
}

describe('the container image (Containerfile)', { skip: skip ?? false }, () => {
  let work: string;
  let port: number;
  let url: string;
  const name = `notes-test-${randomUUID().slice(0, 8)}`;
  const volume = `${name}-data`;
  const secret = `${name}-owner-password`;
  const measured: Record<string, number> = {};
  let serviceImages: Record<keyof typeof SERVICE_STAND_INS, string>;

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
      started = Date.now();
      serviceImages = await buildServiceStandIns();
      measured.serviceStandInsSeconds = (Date.now() - started) / 1000;
      started = Date.now();
      await buildPrevious(work);
      measured.previousImageSeconds = (Date.now() - started) / 1000;
    },
    // Both images built from nothing on a slow machine (the current one took 9 minutes so), the
    // previous one with an `npm ci` of its own since 2026-11-27: a margin over the 30 minutes.
    { timeout: 2_700_000 },
  );

  after(async () => {
    if (skip) return;
    await podman(['rm', '--force', '--time', '0', name], { allowFailure: true });
    await podman(['volume', 'rm', '--force', volume], { allowFailure: true });
    await podman(['secret', 'rm', secret], { allowFailure: true });
    fs.rmSync(work, { recursive: true, force: true });
    console.log(`container image measurements: ${JSON.stringify(measured)}`);
  });

  /**
   * The image run as `containerName` on the host's network (port publishing does not work in
   * this sandbox), on 127.0.0.1 only as the port is on the machine's interfaces, with no
   * capabilities, the volume on /data, and `options` added.
   */
  const runImage = (containerName: string, options: string[] = []) =>
    podman([
      '--runtime',
      'runc',
      'run',
      '--detach',
      '--name',
      containerName,
      '--network=host',
      ...options,
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

  it('is labelled with the version, runs as a user of its own, serves PORT 3000 on every interface', async () => {
    const [config] = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout);
    assert.equal(config.Config.Labels['org.opencontainers.image.version'], VERSION);
    assert.equal(config.Config.User, 'notes');
    for (const entry of ['HOST=0.0.0.0', 'PORT=3000', 'DATA_DIR=/data'])
      assert.ok(config.Config.Env.includes(entry), entry);
    assert.deepEqual(Object.keys(config.Config.Volumes), ['/data']);
    assert.equal(config.Config.StopSignal, 'SIGTERM');
    // The server's node flags as `npm start` passes them (decisions 0026 and 0050).
    assert.deepEqual(config.Config.Entrypoint, [
      'node',
      ...serverNodeFlags(PACKAGE.scripts.start),
      'dist/main.js',
    ]);
    // What the image adds to its base (the stand-in is larger than node:20-bookworm-slim).
    const base = JSON.parse((await podman(['image', 'inspect', STAND_IN])).stdout)[0].Size as number;
    measured.imageMiB = Math.round(config.Size / 1024 / 1024);
    measured.addedToBaseMiB = Math.round((config.Size - base) / 1024 / 1024);
  });

  it('starts on a fresh volume with the owner from a secret file, keeps a note across a restart, not as root', async () => {
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const password = path.join(work, 'owner-password');
    fs.writeFileSync(password, `${CONTAINER_OWNER.password}\n`);
    await podman(['secret', 'create', secret, password]);
    await podman(['volume', 'create', volume]);
    const started = Date.now();
    await runImage(name, [
      '--env',
      `OWNER_EMAIL=${CONTAINER_OWNER.email}`,
      '--env',
      `OWNER_PASSWORD_FILE=/run/secrets/${secret}`,
      '--secret',
      secret,
    ]);
    measured.coldStartMs = await untilHealthy(url, started);

    const owner = await signInAsOwner(url);
    const note = await takeNote(owner, { title: 'Kept in the volume', content: 'across a restart' });
    // The packages the bundle loads at run time are in the image: sharp (an image), swagger-ui.
    const photo = await attach(owner, note.id, await image(1));
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
    await readBack(url, note);
    const logs = (await podman(['logs', name])).stdout;
    assert.match(logs, /"msg":"Keepsake Notes [^ ]+ on SQLite \/data\/notes\.db; .*schema up to date"/);
  });

  it('runs with a read-only root file system (docs/security.md): it writes to /data only', async () => {
    await podman(['stop', name]);
    const readOnly = `${name}-read-only`;
    try {
      await runImage(readOnly, ['--read-only', '--tmpfs', '/tmp']);
      await untilHealthy(url);
      const owner = await signInAsOwner(url);
      const note = await takeNote(owner, { content: 'written on a read-only root' });
      assert.equal((await attach(owner, note.id, await image(2))).status, 201);
    } finally {
      await podman(['rm', '--force', '--time', '0', readOnly], { allowFailure: true });
    }
  });

  /**
   * compose.yaml as a person sets it up (docs/deploy.md, "Compose"): a project of its own (its
   * name, host port and ./secrets folder), the secret files owned by the user that reads them.
   * Gives the project for an image: the same project on another image is an upgrade (the
   * docs' "set NOTES_IMAGE, then up").
   */
  function composeProject(
    label: string,
    hostPort: number,
    env: Record<string, string>,
    secrets: Record<string, { text: string; uid: number }>,
  ): (notesImage: string) => ComposeProject {
    const directory = path.join(work, label);
    fs.mkdirSync(path.join(directory, 'secrets'), { recursive: true, mode: 0o755 });
    for (const [file, { text, uid }] of Object.entries(secrets)) {
      const secretFile = path.join(directory, 'secrets', file);
      fs.writeFileSync(secretFile, `${text}\n`, { mode: 0o400 });
      fs.chownSync(secretFile, uid, uid);
    }
    const parsed = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'));
    return (notesImage) =>
      new ComposeProject(
        parsed,
        directory,
        {
          COMPOSE_PROJECT_NAME: `${name}-${label}`,
          NOTES_IMAGE: notesImage,
          NOTES_PORT: String(hostPort),
          ...serviceImages,
          OWNER_EMAIL: CONTAINER_OWNER.email,
          OWNER_PASSWORD_FILE: '/run/secrets/owner_password',
          ...env,
        },
        podman,
      );
  }

  /** `compose up -d`, then milliseconds until /api/health answers 200. */
  async function upHealthy(project: ComposeProject, origin: string): Promise<number> {
    const started = Date.now();
    await project.up();
    const milliseconds = await untilHealthy(origin, started);
    for (const service of project.services) assert.ok(await project.healthy(service), `${service} healthy`);
    return milliseconds;
  }

  /**
   * The upgrade (docs/deploy.md, "Upgrades"), after the backup: down, up on the new image, which
   * migrates and keeps the note; the previous image then refuses the migrated database (exit 3,
   * one sentence) rather than serve it; down and up on the new image again, and the note is there.
   */
  async function upgrade(
    previous: ComposeProject,
    current: ComposeProject,
    origin: string,
    note: { id: string; content: string },
  ) {
    await previous.down();
    await upHealthy(current, origin);
    const logs = await podman(['logs', current.container('notes')]);
    assert.match(logs.stdout, new RegExp(`ran migrations [^"]*${MIGRATIONS_SINCE_PREVIOUS}`));
    await readBack(origin, note);

    await current.down();
    await previous.up();
    const exit = await podman(['wait', previous.container('notes')], { timeoutMs: 120_000 });
    assert.equal(exit.stdout.split('\n')[0], '3');
    const refusal = await podman(['logs', previous.container('notes')]);
    assert.match(refusal.stderr, /^The database was migrated by a newer version than this one/m);
    await previous.down();

    await upHealthy(current, origin);
    return readBack(origin, note);
  }

  it('compose.yaml by default: the app alone on SQLite, healthy; backed up, upgraded from the previous image and rolled back', async () => {
    const hostPort = await freePort();
    const origin = `http://127.0.0.1:${hostPort}`;
    const projectOn = composeProject(
      'sqlite',
      hostPort,
      {},
      { owner_password: { text: CONTAINER_OWNER.password, uid: 10001 } },
    );
    const [previous, current] = [projectOn(PREVIOUS_IMAGE), projectOn(IMAGE)];
    try {
      measured.composeSqliteUpMs = await upHealthy(previous, origin);
      assert.deepEqual(previous.services, ['notes']);
      for (const other of ['postgres', 'redis']) {
        const exists = await podman(['container', 'exists', previous.container(other)], {
          allowFailure: true,
        });
        assert.equal(exists.code, 1, `${other} runs without the postgres profile`);
      }
      const note = await takeNote(await signInAsOwner(origin), { content: 'kept by compose on SQLite' });

      // The backup before the upgrade, as docs/deploy.md shows it: with the version that runs,
      // beside the running server, into the volume, then out of the container.
      const backup = await podman(
        ['exec', previous.container('notes'), 'node', 'dist/main.js', 'backup', '/data/backup.zip'],
        { allowFailure: true },
      );
      assert.equal(backup.code, 0, backup.stderr);
      const backups = path.join(work, 'backups');
      fs.mkdirSync(backups, { mode: 0o755 });
      const copied = path.join(backups, 'backup.zip');
      await podman(['cp', `${previous.container('notes')}:/data/backup.zip`, copied]);
      assert.equal(fs.readFileSync(copied).subarray(0, 4).toString('latin1'), 'PK\x03\x04');
      fs.chmodSync(copied, 0o644);

      await upgrade(previous, current, origin, note);

      // Rolling back as docs/deploy.md says: the pre-upgrade backup restored into a fresh volume
      // by the previous image, which then serves it.
      await current.down();
      const rollback = `${name}-rollback`;
      try {
        await podman(['volume', 'create', rollback]);
        const restore = await podman(
          [
            '--runtime',
            'runc',
            'run',
            '--rm',
            '-v',
            `${rollback}:/data`,
            '-v',
            `${backups}:/backups:ro`,
            PREVIOUS_IMAGE,
            'restore',
            '/backups/backup.zip',
          ],
          { allowFailure: true, timeoutMs: 120_000 },
        );
        assert.equal(restore.code, 0, restore.stderr);
        await podman([
          '--runtime',
          'runc',
          'run',
          '--detach',
          '--name',
          rollback,
          '-p',
          `127.0.0.1:${hostPort}:3000`,
          '-v',
          `${rollback}:/data`,
          PREVIOUS_IMAGE,
        ]);
        await untilHealthy(origin);
        await readBack(origin, note);
      } finally {
        await podman(['rm', '--force', '--time', '0', rollback], { allowFailure: true });
        await podman(['volume', 'rm', '--force', rollback], { allowFailure: true });
      }
    } finally {
      await current.down({ volumes: true });
    }
  });

  it('compose.yaml with the postgres profile: PostgreSQL and Redis healthy before the app; backed up and upgraded from the previous image', async () => {
    const hostPort = await freePort();
    const origin = `http://127.0.0.1:${hostPort}`;
    const postgresPassword = randomUUID();
    const projectOn = composeProject(
      'postgres',
      hostPort,
      {
        COMPOSE_PROFILES: 'postgres',
        DATABASE_URL_FILE: '/run/secrets/database_url',
        REDIS_URL_FILE: '/run/secrets/redis_url',
      },
      {
        owner_password: { text: CONTAINER_OWNER.password, uid: 10001 },
        postgres_password: { text: postgresPassword, uid: 999 },
        database_url: { text: `postgres://notes:${postgresPassword}@postgres:5432/notes`, uid: 10001 },
        redis_url: { text: 'redis://redis:6379/0', uid: 10001 },
      },
    );
    const [previous, current] = [projectOn(PREVIOUS_IMAGE), projectOn(IMAGE)];
    try {
      measured.composePostgresUpMs = await upHealthy(previous, origin);
      assert.deepEqual(previous.services, ['postgres', 'redis', 'notes']);
      const health = (await fetch(`${origin}/api/health`).then((response) => response.json())) as {
        redis?: string;
      };
      assert.equal(health.redis, 'ok');
      const logs = await podman(['logs', previous.container('notes')]);
      assert.match(
        logs.stdout,
        /on PostgreSQL postgres:5432\/notes; Redis: redis:6379\/0; attachments: in the database/,
      );
      assert.doesNotMatch(logs.stdout + logs.stderr, new RegExp(postgresPassword));

      const owner = await signInAsOwner(origin);
      const note = await takeNote(owner, { content: 'kept by compose in PostgreSQL' });
      assert.equal((await attach(owner, note.id, await image(3))).status, 201);
      // The backup docs/deploy.md shows for this profile: pg_dump in the postgres container.
      const dump = await podman([
        'exec',
        previous.container('postgres'),
        'pg_dump',
        '-U',
        'notes',
        '--format=custom',
        'notes',
      ]);
      assert.ok(dump.stdout.startsWith('PGDMP'), 'a pg_dump archive');

      const read = await upgrade(previous, current, origin, note);
      assert.equal(read.attachments.length, 1);
    } finally {
      await current.down({ volumes: true });
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

  it("compose.yaml's default image and CHANGELOG.md name package.json's version (docs/releasing.md)", () => {
    const compose = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'));
    assert.equal(compose.services.notes.image, `\${NOTES_IMAGE:-localhost/keepsake-notes:${VERSION}}`);
    const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    assert.match(changelog, new RegExp(`^## ${VERSION.replaceAll('.', '\\.')}( |$)`, 'm'));
  });
});
