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
 * Iterative: a 16 MiB body can nest far deeper than the call stack.
 */
export function findString(value: unknown, matches: (text: string) => boolean): string | undefined {
  const pending: [unknown, string][] = [[value, '']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (matches(item)) return path || '/';
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], `${path}/${i}`]);
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const childPath = `${path}/${pointerSegment(key)}`;
        if (matches(key)) return childPath;
        pending.push([child, childPath]);
      }
    }
  }
  return undefined;
}
