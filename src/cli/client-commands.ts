import { createInterface } from 'node:readline/promises'
import { Writable } from 'node:stream'
import { type Command, Option } from 'commander'
import { clientOf, realSleep, type Sleep } from './client.ts'
import { baseUrl, type ClientSettings, readSettings, saveSettings } from './client-config.ts'
import { type Output, print, table, UsageError } from './output.ts'
import type { HistoryEntry, Status, StatusWrite } from './statusd-client.ts'
import { durationOf, localTime, sinceOf, spanOf, untilOf } from './value-end.ts'
import { watch } from './watch.ts'

/** What the client commands read besides their arguments; tests give their own. */
export interface ClientIo {
  env: NodeJS.ProcessEnv
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  /** Ends `watch` (exit 0); without it, Ctrl-C (SIGINT) does. */
  signal?: AbortSignal
  sleep?: Sleep
  err: (text: string) => void
  /** The time `--until 14:00` counts from; the system clock without it. */
  now?: () => Date
}

interface SetOptions {
  color?: string
  name?: string
  for?: string
  until?: string
  then?: string
}

/** Who wrote a history entry, and with which of your keys, when it has a label. */
const writer = (h: HistoryEntry): string => {
  if (h.via === 'schedule') return '(schedule)'
  const who = h.by?.name ?? '-'
  return h.via?.label ? `${who} (key ${h.via.label})` : who
}

const NOT_LOGGED_IN =
  'no server to talk to: run statusd login --url URL (the key on stdin), or set STATUSD_URL and STATUSD_API_KEY'

/** The settings a command needs: a URL, and (unless `keyOptional`) a key. */
function settingsFor(io: ClientIo, keyOptional = false): ClientSettings {
  const settings = readSettings(io.env)
  if (!settings || (!keyOptional && !settings.apiKey)) throw new UsageError(NOT_LOGGED_IN)
  return settings
}

/** A status as aligned lines of label and value. */
export function describeStatus(s: Status): string {
  return table([
    ['key', s.statusKey ?? '-'],
    ['name', s.name],
    ['value', s.value ?? '(none)'],
    ['colour', String(s.colorNo)],
    ['access', s.accessType],
    ['changes', String(s.changeCount)],
    ['updated', s.valueUpdatedAt ?? s.updatedAt],
    ...(s.valueUntil ? [['until', s.valueUntil]] : []),
    ...(s.valueUntil ? [['then', s.valueAfter ?? '(none)']] : []),
    ...(s.stale ? [['stale', 'yes']] : []),
    ['id', s.id],
    ['share id', s.shareId],
  ])
}

/** Reads the API key from stdin: a prompt without echo on a terminal, else the first line. */
async function readKey(io: ClientIo, url: string): Promise<string> {
  if (io.stdin.isTTY) {
    io.err(`API key for ${url}: `)
    // note: the terminal echoes nothing, as for a password
    const silent = new Writable({ write: (_c, _e, done) => done() })
    const rl = createInterface({ input: io.stdin, output: silent, terminal: true })
    try {
      return (await rl.question('')).trim()
    } finally {
      rl.close()
      io.err('\n')
    }
  }
  let text = ''
  for await (const chunk of io.stdin) text += String(chunk)
  return (text.split(/\r?\n/)[0] ?? '').trim()
}

/** `statusd login`, `set`, `get`, `ls`, `history`, `watch`: the API, over HTTP. */
export function clientCommands(program: Command, output: Output, io: ClientIo): void {
  const sleep = io.sleep ?? realSleep

  program
    .command('login')
    .description('check an API key against a server and save both for the other commands')
    .option('--url <url>', 'the server, e.g. https://status.example.com (default STATUSD_URL)')
    .addHelpText(
      'after',
      `
The key is read from stdin (never from the command line, where other users see it):
typed at a prompt that does not echo it, or piped in.

Examples:
  $ statusd login --url https://status.example.com
  $ statusd login --url http://127.0.0.1:8080 < key.txt
  $ printf %s "$KEY" | statusd login --url http://127.0.0.1:8080`,
    )
    .action(async (o: { url?: string }) => {
      const given = o.url ?? io.env.STATUSD_URL
      if (!given) throw new UsageError('login needs --url URL')
      const url = baseUrl(given, '--url')
      const apiKey = await readKey(io, url)
      if (!apiKey)
        throw new UsageError(
          'login reads the API key from stdin: statusd login --url URL < key.txt',
        )
      // the key is saved only once the server knows it
      const { userId, name, authLevel } = await clientOf({ url }, sleep, apiKey).checkAuth()
      const file = saveSettings(io.env, { url, apiKey })
      print(
        output,
        { url, userId, name, authLevel, configFile: file },
        () => `logged in to ${url} as ${name} (${userId}); saved in ${file}`,
      )
    })

  program
    .command('set')
    .description('set a status by its key; creates it if you have none with that key')
    .argument('<key>', 'a status key')
    .argument('<value>', 'the new value (1 to 10 characters)')
    .option('--color <n>', 'colour number, 1 to 12')
    .option('--name <name>', 'display name')
    .addOption(
      new Option('--for <duration>', 'the value ends after this long: 45m, 1h30m, 2d or PT45M'),
    )
    .addOption(
      new Option(
        '--until <time>',
        'the value ends at this time: 14:00 (local, today or tomorrow) or an instant',
      ).conflicts('for'),
    )
    .option('--then <value>', 'the value once it ends (default: the value before this one)')
    .addHelpText(
      'after',
      `
A value set without --for or --until has no end, and cancels the end an earlier
value had.

Examples:
  $ statusd set room-4 FREE
  $ statusd set room-4 OCCUPIED --color 2 --name "Meeting room 4"
  $ statusd set room-4 OCCUPIED --for 45m --then FREE
  $ statusd set room-4 AWAY --until 14:00
  $ statusd set build-main PASSING --json`,
    )
    .action(async (key: string, value: string, o: SetOptions) => {
      let colorNo: number | undefined
      if (o.color !== undefined) {
        colorNo = Number(o.color)
        if (o.color.trim() === '' || !Number.isInteger(colorNo))
          throw new UsageError(`--color must be a whole number from 1 to 12, got "${o.color}"`)
      }
      if (o.then !== undefined && o.for === undefined && o.until === undefined)
        throw new UsageError('--then needs --for or --until: when the value ends')
      const now = io.now?.() ?? new Date()
      const valueUntil =
        o.for !== undefined
          ? durationOf(o.for)
          : o.until !== undefined
            ? untilOf(o.until, now)
            : undefined
      const input: StatusWrite = {
        value,
        ...(colorNo !== undefined && { colorNo }),
        ...(o.name !== undefined && { name: o.name }),
        ...(valueUntil !== undefined && { valueUntil }),
        ...(o.then !== undefined && { valueAfter: o.then }),
      }
      const { status: s, created } = await clientOf(settingsFor(io), sleep).upsert(key, input)
      print(output, s, () => {
        const { valueUntil, valueAfter } = s
        const then = valueAfter == null ? '' : `, then ${valueAfter}`
        const ends = valueUntil ? ` until ${localTime(valueUntil, now)}${then}` : ''
        return `${s.statusKey} = ${s.value}${ends}${created ? ' (created)' : ''}`
      })
    })

  program
    .command('get')
    .description('show one of your statuses by its key')
    .argument('<key>', 'a status key')
    .addHelpText('after', '\nExamples:\n  $ statusd get room-4\n  $ statusd get room-4 --json')
    .action(async (key: string) => {
      const status = await clientOf(settingsFor(io), sleep).getByKey(key)
      print(output, status, () => describeStatus(status))
    })

  program
    .command('ls')
    .description('list the statuses you own with their values, oldest first')
    .addHelpText(
      'after',
      `
Each line: key, name, value, when the value was set, share id and id. --json prints the
list entries, each with its value and valueUpdatedAt.

Examples:
  $ statusd ls
  $ statusd ls --json`,
    )
    .action(async () => {
      // note: list entries are the interface's four fields; the values come from the stream of
      // many statuses, which sends each one's current state first (one request per 100)
      const statuses = await clientOf(settingsFor(io), sleep).listStatuses()
      const list = statuses.map((s) => ({
        statusId: s.id,
        statusKey: s.statusKey,
        shareId: s.shareId,
        name: s.name,
        value: s.value,
        valueUpdatedAt: s.valueUpdatedAt,
      }))
      print(output, list, () =>
        list.length === 0
          ? '(no statuses)'
          : table([
              ['KEY', 'NAME', 'VALUE', 'SET', 'SHARE ID', 'ID'],
              ...list.map((s) => [
                s.statusKey ?? '-',
                s.name,
                s.value ?? '(none)',
                s.valueUpdatedAt ?? '-',
                s.shareId,
                s.statusId,
              ]),
            ]),
      )
    })

  program
    .command('history')
    .description("a status's value updates, newest first")
    .argument('<key>', 'a status key')
    .option('--limit <n>', 'at most this many entries, 1 to 1000')
    .addHelpText(
      'after',
      '\nExamples:\n  $ statusd history room-4\n  $ statusd history room-4 --limit 5 --json',
    )
    .action(async (key: string, o: { limit?: string }) => {
      if (o.limit !== undefined && !/^[1-9][0-9]*$/.test(o.limit))
        throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${o.limit}"`)
      const client = clientOf(settingsFor(io), sleep)
      const status = await client.getByKey(key)
      const { items: entries } = await client.history(status.id, {
        ...(o.limit !== undefined && { limit: Number(o.limit) }),
      })
      print(output, entries, () =>
        entries.length === 0
          ? '(no value updates)'
          : table([['AT', 'VALUE', 'BY'], ...entries.map((h) => [h.at, h.value, writer(h)])]),
      )
    })

  program
    .command('durations')
    .description('how long a status held each value over a time, the longest first')
    .argument('<key>', 'a status key')
    .option('--since <duration>', 'from this long ago until now, such as 24h, 7d or 30d', '24h')
    .option('--from <instant>', 'from this instant (RFC 3339) instead')
    .option('--to <instant>', 'until this instant (RFC 3339), not now')
    .addHelpText(
      'after',
      '\nExamples:\n  $ statusd durations room-4\n  $ statusd durations room-4 --since 7d --json',
    )
    .action(async (key: string, o: { since: string; from?: string; to?: string }) => {
      const from = o.from ?? sinceOf(o.since, new Date())
      const client = clientOf(settingsFor(io), sleep)
      const status = await client.getByKey(key)
      const answer = await client.durations(status.id, { from, ...(o.to && { to: o.to }) })
      print(output, answer, () =>
        answer.values.length === 0
          ? '(no value in this time)'
          : table([
              ['VALUE', 'TIME', 'SHARE'],
              ...answer.values.map((v) => [
                v.value,
                spanOf(v.seconds),
                `${(v.share * 100).toFixed(1)}%`,
              ]),
            ]),
      )
    })

  program
    .command('watch')
    .description('follow a status live: yours by key or id, anyone\u2019s public one by share id')
    .argument('<key|id|shareId>', 'a status key, status id or share id')
    .addHelpText(
      'after',
      `
It prints the current state, then every change, until Ctrl-C (exit 0). When the
connection drops it reconnects, backing off, and resumes where it was.

Examples:
  $ statusd watch room-4
  $ statusd watch room-4 --json | jq -r .value
  $ STATUSD_URL=https://status.example.com statusd watch s6hkaick`,
    )
    .action(async (target: string) => {
      const settings = settingsFor(io, true)
      let signal = io.signal
      let stop: (() => void) | undefined
      if (signal === undefined) {
        // Ctrl-C ends the watch, and the command with 0
        const controller = new AbortController()
        stop = () => controller.abort()
        process.once('SIGINT', stop)
        signal = controller.signal
      }
      try {
        await watch(settings, target, { output, sleep, signal, err: io.err })
      } finally {
        if (stop) process.off('SIGINT', stop)
      }
    })
}
