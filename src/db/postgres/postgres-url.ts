// A `postgres://` URL as libpq reads it, including the part `pg` does not: several hosts
// (`postgres://h1:5432,h2:5432/db`) and `target_session_attrs`
// (docs/postgres.md#failover). `pg` reads one host per URL, so a URL of several hosts is
// turned into one single-host URL per host, each of which `pg` reads as usual (user,
// password, database, TLS and every other parameter unchanged).

/** What statusd needs of the server it connects to (libpq's `target_session_attrs`). */
export type SessionAttrs = 'any' | 'read-write'

const SESSION_ATTRS: readonly SessionAttrs[] = ['any', 'read-write']

/** One host of a URL, as written (`db1`, `[::1]`, `%2Frun%2Fpostgresql`) and its port. */
export interface PostgresHost {
  /** `host:port` as written in the URL, for logs and messages. */
  label: string
  /** The URL of this host alone, for `pg`: the original with the other hosts taken out. */
  url: string
}

export interface PostgresUrl {
  /** In the URL's order: connections try them in this order (libpq's). */
  hosts: PostgresHost[]
  /** `read-write`: only a server that takes writes will do (not a standby). */
  sessionAttrs: SessionAttrs
}

// note: user info runs to the authority's last '@' (a raw '@' in a password, as WHATWG URLs
// read it), so the hosts never hold a piece of the password
const URL_PATTERN = /^(postgres(?:ql)?:\/\/)(?:([^/?#]*)@)?([^/?#@]*)(.*)$/is

/** A problem with a URL, said without echoing it (it may hold a password). */
export class PostgresUrlError extends Error {}

/** One entry of the host list: `name`, `name:port`, `[v6]`, `[v6]:port`; its port checked. */
function checkHost(entry: string, index: number, count: number, variable: string): void {
  const where = count > 1 ? `host ${index + 1} of ${count}` : 'the host'
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::(.*))?$/.exec(entry)
  if (!match) throw new PostgresUrlError(`${variable}: ${where} is not host or host:port`)
  const [, name, port] = match
  if (count > 1 && !name)
    throw new PostgresUrlError(`${variable}: ${where} is empty (hosts are separated by commas)`)
  // note: an empty port (`host:`) is the default one, as libpq reads it
  if (port !== undefined && port !== '' && !/^\d{1,5}$/.test(port))
    throw new PostgresUrlError(`${variable}: the port of ${where} is not a number`)
  if (port !== undefined && port !== '' && (Number(port) < 1 || Number(port) > 65_535))
    throw new PostgresUrlError(`${variable}: the port of ${where} is not between 1 and 65535`)
}

/**
 * Reads a `postgres://` or `postgresql://` URL; throws a PostgresUrlError saying what is wrong
 * (without echoing the URL) when `pg` could not open it or statusd does not support it.
 * `name` is the variable the URL comes from, for the message.
 */
export function parsePostgresUrl(url: string, name = 'DATABASE_URL'): PostgresUrl {
  const match = URL_PATTERN.exec(url)
  if (!match) throw new PostgresUrlError(`${name} is not a postgres:// URL`)
  const [, scheme = '', userinfo, hostList = '', rest = ''] = match
  const entries = hostList.split(',')
  for (const [i, entry] of entries.entries()) checkHost(entry, i, entries.length, name)
  const hosts = entries.map((entry) => {
    const single = `${scheme}${userinfo === undefined ? '' : `${userinfo}@`}${entry}${rest}`
    if (!URL.canParse(single))
      throw new PostgresUrlError(
        `${name} is not a valid postgres:// URL (check its host and escaping)`,
      )
    return { entry, single }
  })
  const params = new URL(hosts[0]?.single ?? url).searchParams
  if (entries.length > 1 && (params.has('host') || params.has('port')))
    throw new PostgresUrlError(
      `${name}: with several hosts, give them (and their ports) before the database name, not as ?host= or ?port=`,
    )
  const attrs = params.getAll('target_session_attrs')
  const sessionAttrs = attrs.at(-1) ?? 'any'
  if (!(SESSION_ATTRS as readonly string[]).includes(sessionAttrs))
    throw new PostgresUrlError(
      `${name}: target_session_attrs must be read-write or any (statusd writes), got "${sessionAttrs.slice(0, 40)}"`,
    )
  return {
    hosts: hosts.map(({ entry, single }) => ({
      label: entry || 'localhost',
      // note: pg ignores target_session_attrs; statusd acts on it (connect-primary.ts)
      url: single,
    })),
    sessionAttrs: sessionAttrs as SessionAttrs,
  }
}

/** The URL with its password (if any) replaced by `***`; its hosts as written. */
export function redactPostgresUrl(url: string): string {
  const match = URL_PATTERN.exec(url)
  if (!match) return `${url.split(':')[0]}://…`
  const [, scheme = '', userinfo, hostList = '', rest = ''] = match
  if (userinfo === undefined) return url
  const colon = userinfo.indexOf(':')
  const user = colon < 0 ? userinfo : `${userinfo.slice(0, colon)}:***`
  return `${scheme}${user}@${hostList}${rest}`
}
