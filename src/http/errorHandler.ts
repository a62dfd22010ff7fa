import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, type ErrorDetail } from '../errors.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Framework error codes mapped to our stable codes (D-ERR-1, D-ERR-3). */
const FRAMEWORK_CODES: Record<string, { status: number; code: string; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: 'payload_too_large',
    message: 'The request body is too large',
  },
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

export function errorBody(statusCode: number, code: string, message: string, details?: ErrorDetail[]) {
  return {
    statusCode,
    error: STATUS_TEXT[statusCode] ?? (statusCode >= 500 ? 'Internal Server Error' : 'Bad Request'),
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
    return { path: context && context !== 'body' ? `${context}:${path}` : path, message };
  });
}

/** One error shape everywhere (D-ERR-1); 5xx details are logged, never sent (D-ERR-3). */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      return reply
        .code(error.statusCode)
        .send(errorBody(error.statusCode, error.code, error.message, error.details));
    }
    if (error.validation) {
      const details = validationDetails(error.validation, error.validationContext);
      const first = details[0];
      const message = first ? `Invalid request: ${first.path} ${first.message}` : 'Invalid request';
      return reply.code(400).send(errorBody(400, 'validation_failed', message, details));
    }
    const known = error.code ? FRAMEWORK_CODES[error.code] : undefined;
    if (known) {
      return reply
        .code(known.status)
        .send(errorBody(known.status, known.code, known.message ?? error.message));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Other framework 4xx (e.g. a JSON syntax error): keep the status, give it a stable code.
      const code =
        error instanceof SyntaxError
          ? 'invalid_json'
          : (STATUS_TEXT[status] ?? 'bad_request').toLowerCase().replaceAll(' ', '_');
      return reply.code(status).send(errorBody(status, code, error.message));
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(errorBody(500, 'internal_error', 'Something went wrong on the server'));
  });

  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(errorBody(404, 'route_not_found', `No route for ${request.method} ${request.url.split('?')[0]}`));
  });
}
