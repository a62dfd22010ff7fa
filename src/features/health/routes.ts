import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/schemas.js';
import { APP_VERSION } from '../../version.js';
import { HealthStatus } from './schemas.js';

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['operations'],
        summary: 'Liveness, database and attachment storage check (D-OPS-2); reports Redis when configured',
        response: {
          200: HealthStatus,
          ...errorResponses(503),
        },
      },
    },
    async () => ({ status: 'ok' as const, version: APP_VERSION, ...(await app.services.health.check()) }),
  );
};
