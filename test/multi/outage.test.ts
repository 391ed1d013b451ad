import assert from 'node:assert/strict'
import { test } from 'node:test'
import { defer } from '../helpers/cleanup.ts'
import { postgresOnly } from '../helpers/engine.ts'
import { type Cluster, clusterUnavailable, startCluster } from '../helpers/pg-cluster.ts'
import { asLogLine, type Server, startServer } from '../helpers/processes.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/postgres.md#when-postgresql-is-down: with PostgreSQL down, statusd answers 503 `unavailable`
// quickly (no 500, no hang, no crash) and recovers by itself when the server returns. The test runs
// a PostgreSQL cluster of its own, since it stops and starts it.

async function timed(
  server: Server,
  key: string | null,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(key && { 'service-api-key': key }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

/**
 * What statusd logged as the cause of the 503 it answered to this request: it answers as soon
 * as the connection is refused, never after waiting out the pool's connect timeout.
 */
async function causeOf503(server: Server, requestId: string): Promise<string> {
  const line = await server.waitForLine((l) => {
    const log = asLogLine(l)
    return log?.reqId === requestId && log.msg === 'storage unavailable'
  }, `the log line of request ${requestId}`)
  return JSON.stringify(asLogLine(line)?.err)
}

const skip = postgresOnly || (await clusterUnavailable())

test('PostgreSQL outage: 503 unavailable while it is down, recovery when it returns', {
  skip,
}, async (t) => {
  const cluster: Cluster = await startCluster()
  defer(t, () => cluster.destroy())
  // note: no key cache, so that every authenticated request needs storage (a cached key
  // would still pass checkAuth during the first seconds of an outage, by design)
  const server = await startServer(t, cluster.url, { AUTH_CACHE_SECONDS: '0' })
  const key = await server.waitForFirstKey()
  assert.ok(key, 'the first start printed a key')

  const created = await timed(server, key, 'POST', '/v1/status-keys/room-4', { value: 'OCCUPIED' })
  assert.equal(created.status, 201)
  const id = created.body.id as string
  assert.equal((await timed(server, null, 'GET', '/readyz')).status, 200)

  await cluster.stop()

  await t.test(
    'while PostgreSQL is down, every storage-backed request answers 503 quickly',
    async () => {
      const checks: [string, string, string | null, unknown?][] = [
        ['GET', '/readyz', null],
        ['GET', '/v1/checkAuth', key],
        ['GET', `/v1/status/${id}`, key],
        ['GET', '/v1/user/status', key],
        ['POST', '/v1/status-keys/room-4', key, { value: 'FREE' }],
        ['PATCH', `/v1/status/${id}`, key, { value: 'FREE' }],
        ['DELETE', `/v1/status/${id}`, key],
        // an unknown key cannot be checked either: 503, not 401
        ['GET', '/v1/checkAuth', 'sdk_unknownunknownunknownunknownunknownunkn'],
      ]
      for (const [method, path, as, body] of checks) {
        const res = await timed(server, as, method, path, body)
        assert.equal(res.status, 503, `${method} ${path}: ${JSON.stringify(res.body)}`)
        assert.equal(res.body.errorCode, 'unavailable')
        assert.equal(typeof res.body.requestId, 'string')
        assert.doesNotMatch(
          JSON.stringify(res.body),
          /ECONNREFUSED|postgres|at \//i,
          'no internals',
        )
        // /readyz answers from a probe, and logs no failed request
        if (path !== '/readyz') {
          const cause = await causeOf503(server, res.body.requestId)
          assert.match(cause, /ECONNREFUSED/, `${method} ${path}: answered on the refusal`)
          assert.doesNotMatch(cause, /timeout/i, `${method} ${path}: no wait for a timeout`)
        }
      }
      // the public pages too: the share page an HTML 503, the badge an image, both to retry
      const shareId = created.body.shareId as string
      for (const [path, type] of [
        [`/s/${shareId}`, /^text\/html/],
        [`/s/${shareId}/badge.svg`, /^image\/svg\+xml/],
      ] as const) {
        const res = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(15_000) })
        const text = await res.text()
        assert.equal(res.status, 503, `${path}: ${text.slice(0, 200)}`)
        assert.match(String(res.headers.get('content-type')), type, path)
        assert.equal(res.headers.get('retry-after'), '5', path)
        assert.doesNotMatch(text, /ECONNREFUSED|postgres|at \//i, 'no internals')
      }
      const burst = await Promise.all(
        Array.from({ length: 30 }, () => timed(server, key, 'GET', `/v1/status/${id}`)),
      )
      assert.deepEqual([...new Set(burst.map((r) => r.status))], [503], 'a burst gets 503 too')
      assert.equal((await timed(server, null, 'GET', '/healthz')).status, 200, 'the process is up')
      assert.ok(server.alive(), 'no crash')
    },
  )

  await t.test('when PostgreSQL returns, the service recovers by itself', async () => {
    await cluster.start()
    await waitUntil(
      async () => (await timed(server, null, 'GET', '/readyz')).status === 200,
      '/readyz is 200 again',
      20_000,
    )
    const read = await timed(server, key, 'GET', `/v1/status/${id}`)
    assert.equal(read.status, 200)
    assert.equal(read.body.value, 'OCCUPIED', 'nothing changed while it was down')
    const update = await timed(server, key, 'PATCH', `/v1/status/${id}`, { value: 'FREE' })
    assert.equal(update.status, 200)
    assert.equal(update.body.changeCount, 2)
    assert.ok(server.alive(), 'the same process served throughout')
  })

  await t.test(
    'a restart of PostgreSQL under idle pooled connections does not crash it',
    async () => {
      // pooled connections are open and idle now; a fast shutdown terminates them (57P01):
      // pg_ctl's stop returns once the server's processes have ended, so the terminations
      // have reached statusd by then, long before the start below returns
      await cluster.stop()
      await cluster.start()
      assert.equal((await timed(server, key, 'GET', `/v1/status/${id}`)).status, 200)
      assert.ok(server.alive())
    },
  )

  await t.test('it shuts down cleanly on SIGTERM', async () => {
    assert.equal((await server.stop()).code, 0)
  })
})
