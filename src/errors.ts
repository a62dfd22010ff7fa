/**
 * The one error type (D-ERR-1): services throw it, the HTTP error handler renders it as
 * `{ statusCode, error, code, message, details? }`, and MCP tools turn it into a tool error.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const PAYLOAD_TOO_LARGE_MESSAGE = 'The request body is too large';

export const errors = {
  validation: (message: string, details?: ErrorDetail[]) =>
    new AppError(400, 'validation_failed', message, details),
  badRequest: (code: string, message: string) => new AppError(400, code, message),
  unauthenticated: () => new AppError(401, 'unauthenticated', 'Authentication required'),
  forbidden: (message = 'You may not do this') => new AppError(403, 'forbidden', message),
  insufficientScope: () =>
    new AppError(403, 'insufficient_scope', 'This API key may only read; this action needs notes:write'),
  noteNotFound: () => new AppError(404, 'note_not_found', 'Note not found'),
  notFound: (code: string, message: string) => new AppError(404, code, message),
  conflict: (code: string, message: string) => new AppError(409, code, message),
  payloadTooLarge: () => new AppError(413, 'payload_too_large', PAYLOAD_TOO_LARGE_MESSAGE),
  versionMismatch: (current: number) =>
    new AppError(412, 'version_mismatch', `The note has changed; its current version is ${current}`),
};
