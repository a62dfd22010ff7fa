import { errors } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { AttachmentsService } from '../attachments/service.js';

/**
 * What /api/health checks (D-OPS-2): the database answers, the attachment store can be read
 * and written, and Redis answers when it is configured. A failure is logged with its cause and answered 503 saying which part failed,
 * without the cause (paths, SQL) that only the log may see.
 */
export function createHealthService(deps: {
  /** Runs a statement on the connection itself, not behind Kysely's queue (decision 0006). */
  pingDatabase: () => void | Promise<void>;
  /** Present when REDIS_URL is set: the rate limits count there, so it must answer too. */
  pingRedis?: () => Promise<unknown>;
  attachments: AttachmentsService;
  log: Logger;
}) {
  const checks: [string, () => Promise<void>][] = [
    ['The database is not answering', async () => deps.pingDatabase()],
    ['The attachment storage cannot be read or written', () => deps.attachments.checkStorage()],
  ];
  const { pingRedis } = deps;
  if (pingRedis) checks.push(['Redis is not answering', async () => void (await pingRedis())]);
  return {
    async check(): Promise<void> {
      for (const [reason, check] of checks) {
        try {
          await check();
        } catch (err) {
          deps.log.warn({ err }, `health check failed: ${reason}`);
          throw errors.unhealthy(reason);
        }
      }
    },
  };
}
