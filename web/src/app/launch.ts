/**
 * What the app was opened for, besides the notes: an app shortcut (`/?new=note`, `/?new=list`,
 * web/vite.config.ts) or something shared into it (`/?share=<id>`, kept by the service worker
 * in web/public/share-target.js). Handled once; the address goes back to `/`.
 */
import { composerRequest } from './shortcuts.js';
import { editing, engine, showSnackbar } from './state.js';

/** web/public/share-target.js */
const SHARE_CACHE = 'keepsake-share';

interface Shared {
  title: string;
  text: string;
  url: string;
  files: number;
}

/** The shared text and link as a note's content (apps often put the link in the text too). */
export function sharedContent({ text, url }: Pick<Shared, 'text' | 'url'>): string {
  return [text.trim(), text.includes(url) ? '' : url.trim()].filter(Boolean).join('\n');
}

export async function handleLaunch(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const requested = params.get('new');
  const shareId = params.get('share');
  // A notification's or calendar event's link to a note (docs/reminders.md).
  const noteId = params.get('note');
  if (!requested && !shareId && !noteId) return;
  history.replaceState(null, '', '/');
  if (noteId) editing.value = noteId;
  if (requested) composerRequest.value = { list: requested === 'list' };
  if (shareId) await openShared(shareId);
}

async function openShared(id: string): Promise<void> {
  const current = engine.value;
  if (!current || !('caches' in window)) return;
  const cache = await caches.open(SHARE_CACHE);
  const response = await cache.match(`/share/${id}`);
  if (!response) return;
  const shared: Shared = await response.json();
  const note = await current.create({ title: shared.title.trim(), content: sharedContent(shared) });
  editing.value = note.id;
  await cache.delete(`/share/${id}`);
  if (shared.files > 0) await uploadSharedImages(cache, id, note.id, shared.files);
}

/** Images go to the server once the note is there (attachments are not part of the sync). */
async function uploadSharedImages(cache: Cache, id: string, noteId: string, count: number) {
  await engine.value?.syncNow();
  let failed = 0;
  for (let index = 0; index < count; index++) {
    const key = `/share/${id}/file/${index}`;
    const file = await cache.match(key);
    if (!file) continue;
    const form = new FormData();
    const name = decodeURIComponent(file.headers.get('x-filename') ?? 'shared-image');
    form.append('file', await file.blob(), name);
    const answer = await fetch(`/api/notes/${encodeURIComponent(noteId)}/attachments`, {
      method: 'POST',
      body: form,
    }).catch(() => null);
    if (answer?.ok) await cache.delete(key);
    else failed++;
  }
  if (failed > 0) showSnackbar(`${failed} shared image(s) could not be added: the server did not take them`);
  await engine.value?.syncNow();
}
