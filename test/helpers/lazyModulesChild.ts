/**
 * Run by test/lazy-modules.test.ts as its own process (`node --import tsx <this> <dataDir>
 * <png>`): records every module the server loads, serves the everyday requests, writes
 * `-- idle`, then uploads the image and opens an MCP session, which must load what they need.
 */
import fs from 'node:fs';
import { register } from 'node:module';

register('./loadRecorder.mjs', import.meta.url);
const marksFile = process.env.LOADED_URLS_FILE!;
// Each Intl.DateTimeFormat made (ICU's locale and time-zone data: ~8 MiB) is recorded too.
Intl.DateTimeFormat = new Proxy(Intl.DateTimeFormat, {
  construct(target, args) {
    fs.appendFileSync(marksFile, 'Intl.DateTimeFormat\n');
    return Reflect.construct(target, args);
  },
});
const { buildApp } = await import('../../src/app.js');
const { loadConfig } = await import('../../src/config.js');
const { TEST_PASSWORD_COST } = await import('./passwordCost.js');

const app = await buildApp(loadConfig({ DATA_DIR: process.argv[2]!, LOG_LEVEL: 'silent' }), {
  logger: false,
  passwordCost: TEST_PASSWORD_COST,
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
async function call(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: RequestInit['body'],
) {
  const response = await fetch(`${url}${path}`, { method, headers, body });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}
const json = { 'content-type': 'application/json' };
const setup = await call('POST', '/api/auth/setup', json, JSON.stringify({ password: 'a long password' }));
const cookie = { cookie: setup.headers.getSetCookie()[0]!.split(';')[0]! };
const note = (await (
  await call('POST', '/api/notes', { ...json, ...cookie }, JSON.stringify({ title: 'a #note' }))
).json()) as { id: string };
await call('GET', `/api/notes/${note.id}`, cookie);
await call('PATCH', `/api/notes/${note.id}`, { ...json, ...cookie }, JSON.stringify({ title: 'b #note' }));
await call('GET', '/api/notes', cookie);
await call('GET', '/api/search?q=note', cookie);
await call('GET', '/api/sync?since=0', cookie);
const { key } = (await (
  await call('POST', '/api/settings/api-keys', { ...json, ...cookie }, JSON.stringify({ name: 'agent' }))
).json()) as { key: string };
await call('GET', '/api/notes', { authorization: `Bearer ${key}` });
fs.appendFileSync(marksFile, '-- idle\n');

const png = fs.readFileSync(process.argv[3]!);
const form = new FormData();
form.append('file', new Blob([png], { type: 'image/png' }), 'dot.png');
await call('POST', `/api/notes/${note.id}/attachments`, cookie, form);
fs.appendFileSync(marksFile, '-- uploaded\n');
await call(
  'POST',
  '/api/mcp',
  { ...json, accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  }),
);
await app.close();
