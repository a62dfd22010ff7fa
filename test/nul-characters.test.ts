import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { archiveForm } from './helpers/archives.js';
import { useOwner, useServer } from './helpers/server.js';
import { keepTakeout } from './helpers/takeout.js';

interface Operation {
  parameters?: { in: 'path' | 'query' | 'header'; name: string }[];
  requestBody?: { content: Record<string, unknown> };
}

/** Where a request carries text: a path parameter, a query parameter or the JSON body. */
type Place = { in: 'path' | 'query'; name: string } | { in: 'body' };

/** Text holding U+0000 somewhere (start, middle or end), with any other characters around it. */
const withNul = fc
  .tuple(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 12 }))
  .map(([before, after]) => `${before}\u0000${after}`);

/**
 * PostgreSQL's text cannot hold U+0000, so a `%00` that reached a query was a 500 there (and
 * stored on SQLite). Every documented operation, given U+0000 in any of its path parameters,
 * query parameters or JSON body, answers 400 or 404 on either database.
 */
describe('U+0000 in a path, a query or a JSON body', () => {
  const server = useServer();
  const owner = useOwner(server);

  it('is answered 400 or 404 by every documented operation, never 500', async () => {
    const document = (
      await owner.get<{ paths: Record<string, Record<string, Operation>> }>('/api/openapi.json')
    ).body;
    const note = await owner.post('/api/notes', { title: 'kept' });
    const share = await owner.post(`/api/notes/${note.body.id}/share`);
    const key = (await owner.post<{ key: string; id: string }>('/api/settings/api-keys', { name: 'MCP' }))
      .body;
    // Valid values for the parameters not under test, so each request reaches the one that is.
    const valid: Record<string, string> = {
      id: note.body.id,
      token: share.body.token,
      attachmentId: randomUUID(),
    };
    const cases: { method: string; path: string; place: Place }[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const parameter of operation.parameters ?? []) {
          const { in: where, name } = parameter;
          if (where === 'path' || where === 'query') cases.push({ method, path, place: { in: where, name } });
        }
        if (operation.requestBody?.content['application/json'])
          cases.push({ method, path, place: { in: 'body' } });
      }
    }
    assert.ok(cases.length >= 35, `${cases.length} inputs`);
    const answers: string[] = [];
    for (const { method, path, place } of cases) {
      await fc.assert(
        fc.asyncProperty(withNul, fc.boolean(), async (text, asKey) => {
          const url = path.replace(/\{(\w+)\}/g, (_, name: string) =>
            encodeURIComponent(place.in === 'path' && place.name === name ? text : (valid[name] ?? 'x')),
          );
          const query = place.in === 'query' ? `?${new URLSearchParams({ [place.name]: text })}` : '';
          const headers: Record<string, string> = {};
          // MCP takes API keys only; the other operations either.
          if (path.startsWith('/api/mcp') || (asKey && !/settings|users|auth/.test(path))) {
            headers.authorization = `Bearer ${key.key}`;
          }
          const response = await owner.request(method.toUpperCase(), `${url}${query}`, {
            headers,
            ...(place.in === 'body' ? { json: { title: text, [text]: text, name: text, q: [text] } } : {}),
          });
          const answer = `${method.toUpperCase()} ${path} (${place.in} ${'name' in place ? place.name : ''}): ${response.status}`;
          answers.push(answer);
          assert.ok(
            response.status === 400 || response.status === 404,
            `${answer} ${response.text.slice(0, 300)}`,
          );
        }),
        { numRuns: 4 },
      );
    }
    // Most are refused as invalid input rather than as an unknown resource.
    assert.ok(
      answers.filter((answer) => answer.endsWith(': 400')).length > answers.length / 2,
      answers.join('\n'),
    );
  });

  it('answers DELETE /api/settings/api-keys/%00 with 400 and deletes nothing', async () => {
    const key = (await owner.post('/api/settings/api-keys', { name: 'kept' })).body;
    for (const id of ['%00', `${key.id}%00`, '%00%00', 'a%00b']) {
      const response = await owner.delete(`/api/settings/api-keys/${id}`);
      assert.equal(response.status, 400, id);
      assert.equal(response.body.code, 'validation_failed');
      assert.equal(response.body.details[0].path, 'params:/id');
    }
    const keys = (await owner.get('/api/settings/api-keys')).body;
    assert.ok(keys.some((listed: { id: string }) => listed.id === key.id));
  });

  it('answers a note id holding %00 as an unknown note (404), like any id that is not a uuid', async () => {
    const note = (await owner.post('/api/notes', { title: 'kept' })).body;
    const response = await owner.get(`/api/notes/${note.id}%00`);
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'note_not_found');
  });

  it('imports every note of an archive but those holding U+0000, listed as unreadable', async () => {
    const archive = await keepTakeout({
      Clean: { title: 'Clean', textContent: 'nothing odd' },
      'Nul in text': { title: 'Nul', textContent: 'a\u0000b' },
      'Nul in title': { title: 'x\u0000', textContent: 'text' },
      'Nul in list': { title: 'List', listContent: [{ text: 'milk\u0000', isChecked: false }] },
    });
    const response = await owner.request('POST', '/api/import', { body: archiveForm(archive) });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.imported, 1);
    assert.deepEqual(
      response.body.unreadable.map((entry: { source: string; reason: string }) => [
        entry.source,
        /U\+0000/.test(entry.reason),
      ]),
      [
        ['Takeout/Keep/Nul in text.json', true],
        ['Takeout/Keep/Nul in title.json', true],
        ['Takeout/Keep/Nul in list.json', true],
      ],
    );
    const titles = (await owner.get('/api/notes')).body.map((listed: { title: string }) => listed.title);
    assert.ok(titles.includes('Clean'));
    assert.ok(!titles.some((title: string) => title.includes('\u0000')));
  });
});
