import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { SchemaMismatchError } from '../src/db/connection.js';
import { migrations } from '../src/db/migrations/index.js';
import { ownerClientFor } from './helpers/client.js';
import { run } from './helpers/commands.js';
import { databaseUrlFor, onPostgres } from './helpers/postgres.js';
import { mainArguments, startServer, type TestServer } from './helpers/server.js';

const recordedMigrations = async (server: TestServer) =>
  (
    await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(server.app.db)
  ).rows.map((row) => row.name);

const tableExists = async (server: TestServer, table: string) =>
  (await server.app.db.introspection.getTables()).some((t) => t.name === table);

/** The commands that open the database, each as a person would run it. */
function commandsOn(dir: string): string[][] {
  return [
    ['reset-password', '--owner'],
    ['export', '--owner', path.join(dir, 'export.zip')],
    ...(onPostgres ? [] : [['backup', path.join(dir, 'backup.zip')]]),
  ];
}

describe('upgrades: only the server start (or `migrate`) migrates (decision 0035)', () => {
  let server: TestServer;
  let workDir: string;
  before(async () => {
    server = await startServer();
    await ownerClientFor(server);
    workDir = fs.mkdtempSync(path.join(server.dataDir, '..', 'upgrade-work-'));
  });
  after(async () => {
    await server.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  it("refuses a newer build's command under the older server, leaving the database as it was", async () => {
    const before = await recordedMigrations(server);
    // This process becomes the newer build: one more migration than the running server ran.
    migrations['0099_newer_build'] = {
      up: (db) => db.schema.createTable('newer_build').addColumn('id', 'integer').execute(),
    };
    try {
      for (const argv of commandsOn(workDir)) {
        const { code, output } = await run(server, ...argv);
        assert.equal(code, 3, `${argv[0]}: ${output}`);
        assert.match(output, /schema is older than this version .* commands never migrate/, argv[0]);
        assert.doesNotMatch(output, /\n\s+at /, 'no stack trace');
      }
      assert.deepEqual(await recordedMigrations(server), before);
      assert.equal(await tableExists(server, 'newer_build'), false);
      assert.equal(fs.existsSync(path.join(workDir, 'export.zip')), false);
      // The older server still writes.
      const owner = await ownerClientFor(server);
      assert.equal((await owner.post('/api/notes', { content: 'after the refusals' })).status, 201);

      // The explicit upgrade runs it.
      const migrated = await run(server, 'migrate');
      assert.equal(migrated.code, 0, migrated.output);
      assert.match(migrated.output, /Ran migrations 0099_newer_build/);
      assert.equal(await tableExists(server, 'newer_build'), true);
      assert.equal((await run(server, 'migrate')).output, 'The schema is up to date');
    } finally {
      delete migrations['0099_newer_build'];
    }
  });

  it('an older build refuses a database a newer one migrated: its commands and its start, in one sentence', async () => {
    await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('0100_from_the_future', '2030-01-01T00:00:00.000Z')`.execute(
      server.app.db,
    );
    try {
      for (const argv of commandsOn(workDir)) {
        const { code, output } = await run(server, ...argv);
        assert.equal(code, 3, `${argv[0]}: ${output}`);
        assert.match(output, /migrated by a newer version .*0100_from_the_future/, argv[0]);
      }

      const env = {
        DATA_DIR: server.dataDir,
        PORT: '0',
        LOG_LEVEL: 'silent',
        ...(onPostgres ? { DATABASE_URL: await databaseUrlFor(server.dataDir) } : {}),
      };
      await assert.rejects(buildApp(loadConfig(env), { logger: false, webRoot: null }), SchemaMismatchError);

      // The real process: one line on stderr, exit code 3, none of Kysely's "corrupted migrations".
      const child = spawn(process.execPath, mainArguments(), { env: { ...process.env, ...env } });
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const [code] = await once(child, 'exit');
      assert.equal(code, 3, stderr);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.match(stderr, /^The database was migrated by a newer version than this one/);
      assert.doesNotMatch(stderr, /corrupted/);
    } finally {
      await sql`DELETE FROM kysely_migration WHERE name = '0100_from_the_future'`.execute(server.app.db);
    }
  });

  it('refuses a command on a database no server has set up', async () => {
    const fresh = fs.mkdtempSync(path.join(workDir, 'fresh-'));
    const { code, output } = await run({ dataDir: fresh }, 'reset-password', '--owner');
    assert.equal(code, 3, output);
    assert.match(output, /has not been set up yet: start the server once, or run the "migrate" command/);
  });
});
