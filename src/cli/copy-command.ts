import { closeSync, existsSync, openSync, readSync, rmSync } from 'node:fs'
import { parseArgs } from 'node:util'
import {
  type CopyProgress,
  CopyRefused,
  copyDatabase,
  DEFAULT_BATCH_SIZE,
  describeCounts,
} from '../db/copy.ts'
import {
  createDatabase,
  type Database,
  isStorageUnavailable,
  redactUrl,
  sqlitePath,
} from '../db/create-db.ts'
import { UserInputError } from '../modules/users/users.service.ts'
import { type Output, print, UsageError } from './context.ts'

export const COPY_USAGE = `statusd copy --from URL --to URL [--force] [--batch-size N] [--json]
                                   copy a whole database, e.g. sqlite:./data/statusd.db to postgres://…`

/** Where progress goes: a bar when it is a terminal, plain lines otherwise. */
export interface ProgressStream {
  isTTY?: boolean
  write(text: string): unknown
}

const BAR_WIDTH = 30

/** One frame of the terminal progress bar. */
export function renderBar(p: CopyProgress): string {
  const fraction = p.totalAll === 0 ? 1 : p.copiedAll / p.totalAll
  const filled = Math.round(fraction * BAR_WIDTH)
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.floor(fraction * 100)
    .toString()
    .padStart(3)}%  ${p.copiedAll}/${p.totalAll} rows  ${p.table} ${p.copied}/${p.total}`
}

/** `statusd copy --from URL --to URL`: moves a whole statusd database to another engine or place. */
export async function copyCommand(
  args: string[],
  output: Output,
  progress: ProgressStream = process.stderr,
): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      force: { type: 'boolean' },
      'batch-size': { type: 'string' },
      json: { type: 'boolean' },
    },
  })
  const { from, to } = values
  if (!from || !to) throw new UsageError('copy needs --from URL and --to URL')
  if (from === to) throw new UsageError('copy needs two different databases')
  const batchSize = Number(values['batch-size'] ?? DEFAULT_BATCH_SIZE)
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new UsageError(`--batch-size must be a positive integer, got "${values['batch-size']}"`)
  const fromPath = sqlitePath(from)
  // note: opening a missing SQLite file would create an empty one: a typo must not do that
  if (fromPath === ':memory:' || (fromPath !== null && !existsSync(fromPath)))
    throw new UserInputError(`no database at ${from}`)
  // the source is only read: a file that is not SQLite is refused before it is opened, and
  // one not in WAL mode (a `VACUUM INTO` backup) is opened read-only, as it is: opened as
  // statusd opens its own, it would be switched to WAL mode
  const journal = fromPath === null ? 'wal' : sqliteJournal(fromPath)
  if (journal === null)
    throw new UserInputError(`${from} is not a statusd database (not a SQLite file)`)
  const toPath = sqlitePath(to)
  const targetIsNew = toPath !== null && toPath !== ':memory:' && !existsSync(toPath)

  const source = open(from, { readOnly: journal === 'rollback' })
  const target = open(to)
  let copied = false
  const started = performance.now()
  let lastTable = ''
  let lastDraw = 0
  const onProgress = (p: CopyProgress) => {
    if (progress.isTTY) {
      const now = performance.now()
      // redraws are throttled; the last frame of each table is always drawn
      if (now - lastDraw < 50 && p.copied < p.total) return
      lastDraw = now
      progress.write(`\r${renderBar(p)}\x1b[K`)
    } else if (!output.json && p.copied === p.total && p.table !== lastTable) {
      lastTable = p.table
      output.out(`copied ${p.table}: ${p.total} rows\n`)
    }
  }
  try {
    const result = await copyDatabase(source.db, target.db, {
      batchSize,
      force: values.force ?? false,
      onProgress,
    }).catch((err: unknown) => {
      if (err instanceof CopyRefused) throw new UserInputError(err.message)
      if (isStorageUnavailable(err))
        throw new UserInputError(`cannot reach a database: ${(err as Error).message}`)
      throw err
    })
    copied = true
    if (progress.isTTY) progress.write('\n')
    const seconds = Math.round(performance.now() - started) / 1000
    print(
      output,
      { from: redactUrl(from), to: redactUrl(to), ...result, seconds },
      () =>
        `copied ${describeCounts(result.tables)} from ${source.describe} to ${target.describe}` +
        `${result.replaced ? ' (replacing what it held)' : ''} in ${seconds} s`,
    )
  } finally {
    await source.close()
    await target.close()
    // a copy that did not happen leaves no new, empty target file behind
    if (!copied && targetIsNew && toPath !== null)
      for (const file of [toPath, `${toPath}-wal`, `${toPath}-shm`]) rmSync(file, { force: true })
  }
}

/**
 * A SQLite file's journal mode, from its header ("SQLite format 3", then read and write
 * versions: 2 for WAL, 1 for a rollback journal); null for a file that is not SQLite.
 */
function sqliteJournal(path: string): 'wal' | 'rollback' | null {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const header = Buffer.alloc(20)
    if (readSync(fd, header, 0, 20, 0) < 20) return null
    if (header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return null
    return header[18] === 2 ? 'wal' : 'rollback'
  } catch {
    return null
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

function open(url: string, options: { readOnly?: boolean } = {}): Database {
  try {
    return createDatabase(url, { poolSize: 2, ...options })
  } catch (err) {
    throw new UserInputError((err as Error).message)
  }
}
