import { ConfigError, loadConfig } from '../config.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { UserInputError } from '../modules/users/users.service.ts'
import { serve } from '../server.ts'
import { type Output, print, UsageError, withDb } from './context.ts'
import { COPY_USAGE, copyCommand } from './copy-command.ts'
import { KEY_USAGE, keyCommand } from './key-commands.ts'
import { USER_USAGE, userCommand } from './user-commands.ts'

const USAGE = `Usage:
statusd serve                      run the service (PORT, HOST, DATABASE_URL, … from the environment)
statusd migrate [--json]           apply pending schema migrations and exit
${USER_USAGE}
${KEY_USAGE}
${COPY_USAGE}`

/** Runs one `statusd` command; returns the process exit code. */
export async function main(
  argv: string[],
  out = (t: string) => process.stdout.write(t),
): Promise<number> {
  const [command, ...args] = argv
  const output: Output = { json: args.includes('--json'), out }
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      out(`${USAGE}\n`)
      return command === undefined ? 2 : 0
    }
    const config = loadConfig()
    switch (command) {
      case 'serve':
        await serve(config)
        return 0
      case 'migrate': {
        // note: not migrated on opening, or there would be nothing left to report
        const applied = await withDb(config, (db) => migrateToLatest(db), { migrate: false })
        print(output, { applied }, () =>
          applied.length ? `applied ${applied.join(', ')}` : 'schema is up to date',
        )
        return 0
      }
      case 'user':
        await userCommand(args, config, output)
        return 0
      case 'key':
        await keyCommand(args, config, output)
        return 0
      case 'copy':
        await copyCommand(args, output)
        return 0
      default:
        throw new UsageError(`unknown command: ${command}`)
    }
  } catch (err) {
    return report(err, output)
  }
}

function report(err: unknown, output: Output): number {
  const usage =
    err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  const known = usage || err instanceof UserInputError || err instanceof ConfigError
  const message = known
    ? (err as Error).message
    : `unexpected error: ${(err as Error)?.stack ?? err}`
  if (output.json) process.stderr.write(`${JSON.stringify({ error: (err as Error).message })}\n`)
  else process.stderr.write(`statusd: ${message}\n${usage ? `\n${USAGE}\n` : ''}`)
  return usage ? 2 : 1
}
