/**
 * A per-process memo for compiled schema functions (validators, serializers), keyed by the text
 * of everything the compiled function depends on. Production builds one app; the tests build
 * dozens in a process, and recompiling the same schemas was half of each boot. The compilers
 * ask it on a route's first request, not when the route is registered: most routes of a
 * server are rarely or never called, and compiling them all at start-up held 12–16 MiB of its
 * idle memory (docs/benchmarks.md, "Memory").
 */
export function compileOnce<T>() {
  const compiled = new Map<string, T>();
  return {
    get(key: string, compile: () => T): T {
      let value = compiled.get(key);
      if (value === undefined) {
        value = compile();
        compiled.set(key, value);
      }
      return value;
    },
    /** How many functions have been compiled in this process. */
    get size() {
      return compiled.size;
    },
  };
}
