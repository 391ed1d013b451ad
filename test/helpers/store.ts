import { before } from 'node:test'
import type { Kysely } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import type { Database } from '../../src/db/engine.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { defer, type Lifetime, suiteLifetime } from './cleanup.ts'
import { TEST_ENGINE, type TestDatabase, testDatabase } from './engine.ts'

/** A fresh, migrated database on the engine under test, for store contract suites. */
export interface TestStore {
  db: Kysely<DB>
  database: Database
  url: string
  close(): Promise<void>
}

/** A store for `t` (a test, or `suiteLifetime()`): closed and dropped when it ends. */
export async function openStore(
  t: Lifetime,
  options: { poolSize?: number } = {},
): Promise<TestStore> {
  const fresh: TestDatabase = await testDatabase(t)
  const database = createDatabase(fresh.url, { poolSize: options.poolSize ?? 5 })
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= database.close()
    return closing
  }
  defer(t, close)
  await migrateToLatest(database.db)
  return { db: database.db, database, url: fresh.url, close }
}

/**
 * One store for a whole `describe` block (cases keep to their own rows): `store()` inside a
 * test returns it. Its title names the engine, so the two runs are told apart in output.
 */
export function useStore(): () => TestStore {
  let current: TestStore | undefined
  const suite = suiteLifetime()
  before(async () => {
    current = await openStore(suite)
  })
  return () => {
    if (!current) throw new Error('store is not open yet')
    return current
  }
}

/** `title [engine]`: a contract suite's name on this run. */
export const onEngine = (title: string): string => `${title} [${TEST_ENGINE}]`
