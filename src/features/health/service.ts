import { type Db, pingDatabase } from '../../db/connection.js';
import { errors } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { AttachmentsService } from '../attachments/service.js';

/**
 * What /api/health checks (D-OPS-2): the database answers and the attachment store can be read
 * and written. A failure is logged with its cause and answered 503 saying which part failed,
 * without the cause (paths, SQL) that only the log may see.
 */
export function createHealthService(deps: { db: Db; attachments: AttachmentsService; log: Logger }) {
  const checks: [string, () => Promise<void>][] = [
    ['The database is not answering', () => pingDatabase(deps.db)],
    ['The attachment storage cannot be read or written', () => deps.attachments.checkStorage()],
  ];
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
