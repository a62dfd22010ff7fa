import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../errors.js';
import { errorResponses } from '../../http/schemas.js';
import { APP_VERSION } from '../../version.js';

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['operations'],
        summary: 'Liveness and database check (D-OPS-2)',
        response: {
          200: Type.Object({ status: Type.Literal('ok'), version: Type.String() }),
          ...errorResponses(503),
        },
      },
    },
    async () => {
      try {
        app.pingDatabase();
      } catch (err) {
        app.log.error({ err }, 'health check failed');
        throw new AppError(503, 'unhealthy', 'The database is not answering');
      }
      return { status: 'ok' as const, version: APP_VERSION };
    },
  );
};
