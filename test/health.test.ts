import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestClient } from './helpers/client.js';
import { startServer, type TestServer, tempDataDir } from './helpers/server.js';

describe('GET /api/health', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('answers ok with the package version without authentication', async () => {
    const response = await new TestClient(server.url).get('/api/health');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { status: 'ok', version: '0.2.0' });
  });

  it('answers 503 when the database is unreachable', async () => {
    const other = await startServer();
    await other.app.db.destroy();
    const response = await new TestClient(other.url).get('/api/health');
    assert.equal(response.status, 503);
    assert.equal(response.body.code, 'unhealthy');
    assert.equal(response.body.message, 'The database is not answering');
    await other.close();
  });

  it('answers 503 naming the attachment storage when it cannot be written, and no path', async () => {
    const dataDir = tempDataDir();
    const attachments = path.join(dataDir, 'attachments');
    // A directory store on both engines; a file where its directory should be: the store can be
    // neither read nor written.
    const other = await startServer({ dataDir, env: { ATTACHMENTS_DIR: attachments } });
    fs.rmSync(attachments, { recursive: true, force: true });
    fs.writeFileSync(attachments, 'not a directory');
    const response = await new TestClient(other.url).get('/api/health');
    assert.equal(response.status, 503);
    assert.equal(response.body.code, 'unhealthy');
    assert.equal(response.body.message, 'The attachment storage cannot be read or written');
    assert.ok(!response.text.includes(other.dataDir));
    await other.close();
  });
});
