import { type RawBuilder, sql } from 'kysely';

/**
 * `column IN (...)` for a list of any length as one bound parameter, so a 10,000-id lookup is
 * one statement without hitting the bound-variable limit. SQLite: json_each; PostgreSQL will
 * use `= ANY($1)` here.
 */
export function inJsonList<T extends string | number>(values: readonly T[]): RawBuilder<T> {
  return sql<T>`(SELECT value FROM json_each(${JSON.stringify(values)}))`;
}
