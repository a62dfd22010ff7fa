/**
 * `prepare` memoized by SQL text, keeping the `size` most recently used statements: a query shape
 * always compiles to the same text (values are bound parameters, lists one json_each parameter).
 */
export function statementCache<Statement>(
  size: number,
  prepare: (text: string) => Statement,
): (text: string) => Statement {
  const statements = new Map<string, Statement>();
  return (text) => {
    let statement = statements.get(text);
    if (statement) statements.delete(text);
    else statement = prepare(text);
    statements.set(text, statement);
    if (statements.size > size) statements.delete(statements.keys().next().value!);
    return statement;
  };
}
