// The upgrade fixture of a release (docs/operations.md#making-a-release): run by the release's
// own code, it fills a database of each engine through the HTTP API, as people would (users
// signed up with passwords, sessions, API keys scoped, revoked and whole, statuses with
// history, roles, an invitation waiting, a webhook channel, notification rules, a private
// share link, a public board), then records what the API answered to reads of all of it.
// test/db/upgrade-from-release.test.ts opens the files with the current code, migrates them,
// and asks the same questions: every answer must hold what the release answered (within /v1
// an API only grows), and writes, history and keys must go on working.
//
//   node scripts/make-upgrade-fixture.ts --postgres postgres://postgres@127.0.0.1:5432/postgres
//
// writes test/fixtures/upgrade/<package.json version>/: sqlite.db (the SQLite file),
// postgres.sql (a plain pg_dump of the PostgreSQL database) and, per engine, <engine>.json:
// the secrets (passwords, keys, session cookies, the share link) and the recorded answers.
// The PostgreSQL URL names a server where the role may create databases: the script makes
// one of its own there and drops it at the end. `--force` replaces an existing fixture.
//
// Deterministic where it can be: the services' clock stands at FIXTURE_TIME (then READ_TIME),
// so what they compute from it (share link and session expiry, staleness) is the same on
// every run; timestamps the database writes itself, ids, keys and tokens differ, as they do
// in a real database.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '../src/app.ts'
import { createDatabase } from '../src/db/create-database.ts'
import { executedMigrations, migrateToLatest } from '../src/db/migrate.ts'
import type { Clock } from '../src/lib/clock.ts'
import { DEFAULT_PLANS } from '../src/modules/plans/plans.ts'
import { setUser } from '../src/modules/users/users.service.ts'

/** When the fixture's data was written: the clock every service reads stands here. */
const FIXTURE_TIME = Date.parse('2026-11-29T09:00:00.000Z')
/** When its answers were recorded (and when the test's clock stands): an hour later. */
const READ_TIME = FIXTURE_TIME + 60 * 60_000
/** PUBLIC_URL: the links in the answers are the same on every run. */
const PUBLIC_URL = 'https://status.example.com'
/** The password of every fixture user (it passes the password rules). */
const PASSWORD = 'plum tree at dusk 42'
/** psql's \restrict key in the dump (pg_dump 15.14 and later): fixed, so dumps compare. */
const RESTRICT_KEY = 'statusdupgradefixture'

/** Every scope: the fixture users' own keys do all they may. */
const ALL_SCOPES = [
  'status:read',
  'status:value',
  'status:write',
  'status:manage',
  'keys',
  'account',
]

const ROOT = path.resolve(import.meta.dirname, '..')

/** Who a recorded request was made as: a user's key or session, or nobody. */
export type Actor = `${string}.key` | `${string}.session` | `${string}.scopedKey` | 'anonymous'

/** One read the release answered, to be asked again of the current code. */
export interface RecordedRead {
  as: Actor
  url: string
  status: number
  body: unknown
}

/** What <engine>.json holds: how to act as each fixture user, and what the release answered. */
export interface FixtureRecord {
  version: string
  engine: 'sqlite' | 'postgres'
  /** The last migration the release applied. */
  schemaVersion: string
  madeAt: string
  readAt: string
  /** PUBLIC_URL of the release's service: links in its answers start with it. */
  publicUrl: string
  password: string
  users: Record<
    string,
    { id: string; email: string; key: string; session: string; scopedKey?: string }
  >
  revokedKey: string
  statuses: Record<'room' | 'build', { id: string; key: string; shareId: string }>
  shareLinkToken: string
  board: { id: string; shareId: string }
  channelId: string
  reads: RecordedRead[]
}

type Json = Record<string, unknown>

function standingClock(): Clock & { set(ms: number): void } {
  let now = FIXTURE_TIME
  return {
    now: () => now,
    set(ms) {
      now = ms
    },
  }
}

/** Fills the database at `url` through the API and records the answers. */
async function fill(url: string, engine: FixtureRecord['engine'], version: string) {
  const database = createDatabase(url, { poolSize: 2 })
  await migrateToLatest(database.db)
  const clock = standingClock()
  const app = await buildApp({
    database,
    plans: DEFAULT_PLANS,
    clock,
    signup: 'open',
    keyCacheTtlMs: 0,
    // nothing is delivered: the events stay in the outbox, as a release leaves them
    notifications: { autoStart: false },
    publicUrl: PUBLIC_URL,
  })
  await app.ready()
  const secrets = new Map<Actor, string>()
  const call = async (
    as: Actor,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
    expect?: number,
  ): Promise<{ status: number; body: Json & Json[]; cookie?: string }> => {
    const secret = secrets.get(as)
    const headers: Record<string, string> = {}
    if (as.endsWith('.session')) {
      headers.cookie = `statusd_session=${secret}`
      headers['sec-fetch-site'] = 'same-origin'
    } else if (as !== 'anonymous') headers['service-api-key'] = secret as string
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await app.inject({
      method,
      url,
      headers,
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    })
    if (expect !== undefined && res.statusCode !== expect)
      throw new Error(`${method} ${url} as ${as}: ${res.statusCode} ${res.body}`)
    const cookie = /statusd_session=([^;]+)/.exec(String(res.headers['set-cookie'] ?? ''))?.[1]
    return {
      status: res.statusCode,
      body: res.body === '' ? ({} as Json & Json[]) : res.json(),
      ...(cookie !== undefined && { cookie }),
    }
  }

  // people: each signs up with a password (a session), then makes a key in the app
  const users: FixtureRecord['users'] = {}
  for (const name of ['Olivia', 'Uma', 'Sam']) {
    const email = `${name.toLowerCase()}@example.com`
    const signup = await call(
      'anonymous',
      'POST',
      '/v1/auth/signup',
      { email, name, password: PASSWORD },
      201,
    )
    secrets.set(`${name}.session`, signup.cookie as string)
    const key = await call(
      `${name}.session`,
      'POST',
      '/v1/user/api-keys',
      { label: `${name}'s script`, scopes: ALL_SCOPES },
      201,
    )
    secrets.set(`${name}.key`, key.body.key as string)
    users[name] = {
      id: signup.body.id as string,
      email,
      key: key.body.key as string,
      session: signup.cookie as string,
    }
  }
  // the owner pays: private statuses, share links for longer
  await setUser(database.db, DEFAULT_PLANS, users.Olivia?.id as string, { plan: 'pro' })
  // a second session of hers, signed in with her password
  const login = await call(
    'anonymous',
    'POST',
    '/v1/auth/login',
    { email: 'olivia@example.com', password: PASSWORD },
    200,
  )
  secrets.set('Olivia.session', login.cookie as string)
  ;(users.Olivia as { session: string }).session = login.cookie as string

  // statuses and their history, minute after minute
  let minute = 0
  const tick = () => clock.set(FIXTURE_TIME + ++minute * 60_000)
  const room = await call(
    'Olivia.key',
    'POST',
    '/v1/status-keys/room-4',
    {
      name: 'Meeting room 4',
      value: 'FREE',
      description: 'Second floor, by the stairs',
      accessType: 'public',
      palette: [
        { value: 'FREE', colorNo: 2 },
        { value: 'BUSY', colorNo: 1 },
      ],
    },
    201,
  )
  const build = await call(
    'Olivia.key',
    'POST',
    '/v1/status-keys/nightly-build',
    { name: 'Nightly build', value: 'PASSING', accessType: 'private' },
    201,
  )
  const roomId = room.body.id as string
  const buildId = build.body.id as string
  for (const value of ['BUSY', 'FREE', 'BUSY']) {
    tick()
    await call('Olivia.key', 'POST', '/v1/status-keys/room-4', { value }, 200)
  }

  // roles: Uma updates the room, Sam follows both; Sam is offered more on the room
  const offer = async (statusId: string, user: string, role: string) => {
    const res = await call('Olivia.key', 'PUT', `/v1/status/${statusId}/users/${users[user]?.id}`, {
      role,
    })
    if (res.status !== 202) throw new Error(`offering ${role}: ${res.status}`)
    return res.body.id as string
  }
  const accept = (user: string, id: string) =>
    call(`${user}.key`, 'POST', `/v1/user/invitations/${id}/accept`, undefined, 200)
  await accept('Uma', await offer(roomId, 'Uma', 'updater'))
  await accept('Sam', await offer(roomId, 'Sam', 'subscriber'))
  await accept('Sam', await offer(buildId, 'Sam', 'subscriber'))
  tick()
  await call('Uma.key', 'PATCH', `/v1/status/${roomId}`, { value: 'FREE' }, 200)
  await offer(roomId, 'Sam', 'updater')

  // keys: a device key confined to the room's value, and a key that was revoked
  const scoped = await call(
    'Olivia.key',
    'POST',
    '/v1/user/api-keys',
    { label: 'room 4 display', scopes: ['status:read', 'status:value'], statusIds: [roomId] },
    201,
  )
  users.Olivia = {
    ...(users.Olivia as FixtureRecord['users'][string]),
    scopedKey: scoped.body.key as string,
  }
  secrets.set('Olivia.scopedKey', scoped.body.key as string)
  tick()
  await call('Olivia.scopedKey', 'PATCH', `/v1/status/${roomId}`, { value: 'BUSY' }, 200)
  const doomed = await call(
    'Olivia.key',
    'POST',
    '/v1/user/api-keys',
    { label: 'lost laptop' },
    201,
  )
  await call('Olivia.key', 'DELETE', `/v1/user/api-keys/${doomed.body.id}`, undefined, 204)

  // notifications: a webhook channel; rules of the owner and a subscriber
  const channel = await call(
    'Olivia.key',
    'POST',
    '/v1/user/channels',
    {
      type: 'webhook',
      name: 'Team hook',
      config: { url: 'https://hooks.example.com/statusd', format: 'standard' },
    },
    201,
  )
  await call(
    'Olivia.key',
    'PUT',
    `/v1/status/${buildId}/notifications`,
    { when: { changesTo: ['FAILING'] }, channels: [channel.body.id] },
    200,
  )
  await call('Sam.key', 'PUT', `/v1/status/${roomId}/notifications`, { when: 'any' }, 200)
  // two writes the rules match: their events wait in the outbox
  tick()
  await call('Olivia.key', 'PATCH', `/v1/status/${buildId}`, { value: 'FAILING' }, 200)
  tick()
  await call('Olivia.key', 'POST', '/v1/status-keys/room-4', { value: 'FREE' }, 200)

  // a private share link of the build, and a public board of both
  const link = await call('Olivia.key', 'POST', `/v1/status/${buildId}/share-links`, {}, 201)
  const shareLinkToken = new URL(link.body.url as string).pathname.split('/').pop() as string
  const board = await call(
    'Olivia.key',
    'POST',
    '/v1/boards',
    { name: 'Second floor', statusIds: [roomId, buildId], accessType: 'public' },
    201,
  )

  // what the release answers, an hour later
  clock.set(READ_TIME)
  const roomShare = room.body.shareId as string
  const reads: [Actor, string][] = [
    ['Olivia.key', `/v1/status/${roomId}`],
    ['Olivia.key', `/v1/status/${buildId}`],
    ['Olivia.key', '/v1/status-keys/room-4'],
    ['Olivia.key', `/v1/status/${roomId}/history`],
    ['Olivia.key', `/v1/status/${buildId}/history`],
    ['Olivia.key', `/v1/status/${roomId}/users`],
    ['Olivia.key', `/v1/status/${roomId}/invitations/pending`],
    ['Olivia.key', '/v1/user/status'],
    ['Olivia.key', '/v1/user/api-keys'],
    ['Olivia.key', '/v1/user/channels'],
    ['Olivia.key', `/v1/user/channels/${channel.body.id}/deliveries`],
    ['Olivia.key', `/v1/status/${buildId}/notifications`],
    ['Olivia.key', `/v1/status/${buildId}/share-links`],
    ['Olivia.key', '/v1/boards'],
    ['Olivia.key', `/v1/boards/${board.body.id}`],
    ['Olivia.key', '/v1/checkAuth'],
    ['Olivia.session', '/v1/user'],
    ['Olivia.scopedKey', '/v1/checkAuth'],
    ['Olivia.scopedKey', `/v1/status/${roomId}`],
    ['Uma.key', `/v1/status/${roomId}`],
    ['Uma.key', '/v1/user/subscriptions'],
    ['Sam.key', '/v1/user/subscriptions'],
    ['Sam.key', '/v1/user/invitations'],
    ['Sam.key', `/v1/status/${roomId}/notifications`],
    ['Sam.key', `/v1/status/${buildId}/history`],
    ['anonymous', `/v1/share/${roomShare}`],
    ['anonymous', `/v1/share/${roomShare}/history`],
    ['anonymous', `/v1/share-links/${shareLinkToken}`],
    ['anonymous', `/b/${board.body.shareId}/json`],
    ['anonymous', '/v1/auth/settings'],
  ]
  const recorded: RecordedRead[] = []
  for (const [as, url] of reads) {
    const res = await call(as, 'GET', url)
    recorded.push({ as, url, status: res.status, body: res.body })
  }
  const record: FixtureRecord = {
    version,
    engine,
    schemaVersion: (await executedMigrations(database.db)).at(-1) as string,
    madeAt: new Date(FIXTURE_TIME).toISOString(),
    readAt: new Date(READ_TIME).toISOString(),
    publicUrl: PUBLIC_URL,
    password: PASSWORD,
    users,
    revokedKey: doomed.body.key as string,
    statuses: {
      room: { id: roomId, key: 'room-4', shareId: roomShare },
      build: { id: buildId, key: 'nightly-build', shareId: build.body.shareId as string },
    },
    shareLinkToken,
    board: { id: board.body.id as string, shareId: board.body.shareId as string },
    channelId: channel.body.id as string,
    reads: recorded,
  }
  await app.close()
  return record
}

function writeRecord(dir: string, record: FixtureRecord) {
  fs.writeFileSync(path.join(dir, `${record.engine}.json`), `${JSON.stringify(record, null, 2)}\n`)
}

async function main() {
  const { values } = parseArgs({
    options: { postgres: { type: 'string' }, force: { type: 'boolean', default: false } },
  })
  if (values.postgres === undefined) {
    process.stderr.write(
      'usage: node scripts/make-upgrade-fixture.ts --postgres postgres://USER@HOST:PORT/DB [--force]\n',
    )
    process.exit(2)
  }
  const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version
  const dir = path.join(ROOT, 'test', 'fixtures', 'upgrade', version)
  if (fs.existsSync(dir) && !values.force) {
    process.stderr.write(`${path.relative(ROOT, dir)} exists: pass --force to replace it\n`)
    process.exit(1)
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-upgrade-fixture-'))
  const made = path.join(work, 'out')
  fs.mkdirSync(made)
  try {
    // SQLite: a file, then VACUUM INTO: one compact file, with no write-ahead log beside it
    const file = path.join(work, 'fill.db')
    writeRecord(made, await fill(`sqlite:${file}`, 'sqlite', version))
    const copy = createDatabase(`sqlite:${file}`)
    await sql`vacuum into ${path.join(made, 'sqlite.db')}`.execute(copy.db)
    await copy.close()

    // PostgreSQL: a database of its own, dumped as plain SQL that psql loads into an empty one
    const server = new URL(values.postgres)
    const name = `statusd_fixture_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: server.href })
    await admin.connect()
    await admin.query(`create database "${name}"`)
    try {
      const url = new URL(server.href)
      url.pathname = `/${name}`
      writeRecord(made, await fill(url.href, 'postgres', version))
      const restrict = execFileSync('pg_dump', ['--help'], { encoding: 'utf8' }).includes(
        '--restrict-key',
      )
      execFileSync('pg_dump', [
        '--no-owner',
        '--no-privileges',
        ...(restrict ? [`--restrict-key=${RESTRICT_KEY}`] : []),
        '--file',
        path.join(made, 'postgres.sql'),
        url.href,
      ])
    } finally {
      await admin.query(`drop database if exists "${name}"`)
      await admin.end()
    }
    fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(path.dirname(dir), { recursive: true })
    fs.cpSync(made, dir, { recursive: true })
    for (const f of fs.readdirSync(dir).sort())
      process.stdout.write(
        `${path.relative(ROOT, path.join(dir, f))}: ${fs.statSync(path.join(dir, f)).size} bytes\n`,
      )
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

await main()
