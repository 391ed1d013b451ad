import { after, before } from 'node:test'
import type { Kysely } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import type { Database } from '../../src/db/engine.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { freshDatabase, TEST_ENGINE, type TestDatabase } from './engine.ts'

/** A fresh, migrated database on the engine under test, for store contract suites. */
export interface TestStore {
  db: Kysely<DB>
  database: Database
  url: string
  close(): Promise<void>
}

export async function openStore(options: { poolSize?: number } = {}): Promise<TestStore> {
  const fresh: TestDatabase = await freshDatabase()
  const database = createDatabase(fresh.url, { poolSize: options.poolSize ?? 5 })
  await migrateToLatest(database.db)
  return {
    db: database.db,
    database,
    url: fresh.url,
    async close() {
      await database.close()
      await fresh.drop()
    },
  }
}

/**
 * One store for a whole `describe` block (cases keep to their own rows): `store()` inside a
 * test returns it. Its title names the engine, so the two runs are told apart in output.
 */
export function useStore(): () => TestStore {
  let current: TestStore | undefined
  before(async () => {
    current = await openStore()
  })
  after(async () => {
    await current?.close()
  })
  return () => {
    if (!current) throw new Error('store is not open yet')
    return current
  }
}

/** `title [engine]`: a contract suite's name on this run. */
export const onEngine = (title: string): string => `${title} [${TEST_ENGINE}]`
