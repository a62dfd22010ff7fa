import { type RawBuilder, sql } from 'kysely';

/**
 * The values of a list of any length as rows of one column, `value`, from one bound parameter,
 * so a list never meets the bound-variable limit (32,766). SQLite: json_each; PostgreSQL will
 * use `unnest($1)` here.
 */
export function jsonListRows<T extends string | number>(values: readonly T[]): RawBuilder<{ value: T }> {
  return sql<{ value: T }>`SELECT value FROM json_each(${JSON.stringify(values)})`;
}

/**
 * `column IN (...)` for a list of any length as one bound parameter, so a 10,000-id lookup is
 * one statement. SQLite: json_each; PostgreSQL will use `= ANY($1)` here.
 */
export function inJsonList<T extends string | number>(values: readonly T[]): RawBuilder<T> {
  return sql<T>`(${jsonListRows(values)})`;
}

/**
 * `column` contains `needle`, ignoring case in any script; `%`, `_` and backslashes in the needle
 * are literal. SQLite: the `fold_case` function registered in connection.ts; PostgreSQL will use
 * `lower(column) LIKE ... ESCAPE`.
 */
export function containsIgnoringCase(column: string, needle: string): RawBuilder<boolean> {
  const pattern = `%${needle.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`fold_case(${sql.ref(column)}) LIKE ${pattern} ESCAPE '\\'`;
}
