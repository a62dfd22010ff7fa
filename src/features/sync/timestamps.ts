/** How far ahead of the server's clock a device's clock may run before its stamps are capped. */
export const MAX_CLOCK_LEAD_MS = 5 * 60_000;

/**
 * The changes of a push with every timestamp more than MAX_CLOCK_LEAD_MS after `now` replaced by
 * `now`. Fields are won by the latest stamp (D-SYNC-5), so a device whose clock runs years ahead
 * would otherwise lock every field it writes against everyone's edits until that date.
 */
export function capFutureTimestamps<T extends { timestamp: number }>(
  changes: readonly T[],
  now: number,
): T[] {
  return changes.map((change) =>
    change.timestamp > now + MAX_CLOCK_LEAD_MS ? { ...change, timestamp: now } : change,
  );
}
