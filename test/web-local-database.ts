import type { Page } from 'playwright-core';

/**
 * Holds the app's local database with a transaction that stays open (as a sync writing pulled
 * notes does, on a slow device), so that the app's writes wait. The returned function lets go
 * and resolves once the writes that waited have run and the page has drawn two frames since.
 */
export async function holdLocalDatabase(page: Page): Promise<() => Promise<void>> {
  await page.evaluate(async () => {
    const stored = (await indexedDB.databases()).find((each) => each.name?.startsWith('keepsake-u'));
    const db = await new Promise<IDBDatabase>((resolve) => {
      indexedDB.open(stored!.name!).onsuccess = (event) => resolve((event.target as IDBOpenDBRequest).result);
    });
    const notes = db.transaction('notes', 'readwrite').objectStore('notes');
    const held = window as unknown as { holding: IDBDatabase | null };
    held.holding = db;
    // Asks again whenever an answer comes, so that the transaction stays open.
    void (async () => {
      while (held.holding) await new Promise((answered) => (notes.count().onsuccess = answered));
    })();
  });
  return () =>
    page.evaluate(async () => {
      const held = window as unknown as { holding: IDBDatabase | null };
      const db = held.holding!;
      held.holding = null;
      // Transactions on one store run in the order they were made: this one runs after them.
      await new Promise((done) => (db.transaction('notes', 'readwrite').oncomplete = done));
      db.close();
      await new Promise((drawn) => requestAnimationFrame(drawn));
      await new Promise((drawn) => requestAnimationFrame(drawn));
    });
}
