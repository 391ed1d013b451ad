import { supportedUrlForms } from './database-url.ts'
import type { Database, DatabaseOptions } from './engine.ts'
import { engineForUrl } from './engines.ts'

/** Opens the database a `DATABASE_URL` names, on the engine its scheme picks. */
export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const engine = engineForUrl(url)
  if (engine === undefined)
    throw new Error(
      `DATABASE_URL ${url.split(':')[0]}: unsupported scheme (use ${supportedUrlForms()})`,
    )
  return engine.open(url, options)
}
