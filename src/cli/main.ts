// note: the client commands and --version need nothing of the server's or the storage's code,
// so only theirs is imported here; each admin command loads what it runs when it runs
// (`await import`), which makes a client command start in a fraction of the time (docs/cli.md)
import { Command, type CommanderError } from 'commander'
import { UserInputError } from '../lib/errors.ts'
import { VERSION } from '../lib/version.ts'
import { backupCommands } from './backup-commands.ts'
import { ClientError } from './client.ts'
import { type ClientIo, clientCommands } from './client-commands.ts'
import { completionCommand } from './completion.ts'
import { type AdminContext, withDb } from './context.ts'
import { copyCommands } from './copy-command.ts'
import { keyCommands } from './key-commands.ts'
import { type Output, print, UsageError } from './output.ts'
import { StatusdError } from './statusd-client.ts'
import { userCommands } from './user-commands.ts'

/** Where a run of `statusd` reads and writes; tests give their own, bin/statusd.js none. */
export interface Io extends Partial<ClientIo> {}

/**
 * Runs one `statusd` command; returns the process exit code: 0 done, 1 refused (by the
 * server, the store, or the machine), 2 usage (docs/cli.md#exit-codes). `out`/`err` default to
 * stdout/stderr.
 */
export async function main(
  argv: string[],
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
  io: Io = {},
): Promise<number> {
  // note: read before parsing, so that a parse error is reported as JSON too
  const end = argv.indexOf('--')
  const json = (end === -1 ? argv : argv.slice(0, end)).includes('--json')
  // help and version go through here, collected, so that --json can wrap them
  let written = ''
  const output: Output = { json, out }
  const program = buildProgram(
    output,
    (t) => {
      written += t
    },
    {
      env: io.env ?? process.env,
      // note: process.stdin is opened only by the command that reads it (login)
      get stdin() {
        return io.stdin ?? process.stdin
      },
      ...(io.signal !== undefined && { signal: io.signal }),
      ...(io.sleep !== undefined && { sleep: io.sleep }),
      ...(io.now !== undefined && { now: io.now }),
      err,
    },
  )
  if (argv.length === 0 || (json && argv.length === 1)) {
    // nothing to do: the overview, as a usage error
    err(program.helpInformation())
    return 2
  }
  // `statusd help user add` is `statusd user add --help` (commander's help command takes one
  // word); for a command that does not exist, its error (`did you mean`), not the overview
  const words = argv.filter((a) => a !== '--json')
  const args =
    words[0] === 'help' && words.length > 1
      ? [...words.slice(1), ...(exists(program, words.slice(1)) ? ['--help'] : [])]
      : argv
  try {
    await program.parseAsync(args, { from: 'user' })
    return 0
  } catch (error) {
    if (error instanceof ParseFailure) {
      const { code } = error.commanderError
      if (code === 'commander.helpDisplayed' || code === 'commander.version') {
        out(
          json
            ? `${JSON.stringify(code === 'commander.version' ? { version: VERSION } : { usage: written })}\n`
            : written,
        )
        return 0
      }
      if (code === 'commander.help') {
        // `statusd help …` (0), or a command given without its subcommand (`statusd user`: 2)
        const ok = error.commanderError.exitCode === 0
        if (ok) out(json ? `${JSON.stringify({ usage: written })}\n` : written)
        else err(written)
        return ok ? 0 : 2
      }
      // the help that explains it: the command's own (its parent's, for a mistyped command)
      return report(new UsageError(inOurWords(error), pathOf(error.command)), json, err)
    }
    return await report(error, json, err)
  }
}

/** A parse error of commander, with the command it happened in. */
class ParseFailure extends Error {
  readonly commanderError: CommanderError
  readonly command: Command

  constructor(commanderError: CommanderError, command: Command) {
    super(commanderError.message)
    this.commanderError = commanderError
    this.command = command
  }
}

/** The command tree: the admin commands, then the client ones. */
function buildProgram(output: Output, write: (text: string) => void, io: ClientIo): Command {
  const program = new Command('statusd')
    .description(
      'statusd: a self-hosted status service (the server, its admin commands, and a client)',
    )
    .version(VERSION, '-v, --version', 'print the version')
    .option(
      '--json',
      'machine output: JSON (watch: one JSON object a line); errors as one JSON line',
    )
    .configureOutput({ writeOut: write, writeErr: write, outputError: () => {} })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .helpCommand('help [command]', 'show the help of a command')
    .addHelpText(
      'after',
      `
Examples:
  $ statusd serve                         run the service
  $ statusd login --url https://status.example.com < key.txt
  $ statusd set room-4 FREE --color 3     set a status by its key
  $ statusd watch room-4 --json           follow it live, one JSON object a line
  $ statusd help set                      the help of one command (or: statusd set --help)`,
    )
  const admin: AdminContext = {
    output,
    config: async () => (await import('../config.ts')).loadConfig(),
  }

  program
    .command('serve')
    .description('run the service (PORT, HOST, DATABASE_URL, … from the environment)')
    .addHelpText(
      'after',
      '\nExample:\n  $ PORT=8080 DATABASE_URL=sqlite:./data/statusd.db statusd serve --json',
    )
    .action(async () => {
      // note: loaded only here, so that the client commands start without the server's code
      const { serve } = await import('../server.ts')
      await serve(await admin.config(), { json: output.json })
    })
  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .addHelpText(
      'after',
      '\nExample:\n  $ DATABASE_URL=postgres://statusd@db/statusd statusd migrate',
    )
    .action(async () => {
      // note: not migrated on opening, or there would be nothing left to report
      const { migrateToLatest } = await import('../db/migrate.ts')
      const applied = await withDb(await admin.config(), (db) => migrateToLatest(db), {
        migrate: false,
      })
      print(output, { applied }, () =>
        applied.length ? `applied ${applied.join(', ')}` : 'schema is up to date',
      )
    })
  userCommands(program, admin)
  keyCommands(program, admin)
  copyCommands(program, output)
  backupCommands(program, admin)
  clientCommands(program, output, io)
  completionCommand(program, output)

  // every command reports its parse errors to main(), which words them (inOurWords)
  const each = (command: Command) => {
    command.exitOverride((e) => {
      throw new ParseFailure(e, command)
    })
    command.commands.forEach(each)
  }
  each(program)
  return program
}

/** Whether `words` name a command of the tree (`user add`). */
const exists = (program: Command, words: string[]): boolean => {
  let command: Command | undefined = program
  for (const word of words) command = command?.commands.find((c) => c.name() === word)
  return command !== undefined
}

/** `user add`, `key rotate`: the command's words after `statusd`. */
const pathOf = (command: Command): string => {
  const names: string[] = []
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

/**
 * A parse error in statusd's words, on one line: what is wrong and, for a typo, what was meant
 * (commander's own text says `error: unknown option '--colour'` over two lines).
 */
function inOurWords({ commanderError: e, command }: ParseFailure): string {
  const path = pathOf(command)
  const quoted = /'([^']*)'/.exec(e.message)?.[1] ?? ''
  const meant = /\(Did you mean (.+)\?\)/.exec(e.message)?.[1]
  const suggestion = meant ? ` (did you mean ${meant}?)` : ''
  switch (e.code) {
    case 'commander.unknownCommand':
      return `unknown command: ${path ? `${path} ` : ''}${quoted}${suggestion}`
    case 'commander.unknownOption':
      return `${path ? `${path} does not take` : 'unknown option'} ${quoted}${suggestion}`
    case 'commander.excessArguments':
      // note: a key given to login is not echoed back to the terminal (or a CI log)
      if (path === 'login') return 'login takes no argument: it reads the API key from stdin'
      return `${path} does not take "${command.args[command.registeredArguments.length]}"`
    case 'commander.missingArgument': {
      const argument = command.registeredArguments.find((a) => a.name() === quoted)
      return `${path} needs ${argument?.description || `<${quoted}>`}`
    }
    case 'commander.optionMissingArgument':
      // quoted: the option's flags, `--grace <seconds>`
      return `${quoted.split(/[ ,]+/).find((f) => f.startsWith('--')) ?? quoted} needs a value`
    default:
      return e.message
        .replace(/^error: /, '')
        .replace(/\s*\n\s*/g, ' ')
        .replaceAll("'", '')
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
const isDatabaseProblem = async (error: unknown): Promise<boolean> => {
  const { storageErrorKind } = await import('../db/storage-error.ts')
  const kind = storageErrorKind(error)
  return kind === 'unavailable' || kind === 'setup'
}

/**
 * A configuration statusd refuses, or a database it cannot migrate (a newer statusd's, or
 * one a pre-release left part-way): errors of modules only an admin command loads (this
 * file's first note), so loaded only to tell them.
 */
const isAdminCommandRefusal = async (error: unknown): Promise<boolean> => {
  if (!(error instanceof Error)) return false
  const { ConfigError } = await import('../config.ts')
  const { DatabaseTooNewError, PreReleaseDatabaseError } = await import('../db/migrate.ts')
  return (
    error instanceof ConfigError ||
    error instanceof DatabaseTooNewError ||
    error instanceof PreReleaseDatabaseError
  )
}

/** Prints a failed command's error to `err` and returns its exit code (2 usage, 1 otherwise). */
async function report(error: unknown, json: boolean, err: (text: string) => void): Promise<number> {
  if (error instanceof StatusdError) return report(ClientError.of(error), json, err)
  const usage = error instanceof UsageError
  if (error instanceof ClientError) {
    // the server's own words, and its code for scripts
    if (json) err(`${JSON.stringify(error.toJSON())}\n`)
    else err(`statusd: ${error.message}${error.errorCode ? ` (${error.errorCode})` : ''}\n`)
    return error.exitCode
  }
  const known = usage || error instanceof UserInputError || (await isAdminCommandRefusal(error))
  const message = known
    ? (error as Error).message.replace(/\s*\n\s*/g, ' ')
    : isSystemError(error)
      ? error.message
      : (await isDatabaseProblem(error))
        ? `cannot use the database: ${(error as Error).message}`
        : `unexpected error: ${(error as Error)?.stack ?? error}`
  if (json) err(`${JSON.stringify({ error: known ? message : (error as Error).message })}\n`)
  // one line: the usage is one `statusd help` away (not `--help`: `npx statusd --help` is npm's help)
  else
    err(
      `statusd: ${message}${usage ? ` (see: statusd help${error.command ? ` ${error.command}` : ''})` : ''}\n`,
    )
  return usage ? 2 : 1
}
