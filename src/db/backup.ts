import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE } from 'kysely/migration'
import { create, extract, Parser, type ReadEntry } from 'tar'
import { VERSION } from '../lib/version.ts'
import { BackupRefused } from './backup-refused.ts'
import {
  COPY_TABLES,
  CopyRefused,
  copyDatabase,
  countRows,
  describeCounts,
  type TableCounts,
} from './copy.ts'
import { createDatabase } from './create-database.ts'
import type { Database } from './engine.ts'
import { ENGINES, engineForUrl } from './engines.ts'
import { executedMigrations, migrateToLatest } from './migrate.ts'
import { migrations } from './migrations/index.ts'

// A backup is one tar file (docs/operations.md#backup-and-restore): `manifest.json` first,
// then the engine's data file (an SQLite database, or pg_dump's custom format). Any tar
// unpacks it, and `sha256sum` of the data file gives the manifest's checksum.

export { BackupRefused }

const MANIFEST = 'manifest.json'
const FORMAT = 'statusd-backup'
const FORMAT_VERSION = 1

/** What a backup says of itself. */
export interface BackupManifest {
  format: typeof FORMAT
  formatVersion: number
  /** The statusd that took it. */
  statusd: string
  /** The last migration its database had applied. */
  schemaVersion: string
  /** The engine it was taken from (its data file's format). */
  engine: string
  createdAt: string
  data: { file: string; bytes: number; sha256: string }
  /** PostgreSQL: the schema it holds. */
  schema?: string
}

/** One backup in a folder: its file's name and size, and its manifest. */
export interface BackupEntry {
  name: string
  bytes: number
  manifest: BackupManifest
}

/** A backup's file name: its time (UTC) and a random part, so that two never collide. */
export const BACKUP_NAME = /^statusd-\d{8}-\d{6}-[0-9a-f]{6}\.tar$/

const nameAt = (at: Date) =>
  `statusd-${at
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replaceAll(/[-:]/g, '')
    .replace('T', '-')}-${randomBytes(3).toString('hex')}.tar`

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(createReadStream(file), hash)
  return hash.digest('hex')
}

/** The engine a manifest names, or a refusal. */
function engineNamed(name: string) {
  const engine = (ENGINES as Record<string, (typeof ENGINES)[keyof typeof ENGINES]>)[name]
  if (!Object.hasOwn(ENGINES, name) || engine === undefined)
    throw new BackupRefused(
      `the backup was taken from a "${name}" database, which this statusd does not know`,
    )
  return engine
}

/**
 * Takes a backup of the open `database` (at `url`) into `dir` while it serves: the engine
 * writes its data file, then it goes into a tar with its manifest, written under another
 * name and renamed once complete, so that a backup in the folder is always a whole one.
 */
export async function takeBackup(
  database: Database,
  url: string,
  dir: string,
  now: () => Date = () => new Date(),
): Promise<BackupEntry> {
  const engine = engineForUrl(url)
  if (engine === undefined) throw new BackupRefused('DATABASE_URL names no engine statusd knows')
  const applied = await executedMigrations(database.db)
  const schemaVersion = applied.at(-1)
  if (schemaVersion === undefined)
    throw new BackupRefused('the database holds no statusd schema yet: nothing to back up')
  // backups hold password hashes and keys' hashes: the folder and files are the service's
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const work = await mkdtemp(join(dir, '.partial-'))
  try {
    const createdAt = now()
    const data = join(work, engine.backup.dataFile)
    const taken = await engine.backup.take({ url, db: database.db }, data)
    const manifest: BackupManifest = {
      format: FORMAT,
      formatVersion: FORMAT_VERSION,
      statusd: VERSION,
      schemaVersion,
      engine: engine.name,
      createdAt: createdAt.toISOString(),
      data: {
        file: engine.backup.dataFile,
        bytes: (await stat(data)).size,
        sha256: await sha256(data),
      },
      ...(taken.schema !== undefined && { schema: taken.schema }),
    }
    await writeFile(join(work, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    const name = nameAt(createdAt)
    const partial = join(work, name)
    await create({ file: partial, cwd: work, portable: true }, [MANIFEST, engine.backup.dataFile])
    await chmod(partial, 0o600)
    await rename(partial, join(dir, name))
    return { name, bytes: (await stat(join(dir, name))).size, manifest }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/** Reads and checks a manifest's text; a refusal when it is not one. */
function parseManifest(text: string, what: string): BackupManifest {
  let manifest: Partial<BackupManifest>
  try {
    manifest = JSON.parse(text)
  } catch {
    throw new BackupRefused(`${what} is not a statusd backup (its manifest is not JSON)`)
  }
  const data = manifest.data
  if (
    manifest?.format !== FORMAT ||
    typeof manifest.schemaVersion !== 'string' ||
    typeof manifest.engine !== 'string' ||
    typeof manifest.createdAt !== 'string' ||
    typeof data?.file !== 'string' ||
    typeof data.sha256 !== 'string' ||
    typeof data.bytes !== 'number'
  )
    throw new BackupRefused(`${what} is not a statusd backup (its manifest lacks what it must say)`)
  if (typeof manifest.formatVersion !== 'number' || manifest.formatVersion > FORMAT_VERSION)
    throw new BackupRefused(
      `${what} was written by a newer statusd (backup format ${manifest.formatVersion}): restore it with that version`,
    )
  return manifest as BackupManifest
}

/**
 * The manifest of the backup `file`, read from the start of the tar alone (it comes first),
 * so that listing a folder of large backups reads little of each.
 */
export async function readManifest(file: string): Promise<BackupManifest> {
  const text = await new Promise<string | undefined>((resolve, reject) => {
    const stream = createReadStream(file, { end: 1024 * 1024 - 1 })
    let found = false
    const parser = new Parser({
      onReadEntry: (entry: ReadEntry) => {
        if (entry.path !== MANIFEST || found) {
          entry.resume()
          return
        }
        found = true
        entry.concat().then((body) => {
          stream.destroy()
          resolve(body.toString('utf8'))
        }, reject)
      },
    })
    parser.on('error', () => resolve(undefined))
    stream.on('error', reject)
    stream.on('close', () => {
      if (!found) resolve(undefined)
    })
    stream.pipe(parser)
  })
  if (text === undefined)
    throw new BackupRefused(`${file} is not a statusd backup (no ${MANIFEST} at its start)`)
  return parseManifest(text, file)
}

/** The backups in `dir`, newest first; none when it does not exist. A file that is not one is left out. */
export async function listBackups(dir: string): Promise<BackupEntry[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return []
    throw err
  }
  const entries: BackupEntry[] = []
  for (const name of names.filter((n) => BACKUP_NAME.test(n))) {
    const file = join(dir, name)
    try {
      entries.push({ name, bytes: (await stat(file)).size, manifest: await readManifest(file) })
    } catch (err) {
      if (!(err instanceof BackupRefused) && (err as { code?: string }).code !== 'ENOENT') throw err
    }
  }
  return entries.sort((a, b) => b.manifest.createdAt.localeCompare(a.manifest.createdAt))
}

/** Removes the backups in `dir` past the newest `keep`; returns the names removed. */
export async function pruneBackups(dir: string, keep: number): Promise<string[]> {
  const old = (await listBackups(dir)).slice(keep)
  for (const { name } of old) await rm(join(dir, name), { force: true })
  return old.map((b) => b.name)
}

export interface RestoreResult {
  manifest: BackupManifest
  /** The rows the restored database holds. */
  tables: TableCounts
  rows: number
  /** True when the database held rows that the restore replaced. */
  replaced: boolean
}

/**
 * Restores the backup `file` into the database at `targetUrl`: refused when its checksum
 * does not match its manifest, when its schema is newer than this statusd knows, and when
 * the database holds statusd rows, unless `force` (which replaces them). The restored
 * database is migrated to this version's schema.
 */
export async function restoreBackup(
  file: string,
  targetUrl: string,
  { force = false }: { force?: boolean } = {},
): Promise<RestoreResult> {
  const work = await mkdtemp(join(tmpdir(), 'statusd-restore-'))
  try {
    try {
      await extract({ file, cwd: work, strict: true })
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT')
        throw new BackupRefused(`no file at ${file}`)
      throw new BackupRefused(`${file} is not a statusd backup (${(err as Error).message})`)
    }
    let manifestText: string
    try {
      manifestText = await readFile(join(work, MANIFEST), 'utf8')
    } catch {
      throw new BackupRefused(`${file} is not a statusd backup (no ${MANIFEST} in it)`)
    }
    const manifest = parseManifest(manifestText, file)
    const engine = engineNamed(manifest.engine)
    if (manifest.data.file !== engine.backup.dataFile)
      throw new BackupRefused(
        `${file} is not a statusd backup (its data file is not ${engine.backup.dataFile})`,
      )
    const data = join(work, engine.backup.dataFile)
    const actual = await sha256(data).catch(() => undefined)
    if (actual !== manifest.data.sha256)
      throw new BackupRefused(
        `${file} does not match its manifest (sha256 ${actual ?? 'of a missing file'}, manifest ${manifest.data.sha256}): it is damaged or incomplete; restore another backup`,
      )
    const known = Object.keys(migrations).sort()
    if (!known.includes(manifest.schemaVersion))
      throw new BackupRefused(
        manifest.schemaVersion > (known.at(-1) ?? '')
          ? `${file} has a newer schema (${manifest.schemaVersion}) than this statusd ${VERSION} knows: restore it with statusd ${manifest.statusd} or later`
          : `${file} has a schema this statusd does not know (${manifest.schemaVersion})`,
      )

    const targetEngine = engineForUrl(targetUrl)
    const target = createDatabase(targetUrl, { poolSize: 2 })
    try {
      if (targetEngine !== engine) {
        if (!engine.backup.rowsCopyable)
          throw new BackupRefused(
            `${file} is a backup of ${engine.name}: it restores into ${engine.name} only (statusd copy moves a database between engines)`,
          )
        // into another engine: its rows are copied, in one transaction
        const source = createDatabase(`sqlite:${data}`, { poolSize: 1 })
        try {
          await migrateToLatest(source.db)
          const result = await copyDatabase(source.db, target.db, { force }).catch((err) => {
            if (err instanceof CopyRefused)
              throw new BackupRefused(err.message.replace('the target', 'the database'))
            throw err
          })
          return { manifest, ...result }
        } finally {
          await source.close()
        }
      }
      let replaced = false
      if ((await executedMigrations(target.db)).length > 0) {
        await migrateToLatest(target.db)
        const before = await countRows(target.db)
        replaced = Object.values(before).some((n) => n > 0)
        if (replaced && !force)
          throw new BackupRefused(
            `the database is not empty (${describeCounts(before)}); pass --force to replace its contents`,
          )
      }
      await engine.backup.restore({ url: targetUrl, db: target.db }, data, {
        ...(manifest.schema !== undefined && { schema: manifest.schema }),
        tables: [...COPY_TABLES, DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE],
      })
      await migrateToLatest(target.db)
      const tables = await countRows(target.db)
      return {
        manifest,
        tables,
        rows: Object.values(tables).reduce((a, b) => a + b, 0),
        replaced,
      }
    } finally {
      await target.close()
    }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}
