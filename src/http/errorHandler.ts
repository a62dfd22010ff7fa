import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asAppError } from '../db/outage.js';
import {
  AppError,
  detailPath,
  type ErrorCode,
  type ErrorDetail,
  errors,
  PAYLOAD_TOO_LARGE_MESSAGE,
} from '../errors.js';
import { NoteIdParams } from './schemas.js';

/** Framework error codes mapped to our stable codes (D-ERR-1, D-ERR-3). */
const FRAMEWORK_CODES: Record<string, { status: number; code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: PAYLOAD_TOO_LARGE_MESSAGE },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', message: 'The JSON body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'The body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_content_length' },
  FST_ERR_BAD_URL: { status: 400, code: 'bad_url', message: 'The URL is malformed' },
  FST_FILES_LIMIT: { status: 413, code: 'payload_too_large', message: 'The form has too many files' },
  FST_FIELDS_LIMIT: { status: 413, code: 'payload_too_large', message: 'The form has too many fields' },
  FST_PARTS_LIMIT: { status: 413, code: 'payload_too_large', message: 'The form has too many parts' },
  // @fastify/multipart answers 406 for a body that is not multipart; it is a 415.
  FST_INVALID_MULTIPART_CONTENT_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'The body must be multipart/form-data',
  },
};

/** Codes for the other client errors the HTTP layer may raise, by status. */
const FALLBACK_CODES: Partial<Record<number, ErrorCode>> = {
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** The status's reason phrase (RFC 9110), e.g. "Gone" for 410: D-ERR-1's `error` field. */
function reasonPhrase(statusCode: number): string {
  return STATUS_CODES[statusCode] ?? (statusCode >= 500 ? 'Internal Server Error' : 'Bad Request');
}

export function errorBody(statusCode: number, code: ErrorCode, message: string, details?: ErrorDetail[]) {
  return {
    statusCode,
    error: reasonPhrase(statusCode),
    code,
    message,
    ...(details ? { details } : {}),
  };
}

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

function validationDetails(issues: ValidationIssue[], context: string | undefined): ErrorDetail[] {
  return issues.map((issue) => {
    const missing = (issue.params as { missingProperty?: string } | undefined)?.missingProperty;
    const path = missing ? `${issue.instancePath}/${missing}` : issue.instancePath || '/';
    const allowed = (issue.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
    const message = allowed ? `must be one of ${allowed.join(', ')}` : (issue.message ?? 'is invalid');
    return { path: detailPath(path, context), message };
  });
}

function sendAppError(reply: FastifyReply, error: AppError) {
  if (error.headers) reply.headers(error.headers);
  return reply
    .code(error.statusCode)
    .send(errorBody(error.statusCode, error.code, error.message, error.details));
}

/** Answers a request no route matched instead of the 404, or returns undefined (the web app's page). */
export type NotFoundFallback = (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;

/** One error shape everywhere (D-ERR-1); 5xx details are logged, never sent (D-ERR-3). */
export function registerErrorHandling(app: FastifyInstance, notFoundFallback?: NotFoundFallback): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) return sendAppError(reply, error);
    if (error.validation) {
      // A note id that is not a uuid names no note: the same 404 as an unknown one (D-ERR-2).
      // Params are validated before the body, so this wins over body errors, as it should.
      if (error.validationContext === 'params' && request.routeOptions.schema?.params === NoteIdParams) {
        return sendAppError(reply, errors.noteNotFound());
      }
      const details = validationDetails(error.validation, error.validationContext);
      const first = details[0];
      const message = first ? `Invalid request: ${first.path} ${first.message}` : 'Invalid request';
      return reply.code(400).send(errorBody(400, 'validation_failed', message, details));
    }
    const framework = error.code ? FRAMEWORK_CODES[error.code] : undefined;
    if (framework) {
      return reply
        .code(framework.status)
        .send(errorBody(framework.status, framework.code, framework.message ?? error.message));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Other framework 4xx (e.g. a JSON syntax error): keep the status, give it a catalogue code.
      const code = error instanceof SyntaxError ? 'invalid_json' : (FALLBACK_CODES[status] ?? 'bad_request');
      return reply.code(status).send(errorBody(status, code, error.message));
    }
    // The database or Redis out of reach (a restart, an outage): 503 until it is back.
    const outage = asAppError(error);
    if (outage) {
      request.log.warn({ err: error }, 'request failed: a store it needs is out of reach');
      return sendAppError(reply, outage);
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(errorBody(500, 'internal_error', 'Something went wrong on the server'));
  });

  app.setNotFoundHandler((request, reply) => {
    if (notFoundFallback?.(request, reply)) return;
    reply
      .code(404)
      .send(errorBody(404, 'route_not_found', `No route for ${request.method} ${request.url.split('?')[0]}`));
  });
}
