/**
 * An acknowledged write survives the server being killed (kill -9) in the middle of other
 * writes: the answer is sent only after its transaction has committed (decision 0017; any
 * future batching of commits must keep this).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { it } from 'node:test';
import SQLite from 'better-sqlite3';
import { freePort } from '../bench/processes.js';
import { setupOwner, type TestResponse } from './helpers/client.js';
import { mainArguments, tempDataDir } from './helpers/server.js';

const WRITERS = 8;
/** Acknowledged creates after which the server is killed, while the other writers wait for theirs. */
const KILL_AFTER = 300;

async function waitForHealth(url: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the server did not start');
}

it('every create answered 201 is in the database after kill -9 under write load', async () => {
  const dataDir = tempDataDir();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, mainArguments(), {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const exited = once(child, 'exit');
  try {
    await waitForHealth(url);
    const owner = await setupOwner(url);
    const acknowledged: string[] = [];
    let killed = false;
    const writer = async (w: number) => {
      for (let i = 0; ; i++) {
        let response: TestResponse<{ id: string }>;
        try {
          response = await owner.post('/api/notes', {
            title: `writer ${w} note ${i} #load`,
            content: 'text',
          });
        } catch {
          return; // the connection died with the server
        }
        if (response.status !== 201) return;
        acknowledged.push(response.body.id);
        if (acknowledged.length >= KILL_AFTER && !killed) {
          killed = true;
          child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    await exited;
    assert.ok(killed && acknowledged.length >= KILL_AFTER);

    const db = new SQLite(path.join(dataDir, 'notes.db'));
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      const stored = new Set(db.prepare('SELECT id FROM notes').pluck().all() as string[]);
      const lost = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged notes lost`);
      const indexed = db.prepare('SELECT count(*) FROM notes_fts').pluck().get();
      assert.equal(indexed, stored.size, 'each stored note has its search document');
    } finally {
      db.close();
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
