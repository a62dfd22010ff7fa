/**
 * Who else has an open note open (issue 28, "Alice is here"): pure rules; components/Editor.tsx
 * holds the state. Nobody keeps presence on the server: whoever has the note open says so when
 * opening it, every ANNOUNCE_EVERY_MS, and again when someone new arrives, and says goodbye on
 * closing; a claim not renewed within LAPSES_AFTER_MS (a crashed tab) lapses.
 */
import type { NotePresence } from '../sync/index.js';

export const ANNOUNCE_EVERY_MS = 30_000;
export const LAPSES_AFTER_MS = 75_000;

/** By user id: their name, and until when their claim holds (Unix ms). */
export type Here = ReadonlyMap<number, { name: string; until: number }>;

/** `here` after `event`; `arrived`: someone not here before came (they need to hear of us). */
export function withPresence(here: Here, event: NotePresence, now: number): { here: Here; arrived: boolean } {
  const next = new Map(here);
  const known = next.has(event.userId);
  if (event.here) next.set(event.userId, { name: event.name, until: now + LAPSES_AFTER_MS });
  else next.delete(event.userId);
  return { here: next, arrived: event.here && !known };
}

/** `here` without the claims that lapsed by `now` (the same map when none did). */
export function withoutLapsed(here: Here, now: number): Here {
  const kept = [...here].filter(([, claim]) => claim.until > now);
  return kept.length === here.size ? here : new Map(kept);
}

/** "Alice is here", "Alice and Bob are here", "Alice, Bob and Carol are here"; '' for nobody. */
export function presenceText(here: Here): string {
  const names = [...here.values()].map((claim) => claim.name || 'Someone');
  if (names.length === 0) return '';
  if (names.length === 1) return `${names[0]} is here`;
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)} are here`;
}
