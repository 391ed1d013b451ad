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
