import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { defer } from '../helpers/cleanup.ts'
import { type Json, startServer } from '../helpers/processes.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

// Finding 3 of issue 30 (docs/security.md#holding-against-attackers): 19 965 anonymous share
// streams from 313 loopback addresses, each address under STREAMS_PER_CLIENT, took every file
// descriptor; /healthz and keyed writes were reset. The rule (docs/operations.md#server-wide-stream-capacity):
// the service holds live streams below its descriptor limit, keeping a fifth of it free for
// ordinary requests; one stream more is 503 serverBusy with Retry-After, and keyed requests
// and /healthz keep answering.

/** The descriptor limit the server runs with (soft and hard). */
const DESCRIPTOR_LIMIT = 1024
/** Streams opened from each loopback address: half the per-client cap, so it never refuses. */
const PER_ADDRESS = 32

/** The nth client address: 127.1.x.y, never 127.0.0.1, from which the probes come. */
const address = (n: number) => `127.1.${Math.floor(n / 250)}.${(n % 250) + 1}`

type Attempt = { client: SseTestClient } | { error: Error }

/**
 * A request with the key, answered as status and parsed body. `agent`: a kept connection,
 * or false for a new connection of its own.
 */
function ask(
  base: string,
  key: string,
  method: string,
  path: string,
  { agent = false, body }: { agent?: Agent | false; body?: unknown } = {},
): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method, agent, headers: { 'service-api-key': key, 'content-type': 'application/json' } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => {
          const json = /json/.test(String(res.headers['content-type']))
          resolve({ status: res.statusCode ?? 0, body: json ? JSON.parse(text) : text })
        })
      },
    )
    req.once('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** A refused stream: 503 serverBusy, the error body, Retry-After, and its connection closed. */
async function assertServerBusy(attempt: Attempt, what: string) {
  assert.ok('client' in attempt, `${what}: answered, not ${'error' in attempt && attempt.error}`)
  const { client } = attempt
  assert.equal(client.status, 503, what)
  assert.match(String(client.response.headers['content-type']), /^application\/json/, what)
  assert.match(String(client.response.headers['retry-after']), /^[1-9]\d*$/, what)
  assert.equal(client.response.headers.connection, 'close', what)
  const body = JSON.parse(await client.text())
  assert.deepEqual(Object.keys(body).sort(), ['errorCode', 'message', 'requestId'], what)
  assert.equal(body.errorCode, 'serverBusy', what)
  assert.equal(body.requestId, client.response.headers['x-request-id'], what)
}

describe('finding 3: streams exhaust descriptors (server-wide stream capacity)', () => {
  it('beyond the server-wide stream capacity every kind of stream gets 503 serverBusy with Retry-After, while /healthz and keyed writes answer 200', async (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'statusd-stream-capacity-'))
    defer(ctx, () => rmSync(dir, { recursive: true, force: true }))
    const server = await startServer(
      ctx,
      join(dir, 'statusd.db'),
      { ANON_REQUESTS_PER_MINUTE: '100000' },
      { descriptorLimit: DESCRIPTOR_LIMIT },
    )
    const key = await server.waitForFirstKey()
    const keyed = { 'service-api-key': key }
    const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
      const res = await ask(server.url, key, method, path, { body })
      assert.ok(res.status < 300, `${method} ${path}: ${res.status}`)
      return res.body
    }
    const status = await call('POST', '/v1/status-keys/room-4', {
      value: 'FREE',
      accessType: 'public',
    })
    const link = await call('POST', `/v1/status/${status.id}/share-links`, {})
    const token = /\/l\/([^/]+)$/.exec(link.url)?.[1]
    const board = await call('POST', '/v1/boards', {
      name: 'Floor',
      statusIds: [status.id],
      accessType: 'public',
    })

    const open: SseTestClient[] = []
    defer(ctx, () => {
      for (const client of open) client.close()
    })
    const attempt = async (
      path: string,
      headers: Record<string, string> = {},
      localAddress?: string,
    ): Promise<Attempt> => {
      try {
        const client = await SseTestClient.connect(`${server.url}${path}`, headers, {
          localAddress,
        })
        open.push(client)
        return { client }
      } catch (err) {
        return { error: err as Error }
      }
    }
    const share = `/v1/share/${status.shareId}/events`

    // anonymous share streams, PER_ADDRESS from each address, until one is refused; bounded
    // by the descriptor limit itself (every stream holds a descriptor)
    const accepted: SseTestClient[] = []
    let refused: Attempt | undefined
    for (let n = 0; refused === undefined && accepted.length < DESCRIPTOR_LIMIT; n++) {
      const batch = await Promise.all(
        Array.from({ length: PER_ADDRESS }, () => attempt(share, {}, address(n))),
      )
      for (const a of batch) {
        if ('client' in a && a.client.status === 200) accepted.push(a.client)
        else refused ??= a
      }
    }
    ctx.diagnostic(
      `descriptor limit ${DESCRIPTOR_LIMIT}: ${accepted.length} streams accepted before refusal`,
    )
    assert.ok(refused, `a stream is refused before ${DESCRIPTOR_LIMIT} are open`)
    await assertServerBusy(refused, 'the first stream beyond capacity')
    assert.ok(
      accepted.length <= DESCRIPTOR_LIMIT * 0.8,
      `${accepted.length} streams leave a fifth of ${DESCRIPTOR_LIMIT} descriptors free`,
    )
    const ready = server.logs().find((line) => line.msg === 'statusd ready') as Json
    assert.equal(ready.streams.max, accepted.length, 'the capacity the ready line names')
    assert.equal(ready.streams.descriptorLimit, DESCRIPTOR_LIMIT)

    // every kind of stream, from a client that holds none, is refused the same way
    const fresh = address(999)
    const kinds: [string, string, Record<string, string>?][] = [
      ['a share stream', share],
      ['a private link stream', `/v1/share-links/${token}/events`],
      ['a public board stream', `/b/${board.shareId}/events`],
      ["a status's keyed stream", `/v1/status/${status.id}/events`, keyed],
      ['a keyed stream of many statuses', `/v1/events?status=${status.id}`, keyed],
    ]
    for (const [what, path, headers] of kinds)
      await assertServerBusy(await attempt(path, headers, fresh), what)

    // ordinary requests keep answering, each over a new connection
    for (let i = 0; i < 3; i++) {
      assert.equal((await ask(server.url, key, 'GET', '/healthz')).status, 200, '/healthz')
      const written = await call('PATCH', `/v1/status/${status.id}`, { value: `BUSY ${i}` })
      assert.equal(written.value, `BUSY ${i}`, 'a keyed write answers')
    }

    // a stream that ends gives its place back
    accepted.pop()?.close()
    await waitUntil(async () => {
      const next = await attempt(share, {}, fresh)
      return 'client' in next && next.client.status === 200
    }, 'a closed stream frees its place')
  })

  it('beyond the connection cap a new connection is closed as it arrives: the process never runs out of descriptors, and open connections keep answering', async (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'statusd-connection-cap-'))
    defer(ctx, () => rmSync(dir, { recursive: true, force: true }))
    const server = await startServer(
      ctx,
      join(dir, 'statusd.db'),
      {},
      {
        descriptorLimit: DESCRIPTOR_LIMIT,
      },
    )
    const key = await server.waitForFirstKey()
    // one connection, kept open, over which every check below is made
    const kept = new Agent({ keepAlive: true, maxSockets: 1 })
    defer(ctx, () => kept.destroy())
    const viaKept = (method: string, path: string, body?: unknown) =>
      ask(server.url, key, method, path, { agent: kept, body })
    const created = await viaKept('POST', '/v1/status-keys/room-4', { value: 'FREE' })
    assert.equal(created.status, 201)
    const statusId = created.body.id

    // more idle connections than the process has descriptors
    const flood: Socket[] = []
    defer(ctx, () => {
      for (const socket of flood) socket.destroy()
    })
    for (let i = 0; i < DESCRIPTOR_LIMIT + 100; i++)
      await new Promise<void>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: Number(new URL(server.url).port) })
        socket.once('connect', resolve).once('error', () => resolve())
        socket.on('error', () => {})
        flood.push(socket)
      })
    const dropped = async () => {
      const metrics = await viaKept('GET', '/metrics')
      return Number(/^statusd_connections_dropped_total (\d+)$/m.exec(metrics.body)?.[1] ?? 0)
    }
    await waitUntil(async () => (await dropped()) > 0, 'connections beyond the cap are dropped')
    const ready = server.logs().find((line) => line.msg === 'statusd ready') as Json
    assert.ok(ready.streams.maxConnections < DESCRIPTOR_LIMIT)
    const held = readdirSync(`/proc/${server.child.pid}/fd`).length
    assert.ok(held < DESCRIPTOR_LIMIT, `${held} descriptors held, below ${DESCRIPTOR_LIMIT}`)

    // the connection already open is answered, requests that need no new descriptor or do
    assert.equal((await viaKept('GET', '/healthz')).status, 200)
    const written = await viaKept('PATCH', `/v1/status/${statusId}`, { value: 'BUSY' })
    assert.equal(written.status, 200)
    assert.equal((await viaKept('GET', '/docs')).status, 200, '/docs')

    // once the flood is gone, new connections are accepted again
    for (const socket of flood) socket.destroy()
    await waitUntil(
      async () =>
        (await ask(server.url, key, 'GET', '/healthz').catch(() => ({ status: 0 }))).status === 200,
      'a new connection is answered',
    )
  })
})
