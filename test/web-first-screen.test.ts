import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import fc from 'fast-check';
import { compareNotes } from '../web/src/model/ordering.js';
import { databaseName, openLocalDatabase, toStored } from '../web/src/sync/database.js';
import { type LocalNote, openSyncEngine, type ServerNote, type SyncEngine } from '../web/src/sync/index.js';
import './web-sync-helpers.js';

/**
 * The engine opens with the first screen (web/src/sync/store.ts loadFirstScreen): the notes that
 * come first in display order, read through the local database's display index, and every note
 * with local changes; the rest follows. The first cards must be the ones the whole list starts
 * with, Pinned and Others included. No server: the engine never syncs here.
 */

const USER = '7';

function serverNote(index: number, fields: Partial<ServerNote> = {}): ServerNote {
  const day = String(1 + (index % 28)).padStart(2, '0');
  return {
    id: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
    ownerId: Number(USER),
    title: `Note ${index}`,
    content: '',
    color: 'default',
    pinned: false,
    archived: false,
    trashed: false,
    trashedAt: null,
    checklistMode: false,
    sortOrder: 0,
    createdAt: `2026-01-${day}T00:00:00.000Z`,
    updatedAt: `2026-01-${day}T00:00:00.000Z`,
    version: 1,
    reminder: null,
    tags: [],
    attachments: [],
    ...fields,
  };
}

function open(indexedDB: IDBFactory): Promise<SyncEngine> {
  return openSyncEngine({
    userId: USER,
    baseUrl: 'http://127.0.0.1:9',
    indexedDB,
    fetch: () => Promise.reject(new Error('no network in this test')),
    locks: null,
    channel: null,
    document: null,
    window: null,
    timers: null,
  });
}

/** What the notes view shows, in order. */
function notesView(engine: SyncEngine): string[] {
  return [...engine.notes().values()]
    .filter((note: LocalNote) => !note.archived && !note.trashed)
    .sort(compareNotes)
    .map((note) => note.id);
}

async function store(indexedDB: IDBFactory, notes: ServerNote[]) {
  const db = await openLocalDatabase(indexedDB, USER, () => undefined);
  const tx = db.transaction('notes', 'readwrite');
  await Promise.all(notes.map((note) => tx.store.put(toStored(note))));
  await tx.done;
  db.close();
}

const noteFields = fc.record({
  pinned: fc.constantFrom(false, false, false, false, false, false, false, true),
  archived: fc.constantFrom(false, false, false, false, true),
  trashed: fc.constantFrom(false, false, false, false, false, true),
  sortOrder: fc.constantFrom(0, 0, 0, -1024, -2048, 512, 3),
  day: fc.integer({ min: 1, max: 28 }),
  ms: fc.integer({ min: 0, max: 2 }),
});

describe('web sync engine: the first screen before every note', () => {
  it('opens with the notes the whole list starts with, in order, then loads the rest', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(noteFields, { minLength: 150, maxLength: 260 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (fields, edited) => {
          const indexedDB = new IDBFactory();
          const notes = fields.map(({ day, ms, ...rest }, index) => {
            const updatedAt = `2026-02-${String(day).padStart(2, '0')}T10:00:00.00${ms}Z`;
            return serverNote(index, { ...rest, updatedAt });
          });
          await store(indexedDB, notes);
          // Local changes: a note deep in the list pinned, one moved, one created on this device.
          const before = await open(indexedDB);
          await before.loaded;
          for (const [n, index] of edited.entries())
            await before.update(
              notes[index % notes.length]!.id,
              n % 2 ? { pinned: true } : { sortOrder: -9999 },
            );
          const created = await before.create({ title: 'Typed offline' });
          await before.close();

          const engine = await open(indexedDB);
          const first = notesView(engine);
          assert.ok(engine.notes().size < notes.length, 'not every note before the first screen');
          assert.ok(engine.notes().has(created.id), 'a note only in the outbox is there at once');
          assert.equal(
            engine.status().waiting,
            edited.length === 0 ? 1 : new Set(edited.map((i) => i % notes.length)).size + 1,
          );
          await engine.loaded;
          const all = notesView(engine);
          assert.equal(engine.notes().size, notes.length + 1);
          // The first screen is the start of the whole list (50: more than a first page of cards).
          const shown = Math.min(50, all.length);
          assert.deepEqual(first.slice(0, shown), all.slice(0, shown));
          await engine.close();
        },
      ),
      { numRuns: 15 },
    );
  });

  it('gives copies stored before the display index (schema 1) their key on upgrade', async () => {
    const indexedDB = new IDBFactory();
    const notes = Array.from({ length: 130 }, (_, index) => serverNote(index, { pinned: index === 129 }));
    const request = indexedDB.open(databaseName(USER), 1);
    request.onupgradeneeded = () => {
      const db = request.result;
      db.createObjectStore('notes', { keyPath: 'id' });
      db.createObjectStore('outbox', { keyPath: 'seq', autoIncrement: true }).createIndex('noteId', 'noteId');
      db.createObjectStore('acks', { keyPath: 'noteId' });
      db.createObjectStore('meta');
      for (const note of notes) request.transaction!.objectStore('notes').put(note);
    };
    await new Promise((resolve, reject) => {
      request.onsuccess = () => resolve(request.result.close());
      request.onerror = () => reject(request.error);
    });
    const engine = await open(indexedDB);
    const first = notesView(engine);
    assert.equal(first[0], notes[129]!.id, 'the pinned note first');
    assert.ok(first.length >= 50 && first.length < notes.length);
    await engine.loaded;
    assert.deepEqual(first.slice(0, 50), notesView(engine).slice(0, 50));
    assert.deepEqual(
      engine.notes().get(notes[3]!.id),
      { ...notes[3], pending: false },
      'no stored key in the view',
    );
    await engine.close();
  });
});
