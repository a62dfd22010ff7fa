import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { type Actor, sessionActor } from '../src/actor.js';
import { buildServices, openDataDir } from '../src/app.js';
import { MonotonicClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { pickNoteFields } from '../src/model/noteFields.js';
import { insertNote } from '../src/model/noteWrites.js';
import { findOwner } from '../src/model/users.js';
import type { NoteInput } from '../src/shared/api/notes.js';
import type { NoteColor } from '../src/shared/colors.js';
import { type CorpusNote, generateCorpus } from './corpus.js';

export const BENCH_PASSWORD = 'benchmark owner password';

interface SeedOptions {
  seed: number;
  count: number;
  /**
   * 'service': one notes.create call (and transaction) per note, exactly what POST /api/notes does.
   * 'batched': insertNote, the function create and sync push use, many notes per transaction.
   */
  mode: 'service' | 'batched';
  /** PostgreSQL to seed instead of DATA_DIR's SQLite (attachment files still go to DATA_DIR). */
  databaseUrl?: string;
}

export interface SeedResult {
  count: number;
  ms: number;
  /** Ids of notes in the default list (neither archived nor trashed), in corpus order. */
  activeIds: string[];
  /** Ids of the notes that got an image ('service' mode only), in corpus order. */
  imageNoteIds: string[];
}

const BATCH_SIZE = 1_000;

function noteInput(note: CorpusNote): NoteInput {
  return {
    id: note.id,
    title: note.title,
    content: note.content,
    color: note.color as NoteColor,
    pinned: note.pinned,
    archived: note.archived,
    trashed: note.trashed,
    checklistMode: note.checklistMode,
  };
}

/** A small JPEG whose colour comes from the note id, so the same corpus gives the same images. */
async function imageFor(noteId: string): Promise<Buffer> {
  const [r, g, b] = createHash('sha256').update(noteId).digest();
  return sharp({ create: { width: 640, height: 480, channels: 3, background: { r: r!, g: g!, b: b! } } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

/**
 * Creates a fresh DATA_DIR with an owner and `count` corpus notes, written through the app's own
 * services (tags, search index and field clock included), before any server runs on it: so it
 * migrates the fresh database itself, as the server's start would.
 */
export async function seedDataDir(dataDir: string, options: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  const engine = options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {};
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...engine });
  const { database, quota } = await openDataDir(config, { schema: 'migrate' });
  const { db } = database;
  const clock = new MonotonicClock();
  const services = buildServices({
    db,
    clock,
    config,
    pingDatabase: database.ping,
    log: { warn: (details, message) => console.warn(message, details) },
    quota,
  });
  const activeIds: string[] = [];
  const imageNoteIds: string[] = [];
  try {
    await services.auth.setup({ password: BENCH_PASSWORD });
    const owner = await findOwner(db);
    if (!owner) throw new Error('setup created no owner');
    const actor: Actor = sessionActor(owner);

    let batch: CorpusNote[] = [];
    const flush = async () => {
      const notes = batch;
      batch = [];
      await db.transaction().execute(async (trx) => {
        for (const note of notes) {
          const now = clock.now();
          await insertNote(trx, {
            ownerId: owner.id,
            authorId: owner.id,
            id: note.id,
            values: pickNoteFields(noteInput(note)),
            now,
            stampedAt: now,
          });
        }
      });
    };
    for (const note of generateCorpus(options.seed, options.count)) {
      if (!note.archived && !note.trashed) activeIds.push(note.id);
      if (options.mode === 'service') {
        await services.notes.create(actor, noteInput(note));
        if (note.withImage) {
          // The same path as an upload: the service checks the image, makes the thumbnail, stores both.
          const bytes = await imageFor(note.id);
          await services.attachments.add(actor, note.id, async (directory) => {
            const file = path.join(directory, 'photo.jpg');
            await fs.writeFile(file, bytes);
            const sha256 = createHash('sha256').update(bytes).digest('hex');
            return { file: { path: file, filename: 'photo.jpg', size: bytes.length, sha256 } };
          });
          imageNoteIds.push(note.id);
        }
        continue;
      }
      batch.push(note);
      if (batch.length === BATCH_SIZE) await flush();
    }
    if (batch.length > 0) await flush();
  } finally {
    await database.close();
  }
  return { count: options.count, ms: performance.now() - started, activeIds, imageNoteIds };
}
