/**
 * Notes are private: whatever the server creates under DATA_DIR (database, attachments,
 * uploads in progress) is readable by its own system user only, whatever the umask
 * (docs/decisions/0008-resource-limits.md). Existing files and directories keep their modes.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;
