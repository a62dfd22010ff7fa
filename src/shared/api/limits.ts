/**
 * The API's limits (docs/interface.md#limits), apart from the schemas that enforce them so that
 * the web app can import them without bundling the schema library.
 */
export const MAX_TITLE_LENGTH = 1_000; // D-ERR-5
export const MAX_CONTENT_LENGTH = 1_000_000; // D-ERR-5
export const MAX_SYNC_CHANGES = 1_000; // D-ERR-5
export const MIN_PASSWORD_LENGTH = 8; // docs/interface.md#limits
export const MAX_PASSWORD_LENGTH = 1_024; // D-AUTH-7
