import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { z } from 'zod';
import { AttachmentOut, NoteOut, RevisionOut, TagOut } from '../src/features/mcp/presenters.js';
import type { NoteRevision } from '../src/features/revisions/schemas.js';
import type { Tag } from '../src/features/tags/schemas.js';
import type { Attachment, Note } from '../src/shared/api/notes.js';
import { useOwner, useServer } from './helpers/server.js';
import { uploadImage } from './helpers/uploads.js';

/**
 * The MCP tools' zod output shapes (mcp/presenters.ts) are the REST shapes written again: the
 * type checks below fail `npm run typecheck` when a field is added, removed, renamed or retyped
 * on one side only, and the tests parse real REST answers with the zod schemas made strict, so a
 * field the REST answer has and the zod shape lacks fails here too.
 */

/** True only when A and B are the same type (not merely assignable one way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertSameType<_Check extends true>(): void {}

assertSameType<Equal<z.infer<typeof NoteOut>, Note>>();
assertSameType<Equal<z.infer<typeof AttachmentOut>, Attachment>>();
assertSameType<Equal<z.infer<typeof RevisionOut>, NoteRevision>>();
assertSameType<Equal<z.infer<typeof TagOut>, Tag>>();

/** The zod shape refusing unknown keys at every level, so extra REST fields fail to parse. */
const StrictNote = NoteOut.extend({ attachments: z.array(AttachmentOut.strict()) }).strict();

describe('MCP output shapes match the REST answers', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('parses a note with an attachment from GET /api/notes/{id} with the strict zod Note', async () => {
    const created = await owner.post('/api/notes', { title: 'Shapes #zod', content: 'body', color: 'mint' });
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer();
    assert.equal((await uploadImage(owner, created.body.id, png)).status, 201);
    await owner.patch(`/api/notes/${created.body.id}`, { trashed: true });
    const fetched = await owner.get(`/api/notes/${created.body.id}`);
    assert.equal(fetched.status, 200);
    const note = StrictNote.parse(fetched.body);
    assert.equal(note.attachments.length, 1);
    assert.equal(note.color, 'mint');
  });

  it('parses GET /api/notes/{id}/revisions with the strict zod revision', async () => {
    const created = await owner.post('/api/notes', { title: 'first' });
    await owner.patch(`/api/notes/${created.body.id}`, { title: 'second' });
    const revisions = await owner.get(`/api/notes/${created.body.id}/revisions`);
    assert.equal(revisions.status, 200);
    assert.equal(z.array(RevisionOut.strict()).parse(revisions.body).length, 2);
  });

  it('parses GET /api/tags with the strict zod tag', async () => {
    await owner.post('/api/notes', { content: 'tagged #shapes' });
    const tags = await owner.get('/api/tags');
    assert.equal(tags.status, 200);
    assert.deepEqual(
      z
        .array(TagOut.strict())
        .parse(tags.body)
        .map((tag) => tag.name),
      ['shapes'], // the #zod note above is trashed, so its tag is not listed
    );
  });
});
