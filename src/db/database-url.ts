import { allEngines, engineForUrl } from './engines.ts'
import { isPostgresUrl } from './postgres/postgres-engine.ts'
import { PostgresUrlError, parsePostgresUrl } from './postgres/postgres-url.ts'

/** "a, b or c" */
const oneOf = (items: readonly string[]): string =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`

/** The scheme of a URL (`mysql:`), or undefined; never the rest, which may hold a password. */
const schemeOf = (url: string): string | undefined => /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]

/**
 * What is wrong with a `DATABASE_URL`, in one line that does not echo it (it may hold a
 * password); undefined when an engine can open it.
 */
export function problemWithDatabaseUrl(url: string): string | undefined {
  const engine = engineForUrl(url)
  if (engine) return engine.problemWithUrl(url)
  const scheme = schemeOf(url)
  const forms = allEngines().map((e) => e.urlForms[0] ?? e.name)
  return `DATABASE_URL must be ${oneOf(forms)}, got ${scheme ? `a "${scheme}" URL` : 'no scheme'}`
}

/** Every URL form the engines open, for messages: `sqlite:<path>, sqlite::memory: or postgres://…`. */
export const supportedUrlForms = (): string => oneOf(allEngines().flatMap((e) => e.urlForms))

/** A database URL as it may be logged and printed: without its password. */
export function redactDatabaseUrl(url: string): string {
  const engine = engineForUrl(url)
  if (engine) return engine.redactUrl(url)
  // an unknown scheme: nothing past it is known to be safe
  return `${url.split(':')[0]}:…`
}

/**
 * What is wrong with a `DATABASE_LISTEN_URL` (docs/postgres.md#behind-pgbouncer), in one line
 * that echoes neither URL; undefined when it is fine: a PostgreSQL URL beside a PostgreSQL
 * `DATABASE_URL` (LISTEN connections are PostgreSQL's).
 */
export function problemWithListenUrl(listenUrl: string, databaseUrl: string): string | undefined {
  if (!isPostgresUrl(databaseUrl))
    return 'DATABASE_LISTEN_URL is for PostgreSQL: DATABASE_URL must then be a postgres:// URL'
  if (!isPostgresUrl(listenUrl))
    return 'DATABASE_LISTEN_URL must be a valid postgres:// URL (check its host and escaping)'
  // several hosts and target_session_attrs as in DATABASE_URL (docs/postgres.md#failover)
  try {
    parsePostgresUrl(listenUrl, 'DATABASE_LISTEN_URL')
  } catch (err) {
    if (err instanceof PostgresUrlError) return err.message
    throw err
  }
  return undefined
}
