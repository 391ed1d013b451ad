import type { Command } from 'commander'
import { UserInputError } from '../lib/errors.ts'
import { type AdminContext, print, withDb } from './context.ts'

/** Where `statusd backup` writes when neither --to nor BACKUP_DIR says. */
const DEFAULT_BACKUP_DIR = './backups'

/** Runs a storage step; a refusal (BackupRefused) is the operator's to act on. */
async function refusing<T>(step: () => Promise<T>): Promise<T> {
  const { BackupRefused } = await import('../db/backup.ts')
  try {
    return await step()
  } catch (err) {
    if (err instanceof BackupRefused) throw new UserInputError(err.message)
    throw err
  }
}

/**
 * `statusd backup [--to DIR]` and `statusd restore FILE [--force]`
 * (docs/operations.md#backup-and-restore). The storage code loads when they run.
 */
export function backupCommands(program: Command, ctx: AdminContext): void {
  program
    .command('backup')
    .description('write a backup of the database (while the service serves)')
    .option('--to <dir>', `the folder it goes to (default: BACKUP_DIR, else ${DEFAULT_BACKUP_DIR})`)
    .addHelpText(
      'after',
      '\nExample:\n  $ DATABASE_URL=sqlite:./data/statusd.db statusd backup --to /var/backups/statusd',
    )
    .action(async (o: { to?: string }) => {
      const config = await ctx.config()
      const dir = o.to ?? config.backupDir ?? DEFAULT_BACKUP_DIR
      const { takeBackup } = await import('../db/backup.ts')
      const { join } = await import('node:path')
      const started = performance.now()
      // note: not migrated: a backup changes nothing, and takes the schema as it is
      const entry = await withDb(
        config,
        (_db, database) => refusing(() => takeBackup(database, config.databaseUrl, dir)),
        { migrate: false },
      )
      const seconds = Math.round(performance.now() - started) / 1000
      const path = join(dir, entry.name)
      print(
        ctx.output,
        { ...entry, path, seconds },
        () =>
          `backed up to ${path} (${entry.bytes} bytes, schema ${entry.manifest.schemaVersion}, sha256 ${entry.manifest.data.sha256}) in ${seconds} s`,
      )
    })

  program
    .command('restore')
    .description('fill an empty database from a backup (--force: replace what it holds)')
    .argument('<file>', 'the backup file (statusd-….tar)')
    .option('--force', 'replace what the database holds')
    .addHelpText(
      'after',
      '\nExample:\n  $ DATABASE_URL=sqlite:./data/statusd.db statusd restore backups/statusd-20261129-030000-4f2a9c.tar',
    )
    .action(async (file: string, o: { force?: boolean }) => {
      const config = await ctx.config()
      const { restoreBackup } = await import('../db/backup.ts')
      const { describeCounts } = await import('../db/copy.ts')
      const { redactDatabaseUrl } = await import('../db/database-url.ts')
      const started = performance.now()
      const result = await refusing(() =>
        restoreBackup(file, config.databaseUrl, { force: o.force ?? false }),
      )
      const seconds = Math.round(performance.now() - started) / 1000
      print(
        ctx.output,
        { file, to: redactDatabaseUrl(config.databaseUrl), ...result, seconds },
        () =>
          `restored ${file} (taken ${result.manifest.createdAt} by statusd ${result.manifest.statusd}) into ${redactDatabaseUrl(config.databaseUrl)}${result.replaced ? ', replacing what it held' : ''}: ${describeCounts(result.tables)} in ${seconds} s`,
      )
    })
}
