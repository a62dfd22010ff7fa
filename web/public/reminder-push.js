/*
 * Reminders that ring with the app closed (docs/reminders.md): the server's Web Push arrives here
 * (this script is imported into the generated service worker, web/vite.config.ts) as JSON
 * { type: "reminder", noteId, title }. The notification names the note; "Done" closes it,
 * "Snooze" sets the reminder an hour later (as the signed-in user, with the session cookie), and
 * a click opens the note (/?note=<id>, web/src/app/launch.ts), in an open tab when there is one.
 */
const SNOOZE_MS = 60 * 60 * 1000;

self.addEventListener('push', (event) => {
  let message;
  try {
    message = event.data ? event.data.json() : null;
  } catch {
    message = null;
  }
  if (message?.type !== 'reminder') return;
  event.waitUntil(
    self.registration.showNotification(message.title || 'Reminder', {
      body: 'Reminder',
      tag: `reminder-${message.noteId}`,
      icon: '/icon.svg',
      data: { noteId: message.noteId },
      actions: [
        { action: 'done', title: 'Done' },
        { action: 'snooze', title: 'Snooze' },
      ],
    }),
  );
});

async function snooze(noteId) {
  const at = new Date(Date.now() + SNOOZE_MS).toISOString();
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  await fetch(`/api/notes/${encodeURIComponent(noteId)}`, {
    method: 'PATCH',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reminder: { at, repeat: 'none', timeZone } }),
  });
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
  const { noteId } = event.notification.data || {};
  event.notification.close();
  if (!noteId || event.action === 'done') return;
  event.waitUntil(event.action === 'snooze' ? snooze(noteId) : openNote(noteId));
});
