import type { RefObject } from 'preact';
import { useEffect, useLayoutEffect } from 'preact/hooks';

/**
 * A text box as tall as its text (issue 30 item 6): a long note scrolls the dialog or the page,
 * never a small box inside it. Set through CSSOM, which the app's CSP allows.
 */
export function useAutoGrow(box: RefObject<HTMLTextAreaElement>, text: string): void {
  useLayoutEffect(() => grow(box.current), [box, text]);
  // A narrower box wraps more lines (a phone turned, a window resized).
  useEffect(() => {
    const regrow = () => grow(box.current);
    addEventListener('resize', regrow);
    return () => removeEventListener('resize', regrow);
  }, [box]);
}

function grow(element: HTMLTextAreaElement | null): void {
  if (!element) return;
  element.style.height = 'auto';
  // The border is outside scrollHeight; text areas here have none but may get one.
  element.style.height = `${element.scrollHeight + element.offsetHeight - element.clientHeight}px`;
}
