import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { SyncEngine } from '../web/src/sync/index.js';
import { useOwner, useServer } from './helpers/server.js';
import { pullAll } from './helpers/sync.js';
import { openDevice, userIdOf } from './web-sync-helpers.js';

/**
 * Randomized convergence through the web app's sync engine (issue 13), like
 * test/sync-convergence.test.ts but with the real client over HTTP: three devices of one person
 * create notes, append checklist lines, tick lines, rename, recolor, trash and delete forever,
 * each syncing at random moments (so each works offline in between). After every device has synced
 * twice more:
 * - every device shows exactly the server's notes, nothing waiting;
 * - every checklist line typed survives (in its note, merged, or in a conflict copy or a
 *   recovered note), unless its note was deleted forever on purpose.
 */

const DEVICES = 3;
const COLORS = ['default', 'coral', 'mint', 'fog'] as const;

type Action =
  | { kind: 'create'; device: number }
  | { kind: 'append' | 'tick' | 'title' | 'trash' | 'delete'; device: number; note: number }
  | { kind: 'color'; device: number; note: number; color: number }
  | { kind: 'sync'; device: number };

const device = fc.nat({ max: DEVICES - 1 });
const note = fc.nat({ max: 7 });
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), device }),
  fc.record({ kind: fc.constantFrom('append', 'tick', 'title', 'trash', 'delete' as const), device, note }),
  fc.record({ kind: fc.constant('color' as const), device, note, color: fc.nat({ max: COLORS.length - 1 }) }),
  fc.record({ kind: fc.constant('sync' as const), device }),
);

describe('web sync engine: randomized convergence of three devices', () => {
  const server = useServer();
  const owner = useOwner(server);
  let run = 0;

  it('every device ends equal to the server, and no typed line is lost', async () => {
    const userId = await userIdOf(owner);
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 25 }), async (actions) => {
        run++;
        const engines: SyncEngine[] = [];
        for (let i = 0; i < DEVICES; i++) engines.push((await openDevice(owner, userId)).engine);
        const typed: { line: string; noteId: string }[] = [];
        const deletedOnPurpose = new Set<string>();
        let counter = 0;
        const token = () => `r${run}-${++counter}`;
        const pick = (engine: SyncEngine, index: number) => {
          const ids = [...engine.notes().keys()].sort();
          return ids.length === 0 ? undefined : ids[index % ids.length]!;
        };
        try {
          for (const step of actions) {
            const engine = engines[step.device]!;
            if (step.kind === 'create') {
              const line = `- [ ] ${token()}`;
              const created = await engine.create({ title: token(), content: line });
              typed.push({ line: line.slice(6), noteId: created.id });
              continue;
            }
            if (step.kind === 'sync') {
              await engine.syncNow();
              continue;
            }
            const id = pick(engine, step.note);
            if (!id) continue;
            const shown = engine.notes().get(id)!;
            if (step.kind === 'append') {
              const word = token();
              typed.push({ line: word, noteId: id });
              await engine.update(id, { content: `${shown.content}\n- [ ] ${word}` });
            } else if (step.kind === 'tick') {
              if (shown.content.includes('- [ ] '))
                await engine.update(id, { content: shown.content.replace('- [ ] ', '- [x] ') });
            } else if (step.kind === 'title') await engine.update(id, { title: token() });
            else if (step.kind === 'color') await engine.update(id, { color: COLORS[step.color]! });
            else if (step.kind === 'trash') await engine.update(id, { trashed: !shown.trashed });
            else {
              deletedOnPurpose.add(id);
              await engine.deleteForever(id);
            }
          }
          for (let round = 0; round < 2; round++) for (const engine of engines) await engine.syncNow();
          const onServer = await pullAll(owner);
          for (const engine of engines) {
            assert.deepEqual([...engine.notes().keys()].sort(), onServer.map((n) => n.id).sort());
            for (const expected of onServer) {
              const shown = engine.notes().get(expected.id)!;
              assert.equal(shown.pending, false);
              for (const field of ['title', 'content', 'color', 'trashed', 'version'] as const)
                assert.deepEqual(shown[field], expected[field], `${expected.id}.${field}`);
            }
            assert.equal(engine.status().waiting, 0);
          }
          const allContent = onServer.map((n) => n.content).join('\n');
          for (const { line, noteId } of typed)
            if (!deletedOnPurpose.has(noteId))
              assert.ok(allContent.includes(line), `typed line ${line} lost`);
        } finally {
          for (const engine of engines) await engine.close();
        }
      }),
      { numRuns: 12, seed: 13 },
    );
  });
});
