import { useSignal } from '@preact/signals';
import { Bell, BellPlus } from 'lucide-preact';
import { useEffect } from 'preact/hooks';
import {
  clearReminder,
  dismissNotice,
  enableNotifications,
  pickingReminderFor,
  reminderNotices,
  setReminder,
  watchReminders,
} from '../app/reminders.js';
import { editing, noteById, sortedNotes } from '../app/state.js';
import { chipText, hasRung, presetTimes, REPEAT_CHOICES, type Repeat, ringTime } from '../model/reminders.js';
import type { LocalNote } from '../sync/index.js';
import { IconButton } from './IconButton.js';
import { Modal } from './Modal.js';
import { noteName } from './NoteText.js';

/** "Remind me": opens the reminder picker for the note (cards and editor). */
export function RemindButton({ note }: { note: LocalNote }) {
  return (
    <IconButton label="Remind me" onClick={() => (pickingReminderFor.value = note.id)}>
      <BellPlus size={18} />
    </IconButton>
  );
}

/** The reminder on a card: "Tomorrow, 08:00", struck through once rung; opens the picker. */
export function ReminderChip({ note }: { note: LocalNote }) {
  const reminder = note.reminder;
  // Drawn again when its time comes, so it is struck through then (cards are memoised).
  const due = useSignal(0);
  due.value;
  const ringsAt = reminder ? ringTime(reminder) : Number.NaN;
  useEffect(() => {
    const wait = ringsAt - Date.now();
    if (!(wait > 0 && wait < 2 ** 31 - 1)) return;
    const timer = setTimeout(() => due.value++, wait + 50);
    return () => clearTimeout(timer);
  }, [ringsAt]);
  if (!reminder || note.trashed) return null;
  const now = new Date();
  const rung = hasRung(reminder, now.getTime());
  const text = chipText(reminder, now);
  return (
    <button
      type="button"
      class={`reminder-chip${rung ? ' rung' : ''}`}
      title={rung ? `Reminder rang: ${text}` : `Reminder: ${text}`}
      onClick={(event) => {
        event.stopPropagation();
        pickingReminderFor.value = note.id;
      }}
    >
      <Bell size={14} aria-hidden="true" />
      {rung ? <s>{text}</s> : <span>{text}</span>}
      {reminder.repeat !== 'none' && <span class="visually-hidden"> (repeats {reminder.repeat})</span>}
    </button>
  );
}

/** The picker: Keep's presets, a date and time of one's own, and a repeat. */
export function ReminderPicker() {
  const noteId = pickingReminderFor.value;
  if (!noteId) return null;
  return <Picker key={noteId} noteId={noteId} />;
}

const localInputValue = (time: Date) => {
  const shifted = new Date(time.getTime() - time.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
};

function Picker({ noteId }: { noteId: string }) {
  const note = noteById(noteId);
  const repeat = useSignal<Repeat>(note?.reminder?.repeat ?? 'none');
  const picking = useSignal(false);
  const custom = useSignal(localInputValue(presetTimes(new Date()).tomorrow));
  const close = () => (pickingReminderFor.value = null);
  const choose = (time: Date) => {
    void setReminder(noteId, time, repeat.value);
    close();
  };
  const presets = presetTimes(new Date());
  const hours = (time: Date) =>
    time.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
  return (
    <Modal title="Remind me" onClose={close}>
      <div class="reminder-picker">
        <button type="button" class="menu-item" onClick={() => choose(presets.laterToday)}>
          <span>Later today</span>
          <span class="hint" aria-hidden="true">
            {hours(presets.laterToday)}
          </span>
        </button>
        <button type="button" class="menu-item" onClick={() => choose(presets.tomorrow)}>
          <span>Tomorrow</span>
          <span class="hint" aria-hidden="true">
            {hours(presets.tomorrow)}
          </span>
        </button>
        <button type="button" class="menu-item" onClick={() => choose(presets.nextWeek)}>
          <span>Next week</span>
          <span class="hint" aria-hidden="true">
            {presets.nextWeek.toLocaleDateString(undefined, { weekday: 'short' })}, {hours(presets.nextWeek)}
          </span>
        </button>
        <button
          type="button"
          class="menu-item"
          aria-expanded={picking.value}
          onClick={() => (picking.value = !picking.value)}
        >
          Pick date &amp; time
        </button>
        {picking.value && (
          <form
            class="reminder-custom"
            onSubmit={(event) => {
              event.preventDefault();
              const time = new Date(custom.value);
              if (!Number.isNaN(time.getTime())) choose(time);
            }}
          >
            <label>
              Date and time
              <input
                type="datetime-local"
                required
                value={custom.value}
                onInput={(event) => (custom.value = event.currentTarget.value)}
              />
            </label>
            <button type="submit" class="text-button">
              Save
            </button>
          </form>
        )}
        <label class="reminder-repeat">
          Repeat
          <select
            value={repeat.value}
            onChange={(event) => (repeat.value = event.currentTarget.value as Repeat)}
          >
            {REPEAT_CHOICES.map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        {note?.reminder && (
          <button
            type="button"
            class="text-button"
            onClick={() => {
              void clearReminder(noteId);
              close();
            }}
          >
            Remove reminder
          </button>
        )}
      </div>
    </Modal>
  );
}

/** Notices of reminders that fall due while the app is open: an alert naming the note. */
export function ReminderNotices() {
  useEffect(() => watchReminders(() => sortedNotes.value, noteName), []);
  const notices = reminderNotices.value;
  if (notices.length === 0) return null;
  return (
    <div class="reminder-notices">
      {notices.map((notice) => (
        <div key={notice.key} role="alert" class="reminder-notice">
          <Bell size={18} aria-hidden="true" />
          <span>Reminder: {notice.title}</span>
          <button
            type="button"
            class="text-button"
            onClick={() => {
              editing.value = notice.noteId;
              dismissNotice(notice.key);
            }}
          >
            Open
          </button>
          <button type="button" class="text-button" onClick={() => dismissNotice(notice.key)}>
            Dismiss
          </button>
        </div>
      ))}
    </div>
  );
}

/** The Reminders view's header: notifications are turned on from here (a click asks permission). */
export function RemindersBar() {
  const permission = 'Notification' in window ? Notification.permission : 'denied';
  return (
    <div class="trash-bar">
      <p>Your reminders, the next to ring first. They ring on every device where notifications are on.</p>
      {permission !== 'granted' && (
        <button type="button" class="text-button" onClick={() => void enableNotifications()}>
          Turn on notifications
        </button>
      )}
    </div>
  );
}
