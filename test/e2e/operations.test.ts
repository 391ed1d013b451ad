import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import SQLite from 'better-sqlite3'
import { VERSION } from '../../src/lib/version.ts'
import { defer, type Lifetime, suiteLifetime } from '../helpers/cleanup.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import {
  asLogLine,
  BIN,
  type Json,
  runToEnd,
  type Server,
  start,
  startServer,
  statusdEnv,
} from '../helpers/processes.ts'

// docs/operations.md: probes, OpenAPI 3.1 and the docs page on a running server, and
// configuration mistakes that stop `statusd serve` with one line instead of a stack trace.

let dir: string

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-e2e-ops-'))
})
after(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('every command takes --json: serve --json', () => {
  it("serve --json prints the first start's key as one JSON line (and no banner) that works", async (t) => {
    const proc = start(
      t,
      process.execPath,
      [BIN, 'serve', '--json'],
      statusdEnv({
        DATABASE_URL: `sqlite:${path.join(dir, 'serve-json', 'statusd.db')}`,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      }),
    )
    const line = await proc.waitForLine(
      (l) => asLogLine(l)?.firstStart !== undefined,
      'the first-start JSON line',
    )
    const { firstStart } = asLogLine(line) as Json
    assert.deepEqual(Object.keys(firstStart).sort(), ['key', 'plan', 'setupUrl', 'url', 'userId'])
    assert.match(firstStart.setupUrl, new RegExp(`^${firstStart.url}/setup/sdl_[A-Za-z0-9]{43}$`))
    assert.match(firstStart.key, /^sdk_[A-Za-z0-9]{40}$/)
    const res = await fetch(`${firstStart.url}/v1/checkAuth`, {
      headers: { 'service-api-key': firstStart.key },
    })
    assert.equal(res.status, 200)
    const me = (await res.json()) as Json
    assert.equal(me.userId, firstStart.userId)
    assert.equal(me.plan, firstStart.plan)
    assert.ok(
      !proc.stdout.some((l) => l.includes('first start on an empty database')),
      'no text banner beside it',
    )
    assert.equal((await proc.stop('SIGTERM')).code, 0, proc.output())
  })
})

describe('probes and API description on a running server', () => {
  let server: Server

  after(async () => {
    if (server) assert.equal((await server.stop('SIGTERM')).code, 0, server.output())
  })
  // note: after the hook above, whose SIGTERM this would otherwise pre-empt with a SIGKILL
  const suite = suiteLifetime()
  before(async () => {
    server = await startServer(suite, path.join(dir, 'probes', 'statusd.db'))
  })

  it('GET /healthz → 200 (the process is up)', async () => {
    const res = await fetch(`${server.url}/healthz`)
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), { status: 'ok', version: VERSION })
  })

  it('GET /readyz → 200 (storage answers)', async () => {
    const res = await fetch(`${server.url}/readyz`)
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), { status: 'ready' })
  })

  it('GET /openapi.json is OpenAPI 3.1 and lists the seed operations and checkAuth', async () => {
    const res = await fetch(`${server.url}/openapi.json`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    const doc = (await res.json()) as Json
    assert.match(doc.openapi, /^3\.1/)
    for (const [route, method] of [
      ['/v1/status/{statusId}', 'patch'],
      ['/v1/status-keys/{statusKey}', 'post'],
      ['/v1/user/status', 'get'],
      ['/v1/checkAuth', 'get'],
    ] as const) {
      assert.ok(doc.paths[route], `${route} is listed`)
      assert.ok(doc.paths[route][method], `${method.toUpperCase()} ${route} is listed`)
    }
  })

  it('GET /docs serves an HTML page whose stylesheets and scripts load', async () => {
    const res = await fetch(`${server.url}/docs`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
    const html = await res.text()
    assert.match(html, /<html/i)
    const assets = [
      ...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g),
      ...html.matchAll(/<link[^>]*\srel="stylesheet"[^>]*\shref="([^"]+)"/g),
    ].map((m) => m[1] as string)
    assert.ok(assets.length > 0, 'the page loads its stylesheet')
    for (const src of assets) {
      const asset = await fetch(new URL(src, res.url))
      assert.equal(asset.status, 200, `${src} loads`)
      await asset.arrayBuffer()
    }
  })
})

describe('GET /metrics on a running server', () => {
  it('counts requests by route pattern and reports the SQLite files', async (t) => {
    const file = path.join(dir, 'metrics', 'statusd.db')
    const server = await startServer(t, file)
    const key = server.firstKey
    assert.ok(key, server.output())
    // right at the ready line, all at once
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? fetch(`${server.url}/v1/checkAuth`, { headers: { 'service-api-key': key } })
          : fetch(`${server.url}/healthz`),
      ),
    )
    assert.deepEqual(new Set(answers.map((res) => res.status)), new Set([200]))
    const res = await fetch(`${server.url}/metrics`)
    assert.equal(res.status, 200)
    const body = await res.text()
    const count = (route: string) =>
      Number(
        body.match(
          new RegExp(
            `^http_requests_total\\{method="GET",route="${route}",status_code="200"\\} (\\d+)$`,
            'm',
          ),
        )?.[1],
      )
    assert.equal(count('/v1/checkAuth'), 10)
    assert.equal(count('/healthz'), 10)
    assert.match(body, /^process_cpu_seconds_total /m)
    assert.match(body, /^statusd_sqlite_wal_bytes \d+$/m)
    assert.match(body, /^statusd_sqlite_database_bytes [1-9]\d*$/m)
    assert.equal((await server.stop('SIGTERM')).code, 0, server.output())
  })
})

describe('a configuration mistake: non-zero exit, one line on stderr, no stack trace', () => {
  /** Runs `statusd serve` to its end with these variables over a default, valid setup. */
  const serve = (t: Lifetime, name: string, vars: Record<string, string>) =>
    runToEnd(
      t,
      process.execPath,
      [BIN, 'serve'],
      statusdEnv({
        DATABASE_URL: `sqlite:${path.join(dir, name, 'statusd.db')}`,
        PORT: '0',
        HOST: '127.0.0.1',
        ...vars,
      }),
    )

  function assertOneLine(r: { code: number | null; stderr: string }, message: RegExp): void {
    assert.notEqual(r.code, 0, 'exits non-zero')
    assert.ok(r.code !== null, 'exits by itself, not by a signal')
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '')
    assert.equal(lines.length, 1, `exactly one line on stderr:\n${r.stderr}`)
    assert.match(lines[0] as string, /^statusd: /)
    assert.match(lines[0] as string, message)
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace')
  }

  const cases: { name: string; vars: Record<string, string>; message: RegExp }[] = [
    { name: 'port-abc', vars: { PORT: 'abc' }, message: /PORT must be an integer .*"abc"/ },
    { name: 'port-big', vars: { PORT: '70000' }, message: /PORT must be an integer/ },
    { name: 'log-level', vars: { LOG_LEVEL: 'loud' }, message: /LOG_LEVEL must be one of/ },
    { name: 'public-url', vars: { PUBLIC_URL: 'not a url' }, message: /PUBLIC_URL/ },
    {
      name: 'plans-file',
      vars: { PLANS_FILE: path.join(os.tmpdir(), 'statusd-no-such-plans.json') },
      message: /PLANS_FILE/,
    },
    {
      name: 'db-scheme',
      vars: { DATABASE_URL: 'mysql://admin:hunter2@db.example/statusd' },
      message: /DATABASE_URL/,
    },
    { name: 'db-empty-path', vars: { DATABASE_URL: 'sqlite:' }, message: /DATABASE_URL/ },
  ]

  for (const c of cases) {
    it(`${Object.entries(c.vars)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`, async (t) => {
      const r = await serve(t, c.name, c.vars)
      assertOneLine(r, c.message)
      assert.equal(r.stdout.trim(), '', 'nothing on stdout')
      assert.doesNotMatch(r.stderr, /hunter2/, 'a password in DATABASE_URL is not echoed')
      assert.ok(
        !fs.existsSync(path.join(dir, c.name, 'statusd.db')),
        'a configuration mistake is caught before storage is touched',
      )
    })
  }

  it('the port is taken: one line naming the address', async (t) => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    defer(t, () => new Promise((resolve) => blocker.close(resolve)))
    const port = (blocker.address() as net.AddressInfo).port
    const r = await serve(t, 'port-taken', { PORT: String(port) })
    assertOneLine(r, new RegExp(`EADDRINUSE.*127\\.0\\.0\\.1:${port}`))
    const wal = path.join(dir, 'port-taken', 'statusd.db-wal')
    assert.ok(
      !fs.existsSync(wal) || fs.statSync(wal).size === 0,
      'storage was closed cleanly before exiting',
    )
    // the first user is made only once listening: its key, printed once, is not lost
    const db = new SQLite(path.join(dir, 'port-taken', 'statusd.db'), { readonly: true })
    try {
      assert.deepEqual(db.prepare('select count(*) as n from users').get(), { n: 0 })
    } finally {
      db.close()
    }
  })

  it('the port is taken, on PostgreSQL: the process still ends (pool and LISTEN closed)', {
    skip: postgresOnly,
  }, async (t) => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    defer(t, () => new Promise((resolve) => blocker.close(resolve)))
    const fresh = await testDatabase(t)
    const port = (blocker.address() as net.AddressInfo).port
    const r = await serve(t, 'port-taken-pg', { PORT: String(port), DATABASE_URL: fresh.url })
    assertOneLine(r, new RegExp(`EADDRINUSE.*127\\.0\\.0\\.1:${port}`))
    assert.equal(r.code, 1)
  })

  it('HOST is not an address of this machine: one line', async (t) => {
    const r = await serve(t, 'host', { HOST: '192.0.2.1' })
    assertOneLine(r, /EADDRNOTAVAIL/)
  })

  it('the database file is not a database: one line', async (t) => {
    const file = path.join(dir, 'garbage.db')
    fs.writeFileSync(
      file,
      'this is not a SQLite database, just text long enough to be read\n'.repeat(20),
    )
    const r = await serve(t, 'garbage', { DATABASE_URL: `sqlite:${file}` })
    assertOneLine(r, /not a database/)
  })
})
