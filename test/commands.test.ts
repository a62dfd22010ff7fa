import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withServices } from '../src/cli/support.js';
import { createUserClient, ownerClientFor, TestClient } from './helpers/client.js';
import { commandConfig, run } from './helpers/commands.js';
import { startServer, type TestServer } from './helpers/server.js';

const newPasswordIn = (output: string) => /New password for .*: (\S+)/.exec(output)?.[1];

describe('reset-password command', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('gives a user a new password and ends their sessions, while the server runs', async () => {
    const { client: alice } = await createUserClient(server, 'alice@example.com', 'forgotten secret');
    assert.equal((await alice.get('/api/notes')).status, 200);

    const { code, output } = await run(server, 'reset-password', '--email', 'alice@example.com');
    assert.equal(code, 0, output);
    const password = newPasswordIn(output);
    assert.ok(password && password.length >= 16, output);

    assert.equal((await alice.get('/api/notes')).status, 401, 'the old session has ended');
    const again = new TestClient(server.url);
    const old = await again.post('/api/auth/login', {
      email: 'alice@example.com',
      password: 'forgotten secret',
    });
    assert.equal(old.status, 401);
    const fresh = await again.post('/api/auth/login', { email: 'alice@example.com', password });
    assert.equal(fresh.status, 200);
  });

  it('ends a session for the running server once a command that ends it returns, however quick its work', async () => {
    // reset-password's scrypt takes ~0.1 s; a command's write can take a millisecond, well
    // within the server's OTHER_CONNECTIONS_MS of keeping the session (decision 0048).
    const { client: bob } = await createUserClient(server, 'bob@example.com', 'bob secret pass');
    assert.equal((await bob.get('/api/notes')).status, 200);
    const config = await commandConfig(server.dataDir);
    await withServices(config, (_services, db) => db.deleteFrom('sessions').execute());
    assert.equal((await bob.get('/api/notes')).status, 401, 'the session ended by the command is refused');
  });

  it('resets the owner with --owner, whatever its email', async () => {
    const owner = await ownerClientFor(server);
    const { code, output } = await run(server, 'reset-password', '--owner');
    assert.equal(code, 0, output);
    assert.equal((await owner.get('/api/notes')).status, 401);
    const login = await new TestClient(server.url).post('/api/auth/login', {
      password: newPasswordIn(output),
    });
    assert.equal(login.status, 200);
  });

  it('says what is wrong with exit code 1 for an unknown user and 2 for bad usage', async () => {
    assert.equal((await run(server, 'reset-password', '--email', 'nobody@example.com')).code, 1);
    assert.match(
      (await run(server, 'reset-password', '--email', 'nobody@example.com')).output,
      /User not found/,
    );
    for (const argv of [[], ['--email', 'a@example.com', '--owner'], ['--mail', 'a@example.com']]) {
      const { code, output } = await run(server, 'reset-password', ...argv);
      assert.equal(code, 2, argv.join(' '));
      assert.match(output, /Usage: node dist\/main.js reset-password/);
    }
    const help = await run(server, 'reset-password', '--help');
    assert.equal(help.code, 0);
    assert.match(help.output, /ends their sessions/);
    assert.equal((await run(server, 'no-such-command')).code, 2);
  });
});
