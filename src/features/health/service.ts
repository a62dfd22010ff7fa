import { errors } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { AttachmentsService } from '../attachments/service.js';
import type { HealthStatus } from './schemas.js';

/**
 * What /api/health checks (D-OPS-2): the database answers and the attachment store can be read
 * and written. A failure is logged with its cause and answered 503 saying which part failed,
 * without the cause (paths, SQL) that only the log may see. Redis, when configured, is reported
 * but fails nothing: only sign-ins and public share links need it (decision 0028).
 */
export function createHealthService(deps: {
  /** Runs a statement on the connection itself, not behind Kysely's queue (decision 0006). */
  pingDatabase: () => void | Promise<void>;
  /** Whether Redis (REDIS_URL) answers; absent without it. */
  pingRedis?: () => Promise<boolean>;
  attachments: AttachmentsService;
  log: Logger;
}) {
  const checks: [string, () => Promise<void>][] = [
    ['The database is not answering', async () => deps.pingDatabase()],
    ['The attachment storage cannot be read or written', () => deps.attachments.checkStorage()],
  ];
  return {
    async check(): Promise<Omit<HealthStatus, 'status' | 'version'>> {
      for (const [reason, check] of checks) {
        try {
          await check();
        } catch (err) {
          deps.log.warn({ err }, `health check failed: ${reason}`);
          throw errors.unhealthy(reason);
        }
      }
      if (!deps.pingRedis) return {};
      return { redis: (await deps.pingRedis()) ? 'ok' : 'unreachable' };
    },
  };
}
