/*
 * Reminders that ring with the app closed (docs/reminders.md): the server's Web Push arrives here
 * (this script is imported into the generated service worker, web/vite.config.ts) as JSON
 * { type: "reminder", noteId, title, dueAt }. The notification names the note; a click opens
 * the note (/?note=<id>, web/src/app/launch.ts), in an open tab when there is one. Its actions
 * write as the signed-in user (the session cookie): "Done" removes a one-off reminder that rang
 * (POST /api/reminders/<id>/done, which leaves a repeat or a reminder changed since alone),
 * "Snooze" sets the reminder an hour after the click.
 *
 * Offline, an action waits in the cache "keepsake-reminder-actions" and is sent again on the
 * browser's background sync, on the app's next start or return online (web/src/main.tsx) and on
 * the next push. Both actions are safe to send twice.
 */
const SNOOZE_MS = 60 * 60 * 1000;
const ACTIONS_CACHE = 'keepsake-reminder-actions';
const ACTIONS_SYNC = 'reminder-actions';

/** Sends an action; false when it should be tried again (offline, or the server failed). */
async function deliver(action) {
  try {
    const answer = await fetch(action.url, {
      method: action.method,
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(action.body),
    });
    // A 4xx (signed out, the note gone) will not change by sending it again.
    return answer.status < 500;
  } catch {
    return false;
  }
}

async function perform(action) {
  if (await deliver(action)) return;
  const cache = await caches.open(ACTIONS_CACHE);
  await cache.put(`/reminder-actions/${Date.now()}-${crypto.randomUUID()}`, Response.json(action));
  await self.registration.sync?.register(ACTIONS_SYNC).catch(() => undefined);
}

/** Sends the waiting actions in the order they were made; throws while some still wait. */
async function sendWaiting() {
  const cache = await caches.open(ACTIONS_CACHE);
  const keys = (await cache.keys()).sort((a, b) => a.url.localeCompare(b.url, 'en', { numeric: true }));
  let waiting = 0;
  for (const key of keys) {
    const response = await cache.match(key);
    if (response && !(await deliver(await response.json()))) waiting++;
    else await cache.delete(key);
  }
  if (waiting > 0) throw new Error(`${waiting} reminder action(s) still wait for the server`);
}

const sendWaitingQuietly = () => sendWaiting().catch(() => undefined);

self.addEventListener('sync', (event) => {
  if (event.tag === ACTIONS_SYNC) event.waitUntil(sendWaiting());
});

self.addEventListener('message', (event) => {
  if (event.data?.type === ACTIONS_SYNC) event.waitUntil(sendWaitingQuietly());
});

self.addEventListener('push', (event) => {
  let message;
  try {
    message = event.data ? event.data.json() : null;
  } catch {
    message = null;
  }
  if (message?.type !== 'reminder') return;
  event.waitUntil(
    Promise.all([
      self.registration.showNotification(message.title || 'Reminder', {
        body: 'Reminder',
        tag: `reminder-${message.noteId}`,
        icon: '/icon.svg',
        data: { noteId: message.noteId, dueAt: message.dueAt },
        actions: [
          { action: 'done', title: 'Done' },
          { action: 'snooze', title: 'Snooze' },
        ],
      }),
      sendWaitingQuietly(),
    ]),
  );
});

const notePath = (noteId) => `/api/notes/${encodeURIComponent(noteId)}`;

function done(noteId, dueAt) {
  return { url: `/api/reminders/${encodeURIComponent(noteId)}/done`, method: 'POST', body: { dueAt } };
}

function snooze(noteId) {
  const at = new Date(Date.now() + SNOOZE_MS).toISOString();
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return { url: notePath(noteId), method: 'PATCH', body: { reminder: { at, repeat: 'none', timeZone } } };
}

async function openNote(noteId) {
  const url = `/?note=${encodeURIComponent(noteId)}`;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
  if (open) {
    await open.navigate(url);
    return open.focus();
  }
  return self.clients.openWindow(url);
}

self.addEventListener('notificationclick', (event) => {
  const { noteId, dueAt } = event.notification.data || {};
  event.notification.close();
  if (!noteId) return;
  if (event.action === 'done') event.waitUntil(dueAt ? perform(done(noteId, dueAt)) : Promise.resolve());
  else if (event.action === 'snooze') event.waitUntil(perform(snooze(noteId)));
  else event.waitUntil(openNote(noteId));
});
