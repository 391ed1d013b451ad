import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely'
import type { DB, Db } from './database.ts'

// A value no caller passes: it marks where a named parameter goes in the compiled query.
const MARK = '\u0000statusd:param:'

/**
 * Runs a compiled statement synchronously on the connection a transaction holds, with the
 * result Kysely's driver would give; create-db.ts makes one for SQLite's group-commit batches.
 */
export type DirectRunner = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>

// The transactions whose statements may skip Kysely's executor: a group-commit batch on
// SQLite registers its transaction while it holds the one connection (group-commit.ts).
const directRunners = new WeakMap<object, DirectRunner>()

/**
 * Lets prepared queries (and `runStatement`) on `tx` run through `runner` until the returned
 * function is called, which must happen before the transaction ends: a statement on `tx`
 * after that goes to Kysely, which refuses a finished transaction.
 */
export function registerDirectRunner(tx: object, runner: DirectRunner): () => void {
  directRunners.set(tx, runner)
  return () => directRunners.delete(tx)
}

/**
 * Runs a compiled statement on `db`: directly on the connection when `db` is a transaction
 * that registered a runner, else through Kysely's executor.
 */
export function runStatement<R>(db: Db, query: CompiledQuery): Promise<QueryResult<R>> {
  const direct = directRunners.get(db)
  return direct === undefined
    ? db.executeQuery<R>(query)
    : runDirect<R>(direct, query.sql, query.parameters)
}

function runDirect<R>(
  direct: DirectRunner,
  sql: string,
  parameters: readonly unknown[],
): Promise<QueryResult<R>> {
  try {
    return Promise.resolve(direct(sql, parameters) as QueryResult<R>)
  } catch (error) {
    return Promise.reject(error)
  }
}

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
    const direct = directRunners.get(db)
    return direct === undefined
      ? db.executeQuery<R>(CompiledQuery.raw(compiled.sql, values))
      : runDirect<R>(direct, compiled.sql, values)
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

/** Statements without parameters (savepoints), compiled by hand once. */
export const rawStatement = (sqlText: string): CompiledQuery => CompiledQuery.raw(sqlText)
