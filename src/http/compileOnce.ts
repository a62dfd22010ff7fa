/**
 * A per-process memo for compiled schema functions (validators, serializers), keyed by the text
 * of everything the compiled function depends on. Production builds one app; the tests build
 * dozens in a process, and recompiling the same schemas was half of each boot.
 */
export function compileOnce<T>(): (key: string, compile: () => T) => T {
  const compiled = new Map<string, T>();
  return (key, compile) => {
    let value = compiled.get(key);
    if (value === undefined) {
      value = compile();
      compiled.set(key, value);
    }
    return value;
  };
}
