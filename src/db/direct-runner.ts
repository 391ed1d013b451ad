import { CompiledQuery, type QueryResult, type SqliteDatabase } from 'kysely'
import type { Db } from './database.ts'

// A speed trick, kept in this one file: inside a group-commit batch on SQLite, a unit's
// statements (its prepared queries and the batch's savepoints) run straight on
// better-sqlite3, synchronously, instead of through Kysely's executor, whose promise chain
// per statement allocated about a third of a PATCH's garbage.
//
// It stays because it pays: `node bench/run.ts --only lean,statusd-patch --rounds 3
// --duration 10`, run twice with it and twice without it on the same code otherwise, gave
// durable PATCH by id on SQLite 0.69 and 0.73 × the lean peer measured in the same run
// (7 554 and 7 299 req/s; 107–108 µs of CPU per request) with it, and 0.56 and 0.48 ×
// (5 778 and 4 655 req/s; 126–132 µs) without: 25–35 % of PATCH throughput. The rule
// (docs/performance.md): it goes once it is worth less than 10 % on PATCH.

/**
 * Runs a compiled statement synchronously on the connection a transaction holds, with the
 * result Kysely's driver would give.
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
 * Runs SQL text with its parameters on `db`: directly on the connection when `db` is a
 * transaction that registered a runner, else through Kysely's executor.
 */
export function runSql<R>(db: Db, sqlText: string, parameters: unknown[]): Promise<QueryResult<R>> {
  const direct = directRunners.get(db)
  return direct === undefined
    ? db.executeQuery<R>(CompiledQuery.raw(sqlText, parameters))
    : runDirect<R>(direct, sqlText, parameters)
}

/** Runs a compiled statement on `db`, directly when it may (see `runSql`). */
export function runStatement<R>(db: Db, query: CompiledQuery): Promise<QueryResult<R>> {
  const direct = directRunners.get(db)
  return direct === undefined
    ? db.executeQuery<R>(query)
    : runDirect<R>(direct, query.sql, query.parameters)
}

function runDirect<R>(
  direct: DirectRunner,
  sqlText: string,
  parameters: readonly unknown[],
): Promise<QueryResult<R>> {
  try {
    return Promise.resolve(direct(sqlText, parameters) as QueryResult<R>)
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * The direct runner of a better-sqlite3 connection (through its statement cache), with the
 * result Kysely's SQLite driver gives.
 */
export const sqliteDirectRunner =
  (statements: SqliteDatabase): DirectRunner =>
  (sqlText, parameters) => {
    const statement = statements.prepare(sqlText)
    if (statement.reader) return { rows: statement.all(parameters) as unknown[] }
    const { changes, lastInsertRowid } = statement.run(parameters)
    return {
      insertId: lastInsertRowid == null ? undefined : BigInt(lastInsertRowid),
      numAffectedRows: changes == null ? undefined : BigInt(changes),
      rows: [],
    }
  }
