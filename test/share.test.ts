import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { clientOf, createUserClient, rawRequest, setupOwner, type TestClient } from './helpers/client.js';
import { startLoggedServer, startServer, type TestServer } from './helpers/server.js';

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The main server trusts X-Forwarded-For so that each visitor below is a different client IP
 * with its own 60-a-minute budget; the rate limit itself is tested on servers of its own.
 */
let visitorCount = 0;
function visitor(server: TestServer) {
  visitorCount += 1;
  const ip = `198.51.${Math.floor(visitorCount / 250)}.${(visitorCount % 250) + 1}`;
  const client = clientOf(server);
  return {
    get: (path: string) => client.get(path, { headers: { 'x-forwarded-for': ip } }),
  };
}

describe('public sharing', () => {
  let server: TestServer;
  let owner: TestClient;
  let collaborator: TestClient;
  let stranger: TestClient;
  let collaboratorId: number;

  before(async () => {
    server = await startServer({ env: { TRUST_PROXY: 'true' } });
    owner = await setupOwner(server);
    const collab = await createUserClient(server, 'collab@example.com', undefined, owner);
    collaborator = collab.client;
    collaboratorId = collab.userId;
    stranger = (await createUserClient(server, 'stranger@example.com', undefined, owner)).client;
  });
  after(() => server.close());

  async function createNote(fields: Record<string, unknown> = {}): Promise<string> {
    const response = await owner.post('/api/notes', { title: 'Groceries', content: 'milk', ...fields });
    assert.equal(response.status, 201);
    return response.body.id;
  }

  async function share(noteId: string): Promise<string> {
    const response = await owner.post(`/api/notes/${noteId}/share`);
    assert.equal(response.status, 201, response.text);
    return response.body.token;
  }

  async function addCollaborator(noteId: string): Promise<void> {
    const response = await owner.post(`/api/notes/${noteId}/collaborators`, { userId: collaboratorId });
    assert.equal(response.status, 201);
  }

  describe('POST /api/notes/:id/share', () => {
    it('gives a note without a link a 32-byte base64url token and its page url (D-SHARE-1)', async () => {
      const noteId = await createNote();
      const response = await owner.post(`/api/notes/${noteId}/share`);
      assert.equal(response.status, 201);
      assert.deepEqual(Object.keys(response.body).sort(), ['token', 'url']);
      assert.match(response.body.token, TOKEN_SHAPE);
      assert.equal(Buffer.from(response.body.token, 'base64url').length, 32);
      assert.equal(response.body.url, `${server.url}/s/${response.body.token}`);
      assert.equal((await visitor(server).get(`/api/shared/${response.body.token}`)).status, 200);
    });

    it('returns the existing token for a note that already has a link (idempotent, 201)', async () => {
      const noteId = await createNote();
      const first = await owner.post(`/api/notes/${noteId}/share`);
      const second = await owner.post(`/api/notes/${noteId}/share`);
      assert.equal(second.status, 201);
      assert.deepEqual(second.body, first.body);
    });

    it('gives every note its own token', async () => {
      const a = await share(await createNote());
      const b = await share(await createNote());
      assert.notEqual(a, b);
    });

    it('answers a collaborator 404, not 403, as docs/interface.md#errors says (caller is not the owner)', async () => {
      const noteId = await createNote();
      await addCollaborator(noteId);
      assert.equal((await collaborator.get(`/api/notes/${noteId}`)).status, 200);
      const response = await collaborator.post(`/api/notes/${noteId}/share`);
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 'note_not_found');
      const check = await server.app.db
        .selectFrom('share_links')
        .selectAll()
        .where('note_id', '=', noteId)
        .execute();
      assert.equal(check.length, 0);
    });

    it("answers 404 for another user's note, and for a note that does not exist", async () => {
      const noteId = await createNote();
      assert.equal((await stranger.post(`/api/notes/${noteId}/share`)).status, 404);
      assert.equal((await owner.post(`/api/notes/${randomUUID()}/share`)).status, 404);
    });

    it('answers 401 without a session and 404 note_not_found for an id that is not a uuid', async () => {
      const noteId = await createNote();
      const anonymous = await clientOf(server).post(`/api/notes/${noteId}/share`);
      assert.equal(anonymous.status, 401);
      assert.equal((await owner.post('/api/notes/not-a-uuid/share')).body.code, 'note_not_found');
    });

    it('accepts an API key with notes:write and refuses a read-only key with 403 (D-KEY-2, D-KEY-3)', async () => {
      const noteId = await createNote();
      const keyFor = async (scopes: string[]) =>
        (await owner.post('/api/settings/api-keys', { name: scopes.join(' '), scopes })).body.key;
      const asKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
      const readOnly = await clientOf(server).post(
        `/api/notes/${noteId}/share`,
        undefined,
        asKey(await keyFor(['notes:read'])),
      );
      assert.equal(readOnly.status, 403);
      assert.equal(readOnly.body.code, 'insufficient_scope');
      const writer = await clientOf(server).post(
        `/api/notes/${noteId}/share`,
        undefined,
        asKey(await keyFor(['notes:read', 'notes:write'])),
      );
      assert.equal(writer.status, 201);
      assert.match(writer.body.token, TOKEN_SHAPE);
    });

    it('refuses a cross-site request (D-AUTH-5)', async () => {
      const noteId = await createNote();
      const response = await owner.post(`/api/notes/${noteId}/share`, undefined, {
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(response.status, 403);
      assert.equal(response.body.code, 'cross_origin');
    });
  });

  describe('DELETE /api/notes/:id/share', () => {
    it('removes the link with 204, and the token is 404 at once (D-SHARE-3)', async () => {
      const noteId = await createNote();
      const token = await share(noteId);
      const response = await owner.delete(`/api/notes/${noteId}/share`);
      assert.equal(response.status, 204);
      assert.equal(response.text, '');
      assert.equal((await visitor(server).get(`/api/shared/${token}`)).status, 404);
      assert.equal((await visitor(server).get(`/s/${token}`)).status, 404);
    });

    it('answers 204 for a note without a link (idempotent, D-SHARE-3)', async () => {
      const noteId = await createNote();
      assert.equal((await owner.delete(`/api/notes/${noteId}/share`)).status, 204);
      assert.equal((await owner.delete(`/api/notes/${noteId}/share`)).status, 204);
    });

    it('sharing again after a revoke makes a new token; the old one stays dead', async () => {
      const noteId = await createNote();
      const old = await share(noteId);
      await owner.delete(`/api/notes/${noteId}/share`);
      const renewed = await share(noteId);
      assert.notEqual(renewed, old);
      assert.equal((await visitor(server).get(`/api/shared/${old}`)).status, 404);
      assert.equal((await visitor(server).get(`/api/shared/${renewed}`)).status, 200);
    });

    it('answers a collaborator and a stranger 404 and leaves the link alone', async () => {
      const noteId = await createNote();
      await addCollaborator(noteId);
      const token = await share(noteId);
      for (const client of [collaborator, stranger]) {
        const response = await client.delete(`/api/notes/${noteId}/share`);
        assert.equal(response.status, 404);
        assert.equal(response.body.code, 'note_not_found');
      }
      assert.equal((await visitor(server).get(`/api/shared/${token}`)).status, 200);
    });
  });

  describe('GET /api/shared/:token', () => {
    it('returns the SharedNote without any id, owner or server path, without authentication', async () => {
      const noteId = await createNote({
        title: 'Trip',
        content: '- [ ] passport',
        color: 'mint',
        checklistMode: true,
      });
      const token = await share(noteId);
      const response = await visitor(server).get(`/api/shared/${token}`);
      assert.equal(response.status, 200);
      assert.deepEqual(Object.keys(response.body).sort(), [
        'attachments',
        'checklistMode',
        'color',
        'content',
        'createdAt',
        'title',
        'updatedAt',
      ]);
      const note = (await owner.get(`/api/notes/${noteId}`)).body;
      assert.deepEqual(response.body, {
        title: 'Trip',
        content: '- [ ] passport',
        checklistMode: true,
        color: 'mint',
        attachments: [],
        createdAt: note.createdAt,
        updatedAt: note.updatedAt,
      });
      assert.ok(!response.text.includes(noteId));
    });

    it('sends Referrer-Policy: no-referrer and Cache-Control: no-store (D-SHARE-3)', async () => {
      const token = await share(await createNote());
      for (const path of [`/api/shared/${token}`, `/api/shared/${'x'.repeat(43)}`]) {
        const response = await visitor(server).get(path);
        assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
        assert.equal(response.headers.get('cache-control'), 'no-store');
      }
    });

    it('lists attachments as PublicAttachment: no thumbnailPath, no noteId, featured = first by createdAt (D-SHARE-3)', async () => {
      const noteId = await createNote();
      const token = await share(noteId);
      // Rows without files: this is about the listing. Inserted newest first, so that array order
      // and createdAt order differ.
      await server.app.db
        .insertInto('attachments')
        .values([
          {
            id: 'b-second',
            note_id: noteId,
            filename: 'later.png',
            mime_type: 'image/png',
            size: 20,
            thumbnail_path: 'thumbnails/b-second.webp',
            created_at: 2_000,
            sha256: 'rows only, no files',
            width: 640,
            height: 480,
          },
          {
            id: 'a-first',
            note_id: noteId,
            filename: 'first.jpg',
            mime_type: 'image/jpeg',
            size: 10,
            thumbnail_path: null,
            created_at: 1_000,
            sha256: 'rows only, no files',
          },
        ])
        .execute();
      const response = await visitor(server).get(`/api/shared/${token}`);
      assert.deepEqual(response.body.attachments, [
        {
          id: 'a-first',
          filename: 'first.jpg',
          mimeType: 'image/jpeg',
          size: 10,
          width: null,
          height: null,
          featured: true,
          createdAt: new Date(1_000).toISOString(),
        },
        {
          id: 'b-second',
          filename: 'later.png',
          mimeType: 'image/png',
          size: 20,
          width: 640,
          height: 480,
          featured: false,
          createdAt: new Date(2_000).toISOString(),
        },
      ]);
      assert.ok(!response.text.includes('thumbnails/'));
      assert.ok(!response.text.includes(noteId));
    });

    it('answers 404 for an unknown token and for a token of the wrong shape', async () => {
      for (const token of ['A'.repeat(43), 'short', '..%2F..%2Fetc', 'x'.repeat(150)]) {
        const response = await visitor(server).get(`/api/shared/${token}`);
        assert.equal(response.status, 404, token);
        assert.equal(response.body.code, 'share_not_found');
      }
    });

    it('answers 404 for a trashed note and shows it again once restored, same token (state table)', async () => {
      const noteId = await createNote();
      const token = await share(noteId);
      await owner.patch(`/api/notes/${noteId}`, { trashed: true });
      const trashed = await visitor(server).get(`/api/shared/${token}`);
      assert.equal(trashed.status, 404);
      assert.equal(trashed.body.code, 'share_not_found');
      assert.equal((await visitor(server).get(`/s/${token}`)).status, 404);
      // The link itself is unchanged: sharing again returns the same token.
      assert.equal(await share(noteId), token);
      await owner.patch(`/api/notes/${noteId}`, { trashed: false });
      assert.equal((await visitor(server).get(`/api/shared/${token}`)).status, 200);
    });

    it('keeps an archived note visible (D-SHARE-3)', async () => {
      const noteId = await createNote({ title: 'Old plans' });
      const token = await share(noteId);
      await owner.patch(`/api/notes/${noteId}`, { archived: true });
      const response = await visitor(server).get(`/api/shared/${token}`);
      assert.equal(response.status, 200);
      assert.equal(response.body.title, 'Old plans');
      assert.equal((await visitor(server).get(`/s/${token}`)).status, 200);
    });

    it('answers 404 at once after the note is deleted, and the link row is gone (D-SHARE-3)', async () => {
      const noteId = await createNote();
      const token = await share(noteId);
      assert.equal((await owner.delete(`/api/notes/${noteId}`)).status, 200);
      assert.equal((await visitor(server).get(`/api/shared/${token}`)).status, 404);
      assert.equal((await visitor(server).get(`/s/${token}`)).status, 404);
      const rows = await server.app.db
        .selectFrom('share_links')
        .selectAll()
        .where('token', '=', token)
        .execute();
      assert.equal(rows.length, 0);
    });

    it('shows later edits of the note at once', async () => {
      const noteId = await createNote({ title: 'Draft' });
      const token = await share(noteId);
      await owner.patch(`/api/notes/${noteId}`, { title: 'Final' });
      assert.equal((await visitor(server).get(`/api/shared/${token}`)).body.title, 'Final');
    });
  });

  describe('GET /api/shared/:token/attachment/:attachmentId', () => {
    async function attachImage(noteId: string, name = 'photo.png'): Promise<{ id: string; bytes: Buffer }> {
      const bytes = await sharp({ create: { width: 480, height: 320, channels: 3, background: '#2a9d8f' } })
        .png()
        .toBuffer();
      const body = new FormData();
      body.append('file', new Blob([bytes], { type: 'image/png' }), name);
      const response = await owner.request('POST', `/api/notes/${noteId}/attachments`, { body });
      assert.equal(response.status, 201, response.text);
      return { id: response.body.id, bytes };
    }

    async function download(path: string, headers: Record<string, string> = {}) {
      const response = await fetch(new URL(path, server.url), {
        headers: { 'x-forwarded-for': '192.0.2.200', ...headers },
      });
      return {
        status: response.status,
        headers: response.headers,
        bytes: Buffer.from(await response.arrayBuffer()),
      };
    }

    it('sends the image with the attachment download headers (D-ATT-4), without authentication', async () => {
      const noteId = await createNote();
      const token = await share(noteId);
      const image = await attachImage(noteId, 'lake.png');
      const response = await download(`/api/shared/${token}/attachment/${image.id}`);
      assert.equal(response.status, 200);
      assert.deepEqual(response.bytes, image.bytes);
      assert.equal(response.headers.get('content-type'), 'image/png');
      assert.equal(response.headers.get('content-length'), String(image.bytes.length));
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.match(response.headers.get('content-disposition')!, /^inline; filename="lake.png"/);
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      const etag = response.headers.get('etag')!;
      assert.ok(etag);
      const again = await download(`/api/shared/${token}/attachment/${image.id}`, { 'if-none-match': etag });
      assert.equal(again.status, 304);
    });

    it('sends the WebP thumbnail with thumb=1', async () => {
      const noteId = await createNote();
      const token = await share(noteId);
      const image = await attachImage(noteId);
      const response = await download(`/api/shared/${token}/attachment/${image.id}?thumb=1`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/webp');
      const meta = await sharp(response.bytes).metadata();
      assert.equal(meta.format, 'webp');
      assert.ok(meta.width! <= 200);
      assert.equal((await download(`/api/shared/${token}/attachment/${image.id}?thumb=2`)).status, 400);
    });

    it("answers 404 for another note's attachment through a valid token", async () => {
      const shared = await createNote();
      const token = await share(shared);
      await attachImage(shared);
      const other = await createNote();
      await share(other);
      const foreign = await attachImage(other);
      for (const query of ['', '?thumb=1']) {
        const response = await visitor(server).get(`/api/shared/${token}/attachment/${foreign.id}${query}`);
        assert.equal(response.status, 404);
        assert.equal(response.body.code, 'attachment_not_found');
      }
    });

    it('answers 404 for an unknown attachment id and a token that is unknown, revoked, trashed or deleted', async () => {
      const noteId = await createNote();
      const token = await share(noteId);
      const image = await attachImage(noteId);
      const path = (t: string, id = image.id) => `/api/shared/${t}/attachment/${id}`;
      assert.equal((await visitor(server).get(path(token, randomUUID()))).status, 404);
      assert.equal((await visitor(server).get(path(token, 'not-an-id'))).status, 404);
      assert.equal((await visitor(server).get(path('D'.repeat(43)))).status, 404);

      await owner.patch(`/api/notes/${noteId}`, { trashed: true });
      assert.equal((await visitor(server).get(path(token))).body.code, 'share_not_found');
      await owner.patch(`/api/notes/${noteId}`, { trashed: false });
      assert.equal((await download(path(token))).status, 200);

      await owner.delete(`/api/notes/${noteId}/share`);
      assert.equal((await visitor(server).get(path(token))).status, 404);
      const renewed = await share(noteId);
      await owner.delete(`/api/notes/${noteId}`);
      const gone = await visitor(server).get(path(renewed));
      assert.equal(gone.status, 404);
      assert.equal(gone.headers.get('cache-control'), 'no-store');
    });
  });

  describe('GET /s/:token', () => {
    async function page(fields: Record<string, unknown>) {
      const token = await share(await createNote(fields));
      const response = await visitor(server).get(`/s/${token}`);
      assert.equal(response.status, 200);
      return { token, response, html: response.text };
    }

    it('renders the note read-only as HTML with a strict CSP that allows exactly its stylesheet (D-SHARE-1)', async () => {
      const { response, html } = await page({ title: 'Weekend', content: 'Line one\nLine two' });
      assert.match(response.headers.get('content-type')!, /^text\/html; charset=utf-8/);
      const csp = response.headers.get('content-security-policy')!;
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
      const hash = createHash('sha256').update(style).digest('base64');
      assert.equal(
        csp,
        `default-src 'none';img-src 'self';style-src 'sha256-${hash}';base-uri 'none';form-action 'none';frame-ancestors 'none'`,
      );
      assert.ok(!/<script/i.test(html));
      assert.ok(!/\sstyle=/i.test(html), 'no inline style attributes (the CSP would block them)');
      assert.match(html, /<h1>Weekend<\/h1>/);
      assert.match(html, /Line one<br>\s*Line two/);
    });

    it('is marked noindex in a meta tag and X-Robots-Tag, and sends no referrer', async () => {
      const { response, html } = await page({ title: 'Private-ish' });
      assert.equal(response.headers.get('x-robots-tag'), 'noindex, nofollow');
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.match(html, /<meta name="robots" content="noindex, nofollow">/);
    });

    it('shows checklist items (D-NOTE-6 task lines) as disabled checkboxes', async () => {
      const { html } = await page({
        title: 'Shopping',
        checklistMode: true,
        content: '- [ ] milk\n- [x] bread\n- [X] eggs',
      });
      const boxes = html.match(/<input [^>]*>/g) ?? [];
      assert.equal(boxes.length, 3);
      assert.ok(boxes.every((box) => /type="checkbox" disabled/.test(box)));
      assert.equal(boxes.filter((box) => box.includes('checked')).length, 2);
      assert.match(html, /<span>milk<\/span>/);
    });

    it("uses the note's color as the background", async () => {
      const { html } = await page({ title: 'Colorful', color: 'coral' });
      assert.match(html, /<main class="note color-coral">/);
      assert.match(html, /\.color-coral\{background:#[0-9a-f]{6}\}/);
    });

    it('links http(s) URLs with rel="noopener noreferrer nofollow", without trailing punctuation', async () => {
      const { html } = await page({
        content: 'See https://example.com/a?b=1&c=2. Or (http://example.org/x).',
      });
      assert.match(
        html,
        /<a href="https:\/\/example.com\/a\?b=1&#38;c=2" rel="noopener noreferrer nofollow">https:\/\/example.com\/a\?b=1&#38;c=2<\/a>\./,
      );
      assert.match(
        html,
        /\(<a href="http:\/\/example.org\/x" rel="noopener noreferrer nofollow">http:\/\/example.org\/x<\/a>\)\./,
      );
    });

    it('renders <script>, "><img onerror> and javascript: links inert', async () => {
      const { html } = await page({
        title: '<script>alert("title")</script>',
        content: [
          '"><img src=x onerror=alert(1)>',
          'javascript:alert(2)',
          '[click](javascript:alert(3))',
          'https://example.com/"><script>alert(4)</script>',
          "- [ ] <script>alert('item')</script> JaVaScRiPt:alert(5)",
        ].join('\n'),
      });
      assert.ok(!/<script/i.test(html), 'no script element');
      assert.ok(!/<img[^>]*onerror/i.test(html), 'no injected img');
      // Every real tag (user text has its < escaped) is one the page itself writes, without handlers.
      const tags = html.match(/<[a-z!][^>]*>/gi) ?? [];
      const names = new Set(tags.map((tag) => /^<!?(\w+)/.exec(tag)![1]!.toLowerCase()));
      const allowed = ['doctype', 'html', 'head', 'meta', 'title', 'style', 'body', 'main', 'h1', 'p', 'br'];
      allowed.push('a', 'ul', 'li', 'label', 'input', 'span', 'footer', 'time');
      assert.deepEqual(
        [...names].filter((name) => !allowed.includes(name)),
        [],
      );
      assert.ok(
        tags.every((tag) => !/\son\w+\s*=/i.test(tag)),
        'no event handler attribute',
      );
      const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
      assert.deepEqual(hrefs, ['https://example.com/']);
      assert.match(html, /&#60;script&#62;alert\(&#34;title&#34;\)&#60;\/script&#62;/);
      assert.match(html, /&#34;&#62;&#60;img src=x onerror=alert\(1\)&#62;/);
    });

    it('links image thumbnails to the full image through the public attachment endpoint', async () => {
      const noteId = await createNote({ title: 'Photos' });
      const token = await share(noteId);
      await server.app.db
        .insertInto('attachments')
        .values([
          {
            id: 'with-thumb',
            note_id: noteId,
            filename: 'a "b".png',
            mime_type: 'image/png',
            size: 1,
            thumbnail_path: 'thumbnails/with-thumb.webp',
            created_at: 1,
            sha256: 'rows only, no files',
          },
          {
            id: 'no-thumb',
            note_id: noteId,
            filename: 'c.gif',
            mime_type: 'image/gif',
            size: 1,
            thumbnail_path: null,
            created_at: 2,
            sha256: 'rows only, no files',
          },
        ])
        .execute();
      const html = (await visitor(server).get(`/s/${token}`)).text;
      const base = `/api/shared/${token}/attachment`;
      assert.ok(
        html.includes(
          `<a href="${base}/with-thumb"><img src="${base}/with-thumb?thumb=1" alt="a &#34;b&#34;.png"`,
        ),
      );
      assert.ok(html.includes(`<a href="${base}/no-thumb"><img src="${base}/no-thumb" alt="c.gif"`));
    });

    it('shows a friendly 404 page, with the same CSP, for unknown, revoked and trashed links', async () => {
      const revokedNote = await createNote();
      const revoked = await share(revokedNote);
      await owner.delete(`/api/notes/${revokedNote}/share`);
      const trashedNote = await createNote();
      const trashed = await share(trashedNote);
      await owner.patch(`/api/notes/${trashedNote}`, { trashed: true });
      for (const token of ['B'.repeat(43), revoked, trashed]) {
        const response = await visitor(server).get(`/s/${token}`);
        assert.equal(response.status, 404);
        assert.match(response.headers.get('content-type')!, /^text\/html/);
        assert.match(response.headers.get('content-security-policy')!, /^default-src 'none'/);
        assert.match(response.text, /<h1>This note isn’t available<\/h1>/);
        assert.ok(!response.text.includes('Groceries'));
      }
    });
  });
});

describe('share url with PUBLIC_URL', () => {
  let server: TestServer;
  before(async () => {
    // The test client talks to 127.0.0.1, which PUBLIC_URL alone would not let in (0007).
    server = await startServer({
      env: { PUBLIC_URL: 'https://notes.example.com', ALLOWED_HOSTS: '127.0.0.1' },
    });
  });
  after(() => server.close());

  it('is <PUBLIC_URL>/s/<token> (D-SHARE-1)', async () => {
    const owner = await setupOwner(server);
    const noteId = (await owner.post('/api/notes', { title: 'x' })).body.id;
    const response = await owner.post(`/api/notes/${noteId}/share`);
    assert.equal(response.body.url, `https://notes.example.com/s/${response.body.token}`);
  });
});

describe('rate limits on shared notes (D-SHARE-2)', () => {
  async function sharedToken(server: TestServer): Promise<string> {
    const owner = await setupOwner(server);
    const noteId = (await owner.post('/api/notes', { title: 'Popular' })).body.id;
    return (await owner.post(`/api/notes/${noteId}/share`)).body.token;
  }

  describe('without TRUST_PROXY', () => {
    let server: TestServer;
    let token: string;
    before(async () => {
      server = await startServer();
      token = await sharedToken(server);
    });
    after(() => server.close());

    it('allows 60 requests a minute to the JSON and the page together, then answers 429 with Retry-After', async () => {
      const client = clientOf(server);
      for (let i = 0; i < 60; i++) {
        // Different X-Forwarded-For values do not matter: the proxy is not trusted.
        const path = i % 2 === 0 ? `/api/shared/${token}` : `/s/${token}`;
        const response = await client.get(path, { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
        assert.equal(response.status, 200, `request ${i + 1}`);
      }
      const json = await client.get(`/api/shared/${token}`, { headers: { 'x-forwarded-for': '192.0.2.1' } });
      assert.equal(json.status, 429);
      assert.equal(json.body.code, 'rate_limited');
      assert.equal(json.body.statusCode, 429);
      assert.ok(Number(json.headers.get('retry-after')) > 0);
      assert.equal(json.headers.get('ratelimit-limit'), '60');
      assert.equal(json.headers.get('ratelimit-remaining'), '0');
      assert.ok(Number(json.headers.get('ratelimit-reset')) > 0);

      const page = await client.get(`/s/${token}`);
      assert.equal(page.status, 429);
      assert.ok(Number(page.headers.get('retry-after')) > 0);
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      assert.match(page.text, /Too many requests/);
    });

    it('counts the public attachment endpoint apart: 300 a minute, then 429 with Retry-After', async () => {
      // Runs after the test above used up the page budget of this IP: images have their own.
      const client = clientOf(server);
      // Any answer counts, so a missing attachment keeps the loop cheap.
      const path = `/api/shared/${token}/attachment/${randomUUID()}`;
      for (let i = 0; i < 300; i++) assert.equal((await client.get(path)).status, 404, `request ${i + 1}`);
      const limited = await client.get(path);
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal(limited.headers.get('ratelimit-limit'), '300');
    });
  });

  describe('with TRUST_PROXY', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ env: { TRUST_PROXY: 'true' } });
    });
    after(() => server.close());

    it('counts per X-Forwarded-For client address', async () => {
      const token = await sharedToken(server);
      const client = clientOf(server);
      const from = (ip: string) => client.get(`/api/shared/${token}`, { headers: { 'x-forwarded-for': ip } });
      const first = await from('203.0.113.7');
      assert.equal(first.headers.get('ratelimit-limit'), '60');
      assert.equal(first.headers.get('ratelimit-remaining'), '59');
      for (let i = 1; i < 60; i++) assert.equal((await from('203.0.113.7')).status, 200);
      const limited = await from('203.0.113.7');
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal((await from('203.0.113.8')).status, 200);
    });
  });
});

describe('share tokens in logs (D-OPS-4)', () => {
  it('never appear, whichever public route was asked and however it answered', async () => {
    const server = await startLoggedServer();
    const owner = await setupOwner(server);
    const noteId = (await owner.post('/api/notes', { title: 'Logged?' })).body.id;
    const token = (await owner.post(`/api/notes/${noteId}/share`)).body.token;
    const visitor = clientOf(server);
    assert.equal((await visitor.get(`/api/shared/${token}`)).status, 200);
    assert.equal((await visitor.get(`/s/${token}?utm=1`)).status, 200);
    assert.equal((await visitor.get(`/api/shared/${token}/attachment/${randomUUID()}?thumb=1`)).status, 404);
    await owner.patch(`/api/notes/${noteId}`, { trashed: true });
    assert.equal((await visitor.get(`/s/${token}`)).status, 404);
    await server.close();
    assert.ok(server.log().includes('/s/[redacted]'));
    assert.ok(!server.log().includes(token), 'the log holds a share token');
  });
});

describe('share tokens in logs, however the path is spelled (D-OPS-4)', () => {
  it('are redacted from percent-encoded, doubled-slash and queried paths', async () => {
    const server = await startLoggedServer();
    const owner = await setupOwner(server);
    const noteId = (await owner.post('/api/notes', { title: 'Logged?' })).body.id;
    const token: string = (await owner.post(`/api/notes/${noteId}/share`)).body.token;
    const hex = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const paths = [
      `/%73/${token}`,
      `/%73/${token}?utm=%2F`,
      `/api/%73hared/${token}`,
      `/api/%73%68%61%72%65%64/${token}/attachment/${randomUUID()}?thumb=1`,
      `/api%2fshared%2f${token}`,
      `/api%2Fshared%2F${token}`,
      `/s/${hex(token)}`,
      `/s/${hex(token).toUpperCase()}`,
      `//s/${token}`,
      `/s//${token}?x=1`,
      `/api//shared/${token}`,
      `/S/${token}`,
      `/%73/${token}%ZZ`,
    ];
    const statuses = [];
    for (const path of paths) statuses.push((await rawRequest(server.url, 'GET', path)).status);
    await server.close();
    // The router itself serves the first ones: these are real reads of the note.
    assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
    const logged = server
      .log()
      .split('\n')
      .filter((line) => line.includes('"req"'))
      .map((line) => JSON.parse(line).req.url as string);
    assert.ok(logged.length >= paths.length, 'every request was logged');
    for (const url of logged) {
      const readable = url.replace(/%([0-9a-f]{2})/gi, (_, h: string) =>
        String.fromCharCode(Number.parseInt(h, 16)),
      );
      assert.ok(!readable.toLowerCase().includes(token.toLowerCase()), `the log holds a share token: ${url}`);
    }
  });
});

describe('GET /s/:token when the server fails', () => {
  it('shows a generic error page with status 500 and no details', async () => {
    const server = await startServer();
    await server.app.db.destroy();
    const response = await clientOf(server).get(`/s/${'C'.repeat(43)}`);
    assert.equal(response.status, 500);
    assert.match(response.headers.get('content-type')!, /^text\/html/);
    assert.match(response.text, /<h1>Something went wrong<\/h1>/);
    assert.ok(!/sqlite|stack|at \w+ \(/i.test(response.text));
    await server.close();
  });
});
