import { Image, LayoutGrid, LayoutList, ListChecks, Menu, Search, Tag, X } from 'lucide-preact';
import { filters, labels, layout, query, searchOpen, selection, toggleLayout } from '../app/state.js';
import { COLORS } from '../model/colors.js';
import { hasFilters } from '../model/search.js';
import type { LocalNote } from '../sync/index.js';
import { IconButton } from './IconButton.js';
import { memo } from './memo.js';
import { NoteActions } from './NoteActions.js';
import { AccountMenu } from './SignOut.js';
import { SyncIndicator } from './SyncIndicator.js';

interface Props {
  onMenu: () => void;
  selected: LocalNote[];
}

/**
 * Memoised, with the search box bound to the `query` signal itself: the app re-renders on every
 * keystroke, and the bar need not (decision 0018).
 */
export const TopBar = memo(function TopBar({ onMenu, selected }: Props) {
  if (selected.length > 0) {
    return (
      <header class="topbar selecting">
        <IconButton label="Clear selection" onClick={() => (selection.value = new Set())}>
          <X size={20} />
        </IconButton>
        <span class="selected-count">{selected.length} selected</span>
        <span class="spacer" />
        <NoteActions notes={selected} />
      </header>
    );
  }
  return (
    <header class="topbar">
      <IconButton label="Main menu" onClick={onMenu}>
        <Menu size={20} />
      </IconButton>
      <span class="brand">Notes</span>
      <search class="search">
        <Search size={18} aria-hidden="true" />
        <input
          type="search"
          aria-label="Search"
          placeholder="Search"
          value={query}
          onFocus={() => (searchOpen.value = true)}
          onInput={(event) => (query.value = event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Escape') {
              query.value = '';
              filters.value = {};
              searchOpen.value = false;
              event.currentTarget.blur();
            }
          }}
        />
      </search>
      <SyncIndicator />
      <IconButton label={layout.value === 'grid' ? 'List view' : 'Grid view'} onClick={toggleLayout}>
        {layout.value === 'grid' ? <LayoutList size={20} /> : <LayoutGrid size={20} />}
      </IconButton>
      <AccountMenu />
    </header>
  );
});

/**
 * Search filters: lists, images, a label, a colour. Shown while searching, and as soon as the
 * empty search box is focused, as in Keep (issue 30 item 15).
 */
export function SearchFilters() {
  const current = filters.value;
  const toggle = (change: Partial<typeof current>) => (filters.value = { ...current, ...change });
  return (
    <fieldset class="filters">
      <legend class="visually-hidden">Filters</legend>
      <button
        type="button"
        class="chip-button"
        aria-pressed={Boolean(current.lists)}
        onClick={() => toggle({ lists: !current.lists })}
      >
        <ListChecks size={16} aria-hidden="true" /> Lists
      </button>
      <button
        type="button"
        class="chip-button"
        aria-pressed={Boolean(current.images)}
        onClick={() => toggle({ images: !current.images })}
      >
        <Image size={16} aria-hidden="true" /> Images
      </button>
      {labels.value.map((label) => (
        <button
          type="button"
          key={label}
          class="chip-button"
          aria-pressed={current.label === label}
          onClick={() => toggle({ label: current.label === label ? null : label })}
        >
          <Tag size={16} aria-hidden="true" /> {label}
        </button>
      ))}
      {COLORS.map((color) => (
        <button
          type="button"
          key={color.value}
          class={`swatch small note-${color.value}`}
          aria-label={`${color.name} notes`}
          title={`${color.name} notes`}
          aria-pressed={current.color === color.value}
          onClick={() => toggle({ color: current.color === color.value ? null : color.value })}
        />
      ))}
      {hasFilters(current) && (
        <button type="button" class="text-button" onClick={() => (filters.value = {})}>
          Clear filters
        </button>
      )}
    </fieldset>
  );
}
