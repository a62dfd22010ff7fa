/**
 * preact/compat's `memo` without preact/compat: importing anything from compat installs its React
 * compatibility hooks (prop renaming, event aliases, …) into Preact's options, and those run for
 * every element of every render: ~15% of a search keystroke's script with 10,000 notes
 * (decision 0018). This is compat's own shape: a wrapper that renders the component and answers
 * `shouldComponentUpdate`, which Preact honours on function components too.
 */
import { type Component, type FunctionComponent, h } from 'preact';

function propsDiffer(before: object, after: object): boolean {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  for (const key in a) if (!(key in b)) return true;
  for (const key in b) if (a[key] !== b[key]) return true;
  return false;
}

/** A component that re-renders only when a prop changes (compared with `===`) or a signal it reads does. */
export function memo<Props extends object>(component: FunctionComponent<Props>): FunctionComponent<Props> {
  function Memoised(this: Component<Props>, props: Props) {
    this.shouldComponentUpdate = (next: Props) => propsDiffer(this.props, next);
    return h(component, props);
  }
  Memoised.displayName = `Memo(${component.displayName ?? component.name})`;
  return Memoised;
}
