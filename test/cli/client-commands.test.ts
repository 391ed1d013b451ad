import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import path from 'node:path'
import { Readable } from 'node:stream'
import { before, describe, it } from 'node:test'
import { main } from '../../src/cli/main.ts'
import { VERSION } from '../../src/lib/version.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { defer, suiteLifetime, tempDir } from '../helpers/cleanup.ts'
import { BIN } from '../helpers/processes.ts'

// The client side of `statusd` (docs/cli.md): main() in-process, as bin/statusd.js runs it,
// with its own environment (HOME, STATUSD_*), stdin and sleep, against a real server on a
// socket (127.0.0.1, a port of the system's choice); a proxy in between where the network
// failing is the point.

// note: a bound for waiting, not a timing assertion: a broken stream fails instead of hanging
const WAIT_MS = 10_000

const life = suiteLifetime()
let t: TestApp
let url: string
let alice: TestUser
/** HOME of a logged-in user (alice), and of nobody (no config file). */
let home: string
let nobody: string

before(async () => {
  t = await makeApp(life)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  alice = await t.user({ name: 'Alice' })
  home = tempDir(life, 'statusd-client-home-')
  nobody = tempDir(life, 'statusd-client-nobody-')
  const login = await statusd(['login', '--url', url], { stdin: `${alice.key}\n` })
  assert.equal(login.code, 0, login.stderr)
})

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs `statusd …` in-process for a user whose HOME is `env.HOME` (alice's by default). */
async function statusd(
  argv: string[],
  {
    env = {},
    stdin = '',
    sleep = async () => {},
    now,
    signal,
    out,
    tty = false,
  }: {
    env?: NodeJS.ProcessEnv
    stdin?: string
    /** stdin is a terminal (typed, not piped) */
    tty?: boolean
    sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
    /** the CLI's clock, for --until */
    now?: () => Date
    signal?: AbortSignal
    out?: (text: string) => void
  } = {},
): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await main(
    argv,
    (text) => {
      stdout += text
      out?.(text)
    },
    (text) => {
      stderr += text
    },
    {
      env: { HOME: home, ...env },
      stdin: Object.assign(Readable.from(stdin ? [stdin] : []), { isTTY: tty }),
      sleep,
      ...(now && { now }),
      ...(signal && { signal }),
    },
  )
  return { code, stdout, stderr }
}

/** Runs a command with --json that must succeed; its parsed output. */
// biome-ignore lint/suspicious/noExplicitAny: parsed CLI output, every use is checked by an assertion
async function json(argv: string[], env?: NodeJS.ProcessEnv): Promise<any> {
  const r = await statusd([...argv, '--json'], { ...(env && { env }) })
  assert.equal(r.code, 0, `statusd ${argv.join(' ')}: ${r.stderr}`)
  assert.equal(r.stderr, '')
  return JSON.parse(r.stdout)
}

describe('statusd login (docs/cli.md#login)', () => {
  it('saves the URL and the key read from stdin in ~/.config/statusd/config.json, mode 0600 in a 0700 folder', () => {
    const file = path.join(home, '.config', 'statusd', 'config.json')
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { url, apiKey: alice.key })
    assert.equal(fs.statSync(file).mode & 0o777, 0o600)
    assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700)
  })

  it('prints who the key belongs to, and honours XDG_CONFIG_HOME', async () => {
    const xdg = tempDir(life)
    const r = await statusd(['login', '--url', `${url}/`, '--json'], {
      env: { HOME: nobody, XDG_CONFIG_HOME: xdg },
      stdin: alice.key,
    })
    assert.equal(r.code, 0, r.stderr)
    const file = path.join(xdg, 'statusd', 'config.json')
    assert.deepEqual(JSON.parse(r.stdout), {
      url,
      userId: alice.id,
      name: 'Alice',
      authLevel: 'verified',
      configFile: file,
    })
    assert.equal(fs.statSync(file).mode & 0o777, 0o600)
    assert.ok(!fs.existsSync(path.join(nobody, '.config')), 'nothing under HOME')
  })

  it('at a terminal it prompts for the key on stderr and echoes nothing of it', async () => {
    const r = await statusd(['login', '--url', url], {
      env: { HOME: tempDir(life) },
      stdin: `${alice.key}\n`,
      tty: true,
    })
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stderr, `API key for ${url}: \n`)
    assert.ok(!r.stdout.includes(alice.key))
    assert.match(r.stdout, /^logged in to http:\/\/127\.0\.0\.1:\d+ as Alice /)
  })

  it('the key is never taken from the command line', async () => {
    for (const argv of [
      ['login', '--url', url, alice.key],
      ['login', '--url', url, '--api-key', alice.key],
      ['login', '--url', url, '--key', alice.key],
    ]) {
      const r = await statusd(argv, { env: { HOME: nobody }, stdin: alice.key })
      assert.equal(r.code, 2, r.stderr)
      assert.match(r.stderr, /^statusd: login (does not take --|takes no argument)/)
      assert.ok(!r.stderr.includes(alice.key), 'the key is not echoed')
    }
    assert.ok(!fs.existsSync(path.join(nobody, '.config')))
  })

  it('a key the server refuses is not saved (exit 1, the server’s message); no key is a usage error', async () => {
    const bad = await statusd(['login', '--url', url], {
      env: { HOME: nobody },
      stdin: 'sdk_NotAKeyAtAll0000000000000000000000000',
    })
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /^statusd: .+ \(unauthorized\)\n$/)
    const none = await statusd(['login', '--url', url], { env: { HOME: nobody } })
    assert.equal(none.code, 2)
    assert.match(none.stderr, /reads the API key from stdin/)
    const noUrl = await statusd(['login'], { env: { HOME: nobody }, stdin: alice.key })
    assert.equal(noUrl.code, 2)
    assert.match(noUrl.stderr, /login needs --url URL/)
    assert.ok(!fs.existsSync(path.join(nobody, '.config')))
  })
})

describe('statusd set / get / ls / history (docs/cli.md#commands)', () => {
  it('set creates, then updates; get, ls and history show it', async () => {
    const created = await json(['set', 'room-4', 'FREE', '--color', '3', '--name', 'Room four'])
    assert.equal(created.statusKey, 'room-4')
    assert.equal(created.value, 'FREE')
    assert.equal(created.colorNo, 3)
    assert.equal(created.name, 'Room four')
    const human = await statusd(['set', 'room-4', 'OCCUPIED'])
    assert.equal(human.code, 0, human.stderr)
    assert.equal(human.stdout, 'room-4 = OCCUPIED\n')
    const first = await statusd(['set', 'lamp-x', 'ON'])
    assert.equal(first.stdout, 'lamp-x = ON (created)\n')

    const got = await json(['get', 'room-4'])
    assert.equal(got.id, created.id)
    assert.equal(got.value, 'OCCUPIED')
    assert.equal(got.changeCount, 2)
    const shown = await statusd(['get', 'room-4'])
    assert.match(
      shown.stdout,
      /^key {7}room-4\nname {6}Room four\nvalue {5}OCCUPIED\ncolour {4}3\n/,
    )

    // ls shows each status's value (docs/cli.md#commands)
    const list = await json(['ls'])
    assert.deepEqual(
      list.map((s: { statusKey: string; value: string }) => [s.statusKey, s.value]),
      [
        ['room-4', 'OCCUPIED'],
        ['lamp-x', 'ON'],
      ],
    )
    assert.equal(list[0].valueUpdatedAt, got.valueUpdatedAt)
    const table = (await statusd(['ls'])).stdout.split('\n')
    assert.deepEqual(table[0]?.split(/ {2,}/), ['KEY', 'NAME', 'VALUE', 'SET', 'SHARE ID', 'ID'])
    assert.deepEqual(table[1]?.split(/ {2,}/), [
      'room-4',
      'Room four',
      'OCCUPIED',
      got.valueUpdatedAt,
      created.shareId,
      created.id,
    ])
    assert.equal(table[2]?.split(/ {2,}/)[2], 'ON')

    const history = await json(['history', 'room-4'])
    assert.deepEqual(
      history.map((h: { value: string }) => h.value),
      ['OCCUPIED', 'FREE'],
    )
    assert.deepEqual(
      (await json(['history', 'room-4', '--limit', '1'])).map((h: { value: string }) => h.value),
      ['OCCUPIED'],
    )
    assert.match(
      (await statusd(['history', 'room-4'])).stdout,
      /^AT {24}VALUE {5}BY\n\S+Z {2}OCCUPIED {2}Alice\n/,
    )
  })

  it('durations sums the time in each value over --since, --from and --to (docs/cli.md#commands)', async () => {
    await json(['set', 'desk-9', 'IN'])
    await json(['set', 'desk-9', 'OUT'])
    const answer = await json(['durations', 'desk-9', '--since', '7d'])
    assert.deepEqual(answer.values.map((v: { value: string }) => v.value).sort(), ['IN', 'OUT'])
    const shares = answer.values.reduce((sum: number, v: { share: number }) => sum + v.share, 0)
    assert.ok(Math.abs(shares - 1) < 1e-9, `shares add up to 1, got ${shares}`)
    const week = Date.parse(answer.to) - Date.parse(answer.from)
    assert.equal(Math.round(week / 86_400_000), 7)
    const human = (await statusd(['durations', 'desk-9'])).stdout.split('\n')
    assert.deepEqual(human[0]?.split(/ {2,}/), ['VALUE', 'TIME', 'SHARE'])
    const before = await json([
      'durations',
      'desk-9',
      '--from',
      '2020-01-01T00:00:00Z',
      '--to',
      '2020-01-02T00:00:00Z',
    ])
    assert.deepEqual(before.values, [])
    assert.equal(
      (
        await statusd([
          'durations',
          'desk-9',
          '--from',
          '2020-01-01T00:00:00Z',
          '--to',
          '2020-01-02T00:00:00Z',
        ])
      ).stdout,
      '(no value in this time)\n',
    )
    const bad = await statusd(['durations', 'desk-9', '--since', 'a week'])
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /--since takes a duration such as 45m/)
  })

  it('STATUSD_URL and STATUSD_API_KEY override the config file, each on its own', async () => {
    const bob = await t.user({ name: 'Bob' })
    await t.request(bob, 'POST', '/v1/status-keys/bobs-desk', { value: 'IN' })
    const asBob = await json(['ls'], { STATUSD_API_KEY: bob.key })
    assert.deepEqual(
      asBob.map((s: { statusKey: string }) => s.statusKey),
      ['bobs-desk'],
    )
    // a closed port: the file's URL is not used
    const closed = net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const away = await statusd(['ls'], { env: { STATUSD_URL: `http://127.0.0.1:${port}` } })
    assert.equal(away.code, 1)
    assert.match(away.stderr, /^statusd: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/)
    // no file at all: the environment is enough
    const envOnly = await json(['get', 'bobs-desk'], {
      HOME: nobody,
      STATUSD_URL: url,
      STATUSD_API_KEY: bob.key,
    })
    assert.equal(envOnly.value, 'IN')
  })
})

describe('statusd set --for / --until / --then (docs/cli.md#values-that-end)', () => {
  const MINUTE = 60_000
  /** A user of their own (by STATUSD_URL and STATUSD_API_KEY), so that alice's list stays as it is. */
  let env: NodeJS.ProcessEnv
  before(async () => {
    const carol = await t.user({ name: 'Carol' })
    env = { HOME: nobody, STATUSD_URL: url, STATUSD_API_KEY: carol.key }
  })

  it('--for 45m --then FREE: the value ends 45 minutes after the write, then FREE', async () => {
    const sent = Date.now()
    const s = await json(['set', 'desk-1', 'BUSY', '--for', '45m', '--then', 'FREE'], env)
    const answered = Date.now()
    assert.equal(s.value, 'BUSY')
    assert.equal(s.valueAfter, 'FREE')
    // the server counts the duration from the write, between sending and the answer
    const until = Date.parse(s.valueUntil)
    assert.ok(sent + 45 * MINUTE <= until && until <= answered + 45 * MINUTE, s.valueUntil)
    const shown = await statusd(['get', 'desk-1'], { env })
    assert.match(shown.stdout, new RegExp(`\\nuntil {5}${s.valueUntil}\\nthen {6}FREE\\n`))
  })

  it('--until HH:MM is the next such local time; set prints it, and the value after defaults to the one before', async () => {
    await json(['set', 'desk-2', 'FREE'], env)
    const now = new Date()
    // two hours ahead in local time, on the minute: today or (near midnight) tomorrow
    const at = new Date(now.getTime() + 120 * MINUTE)
    const hhmm = `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`
    at.setSeconds(0, 0)
    const r = await statusd(['set', 'desk-2', 'AWAY', '--until', hhmm], { env, now: () => now })
    assert.equal(r.code, 0, r.stderr)
    const pad = (n: number) => String(n).padStart(2, '0')
    const shownAt =
      at.toDateString() === now.toDateString()
        ? hhmm
        : `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${hhmm}`
    assert.ok(r.stdout.startsWith(`desk-2 = AWAY until ${shownAt}`), r.stdout)
    assert.ok(r.stdout.endsWith(', then FREE\n'), r.stdout)
    const s = await json(['get', 'desk-2'], env)
    assert.deepEqual([Date.parse(s.valueUntil), s.valueAfter], [at.getTime(), 'FREE'])
  })

  it('--until an instant with its offset is sent as that instant; a new status needs --then', async () => {
    const at = new Date(Date.now() + 3 * 24 * 60 * MINUTE)
    at.setUTCSeconds(0, 0)
    // a new status has no value before: it needs the value after
    const s = await json(
      [
        'set',
        'desk-3',
        'OUT',
        '--until',
        at.toISOString().replace('.000Z', '+00:00'),
        '--then',
        'IN',
      ],
      env,
    )
    assert.equal(Date.parse(s.valueUntil), at.getTime())
  })

  it('a later set without --for or --until cancels the pending end', async () => {
    await json(['set', 'desk-4', 'BUSY', '--for', '1h', '--then', 'FREE'], env)
    const s = await json(['set', 'desk-4', 'AWAY'], env)
    assert.deepEqual([s.value, s.valueUntil, s.valueAfter], ['AWAY', null, null])
    const human = await statusd(['get', 'desk-4'], { env })
    assert.ok(!/^until /m.test(human.stdout), human.stdout)
  })
})

describe('exit codes: 0 done, 1 refused, 2 usage (docs/cli.md#exit-codes)', () => {
  const cases: {
    name: string
    argv: string[]
    env?: NodeJS.ProcessEnv
    code: number
    message: RegExp
    errorCode?: string
  }[] = [
    {
      name: 'a status that is not there',
      argv: ['get', 'nosuch'],
      code: 1,
      message: /not found|no status/i,
      errorCode: 'notFound',
    },
    {
      name: 'a value the API refuses',
      argv: ['set', 'room-4', 'ELEVEN-CHARS'],
      code: 1,
      message: /value/,
      errorCode: 'validationError',
    },
    {
      name: 'a colour out of range',
      argv: ['set', 'room-4', 'FREE', '--color', '13'],
      code: 1,
      message: /colorNo/,
      errorCode: 'validationError',
    },
    {
      name: 'a key that is refused',
      argv: ['ls'],
      env: { STATUSD_API_KEY: 'sdk_NotAKeyAtAll0000000000000000000000000' },
      code: 1,
      message: /./,
      errorCode: 'unauthorized',
    },
    {
      name: 'a missing argument',
      argv: ['set', 'room-4'],
      code: 2,
      message: /^statusd: set needs the new value/,
    },
    {
      name: 'an argument more',
      argv: ['get', 'room-4', 'extra'],
      code: 2,
      message: /get does not take "extra"/,
    },
    {
      name: 'a colour that is no number',
      argv: ['set', 'room-4', 'FREE', '--color', 'red'],
      code: 2,
      message: /--color must be a whole number/,
    },
    {
      name: 'an end shorter than a minute',
      argv: ['set', 'room-4', 'BUSY', '--for', 'PT30S'],
      code: 1,
      message: /valueUntil/,
      errorCode: 'validationError',
    },
    {
      name: 'an end given twice',
      argv: ['set', 'room-4', 'BUSY', '--for', '45m', '--until', '14:00'],
      code: 2,
      message: /--until <time> cannot be used with option --for <duration>/,
    },
    {
      name: 'a value after without an end',
      argv: ['set', 'room-4', 'BUSY', '--then', 'FREE'],
      code: 2,
      message: /--then needs --for or --until/,
    },
    {
      name: 'a duration it cannot read',
      argv: ['set', 'room-4', 'BUSY', '--for', 'soon'],
      code: 2,
      message: /--for takes a duration such as 45m/,
    },
    {
      name: 'a time it cannot read',
      argv: ['set', 'room-4', 'BUSY', '--until', '2pm'],
      code: 2,
      message: /--until takes a local time such as 14:00/,
    },
    {
      name: 'an unknown command',
      argv: ['frobnicate'],
      code: 2,
      message: /^statusd: unknown command: frobnicate \(see: statusd help\)$/,
    },
    {
      name: 'not logged in',
      argv: ['ls'],
      env: { HOME: nobody },
      code: 2,
      message: /run statusd login --url URL/,
    },
    {
      name: 'an unknown shell',
      argv: ['completion', 'tcsh'],
      code: 2,
      message: /completion knows bash, zsh and fish/,
    },
  ]
  for (const c of cases) {
    it(`${c.name}: exit ${c.code}, one line on stderr; with --json one JSON line`, async () => {
      const r = await statusd(c.argv, { ...(c.env && { env: c.env }) })
      assert.equal(r.code, c.code, r.stderr)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /^statusd: [^\n]+\n$/)
      assert.match(r.stderr.trimEnd(), c.message)
      if (c.errorCode) assert.ok(r.stderr.includes(`(${c.errorCode})`), r.stderr)
      const j = await statusd([...c.argv, '--json'], { ...(c.env && { env: c.env }) })
      assert.equal(j.code, c.code)
      assert.match(j.stderr, /^[^\n]+\n$/)
      const body = JSON.parse(j.stderr)
      assert.equal(typeof body.error, 'string')
      if (c.errorCode) {
        assert.equal(body.errorCode, c.errorCode)
        assert.equal(typeof body.requestId, 'string')
      }
    })
  }

  it('get room-4: exit 0', async () => {
    assert.equal((await statusd(['get', 'room-4'])).code, 0)
  })
})

describe('--version, --help, did you mean, completion', () => {
  it('--version prints the package version', async () => {
    for (const argv of [['--version'], ['-v']]) {
      const r = await statusd(argv)
      assert.equal(r.code, 0)
      assert.equal(r.stdout, `${VERSION}\n`)
    }
    assert.deepEqual(await json(['--version']), { version: VERSION })
  })

  it('every command has its --help, with examples (and `statusd help <command>` is the same)', async () => {
    const commands = [
      'serve',
      'migrate',
      'user',
      'user add',
      'user list',
      'user set',
      'user link',
      'key',
      'key create',
      'key list',
      'key revoke',
      'key rotate',
      'copy',
      'login',
      'set',
      'get',
      'ls',
      'history',
      'watch',
      'completion',
    ]
    for (const command of commands) {
      const words = command.split(' ')
      const r = await statusd([...words, '--help'])
      assert.equal(r.code, 0, command)
      assert.equal(r.stderr, '')
      assert.match(r.stdout, new RegExp(`^Usage: statusd ${command} `), command)
      assert.match(r.stdout, /\nExamples?:\n {2}\$ .*statusd /, `${command} shows an example`)
      const viaHelp = await statusd(['help', ...words])
      assert.equal(viaHelp.stdout, r.stdout, `statusd help ${command}`)
    }
  })

  it('a typo gets a suggestion: did you mean', async () => {
    const cases: [string[], RegExp][] = [
      [['sett', 'room-4', 'FREE'], /unknown command: sett \(did you mean set\?\)/],
      [['wach', 'room-4'], /unknown command: wach \(did you mean watch\?\)/],
      [
        ['set', 'room-4', 'FREE', '--colour', '3'],
        /set does not take --colour \(did you mean --color\?\)/,
      ],
      [['key', 'revok', 'k1'], /unknown command: key revok \(did you mean revoke\?\)/],
      [['help', 'sett'], /unknown command: sett \(did you mean set\?\)/],
      [['help', 'user', 'ad'], /unknown command: user ad \(did you mean add\?\)/],
    ]
    for (const [argv, message] of cases) {
      const r = await statusd(argv)
      assert.equal(r.code, 2)
      assert.match(r.stderr, message)
      assert.doesNotMatch(r.stderr, /\n./, 'one line')
    }
  })

  it('completion bash is valid bash and completes commands, subcommands and options', async () => {
    const r = await statusd(['completion', 'bash'])
    assert.equal(r.code, 0)
    const file = path.join(tempDir(life), 'statusd.bash')
    fs.writeFileSync(file, r.stdout)
    execFileSync('bash', ['-n', file])
    const complete = (line: string) => {
      const words = line.split(' ')
      const script = `source ${JSON.stringify(file)}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_statusd; echo "\${COMPREPLY[*]}"`
      return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).trim()
    }
    assert.equal(complete('statusd us'), 'user')
    assert.equal(complete('statusd user a'), 'add')
    assert.equal(complete('statusd key r'), 'revoke rotate')
    assert.equal(complete('statusd set room-4 FREE --c'), '--color')
    assert.equal(complete('statusd --json wa'), 'watch')
  })

  it('completion zsh and fish name every command and option', async () => {
    for (const shell of ['zsh', 'fish']) {
      const r = await statusd(['completion', shell])
      assert.equal(r.code, 0)
      for (const word of [
        'serve',
        'login',
        'set',
        'watch',
        'history',
        'rotate',
        'color',
        'batch-size',
      ])
        assert.ok(r.stdout.includes(word), `${shell}: ${word}`)
    }
    assert.match((await statusd(['completion', 'zsh'])).stdout, /^#compdef statusd\n/)
    assert.match((await statusd(['completion', 'fish'])).stdout, /^complete -c statusd -f$/m)
  })
})

/** What a command writes to stdout, line by line, with a wait for the nth line. */
function lines() {
  let text = ''
  let wake = () => {}
  const all = () => text.split('\n').slice(0, -1)
  return {
    out: (chunk: string) => {
      text += chunk
      wake()
    },
    all,
    async until(n: number): Promise<string[]> {
      const deadline = Date.now() + WAIT_MS
      while (all().length < n) {
        if (Date.now() > deadline) throw new Error(`waited for ${n} lines, got: ${text}`)
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 100)
        })
      }
      return all()
    },
  }
}

/** A TCP proxy to the server that can cut every connection through it at once. */
async function cuttableProxy() {
  const sockets = new Set<net.Socket>()
  let sent = ''
  const target = new URL(url)
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname)
    sockets.add(client)
    sockets.add(upstream)
    client.on('data', (d) => {
      sent += d.toString('latin1')
    })
    client.pipe(upstream)
    upstream.pipe(client)
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    for (const s of [client, upstream]) {
      s.on('error', end)
      s.on('close', end)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  defer(life, () => new Promise((resolve) => server.close(resolve)))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      for (const s of sockets) s.destroy()
    },
    /** The heads of the event-stream requests sent through it, in order. */
    streamRequests: () => sent.split('\r\n\r\n').filter((h) => /^GET \S+\/events HTTP/m.test(h)),
  }
}

describe('statusd watch (docs/cli.md#watch)', () => {
  it('prints one JSON object a line, and after a dropped connection resumes: no change missed, none twice', {
    timeout: 30_000,
  }, async () => {
    const proxy = await cuttableProxy()
    await t.request(alice, 'POST', '/v1/status-keys/door', { value: 'SHUT' })
    // the watch's pauses wait for the test: a change is made while it is away
    const pauses: (() => void)[] = []
    let paused = () => {}
    const sleep = (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve) => {
        pauses.push(resolve)
        signal?.addEventListener('abort', () => resolve())
        paused()
      })
    const nextPause = () =>
      new Promise<void>((resolve) => {
        paused = resolve
        if (pauses.length) resolve()
      })
    const stop = new AbortController()
    const seen = lines()
    const watching = statusd(['watch', 'door', '--json'], {
      env: { STATUSD_URL: proxy.url },
      sleep,
      signal: stop.signal,
      out: seen.out,
    })
    await seen.until(1)
    await t.request(alice, 'POST', '/v1/status-keys/door', { value: 'OPEN' })
    await seen.until(2)

    // the network drops; a change is made before the watch is back
    const gone = nextPause()
    proxy.cut()
    await gone
    await t.request(alice, 'POST', '/v1/status-keys/door', { value: 'AJAR' })
    pauses.shift()?.()
    await seen.until(3)
    await t.request(alice, 'POST', '/v1/status-keys/door', { value: 'LOCKED' })
    await seen.until(4)

    // dropped again, nothing changed meanwhile: nothing is sent again
    const again = nextPause()
    proxy.cut()
    await again
    pauses.shift()?.()
    // the reconnect is in when its request has gone through the proxy
    const deadline = Date.now() + WAIT_MS
    while (proxy.streamRequests().length < 3 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    await t.request(alice, 'POST', '/v1/status-keys/door', { value: 'SHUT' })
    await seen.until(5)

    stop.abort()
    const r = await watching
    assert.equal(r.code, 0, r.stderr)
    const events = seen.all().map((line) => JSON.parse(line))
    assert.deepEqual(
      events.map((s: { value: string }) => s.value),
      ['SHUT', 'OPEN', 'AJAR', 'LOCKED', 'SHUT'],
    )
    assert.deepEqual(
      events.map((s: { changeCount: number }) => s.changeCount),
      [1, 2, 3, 4, 5],
    )
    const requests = proxy.streamRequests()
    assert.equal(requests.length, 3)
    assert.doesNotMatch(requests[0] ?? '', /last-event-id/i)
    for (const head of requests.slice(1)) assert.match(head, /^last-event-id: \S+$/im)
  })

  it('prints a line a change; a dropped connection is said on stderr with the wait before the next', {
    timeout: 30_000,
  }, async () => {
    const proxy = await cuttableProxy()
    await t.request(alice, 'POST', '/v1/status-keys/porch', { value: 'DARK' })
    let paused = () => {}
    const pause = new Promise<void>((resolve) => {
      paused = resolve
    })
    const stop = new AbortController()
    const seen = lines()
    const watching = statusd(['watch', 'porch'], {
      env: { STATUSD_URL: proxy.url },
      sleep: async () => paused(),
      signal: stop.signal,
      out: seen.out,
    })
    await seen.until(1)
    proxy.cut()
    await pause
    await t.request(alice, 'POST', '/v1/status-keys/porch', { value: 'LIT' })
    await seen.until(2)
    stop.abort()
    const r = await watching
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(
      seen.all().map((line) => line.split(/ {2}/).slice(1)),
      [
        ['porch', 'DARK'],
        ['porch', 'LIT'],
      ],
    )
    assert.match(r.stderr, /^statusd: the connection dropped \(.+\); reconnecting in \d+ s\n/)
  })

  it('a value with a pending end shows when it ends and what follows (docs/cli.md#values-that-end)', {
    timeout: 30_000,
  }, async () => {
    const timed = (
      await t.request(alice, 'POST', '/v1/status-keys/kettle', {
        value: 'ON',
        valueUntil: 'PT5M',
        valueAfter: 'OFF',
      })
    ).json()
    const stop = new AbortController()
    const seen = lines()
    const watching = statusd(['watch', 'kettle'], { signal: stop.signal, out: seen.out })
    await seen.until(1)
    await t.request(alice, 'POST', '/v1/status-keys/kettle', { value: 'OFF' })
    await seen.until(2)
    stop.abort()
    assert.equal((await watching).code, 0)
    assert.deepEqual(
      seen.all().map((line) => line.split(/ {2}/).slice(1)),
      [
        ['kettle', 'ON', `until ${timed.valueUntil}, then OFF`],
        ['kettle', 'OFF'],
      ],
    )
  })

  it('a public status by share id needs no key; Ctrl-C (SIGINT) ends the command with 0', {
    timeout: 30_000,
  }, async () => {
    const res = await t.request(alice, 'POST', '/v1/status-keys/lobby', {
      value: 'OPEN',
      accessType: 'public',
    })
    const { shareId } = res.json()
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: nobody, STATUSD_URL: url }
    const child = spawn(process.execPath, [BIN, 'watch', shareId, '--json'], { env })
    defer(life, () => child.kill('SIGKILL'))
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    )
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += d
    })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no event: ${stderr}`)), WAIT_MS)
      child.stdout.on('data', (d) => {
        stdout += d
        if (stdout.includes('\n')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    const view = JSON.parse(stdout.split('\n')[0] as string)
    assert.equal(view.value, 'OPEN')
    assert.equal(view.shareId, shareId)
    child.kill('SIGINT')
    assert.equal(await exited, 0, stderr)
  })
})

describe('writes retry with the same Idempotency-Key (docs/cli.md#safe-retries)', () => {
  /**
   * An HTTP proxy that forwards every request and, as told, loses answers on the way back, or
   * answers a write itself with a 503 without passing it on.
   */
  async function lossyProxy(
    lose: (n: number) => boolean,
    busy: (n: number) => boolean = () => false,
  ) {
    let received = 0
    const writes: { idempotencyKey: string | undefined; replayed: string | null }[] = []
    const server = http.createServer(async (req, res) => {
      const body = Buffer.concat(await req.toArray())
      if (req.method === 'POST' && busy(++received)) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
        return res.end(JSON.stringify({ message: 'Busy', errorCode: 'unavailable' }))
      }
      const headers: Record<string, string> = {}
      for (const name of ['service-api-key', 'content-type', 'idempotency-key', 'accept'])
        if (typeof req.headers[name] === 'string') headers[name] = req.headers[name]
      const upstream = await fetch(`${url}${req.url}`, {
        method: req.method as string,
        headers,
        ...(body.length > 0 && { body }),
      })
      const answer = Buffer.from(await upstream.arrayBuffer())
      if (req.method === 'POST') {
        writes.push({
          idempotencyKey: req.headers['idempotency-key'] as string | undefined,
          replayed: upstream.headers.get('idempotent-replayed'),
        })
        // the write reached the server; its answer never reaches the client
        if (lose(writes.length)) return req.socket.destroy()
      }
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
      })
      res.end(answer)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    defer(life, () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    })
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, writes }
  }

  it('an answer lost after the write: the retry is answered from the record, exactly one change', async () => {
    const proxy = await lossyProxy((n) => n === 1)
    const waits: number[] = []
    const r = await statusd(['set', 'gate', 'OPEN', '--json'], {
      env: { STATUSD_URL: proxy.url },
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    assert.equal(r.code, 0, r.stderr)
    assert.equal(proxy.writes.length, 2)
    const [first, retry] = proxy.writes
    assert.match(first?.idempotencyKey ?? '', /^[0-9a-f-]{36}$/)
    assert.equal(retry?.idempotencyKey, first?.idempotencyKey, 'the same Idempotency-Key')
    assert.equal(retry?.replayed, 'true', 'answered from the first write')
    assert.equal(waits.length, 1, 'one pause before the retry')
    assert.equal(JSON.parse(r.stdout).changeCount, 1)
    const history = await t.request(alice, 'GET', `/v1/status/${JSON.parse(r.stdout).id}/history`)
    assert.equal(history.json().length, 1, 'exactly one change')
  })

  it('a 503 (with Retry-After) is retried after the wait it asks for; the write is made once', async () => {
    const proxy = await lossyProxy(
      () => false,
      (n) => n <= 2,
    )
    const waits: number[] = []
    const r = await statusd(['set', 'bell', 'RING', '--json'], {
      env: { STATUSD_URL: proxy.url },
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(waits, [1000, 1000], 'Retry-After: 1, twice')
    assert.equal(proxy.writes.length, 1, 'only the third attempt reached the server')
    assert.equal(JSON.parse(r.stdout).changeCount, 1)
  })

  it('a write whose answers are all lost gives up after 4 attempts, all with one key (exit 1)', async () => {
    const proxy = await lossyProxy(() => true)
    const r = await statusd(['set', 'gate', 'SHUT'], { env: { STATUSD_URL: proxy.url } })
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^statusd: cannot reach http:\/\/127\.0\.0\.1:\d+: /)
    assert.equal(proxy.writes.length, 4)
    assert.equal(new Set(proxy.writes.map((w) => w.idempotencyKey)).size, 1)
    const gate = await t.request(alice, 'GET', '/v1/status-keys/gate')
    assert.equal(gate.json().changeCount, 2, 'the four attempts made one change')
  })
})
