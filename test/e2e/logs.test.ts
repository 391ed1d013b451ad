import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, it } from 'node:test'
import { migrations } from '../../src/db/migrations/index.ts'
import {
  asLogLine,
  BIN,
  type LogLine,
  runToEnd,
  type Server,
  startServer,
  statusdEnv,
} from '../helpers/processes.ts'

// docs/operations.md#logs: structured JSON logs with a request id; API keys never appear in logs.
// The one place a key is printed is the first-start banner, which is plain text, not a log line.

let dir: string

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-e2e-logs-'))
})
after(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** A key in the real format that no server issued. */
const unknownKey = () =>
  `sdk_${Array.from(randomBytes(40), (b) => BASE62[b % BASE62.length]).join('')}`

interface Sent {
  reqId: string
  status: number
}

/**
 * Sends a mix of requests carrying keys every way a client might — right and wrong, in either
 * header, in the query string (refused), on errors — each with its own x-request-id.
 */
async function exercise(server: Server, key: string, wrongKey: string): Promise<Sent[]> {
  const sent: Sent[] = []
  let n = 0
  const send = async (url: string, init: RequestInit = {}) => {
    n += 1
    const reqId = `logs-test-${n}`
    const res = await fetch(`${server.url}${url}`, {
      ...init,
      headers: { 'x-request-id': reqId, ...(init.headers as Record<string, string>) },
    })
    await res.arrayBuffer()
    assert.equal(res.headers.get('x-request-id'), reqId)
    sent.push({ reqId, status: res.status })
    return res.status
  }
  const json = { 'content-type': 'application/json' }
  const byHeader = { 'service-api-key': key }
  const byBearer = { authorization: `Bearer ${key}` }

  assert.equal(
    await send('/v1/status-keys/room-4', {
      method: 'POST',
      headers: { ...byHeader, ...json },
      body: '{"value":"OCCUPIED"}',
    }),
    201,
  )
  assert.equal(await send('/v1/user/status', { headers: byHeader }), 200)
  assert.equal(await send('/v1/user/status', { headers: byBearer }), 200)
  assert.equal(
    await send('/v1/status-keys/room-4', {
      method: 'POST',
      headers: { ...byBearer, ...json },
      body: '{"value":"FREE"}',
    }),
    200,
  )
  assert.equal(await send('/v1/checkAuth', { headers: { 'service-api-key': wrongKey } }), 401)
  assert.equal(
    await send('/v1/checkAuth', { headers: { authorization: `Bearer ${wrongKey}` } }),
    401,
  )
  assert.equal(await send('/v1/checkAuth', { headers: { authorization: `Basic ${key}` } }), 401)
  // never accepted in the query string (docs/api.md#authentication), and not logged from there
  // either
  assert.equal(await send(`/v1/checkAuth?service-api-key=${key}`), 401)
  assert.equal(await send(`/v1/user/status?api_key=${wrongKey}`), 401)
  // client mistakes and unknown routes, with a good key attached
  assert.equal(
    await send('/v1/status-keys/room-4', {
      method: 'POST',
      headers: { ...byHeader, ...json },
      body: '{"value":',
    }),
    400,
  )
  assert.equal(await send('/v1/nowhere', { headers: byBearer }), 404)
  assert.equal(await send('/healthz', { headers: byHeader }), 200)
  return sent
}

function assertNoSecrets(lines: string[], secrets: string[]): void {
  for (const line of lines)
    for (const secret of secrets)
      assert.ok(
        !line.includes(secret),
        `a log line holds a secret (${secret.slice(0, 8)}…): ${line}`,
      )
}

function assertRequestLines(logs: LogLine[], sent: Sent[]): void {
  for (const log of logs)
    if ('req' in log || 'res' in log || 'responseTime' in log || 'err' in log)
      assert.equal(
        typeof log.reqId,
        'string',
        `a request's log line carries reqId: ${JSON.stringify(log)}`,
      )
  for (const { reqId, status } of sent) {
    const mine = logs.filter((l) => l.reqId === reqId)
    assert.ok(
      mine.some((l) => l.msg === 'incoming request'),
      `request ${reqId} is logged as it comes in`,
    )
    const done = mine.find((l) => l.msg === 'request completed')
    assert.ok(done, `request ${reqId} is logged as it completes`)
    assert.deepEqual(done.res, { statusCode: status })
  }
}

for (const level of ['trace', 'debug', 'info']) {
  it(`LOG_LEVEL=${level}: no API key in any log line; every request's lines carry reqId`, async (t) => {
    const dbFile = path.join(dir, level, 'statusd.db')
    const server = await startServer(t, dbFile, { LOG_LEVEL: level })
    const key = server.firstKey as string
    assert.ok(key, `the first start prints a key\n${server.output()}`)
    const wrongKey = unknownKey()
    const sent = await exercise(server, key, wrongKey)
    assert.equal((await server.stop('SIGTERM')).code, 0, server.output())

    const secrets = [key, wrongKey, createHash('sha256').update(key).digest('hex')]
    const jsonLines = [...server.stdout, ...server.stderr].filter((l) => asLogLine(l) !== null)
    assert.ok(jsonLines.length > sent.length, 'the requests were logged')
    assertNoSecrets(jsonLines, secrets)
    // the banner is the one place the first key appears; nothing else outside the log lines
    const otherLines = [...server.stdout, ...server.stderr].filter((l) => asLogLine(l) === null)
    assertNoSecrets(
      otherLines.filter((l) => !l.includes('shown only now') && !/^\s+(sdk_|Try:)/.test(l)),
      secrets,
    )
    assert.deepEqual(
      server.stderr.filter((l) => l.trim() !== ''),
      [],
      'nothing on stderr',
    )
    assertRequestLines(server.logs(), sent)
  })
}

it('with a key made by the CLI (not the banner), no log line holds it either', async (t) => {
  const dbFile = path.join(dir, 'cli-key', 'statusd.db')
  // the first start creates the first user; the key under test is a second one
  const first = await startServer(t, dbFile, { LOG_LEVEL: 'trace' })
  const bannerKey = first.firstKey as string
  assert.equal((await first.stop('SIGTERM')).code, 0)
  const env = statusdEnv({ DATABASE_URL: `sqlite:${dbFile}` })
  const users = await runToEnd(t, process.execPath, [BIN, 'user', 'list', '--json'], env)
  const userId = JSON.parse(users.stdout)[0].id
  const made = await runToEnd(
    t,
    process.execPath,
    [BIN, 'key', 'create', '--user', userId, '--json'],
    env,
  )
  assert.equal(made.code, 0, made.stderr)
  const key = JSON.parse(made.stdout).key as string

  const server = await startServer(t, dbFile, { LOG_LEVEL: 'trace' })
  assert.equal(server.firstKey, null)
  const wrongKey = unknownKey()
  const sent = await exercise(server, key, wrongKey)
  assert.equal((await server.stop('SIGTERM')).code, 0)
  assertNoSecrets([...server.stdout, ...server.stderr], [key, wrongKey, bannerKey])
  assertRequestLines(server.logs(), sent)
})

it('the ready line names the migrations a start applied: all on a new database, none after', async (t) => {
  const dbFile = path.join(dir, 'migrations', 'statusd.db')
  const readyLine = (server: Server) => server.logs().find((l) => l.msg === 'statusd ready')
  const first = await startServer(t, dbFile)
  assert.deepEqual(readyLine(first)?.migrationsApplied, Object.keys(migrations).sort())
  assert.equal((await first.stop('SIGTERM')).code, 0)
  const second = await startServer(t, dbFile)
  assert.equal(readyLine(second)?.migrationsApplied, undefined, 'nothing left to apply')
  assert.equal((await second.stop('SIGTERM')).code, 0)
})

/** Sends one request over a socket of its own, with the headers exactly as given; resolves with the status. */
function rawRequest(base: string, lines: string[]): Promise<number> {
  const { port } = new URL(base)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      answer += chunk
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)))
    socket.end(`GET /healthz HTTP/1.1\r\n${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`)
  })
}

it('Host and Accept-Version headers are logged verbatim: a header value that carries a key (or a key-like run) is redacted in the log', async (t) => {
  const server = await startServer(t, path.join(dir, 'header-values', 'statusd.db'))
  const key = server.firstKey as string
  assert.ok(key, server.output())
  const wrongKey = unknownKey()
  const secretPart = wrongKey.slice(4)
  const cases: [string, string[], { host?: string; version?: string }][] = [
    ['host-key', [`Host: ${key}`], { host: '[redacted]' }],
    ['host-in-name', [`Host: ${wrongKey}.example.com:8080`], { host: '[redacted]' }],
    ['host-upper', [`Host: ${wrongKey.toUpperCase()}`], { host: '[redacted]' }],
    [
      'version-key',
      ['Host: status.example.com', `Accept-Version: ${key}`],
      { version: '[redacted]' },
    ],
    [
      'version-secret',
      ['Host: status.example.com', `Accept-Version: ${secretPart}`],
      { version: '[redacted]' },
    ],
    // ordinary values are logged as they came: redaction is for secrets, not for everything
    [
      'plain',
      ['Host: status.example.com', 'Accept-Version: 1.x'],
      { host: 'status.example.com', version: '1.x' },
    ],
  ]
  for (const [id, headers] of cases)
    assert.ok((await rawRequest(server.url, [...headers, `x-request-id: hdr-${id}`])) > 0, id)
  assert.equal((await server.stop('SIGTERM')).code, 0, server.output())

  assertNoSecrets(
    [...server.stdout, ...server.stderr].filter((l) => asLogLine(l) !== null),
    [key, wrongKey, wrongKey.toUpperCase(), secretPart],
  )
  for (const [id, , expected] of cases) {
    const incoming = server
      .logs()
      .find((l) => l.reqId === `hdr-${id}` && l.msg === 'incoming request')
    assert.ok(incoming, `request ${id} is logged`)
    const req = incoming.req as { host?: string; version?: string }
    if (expected.host !== undefined) assert.equal(req.host, expected.host, id)
    if (expected.version !== undefined) assert.equal(req.version, expected.version, id)
  }
})
