/**
 * The one error type (D-ERR-1) and the closed catalogue of its codes: services throw an
 * AppError made by one of the `errors` factories, the HTTP error handler renders it as
 * `{ statusCode, error, code, message, details? }`, and MCP tools turn it into a tool error.
 * docs/api.md's table of codes is `errorCodesMarkdownTable()` (a test keeps them equal).
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** Every code the API answers, its status and what it means for a client (the docs' table). */
export const ERROR_CODES = {
  validation_failed: [400, 'A field, query or path parameter is invalid; `details` lists each problem'],
  invalid_json: [400, 'The body is not valid JSON, or empty where a body is needed'],
  invalid_content_length: [400, 'The Content-Length header does not match the body'],
  bad_url: [400, 'The URL is malformed'],
  invalid_if_match: [400, 'If-Match is not a quoted note version such as `"3"`'],
  setup_completed: [400, 'Setup was already done; sign in instead'],
  cannot_delete_owner: [400, 'The owner of the instance cannot be removed'],
  owner_not_collaborator: [400, "A note's owner cannot be added as its collaborator"],
  owner_cannot_leave: [400, 'The owner cannot leave its own note (DELETE …/collaborators?userId=self)'],
  checklist_item_ambiguous: [400, 'MCP `set_checklist_item`: the text matches several items'],
  invalid_cursor: [400, 'MCP `list_notes`: the cursor is not one this server gave; start again without it'],
  invalid_multipart: [400, 'The multipart body is malformed'],
  invalid_file: [400, 'The upload is missing, not an accepted image, or corrupt'],
  invalid_thumbnail: [400, 'The client thumbnail is not a WebP of at most 1 MiB and 512 px'],
  invalid_archive: [
    400,
    'Import: the archive is not a zip, has unsafe entry names, is over the entry or size limits, or is not an export, Keep Takeout or Markdown archive',
  ],
  bad_request: [400, 'Another malformed request (the status may be another 4xx the HTTP layer gives)'],
  unauthenticated: [401, 'No, an expired or an invalid session or API key'],
  invalid_credentials: [401, 'Login: wrong email or password'],
  sso_failed: [
    400,
    "Single sign-on: the provider's answer failed a check (state, code, ID token) or came too late; start again",
  ],
  forbidden: [403, 'You can see the resource but may not do this (e.g. a collaborator deleting)'],
  insufficient_scope: [403, 'A read-only API key tried to write'],
  cross_origin: [403, 'A cookie-authenticated write came from another origin'],
  wrong_password: [403, 'Password change: the current password is not correct'],
  password_login_disabled: [403, 'Login: `PASSWORD_LOGIN=false`, sign in with single sign-on'],
  sso_no_account: [
    403,
    'Single sign-on: the provider account has no account here (and `OIDC_AUTO_CREATE_USERS` is off)',
  ],
  sso_email_unverified: [
    403,
    'Single sign-on: the provider does not say the email is verified, so it links to no account',
  ],
  note_not_found: [404, 'No such note, or one you cannot see: ids never leak'],
  route_not_found: [404, 'No such endpoint'],
  user_not_found: [404, 'No such user'],
  api_key_not_found: [404, 'No such API key of yours'],
  attachment_not_found: [404, 'No such attachment on this note'],
  thumbnail_not_found: [404, 'The attachment has no thumbnail'],
  attachment_file_missing: [404, "The attachment's stored file is missing on the server"],
  collaborator_not_found: [404, 'The user is not a collaborator of the note'],
  checklist_item_not_found: [404, 'MCP `set_checklist_item`: no such checklist item'],
  share_not_found: [404, 'The public link does not exist or was revoked'],
  feed_not_found: [404, 'The reminders calendar feed does not exist or was replaced'],
  sso_not_configured: [404, 'Single sign-on is not configured here (`OIDC_ISSUER_URL`)'],
  oauth_not_supported: [404, 'MCP clients: there is no OAuth here; send an API key (docs/mcp.md)'],
  method_not_allowed: [405, 'The endpoint does not take this method'],
  request_timeout: [
    408,
    'The request, body included, did not arrive within `REQUEST_TIMEOUT_SECONDS`; the connection is closed',
  ],
  note_exists: [409, 'A note with this id already exists'],
  email_taken: [409, 'Another user has this email'],
  already_collaborator: [409, 'The user is already a collaborator of the note'],
  note_not_trashed: [409, 'MCP `delete_note`: only a note in the trash can be deleted'],
  resync_required: [410, 'Deletions that old are gone: pull everything with since=0'],
  version_mismatch: [412, 'If-Match no longer matches: the note has changed'],
  payload_too_large: [
    413,
    'The body is over its limit: 2 MiB of JSON, 16 MiB for `POST /api/sync` (see Request bodies)',
  ],
  file_too_large: [413, 'The upload is over 10 MiB'],
  quota_exceeded: [413, "The note owner's storage quota (STORAGE_QUOTA_MB) is used up; nothing was written"],
  image_too_large: [
    413,
    'The image (or client thumbnail) has more pixels than MAX_IMAGE_PIXELS; nothing was decoded',
  ],
  archive_too_large: [413, 'Import: the archive is over 256 MiB'],
  unsupported_media_type: [415, 'The body has a type the endpoint does not take'],
  misdirected_request: [
    421,
    'The Host is not this server (`PUBLIC_URL`, `ALLOWED_HOSTS`): DNS rebinding is refused',
  ],
  rate_limited: [429, 'Too many requests; `Retry-After` says when to try again'],
  headers_too_large: [431, 'The request headers are too large; the connection is closed'],
  internal_error: [500, 'Something went wrong on the server (it is logged, never sent)'],
  unavailable: [
    503,
    'The database (or Redis, for sign-ins and public shares) cannot be reached right now; try again after `Retry-After` seconds. A write answered so may or may not have been stored',
  ],
  sso_unavailable: [503, 'Single sign-on: the identity provider cannot be reached yet; try again later'],
  unhealthy: [
    503,
    'The health check failed: the message says whether the database or the file storage; `Retry-After` as for `unavailable`',
  ],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const statusOf = (code: ErrorCode): number => ERROR_CODES[code][0];

export class AppError extends Error {
  readonly statusCode: number;

  /** Made only by the factories below, so every code is in the catalogue. */
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = statusOf(code);
  }
}

/**
 * The one way to name where a validation problem is: a JSON pointer into the body, prefixed by
 * the request part when it is elsewhere (`querystring:/q`, `params:/id`).
 */
export function detailPath(pointer: string, part = 'body'): string {
  return part === 'body' ? pointer : `${part}:${pointer}`;
}

export const PAYLOAD_TOO_LARGE_MESSAGE = 'The request body is too large';

/**
 * Retry-After of `unavailable` and `unhealthy`: a restarted database is back within seconds, and
 * a client retrying sooner only adds to the load of a server that cannot serve it.
 */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;
const retryAfterOutage = { 'retry-after': String(OUTAGE_RETRY_AFTER_SECONDS) };

/** What cannot be reached, in `unavailable`'s message (never its address or the driver's error). */
export type OutageOf = 'database' | 'redis';

/** One factory per code; the message says what went wrong this time. */
export const errors = {
  validation: (message: string, details?: ErrorDetail[]) =>
    new AppError('validation_failed', message, details),
  /** A field that is present but wrong, with the detail a client can show next to it. */
  invalidField: (path: string, problem: string) =>
    new AppError('validation_failed', `Invalid request: ${path} ${problem}`, [{ path, message: problem }]),
  invalidJson: (message: string) => new AppError('invalid_json', message),
  invalidIfMatch: () => new AppError('invalid_if_match', 'If-Match must be a quoted note version, e.g. "3"'),
  setupCompleted: () => new AppError('setup_completed', 'Setup has already been completed'),
  cannotDeleteOwner: () => new AppError('cannot_delete_owner', 'The owner of the instance cannot be removed'),
  ownerNotCollaborator: () =>
    new AppError('owner_not_collaborator', 'The owner of a note cannot be its collaborator'),
  ownerCannotLeave: () =>
    new AppError('owner_cannot_leave', 'The owner cannot leave its own note; delete it instead'),
  checklistItemAmbiguous: (message: string) => new AppError('checklist_item_ambiguous', message),
  invalidCursor: () =>
    new AppError('invalid_cursor', 'The cursor is not one this server gave; start again without it'),
  invalidMultipart: (message: string) => new AppError('invalid_multipart', message),
  invalidFile: (message: string) => new AppError('invalid_file', message),
  invalidThumbnail: (message: string) => new AppError('invalid_thumbnail', message),
  invalidArchive: (message: string) => new AppError('invalid_archive', message),
  archiveTooLarge: (limitBytes: number) =>
    new AppError('archive_too_large', `The archive is larger than ${limitBytes / 1048576} MiB`),
  unauthenticated: (message = 'Authentication required', headers?: Record<string, string>) =>
    new AppError('unauthenticated', message, undefined, headers),
  invalidCredentials: () => new AppError('invalid_credentials', 'Wrong email or password'),
  passwordLoginDisabled: () =>
    new AppError(
      'password_login_disabled',
      'Password sign-in is turned off here: sign in with single sign-on',
    ),
  ssoNotConfigured: () => new AppError('sso_not_configured', 'Single sign-on is not configured here'),
  ssoUnavailable: () =>
    new AppError(
      'sso_unavailable',
      'The identity provider cannot be reached right now; try again in a minute',
      undefined,
      retryAfterOutage,
    ),
  ssoFailed: (why: string) =>
    new AppError('sso_failed', `Single sign-on did not complete: ${why}. Start again.`),
  ssoNoAccount: () =>
    new AppError(
      'sso_no_account',
      'Your account at the identity provider has no account here. Ask the owner of this instance to add you (with the same email).',
    ),
  ssoEmailUnverified: () =>
    new AppError(
      'sso_email_unverified',
      'The identity provider does not say your email address is verified, so it cannot be linked to an account here.',
    ),
  forbidden: (message = 'You may not do this') => new AppError('forbidden', message),
  insufficientScope: () =>
    new AppError('insufficient_scope', 'This API key may only read; this action needs notes:write'),
  crossOrigin: () => new AppError('cross_origin', 'Cross-origin requests may not change data'),
  wrongPassword: () => new AppError('wrong_password', 'The current password is not correct'),
  noteNotFound: () => new AppError('note_not_found', 'Note not found'),
  userNotFound: () => new AppError('user_not_found', 'User not found'),
  apiKeyNotFound: () => new AppError('api_key_not_found', 'API key not found'),
  attachmentNotFound: () => new AppError('attachment_not_found', 'Attachment not found'),
  thumbnailNotFound: () => new AppError('thumbnail_not_found', 'This attachment has no thumbnail'),
  attachmentFileMissing: () =>
    new AppError('attachment_file_missing', 'The stored file of this attachment is missing'),
  collaboratorNotFound: () =>
    new AppError('collaborator_not_found', 'This user is not a collaborator of the note'),
  checklistItemNotFound: (message: string) => new AppError('checklist_item_not_found', message),
  shareNotFound: () =>
    new AppError('share_not_found', 'This shared note does not exist or is no longer shared'),
  feedNotFound: () => new AppError('feed_not_found', 'No such calendar feed'),
  noteExists: () => new AppError('note_exists', 'A note with this id already exists'),
  emailTaken: () => new AppError('email_taken', 'Another user already has this email'),
  alreadyCollaborator: () => new AppError('already_collaborator', 'This user is already a collaborator'),
  noteNotTrashed: () =>
    new AppError('note_not_trashed', 'Only a note in the trash can be deleted; trash it first'),
  resyncRequired: (message: string) => new AppError('resync_required', message),
  versionMismatch: (current: number) =>
    new AppError('version_mismatch', `The note has changed; its current version is ${current}`),
  payloadTooLarge: () => new AppError('payload_too_large', PAYLOAD_TOO_LARGE_MESSAGE),
  quotaExceeded: (quotaBytes: number) =>
    new AppError(
      'quota_exceeded',
      `The note owner's storage quota of ${quotaBytes / 1048576} MiB is used up; delete notes, text or attachments to make room`,
    ),
  imageTooLarge: (maxPixels: number) =>
    new AppError('image_too_large', `The image has more than ${maxPixels} pixels`),
  fileTooLarge: (limitBytes: number) =>
    new AppError(
      'file_too_large',
      `The file is larger than ${limitBytes} bytes (${limitBytes / 1048576} MiB)`,
    ),
  rateLimited: (retryInSeconds: number) =>
    new AppError('rate_limited', `Too many requests; try again in ${retryInSeconds} s`),
  unavailable: (of: OutageOf) =>
    new AppError(
      'unavailable',
      `${of === 'database' ? 'The database' : 'The rate limits’ store (Redis)'} cannot be reached right now; try again in ${OUTAGE_RETRY_AFTER_SECONDS} s`,
      undefined,
      retryAfterOutage,
    ),
  unhealthy: (reason: string) => new AppError('unhealthy', reason, undefined, retryAfterOutage),
};

/** docs/api.md's table of error codes, grouped by status. */
export function errorCodesMarkdownTable(): string {
  const rows = Object.entries(ERROR_CODES).map(
    ([code, [status, meaning]]) => `| ${status} | \`${code}\` | ${meaning} |`,
  );
  return ['| Status | Code | Meaning |', '|---|---|---|', ...rows].join('\n');
}
