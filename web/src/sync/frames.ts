/** A hidden tab paints no frames: what waits for one runs after this long instead. */
const HIDDEN_TAB_WAIT_MS = 250;

/** After the window's next frame is painted; at once without one (node tests). */
export function nextFrame(window?: Partial<Pick<Window, 'requestAnimationFrame'>> | null): Promise<void> {
  const requestFrame = window?.requestAnimationFrame?.bind(window);
  if (!requestFrame) return Promise.resolve();
  return new Promise((resolve) => {
    requestFrame(() => setTimeout(resolve));
    setTimeout(resolve, HIDDEN_TAB_WAIT_MS);
  });
}
