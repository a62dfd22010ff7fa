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
    /**
     * A getter of the function for `key`, compiled (or found compiled) at its first call; the
     * key too is made then, as making it means serializing the schemas.
     */
    onFirstUse(key: () => string, compile: () => T): () => T {
      let value: T | undefined;
      return () => {
        if (value !== undefined) return value;
        const text = key();
        value = compiled.get(text);
        if (value === undefined) {
          value = compile();
          compiled.set(text, value);
        }
        return value;
      };
    },
    /** How many functions have been compiled in this process. */
    get size() {
      return compiled.size;
    },
  };
}
