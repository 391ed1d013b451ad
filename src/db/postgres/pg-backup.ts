import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import { BackupRefused } from '../backup-refused.ts'
import type { BackupSupport } from '../engine.ts'

const run = promisify(execFile)

/** Where the refusal points: what to install, or how to back up without it. */
const NO_TOOL = (tool: string) =>
  `${tool} is not installed here: install PostgreSQL's client tools (the version of the server or newer), or back up with the server's own tools (docs/postgres.md#backups)`

// note: user info runs to the authority's last '@', as postgres-url.ts reads it
const USERINFO = /^(postgres(?:ql)?:\/\/)([^/?#]*)@/i

/**
 * The URL as libpq reads it, without its password, and the environment that carries the
 * password instead: a command line is visible to every user of the machine.
 */
export function libpqConnection(given: string): { url: string; env: NodeJS.ProcessEnv } {
  const url = forLibpq(given)
  const match = USERINFO.exec(url)
  const colon = match?.[2]?.indexOf(':') ?? -1
  if (!match || colon < 0) return { url, env: { ...process.env } }
  const userinfo = match[2] as string
  const password = decodeURIComponent(userinfo.slice(colon + 1))
  return {
    url: `${match[1]}${userinfo.slice(0, colon)}@${url.slice(match[0].length)}`,
    env: { ...process.env, PGPASSWORD: password },
  }
}

/**
 * The URL with its query written as libpq reads it: a `+` there is a plus to libpq, not a
 * space as it is to `pg` and to WHATWG URLs (`options=-c+search_path%3Dx`).
 */
function forLibpq(url: string): string {
  const at = url.indexOf('?')
  if (at < 0) return url
  const query = [...new URLSearchParams(url.slice(at + 1))]
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&')
  return `${url.slice(0, at)}?${query}`
}

/** Runs one of PostgreSQL's client tools; a missing tool is refused with NO_TOOL. */
async function tool(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await run(name, args, { env, maxBuffer: 64 * 1024 * 1024 })
    return stdout
  } catch (err) {
    const { code, stderr } = err as { code?: unknown; stderr?: string }
    if (code === 'ENOENT') throw new BackupRefused(NO_TOOL(name))
    throw new Error(`${name} failed: ${(stderr ?? String(err)).trim()}`)
  }
}

/** `"name"`: a pattern of pg_dump's that matches this one name exactly. */
const exactly = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * PostgreSQL's backups: `pg_dump` of statusd's schema in its custom format, restored by
 * `pg_restore` into the schema of the same name.
 */
export const postgresBackupSupport: BackupSupport = {
  dataFile: 'statusd.pgdump',
  async take({ url, db }, to) {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db)
    const schema = rows[0]?.schema
    if (!schema) throw new BackupRefused('the database URL names no schema to back up')
    const connection = libpqConnection(url)
    // note: pg_dump reads one snapshot (a repeatable-read transaction): a consistent copy
    // while writers go on
    await tool(
      'pg_dump',
      [
        '--format=custom',
        '--no-owner',
        '--no-privileges',
        `--schema=${exactly(schema)}`,
        `--file=${to}`,
        `--dbname=${connection.url}`,
      ],
      connection.env,
    )
    return { schema }
  },
  async restore(target, file, backup) {
    const { rows } = await sql<{
      schema: string
    }>`select current_schema() as schema`.execute(target.db)
    const schema = rows[0]?.schema ?? ''
    if (schema === '')
      throw new BackupRefused(
        `the database URL's search_path names no schema that exists: create the schema "${backup.schema}" (empty) first (docs/operations.md#restore)`,
      )
    if (schema !== backup.schema)
      throw new BackupRefused(
        `the backup holds the schema "${backup.schema}" and the database URL's is "${schema}": a PostgreSQL backup restores into a schema of the same name (docs/operations.md#restore)`,
      )
    const connection = libpqConnection(target.url)
    // the schema itself is there already: everything of the dump but it
    const contents = (await tool('pg_restore', ['--list', file], connection.env)).split('\n')
    const list = `${file}.list`
    await writeFile(
      list,
      contents.filter((line) => !/^\d+; \d+ \d+ SCHEMA - /.test(line)).join('\n'),
    )
    // the tables the dump makes, and statusd's (a newer schema's among them), go first: the
    // target is empty or --force replaces it; any other table in the schema is left alone
    const dumped = contents.flatMap(
      (line) => /^\d+; \d+ \d+ TABLE \S+ (\S+) /.exec(line)?.[1] ?? [],
    )
    const replaced = new Set([...dumped, ...backup.tables])
    const tables = await target.db.introspection.getTables({ withInternalKyselyTables: true })
    for (const table of tables.filter((t) => t.schema === schema && replaced.has(t.name)))
      await sql`drop table if exists ${sql.id(schema, table.name)} cascade`.execute(target.db)
    await tool(
      'pg_restore',
      [
        '--single-transaction',
        '--exit-on-error',
        '--no-owner',
        '--no-privileges',
        `--use-list=${list}`,
        `--dbname=${connection.url}`,
        file,
      ],
      connection.env,
    )
  },
  rowsCopyable: false,
}
