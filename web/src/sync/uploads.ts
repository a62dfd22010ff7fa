import type { MediaDatabase, QueuedUpload } from './mediaDatabase.js';
import type { ServerAttachment, Timers } from './types.js';

/**
 * Images added on this device, uploaded once their note exists on the server and retried with a
 * growing delay until they land (docs/webapp.md "Images"). The queue lives in IndexedDB, so an
 * image added offline survives a reload; its Blob is what the app shows until the server has it.
 */

/** The first retry waits this long, each next one twice as long, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 1_000;
export const RETRY_MAX_MS = 60_000;

export function retryDelay(attempts: number): number {
  return Math.min(RETRY_FIRST_MS * 2 ** Math.max(0, attempts - 1), RETRY_MAX_MS);
}

export interface UploadQueueOptions {
  db: MediaDatabase;
  /** '' in the browser (same origin). */
  baseUrl: string;
  fetch?: typeof fetch;
  /** Whether the note has reached the server (a note made on this device waits for its push). */
  onServer: (noteId: string) => boolean;
  /** The queue changed (added, landed, given up): re-render. */
  onChange: () => void;
  /** The server has the image: cache its thumbnail, pull the note. */
  onLanded?: (upload: QueuedUpload, attachment: ServerAttachment) => void;
  /** The server refused the image for good (not an image, too large, note gone). */
  onRefused?: (upload: QueuedUpload, message: string) => void;
  /** null: no automatic retries (tests call run()). */
  timers?: Pick<Timers, 'setTimeout' | 'clearTimeout'> | null;
  now?: () => number;
}

type Outcome = { landed: ServerAttachment } | { retry: true } | { refused: string };

export class UploadQueue {
  private uploads = new Map<string, QueuedUpload>();
  private running: Promise<void> | null = null;
  private again = false;
  private timer: unknown = null;
  private closed = false;
  private readonly fetcher: typeof fetch;
  private readonly timers: UploadQueueOptions['timers'];
  private readonly now: () => number;

  private constructor(private readonly options: UploadQueueOptions) {
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.timers = options.timers === undefined ? globalThis : options.timers;
    this.now = options.now ?? Date.now;
  }

  static async open(options: UploadQueueOptions): Promise<UploadQueue> {
    const queue = new UploadQueue(options);
    for (const upload of await options.db.getAll('uploads')) queue.uploads.set(upload.id, upload);
    return queue;
  }

  /** Every image not yet shown by a pulled note, oldest first. */
  all(): QueuedUpload[] {
    return [...this.uploads.values()].sort((a, b) => a.addedAt - b.addedAt);
  }

  forNote(noteId: string): QueuedUpload[] {
    return this.all().filter((upload) => upload.noteId === noteId);
  }

  async add(
    upload: Pick<QueuedUpload, 'noteId' | 'file' | 'filename' | 'thumbnail' | 'width' | 'height'>,
  ): Promise<QueuedUpload> {
    const queued: QueuedUpload = {
      ...upload,
      id: crypto.randomUUID(),
      addedAt: this.now(),
      attempts: 0,
      notBefore: 0,
    };
    await this.options.db.put('uploads', queued);
    this.uploads.set(queued.id, queued);
    this.options.onChange();
    void this.run();
    return queued;
  }

  /** "Delete image" before it landed: it is never sent. */
  async remove(id: string): Promise<void> {
    await this.options.db.delete('uploads', id);
    this.uploads.delete(id);
    this.options.onChange();
  }

  /**
   * A pull brought notes: a landed image leaves the queue once its note shows the attachment, or
   * once the note is gone from the device.
   */
  async settle(attachmentsOf: (noteId: string) => readonly ServerAttachment[] | undefined): Promise<void> {
    const done = this.all().filter((upload) => {
      const attachments = attachmentsOf(upload.noteId);
      if (!attachments) return upload.attachmentId !== undefined;
      return attachments.some((attachment) => attachment.id === upload.attachmentId);
    });
    if (done.length === 0) return;
    const tx = this.options.db.transaction('uploads', 'readwrite');
    await Promise.all([...done.map((upload) => tx.store.delete(upload.id)), tx.done]);
    for (const upload of done) this.uploads.delete(upload.id);
    this.options.onChange();
  }

  /** Sends every image that is due; one run at a time (a call during a run runs again after it). */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.sendDue();
      } while (this.again && !this.closed);
      this.running = null;
      this.schedule();
    })();
    return this.running;
  }

  /**
   * The server answered again (a sync went through, the network is back): images waiting out a
   * delay are sent now rather than when their delay ends.
   */
  async retryNow(): Promise<void> {
    const waiting = this.all().filter((upload) => upload.attachmentId === undefined && upload.notBefore > 0);
    for (const upload of waiting) await this.store({ ...upload, notBefore: 0 });
    await this.run();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) this.timers?.clearTimeout(this.timer);
  }

  private due(): QueuedUpload[] {
    return this.all().filter(
      (upload) =>
        upload.attachmentId === undefined &&
        upload.notBefore <= this.now() &&
        this.options.onServer(upload.noteId),
    );
  }

  private async sendDue(): Promise<void> {
    for (const upload of this.due()) {
      if (this.closed) return;
      const outcome = await this.send(upload);
      if (!this.uploads.has(upload.id)) continue; // removed while it was being sent
      if ('retry' in outcome) {
        const attempts = upload.attempts + 1;
        await this.store({ ...upload, attempts, notBefore: this.now() + retryDelay(attempts) });
        // Unreachable: the next images would fail the same way; wait for the next run.
        return;
      }
      if ('landed' in outcome) {
        const landed = { ...upload, attachmentId: outcome.landed.id };
        await this.store(landed);
        this.options.onLanded?.(landed, outcome.landed);
      } else {
        await this.remove(upload.id);
        this.options.onRefused?.(upload, outcome.refused);
      }
      this.options.onChange();
    }
  }

  private async store(upload: QueuedUpload): Promise<void> {
    await this.options.db.put('uploads', upload);
    this.uploads.set(upload.id, upload);
  }

  private async send(upload: QueuedUpload): Promise<Outcome> {
    const body = new FormData();
    body.append('file', upload.file, upload.filename);
    if (upload.thumbnail) body.append('thumbnail', upload.thumbnail, 'thumbnail.webp');
    let response: Response;
    try {
      response = await this.fetcher(
        `${this.options.baseUrl}/api/notes/${encodeURIComponent(upload.noteId)}/attachments`,
        { method: 'POST', body, credentials: 'same-origin' },
      );
    } catch {
      return { retry: true };
    }
    if (response.status === 201) return { landed: (await response.json()) as ServerAttachment };
    const answer = (await response.json().catch(() => ({}))) as { message?: string };
    // Server down or busy, session gone (kept until the person signs in again).
    if (response.status >= 500 || response.status === 429 || response.status === 401) return { retry: true };
    return { refused: answer.message ?? `the server answered ${response.status}` };
  }

  private schedule(): void {
    if (this.closed || !this.timers) return;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    const waiting = this.all().filter((upload) => upload.attachmentId === undefined && upload.attempts > 0);
    if (waiting.length === 0) return;
    const next = Math.min(...waiting.map((upload) => upload.notBefore));
    this.timer = this.timers.setTimeout(
      () => {
        this.timer = null;
        void this.run();
      },
      Math.max(0, next - this.now()),
    );
  }
}
