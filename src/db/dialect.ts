import { type RawBuilder, sql } from 'kysely';

/**
 * The two engines (docs/decisions/0015-postgresql.md): SQLite in DATA_DIR, the default, or
 * PostgreSQL when DATABASE_URL is set. A process serves one database, so the engine is chosen
 * once, when it is opened (connection.ts), and the few fragments below that differ are written
 * for it; everything else is the same Kysely query on both.
 */
export type Engine = 'sqlite' | 'postgres';

let currentEngine: Engine = 'sqlite';

/** Called by openDatabase: the engine of the database this process serves. */
export function useEngine(engine: Engine): void {
  currentEngine = engine;
}

export function engine(): Engine {
  return currentEngine;
}

/**
 * The values of a list of any length as rows of one column, `value`, from one bound parameter,
 * so a list never meets a bound-variable limit (SQLite's 32,766, PostgreSQL's 65,535). SQLite:
 * json_each; PostgreSQL: unnest of one array (bigint for numbers, text otherwise).
 */
export function jsonListRows<T extends string | number>(values: readonly T[]): RawBuilder<{ value: T }> {
  if (currentEngine === 'postgres') {
    const type = typeof values[0] === 'number' ? sql`bigint[]` : sql`text[]`;
    return sql<{ value: T }>`SELECT unnest(CAST(${values} AS ${type})) AS value`;
  }
  return sql<{ value: T }>`SELECT value FROM json_each(${JSON.stringify(values)})`;
}

/**
 * `column IN (...)` for a list of any length as one bound parameter, so a 10,000-id lookup is
 * one statement.
 */
export function inJsonList<T extends string | number>(values: readonly T[]): RawBuilder<T> {
  return sql<T>`(${jsonListRows(values)})`;
}

/**
 * `column` contains `needle`, ignoring case in any script; `%`, `_` and backslashes in the needle
 * are literal. SQLite: the `fold_case` function registered in connection.ts (its lower() only
 * folds ASCII); PostgreSQL: lower(), which folds every script in a UTF-8 database.
 */
export function containsIgnoringCase(column: string, needle: string): RawBuilder<boolean> {
  const pattern = `%${needle.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const folded =
    currentEngine === 'postgres' ? sql`lower(${sql.ref(column)})` : sql`fold_case(${sql.ref(column)})`;
  return sql<boolean>`${folded} LIKE ${pattern} ESCAPE '\\'`;
}

/** The aggregate that joins a group's strings with a separator: SQLite group_concat, PostgreSQL string_agg. */
export function joiningAggregate(): 'group_concat' | 'string_agg' {
  return currentEngine === 'postgres' ? 'string_agg' : 'group_concat';
}
