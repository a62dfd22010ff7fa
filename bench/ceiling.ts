/**
 * The ceiling: a bare Fastify server that answers the benchmark's by-id and list requests with
 * the very bytes the real server sent, from memory. No database, no auth, no validation, no
 * serialization, so the ratio real/ceiling says how much of the budget our own code spends.
 *
 * Run as its own process: CEILING_BODIES=<json file of {path: file}> PORT=... node --import tsx bench/ceiling.ts
 */
import fs from 'node:fs';
import Fastify from 'fastify';

const bodies = JSON.parse(fs.readFileSync(process.env.CEILING_BODIES!, 'utf8')) as Record<string, string>;
const app = Fastify({ logger: false });
app.get('/api/health', async () => ({ status: 'ok' }));
for (const [path, file] of Object.entries(bodies)) {
  const body = fs.readFileSync(file);
  app.get(path, (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
}
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
