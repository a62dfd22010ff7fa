import { Archive, Bell, Lightbulb, Pencil, Settings, Tag, Trash2, Users } from 'lucide-preact';
import type { ComponentChildren } from 'preact';
import { allLabelNames, editingLabels } from '../app/labels.js';
import { currentUser } from '../app/session.js';
import { navigate, pathOf, type Route, route } from '../app/state.js';
import { memo } from './memo.js';

function NavLink({ to, children, label }: { to: Route; children: ComponentChildren; label: string }) {
  const current = pathOf(route.value) === pathOf(to);
  return (
    <a
      href={pathOf(to)}
      class={current ? 'current' : ''}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
      <span>{label}</span>
    </a>
  );
}

/**
 * Notes, the labels (the hashtags of the notes), Archive, Trash, Settings and (owner) Users.
 * Memoised: the app re-renders on every keystroke in the search box, and this does not change with it.
 */
export const Sidebar = memo(function Sidebar({ open }: { open: boolean }) {
  return (
    <nav class={`sidebar${open ? ' open' : ''}`} aria-label="Main">
      <NavLink to={{ view: 'notes' }} label="Notes">
        <Lightbulb size={20} aria-hidden="true" />
      </NavLink>
      <NavLink to={{ view: 'reminders' }} label="Reminders">
        <Bell size={20} aria-hidden="true" />
      </NavLink>
      {allLabelNames.value.map((label) => (
        <NavLink key={label} to={{ view: 'label', label }} label={label}>
          <Tag size={20} aria-hidden="true" />
        </NavLink>
      ))}
      <button type="button" class="nav-button" onClick={() => (editingLabels.value = true)}>
        <Pencil size={20} aria-hidden="true" />
        <span>Edit labels</span>
      </button>
      <NavLink to={{ view: 'archive' }} label="Archive">
        <Archive size={20} aria-hidden="true" />
      </NavLink>
      <NavLink to={{ view: 'trash' }} label="Trash">
        <Trash2 size={20} aria-hidden="true" />
      </NavLink>
      <NavLink to={{ view: 'settings' }} label="Settings">
        <Settings size={20} aria-hidden="true" />
      </NavLink>
      {currentUser.value?.isOwner && (
        <NavLink to={{ view: 'admin' }} label="Users">
          <Users size={20} aria-hidden="true" />
        </NavLink>
      )}
    </nav>
  );
});

/** The labels offered by "Add label" in the editor (a datalist), memoised like Sidebar. */
export const LabelSuggestions = memo(function LabelSuggestions() {
  return (
    <datalist id="label-suggestions">
      {allLabelNames.value.map((label) => (
        <option key={label} value={label} />
      ))}
    </datalist>
  );
});
