/**
 * What text the service can store: the same on SQLite and PostgreSQL. PostgreSQL's `text`
 * cannot hold U+0000 (docs/decisions/0015-postgresql.md), so no input carries it into storage:
 * a request whose JSON body, path or query holds one is refused with 400 (404 for a note id),
 * an imported note holding one is skipped as unreadable (decision 0030).
 */

export const NUL_MESSAGE = 'contains U+0000, which cannot be stored';

export const hasNul = (text: string): boolean => text.includes('\0');

const pointerSegment = (key: string) =>
  key
    .replaceAll('~', '~0')
    .replaceAll('/', '~1')
    .replace(/\p{Cs}/gu, '\uFFFD');

/**
 * The JSON pointer of the first string (value or object key) of `value` that `matches`.
 * Iterative: a 16 MiB body can nest far deeper than the call stack. A pointer is built only for
 * what it must name: a match, or a container whose children are walked (every request's path
 * and query are walked, and most match nothing).
 */
export function findString(value: unknown, matches: (text: string) => boolean): string | undefined {
  // Each item with its parent's pointer and its own key or index (none for the root).
  const pending: [unknown, string, string | number | undefined][] = [[value, '', undefined]];
  const pointer = (parent: string, segment: string | number | undefined) =>
    segment === undefined
      ? parent
      : `${parent}/${typeof segment === 'number' ? segment : pointerSegment(segment)}`;
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, parent, segment] = next;
    if (typeof item === 'string') {
      if (matches(item)) return pointer(parent, segment) || '/';
    } else if (Array.isArray(item)) {
      const path = pointer(parent, segment);
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], path, i]);
    } else if (typeof item === 'object' && item !== null) {
      const path = pointer(parent, segment);
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        if (matches(key)) return pointer(path, key);
        pending.push([child, path, key]);
      }
    }
  }
  return undefined;
}
