/** The part of pino's logger that services use, so they do not depend on Fastify. */
export interface Logger {
  warn(details: object, message: string): void;
}
