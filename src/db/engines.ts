import type { DialectAdapter, QueryExecutor } from 'kysely'
import type { Engine, MigrationSteps } from './engine.ts'
import { postgresEngine } from './postgres/postgres-engine.ts'
import { sqliteEngine } from './sqlite/sqlite-engine.ts'

/** Every engine statusd runs on, one line each; a `DATABASE_URL` picks by its scheme. */
export const ENGINES = {
  sqlite: sqliteEngine,
  postgres: postgresEngine,
} as const satisfies Record<string, Engine>

const ALL: readonly Engine[] = Object.values(ENGINES)

/** The engine a `DATABASE_URL` names; undefined for a scheme none recognizes. */
export const engineForUrl = (url: string): Engine | undefined =>
  ALL.find((engine) => engine.recognizes(url))

/** Every engine, for what must ask each (classifying an error of unknown origin). */
export const allEngines = (): readonly Engine[] => ALL

const byAdapter = new WeakMap<DialectAdapter, Engine>()

/**
 * The engine a database or transaction runs on, from its Kysely adapter. Throws for a
 * database no engine owns: a lock silently not taken would be worse.
 */
export function engineOf(db: { getExecutor(): QueryExecutor }): Engine {
  const adapter = db.getExecutor().adapter
  let engine = byAdapter.get(adapter)
  if (engine === undefined) {
    engine = ALL.find((candidate) => candidate.ownsAdapter(adapter))
    if (engine === undefined)
      throw new Error(`no engine of statusd runs on ${adapter.constructor.name}`)
    byAdapter.set(adapter, engine)
  }
  return engine
}

/** The engine-specific steps of migrations, for the database a migration runs on. */
export const migrationSteps = (db: { getExecutor(): QueryExecutor }): MigrationSteps =>
  engineOf(db).migrationSteps
