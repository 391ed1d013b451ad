import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config.ts'
import { DatabaseTooNewError, migrateToLatest } from '../db/migrate.ts'
import { storageErrorKind } from '../db/storage-error.ts'
import { UserInputError } from '../lib/errors.ts'
import { serve } from '../server.ts'
import { type Output, print, UsageError, withDb } from './context.ts'
import { COPY_USAGE, copyCommand } from './copy-command.ts'
import { KEY_USAGE, keyCommand } from './key-commands.ts'
import { USER_USAGE, userCommand } from './user-commands.ts'

const USAGE = `Usage:
statusd serve [--json]             run the service (PORT, HOST, DATABASE_URL, … from the environment)
statusd migrate [--json]           apply pending schema migrations and exit
${USER_USAGE}
${KEY_USAGE}
${COPY_USAGE}`

/** Runs one `statusd` command; returns the process exit code. `out`/`err` default to stdout/stderr. */
export async function main(
  argv: string[],
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<number> {
  // `--json` may come before the command too (`statusd --json user list`)
  let rest = argv
  while (rest[0] === '--json') rest = rest.slice(1)
  const [command, ...tail] = rest
  const args = rest === argv ? tail : [...tail, '--json']
  const output: Output = { json: args.includes('--json'), out }
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      out(output.json ? `${JSON.stringify({ usage: USAGE })}\n` : `${USAGE}\n`)
      return command === undefined ? 2 : 0
    }
    const config = loadConfig()
    switch (command) {
      case 'serve': {
        const { values } = parseArgs({ args, options: { json: { type: 'boolean' } } })
        await serve(config, { json: values.json === true })
        return 0
      }
      case 'migrate': {
        parseArgs({ args, options: { json: { type: 'boolean' } } })
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
  } catch (error) {
    return report(error, output.json, err)
  }
}

/**
 * An error of the machine, not of statusd (port taken, address not ours, file not readable):
 * its message says it all, a stack trace would only bury it.
 */
const isSystemError = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string'

/**
 * Storage that cannot serve, or a database set up so that it refuses statusd (no such
 * database or schema, a login or privilege refused): not a fault of statusd. Its message
 * names the cause; a stack trace would only bury it.
 */
const isDatabaseProblem = (error: unknown): boolean => {
  const kind = storageErrorKind(error)
  return kind === 'unavailable' || kind === 'setup'
}

/** Prints a failed command's error to `err` and returns its exit code (2 usage, 1 otherwise). */
function report(error: unknown, json: boolean, err: (text: string) => void): number {
  const usage =
    error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  const known =
    usage ||
    error instanceof UserInputError ||
    error instanceof ConfigError ||
    error instanceof DatabaseTooNewError
  const message = known
    ? // note: one line even where the text has several (parseArgs explains an ambiguous
      // option argument, `--grace -1`, over three)
      (error as Error).message.replace(/\s*\n\s*/g, ' ')
    : isSystemError(error)
      ? error.message
      : isDatabaseProblem(error)
        ? `cannot use the database: ${(error as Error).message}`
        : `unexpected error: ${(error as Error)?.stack ?? error}`
  if (json) err(`${JSON.stringify({ error: known ? message : (error as Error).message })}\n`)
  // one line: the usage is one `statusd help` away (not `--help`: `npx statusd --help` is npm's help)
  else err(`statusd: ${message}${usage ? ' (see: statusd help)' : ''}\n`)
  return usage ? 2 : 1
}
