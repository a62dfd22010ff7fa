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
        summary:
          'Liveness and readiness: the database, the attachment storage and Redis when configured (D-OPS-2)',
        response: {
          200: HealthStatus,
          ...errorResponses(503),
        },
      },
    },
    async () => {
      await app.services.health.check();
      return { status: 'ok' as const, version: APP_VERSION };
    },
  );
};
