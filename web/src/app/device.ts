/**
 * What this browser holds of each account (docs/webapp.md "Shared computers"): the notes and
 * media databases of every user who signed in here, and the `keepsake:*` keys of the one who did
 * last. When someone else signs in, the others' data goes, except the changes the server does not
 * have yet: those stay, hidden, until their owner signs in again.
 */
import { databaseName } from '../sync/database.js';
import { countUnsynced, deleteLocalData, keepOnlyUnsynced } from '../sync/index.js';
import { deleteMediaDatabase, keepOnlyQueuedUploads, mediaDatabaseName } from '../sync/mediaDatabase.js';

/** Keys about the browser, not about anyone: they survive a change of account. */
const DEVICE_KEYS = new Set(['keepsake:insecure-notice-seen']);

/** Every `keepsake:*` key but the device's own. */
export function clearAccountKeys(): void {
  const keys = Array.from({ length: localStorage.length }, (_, index) => localStorage.key(index) ?? '');
  for (const key of keys)
    if (key.startsWith('keepsake:') && !DEVICE_KEYS.has(key)) localStorage.removeItem(key);
}

async function databasesOnDevice(): Promise<string[]> {
  return (await indexedDB.databases()).map((database) => database.name ?? '');
}

/** The users with a database in this browser (their notes' or their images'). */
async function usersOnDevice(): Promise<string[]> {
  const names = await databasesOnDevice();
  const users = new Set<string>();
  for (const name of names) {
    const user = /^keepsake-(?:media-)?u(.+)$/.exec(name)?.[1];
    if (user && (name === databaseName(user) || name === mediaDatabaseName(user))) users.add(user);
  }
  return [...users];
}

/** `userId` signed in: everybody else's data goes but their unsynced changes (kept hidden). */
export async function forgetOtherAccounts(userId: string): Promise<void> {
  clearAccountKeys();
  for (const other of await usersOnDevice()) {
    if (other === userId) continue;
    await keepOnlyUnsynced(indexedDB, other);
    await keepOnlyQueuedUploads(indexedDB, other);
  }
}

/** "Remove this account's data from this device": unsynced changes too (the person was told). */
export async function removeAccountData(userId: string): Promise<void> {
  clearAccountKeys();
  await deleteLocalData(userId);
  await deleteMediaDatabase(indexedDB, userId);
}

/** How many notes of the user have changes only this device holds (none loaded to count them). */
export async function unsyncedNotes(userId: string): Promise<number> {
  if (!(await databasesOnDevice()).includes(databaseName(userId))) return 0;
  return countUnsynced(indexedDB, userId);
}
