import { createDatabase } from '../../src/db/create-database.ts'
import type { Database } from '../../src/db/engine.ts'
import { defer, type Lifetime } from './cleanup.ts'

/** `createDatabase(url, options)`, closed when `t` ends. */
export function openDatabase(
  t: Lifetime,
  url: string,
  options?: Parameters<typeof createDatabase>[1],
): Database {
  const database = createDatabase(url, options)
  defer(t, () => database.close())
  return database
}
