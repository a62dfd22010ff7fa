/**
 * @tanstack/virtual-core over the window's scroll, for Preact (TanStack's adapters are for React
 * and others; React's would need preact/compat, whose option hooks run for every element of every
 * render, decision 0018). What its React adapter does, less what we do not use.
 */
import {
  observeWindowOffset,
  observeWindowRect,
  type VirtualItem,
  Virtualizer,
  type VirtualizerOptions,
  windowScroll,
} from '@tanstack/virtual-core';
import { useLayoutEffect, useReducer, useRef } from 'preact/hooks';

export type WindowVirtualizer = Virtualizer<Window, HTMLElement>;

type Options = Omit<
  VirtualizerOptions<Window, HTMLElement>,
  'getScrollElement' | 'observeElementRect' | 'observeElementOffset' | 'scrollToFn' | 'onChange'
>;

/**
 * A virtualizer of the window's scroll with `options` (given again on every render). Its
 * component renders again when the items to show change (scrolled to, measured, moved), not on
 * every scroll event: a scroll within the rendered range costs no render.
 *
 * A new `view` (another search, label or section) starts a new virtualizer at the top of the
 * page, as a new answer starts at its beginning: the old one's columns belong to the old list
 * (the virtualizer remembers columns by position). The sizes it measured are kept.
 */
export function useWindowVirtualizer(options: Options, view: string): WindowVirtualizer {
  const [, rerender] = useReducer((count: number) => count + 1, 0);
  const rendered = useRef<VirtualItem[] | null>(null);
  const resolved: VirtualizerOptions<Window, HTMLElement> = {
    getScrollElement: () => window,
    observeElementRect: observeWindowRect,
    observeElementOffset: observeWindowOffset,
    scrollToFn: windowScroll,
    initialOffset: () => window.scrollY,
    ...options,
    onChange: (instance) => {
      if (instance.getVirtualItems() !== rendered.current) rerender(0);
    },
  };
  const current = useRef<{ view: string; virtualizer: WindowVirtualizer } | null>(null);
  if (current.current?.view !== view) {
    const virtualizer = new Virtualizer(resolved);
    if (current.current) {
      for (const [key, size] of current.current.virtualizer.itemSizeCache)
        virtualizer.itemSizeCache.set(key, size);
      window.scrollTo({ top: 0, behavior: 'instant' });
    }
    current.current = { view, virtualizer };
  }
  const { virtualizer } = current.current;
  virtualizer.setOptions(resolved);
  rendered.current = virtualizer.getVirtualItems();
  useLayoutEffect(() => virtualizer._didMount(), [virtualizer]);
  useLayoutEffect(() => virtualizer._willUpdate());
  return virtualizer;
}
