import fs from 'node:fs';
import path from 'node:path';

/** The built web app (web/ → dist/web by `vite build`) that the server serves at `/`. */
export interface WebBundle {
  root: string;
  /** index.html, kept in memory: every navigation outside the API answers it (SPA fallback). */
  page: Buffer;
}

/**
 * dist/web of the checkout this module runs from: found by walking up from here, since the
 * module runs from dist/features/webapp (production), src/features/webapp (tsx) or a test bundle.
 */
export function findWebBundle(from = import.meta.dirname): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'web');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

export function loadWebBundle(root: string | null): WebBundle | null {
  if (root === null) return null;
  try {
    return { root, page: fs.readFileSync(path.join(root, 'index.html')) };
  } catch {
    return null;
  }
}
