import type { Compilable, Kysely, QueryResult } from 'kysely'
import type { DB, Db } from './database.ts'
import { runSql } from './direct-runner.ts'

// A value no caller passes: it marks where a named parameter goes in the compiled query.
const MARK = '\u0000statusd:param:'

/** A query compiled once per dialect; each run only binds values (no building, no compiling). */
export type PreparedQuery<P, R> = (db: Db, params: P) => Promise<QueryResult<R>>

interface Compiled {
  sql: string
  /** Per compiled parameter: the name of the value to bind, or a constant of the query. */
  slots: ({ name: string } | { value: unknown })[]
}

/**
 * Prepares a hot-path query: `build` describes it with Kysely as usual, taking its variable
 * values from `param(name)`. It is built and compiled the first time it runs on a dialect;
 * later runs reuse the SQL text (so the statement cache under it reuses the prepared
 * statement) and bind `params` by name. Building and compiling cost more CPU than running a
 * point query on SQLite; see docs/performance.md.
 *
 * note: Kysely plugins transform queries as they are built, so they never see a prepared
 * one (only its result); statusd uses no plugins.
 */
export function prepareQuery<P extends Record<string, unknown>, R>(
  build: (db: Kysely<DB>, param: <K extends keyof P & string>(name: K) => P[K]) => Compilable<R>,
): PreparedQuery<P, R> {
  // one per dialect adapter: a transaction shares its database's adapter
  const byAdapter = new WeakMap<object, Compiled>()
  return (db, params) => {
    const adapter = db.getExecutor().adapter
    let compiled = byAdapter.get(adapter)
    if (compiled === undefined) {
      compiled = compile(db, build)
      byAdapter.set(adapter, compiled)
    }
    const values = compiled.slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value))
    // inside a group-commit batch on SQLite, straight on the connection (direct-runner.ts)
    return runSql<R>(db, compiled.sql, values)
  }
}

/**
 * The prepared queries of one query whose optional parts come and go (a cursor, a limit):
 * `prepare` makes the query of one combination of `flags`, once, the first time it is asked
 * for.
 */
export function preparedByShape<F extends boolean[], P, R>(
  prepare: (...flags: F) => PreparedQuery<P, R>,
): (...flags: F) => PreparedQuery<P, R> {
  const made = new Map<string, PreparedQuery<P, R>>()
  return (...flags) => {
    const shape = flags.join(',')
    let query = made.get(shape)
    if (query === undefined) {
      query = prepare(...flags)
      made.set(shape, query)
    }
    return query
  }
}

// The SQL text of each statement prepareSql made, with the name PostgreSQL prepares it under
// (open-postgres.ts sends these texts as named statements, unless DATABASE_PREPARED_STATEMENTS
// is off): a connection parses and plans one once, then only binds it, and the text is not
// sent again. Bounded: one per prepareSql call.
// note: only these, whose results name their columns: a named `select *` whose table gained a
// column (a newer version's migration while this one runs) fails with "cached plan must not
// change result type" until its connection closes.
const statementNames = new Map<string, string>()

/** The name the text of a prepareSql statement is prepared under; undefined for any other text. */
export const preparedStatementName = (sqlText: string): string | undefined =>
  statementNames.get(sqlText)

/**
 * Prepares SQL written by hand, for what Kysely cannot build (a data-modifying CTE), with
 * named parameters: `$name` (a letter first), each bound from `params` by its name. The text
 * is the dialect's own, so it runs only on the engine it was written for. On PostgreSQL it is
 * a named statement (preparedStatementName).
 */
export function prepareSql<P extends Record<string, unknown>, R>(
  text: string,
): PreparedQuery<P, R> {
  const order: string[] = []
  const positional = text.replace(/\$([A-Za-z]\w*)/g, (_, name: string) => {
    let index = order.indexOf(name)
    if (index < 0) index = order.push(name) - 1
    return `$${index + 1}`
  })
  if (!statementNames.has(positional))
    statementNames.set(positional, `statusd_prepared_${statementNames.size + 1}`)
  return (db, params) =>
    runSql<R>(
      db,
      positional,
      order.map((name) => params[name]),
    )
}

function compile<P, R>(
  db: Kysely<DB>,
  build: (db: Kysely<DB>, param: <K extends keyof P & string>(name: K) => P[K]) => Compilable<R>,
): Compiled {
  const query = build(db, (name) => `${MARK}${name}` as never).compile()
  return {
    sql: query.sql,
    slots: query.parameters.map((value) =>
      typeof value === 'string' && value.startsWith(MARK)
        ? { name: value.slice(MARK.length) }
        : { value },
    ),
  }
}
