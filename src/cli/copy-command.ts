import { Command } from 'commander'
import type { CopyProgress, openCopyTarget } from '../db/copy.ts'
import { DEFAULT_BATCH_SIZE } from '../db/copy-defaults.ts'
import { UserInputError } from '../lib/errors.ts'
import { type Output, print, UsageError } from './context.ts'

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
export function copyCommands(
  program: Command,
  output: Output,
  progress: ProgressStream = process.stderr,
): void {
  program
    .command('copy')
    .description('copy a whole database, e.g. from SQLite to PostgreSQL')
    .option('--from <url>', 'the database to copy (required), e.g. sqlite:./data/statusd.db')
    .option('--to <url>', 'the database to copy into (required), e.g. postgres://…')
    .option('--force', 'replace what the target holds')
    .option('--batch-size <n>', `rows per batch (default ${DEFAULT_BATCH_SIZE})`)
    .addHelpText(
      'after',
      '\nExample:\n  $ statusd copy --from sqlite:./data/statusd.db --to postgres://statusd@db/statusd',
    )
    .action((o: { from?: string; to?: string; force?: boolean; batchSize?: string }) =>
      copy(o, output, progress),
    )
}

/** `statusd copy …` alone, with its own progress stream (the copy test draws the bar this way). */
export async function copyCommand(
  args: string[],
  output: Output,
  progress: ProgressStream = process.stderr,
): Promise<void> {
  const program = new Command().exitOverride()
  copyCommands(program, output, progress)
  await program.parseAsync(['copy', ...args.filter((a) => a !== '--json')], { from: 'user' })
}

async function copy(
  values: { from?: string; to?: string; force?: boolean; batchSize?: string },
  output: Output,
  progress: ProgressStream,
): Promise<void> {
  const { from, to } = values
  if (!from || !to) throw new UsageError('copy needs --from URL and --to URL')
  if (from === to) throw new UsageError('copy needs two different databases')
  const batchSize = Number(values.batchSize ?? DEFAULT_BATCH_SIZE)
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new UsageError(`--batch-size must be a positive integer, got "${values.batchSize}"`)
  // note: the storage code loads when the command runs, so that the client commands (and
  // --version) start without it (docs/cli.md)
  const { CopyRefused, copyDatabase, describeCounts, openCopySource, openCopyTarget } =
    await import('../db/copy.ts')
  const { redactDatabaseUrl } = await import('../db/database-url.ts')
  const { isStorageUnavailable } = await import('../db/storage-error.ts')
  // note: the source is only read, and opened as its engine says (a missing file is not
  // created, a backup not switched to another journal mode); the target is opened as usual
  const source = open(() => openCopySource(from, { poolSize: 2 }))
  let target: ReturnType<typeof openCopyTarget>
  try {
    target = open(() => openCopyTarget(to, { poolSize: 2 }))
  } catch (err) {
    await source.close()
    throw err
  }
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
    const result = await copyDatabase(source.db, target.database.db, {
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
      { from: redactDatabaseUrl(from), to: redactDatabaseUrl(to), ...result, seconds },
      () =>
        `copied ${describeCounts(result.tables)} from ${source.describe} to ${target.database.describe}` +
        `${result.replaced ? ' (replacing what it held)' : ''} in ${seconds} s`,
    )
  } finally {
    await source.close()
    await target.database.close()
    // a copy that did not happen leaves no new, empty target behind
    if (!copied) target.discard()
  }
}

/** Opens one end of the copy; what keeps it from opening is the operator's to fix. */
function open<T>(opening: () => T): T {
  try {
    return opening()
  } catch (err) {
    throw new UserInputError((err as Error).message)
  }
}
