import type { CachedKind, MediaDatabase } from './mediaDatabase.js';

/**
 * Attachment files kept on the device for offline use (docs/webapp.md "Images"): thumbnails as
 * cards show them, originals once viewed, each kind within its own budget, least recently shown
 * evicted first. Attachment bytes never change under an id (D-ATT-4), so a cached file is never
 * revalidated.
 */
const BUDGETS: Record<CachedKind, number> = {
  thumbnail: 50 * 1024 * 1024,
  original: 200 * 1024 * 1024,
};

interface MediaCacheOptions {
  db: MediaDatabase;
  baseUrl: string;
  fetch?: typeof fetch;
  budgets?: Record<CachedKind, number>;
  now?: () => number;
}

export class MediaCache {
  private readonly fetcher: typeof fetch;
  private readonly budgets: Record<CachedKind, number>;
  private readonly now: () => number;

  constructor(private readonly options: MediaCacheOptions) {
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.budgets = options.budgets ?? BUDGETS;
    this.now = options.now ?? Date.now;
  }

  /** The file from the device, else from the server (then kept); null when neither has it. */
  async get(noteId: string, attachmentId: string, kind: CachedKind): Promise<Blob | null> {
    const key = `${kind}:${attachmentId}`;
    const cached = await this.options.db.get('blobs', key);
    if (cached) {
      await this.options.db.put('blobs', { ...cached, usedAt: this.now() });
      return cached.blob;
    }
    const query = `attachmentId=${encodeURIComponent(attachmentId)}${kind === 'thumbnail' ? '&thumb=1' : ''}`;
    let response: Response;
    try {
      response = await this.fetcher(
        `${this.options.baseUrl}/api/notes/${encodeURIComponent(noteId)}/attachments?${query}`,
        { credentials: 'same-origin' },
      );
    } catch {
      return null;
    }
    if (!response.ok) return null;
    const blob = await response.blob();
    await this.put(attachmentId, kind, blob);
    return blob;
  }

  async put(attachmentId: string, kind: CachedKind, blob: Blob): Promise<void> {
    await this.options.db.put('blobs', {
      key: `${kind}:${attachmentId}`,
      kind,
      blob,
      size: blob.size,
      usedAt: this.now(),
    });
    await this.evict(kind);
  }

  /** Bytes kept of one kind. */
  async usage(kind: CachedKind): Promise<number> {
    const all = await this.options.db.getAll('blobs');
    return all.filter((entry) => entry.kind === kind).reduce((sum, entry) => sum + entry.size, 0);
  }

  private async evict(kind: CachedKind): Promise<void> {
    const tx = this.options.db.transaction('blobs', 'readwrite');
    const oldestFirst = (await tx.store.index('usedAt').getAll()).filter((entry) => entry.kind === kind);
    let total = oldestFirst.reduce((sum, entry) => sum + entry.size, 0);
    const deletes: Promise<unknown>[] = [];
    for (const entry of oldestFirst) {
      if (total <= this.budgets[kind]) break;
      total -= entry.size;
      deletes.push(tx.store.delete(entry.key));
    }
    await Promise.all([...deletes, tx.done]);
  }
}
