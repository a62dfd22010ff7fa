/**
 * Reminders in the web app (docs/reminders.md): which note's picker is open, setting and clearing
 * a reminder (an edit like any other: it goes through the outbox, so it works offline), the
 * in-app notices of reminders that fall due while the app is open, and turning on notifications
 * (Web Push through the service worker).
 */
import { signal } from '@preact/signals';
import { type Repeat, reminderAt, ringTime } from '../model/reminders.js';
import type { LocalNote, NoteReminder } from '../sync/index.js';
import { updateNotes } from './actions.js';
import { showSnackbar } from './state.js';

/** The note whose reminder picker is open. */
export const pickingReminderFor = signal<string | null>(null);

export async function setReminder(noteId: string, time: Date, repeat: Repeat): Promise<void> {
  await updateNotes([noteId], { reminder: reminderAt(time, repeat) });
}

export async function clearReminder(noteId: string): Promise<void> {
  await updateNotes([noteId], { reminder: null });
}

export interface ReminderNotice {
  key: string;
  noteId: string;
  title: string;
}

/** Reminders that fell due while the app was open, newest last. */
export const reminderNotices = signal<ReminderNotice[]>([]);

/**
 * Watches the notes' reminders and adds a notice when one falls due: compared with the ring time
 * this device saw before (the server moves nextAt on once it rang, and the pull may come first).
 */
export function watchReminders(
  notes: () => Iterable<LocalNote>,
  title: (note: LocalNote) => string,
  now = Date.now,
): () => void {
  const openedAt = now();
  const seen = new Map<string, number>();
  const shown = new Set<string>();
  const check = () => {
    const time = now();
    for (const note of notes()) {
      const reminder: NoteReminder | null = note.trashed ? null : note.reminder;
      if (!reminder) {
        seen.delete(note.id);
        continue;
      }
      const current = ringTime(reminder);
      for (const due of new Set([seen.get(note.id), current])) {
        const key = `${note.id}:${due}`;
        if (due === undefined || due <= openedAt || due > time || shown.has(key)) continue;
        shown.add(key);
        reminderNotices.value = [...reminderNotices.value, { key, noteId: note.id, title: title(note) }];
      }
      seen.set(note.id, current);
    }
  };
  check();
  const timer = setInterval(check, 1_000);
  return () => clearInterval(timer);
}

export function dismissNotice(key: string): void {
  reminderNotices.value = reminderNotices.value.filter((notice) => notice.key !== key);
}

const base64urlBytes = (text: string) =>
  Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));

/**
 * Asks for permission (from the person's click), subscribes this browser through the service
 * worker with the server's VAPID key, and registers the subscription.
 */
export async function enableNotifications(): Promise<void> {
  try {
    if (!('Notification' in window) || !('serviceWorker' in navigator)) {
      throw new Error('This browser cannot show notifications');
    }
    if ((await Notification.requestPermission()) !== 'granted') throw new Error('Notifications are blocked');
    const { publicKey } = await (await fetch('/api/push/public-key')).json();
    const registration = await navigator.serviceWorker.ready;
    const subscription =
      (await registration.pushManager.getSubscription()) ??
      (await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64urlBytes(publicKey),
      }));
    const answer = await fetch('/api/push/subscriptions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(subscription),
    });
    if (!answer.ok) throw new Error('The server did not take the subscription');
    showSnackbar('Notifications are on');
  } catch (failure) {
    showSnackbar(
      `Notifications could not be turned on: ${failure instanceof Error ? failure.message : failure}`,
    );
  }
}
