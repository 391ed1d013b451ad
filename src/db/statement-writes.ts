import type { QueryExecutor } from 'kysely'
import { engineOf } from './engines.ts'

/**
 * True when `db` runs on an engine where a hot write is best one hand-written statement
 * (Engine.oneStatementWrites: PostgreSQL, a round trip per statement); such a statement is
 * written in that engine's SQL.
 */
export const writesInOneStatement = (db: { getExecutor(): QueryExecutor }): boolean =>
  engineOf(db).oneStatementWrites
