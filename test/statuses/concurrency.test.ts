import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { sql } from 'kysely'
import type { Plans } from '../../src/modules/plans/plans.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/api.md#set-a-status-by-key-create-or-update: concurrent creates of one key yield exactly one
// status, the others update it; every value update counts (changeCount, one history row each), also
// when they race. Each suite runs on in-memory SQLite and on a file-backed one (WAL), as served.

const N = 50

const dir = mkdtempSync(join(tmpdir(), 'statusd-concurrency-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

const ENGINES: { name: string; url: () => string | undefined }[] = [
  { name: 'in-memory SQLite', url: () => undefined },
  {
    name: 'file-backed SQLite (WAL)',
    url: () => {
      files += 1
      return `sqlite:${join(dir, `statusd-${files}.db`)}`
    },
  },
]

async function withApp(
  ctx: Lifetime,
  databaseUrl: string | undefined,
  fn: (t: TestApp) => Promise<void>,
  plans?: Plans,
): Promise<void> {
  await fn(await makeApp(ctx, { databaseUrl, ...(plans && { plans }) }))
}

const history = (t: TestApp, statusId: string) =>
  t.database.db
    .selectFrom('status_history')
    .select(['change_no', 'value'])
    .where('status_id', '=', statusId)
    .orderBy('change_no')
    .execute()

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i)

for (const engine of ENGINES) {
  describe(`If-Match under concurrency on ${engine.name} (the test engine's own on PostgreSQL)`, () => {
    it('20 concurrent writes with one If-Match: exactly one succeeds, the rest 412', (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const owner = await t.user()
        const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'A' })
        const { id } = created.json()
        const headers = { 'if-match': String(created.headers.etag) }
        const responses = await Promise.all([
          ...range(1, 10).map((i) =>
            t.request(owner, 'PATCH', `/v1/status/${id}`, { value: `P${i}` }, headers),
          ),
          ...range(1, 10).map((i) =>
            t.request(owner, 'POST', '/v1/status-keys/room-4', { value: `K${i}` }, headers),
          ),
        ])
        const codes = responses.map((r) => r.statusCode).sort()
        assert.deepEqual(codes, [200, ...range(1, 19).map(() => 412)], `codes: ${codes}`)
        const winner = responses.find((r) => r.statusCode === 200)?.json()
        const final = (await t.request(owner, 'GET', `/v1/status/${id}`)).json()
        assert.equal(final.changeCount, 2, 'one write landed')
        assert.equal(final.value, winner.value)
        assert.equal((await history(t, id)).length, 2)
      }))

    it('a PATCH and a DELETE with one If-Match: one of them, never both', (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const owner = await t.user()
        for (let round = 0; round < 5; round++) {
          const key = `race-${round}`
          const created = await t.request(owner, 'POST', `/v1/status-keys/${key}`, { value: 'A' })
          const { id } = created.json()
          const headers = { 'if-match': String(created.headers.etag) }
          const [patch, del] = await Promise.all([
            t.request(owner, 'PATCH', `/v1/status/${id}`, { value: 'B' }, headers),
            t.request(owner, 'DELETE', `/v1/status/${id}`, undefined, headers),
          ])
          // the PATCH first: the DELETE's If-Match fails; the DELETE first: the PATCH finds
          // no status (404) or, having read it before, a changed one (412)
          const outcome = `PATCH ${patch.statusCode}, DELETE ${del.statusCode}`
          assert.ok(
            ['PATCH 200, DELETE 412', 'PATCH 404, DELETE 204', 'PATCH 412, DELETE 204'].includes(
              outcome,
            ),
            `round ${round}: ${outcome}`,
          )
        }
      }))
  })

  describe(`sharing a status while it is deleted on ${engine.name} (the test engine's own on PostgreSQL)`, () => {
    it('a grant or a subscription racing the delete gets 404 or succeeds, never 500', (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const owner = await t.user()
        const friend = await t.user()
        const stranger = await t.user()
        for (let round = 0; round < 10; round++) {
          const created = await t.request(owner, 'POST', `/v1/status-keys/gone-${round}`, {
            value: 'A',
            accessType: 'public',
          })
          const { id } = created.json()
          const [del, grant, follow] = await Promise.all([
            t.request(owner, 'DELETE', `/v1/status/${id}`),
            t.request(owner, 'PUT', `/v1/status/${id}/users/${friend.id}`, { role: 'subscriber' }),
            t.request(stranger, 'POST', `/v1/status/${id}/subscription`),
          ])
          assert.equal(del.statusCode, 204)
          // a grant is an invitation now (docs/accounts.md#invitations): 202
          assert.ok([202, 404].includes(grant.statusCode), `round ${round}: grant ${grant.body}`)
          assert.ok([201, 404].includes(follow.statusCode), `round ${round}: follow ${follow.body}`)
          // and the delete took every role and invitation along
          const roles = await t.database.db
            .selectFrom('status_roles')
            .select('user_id')
            .where('status_id', '=', id)
            .execute()
          assert.deepEqual(roles, [])
          const invitations = await t.database.db
            .selectFrom('role_invitations')
            .select('user_id')
            .where('status_id', '=', id)
            .execute()
          assert.deepEqual(invitations, [])
        }
      }))
  })

  describe(`concurrency on ${engine.name}`, () => {
    it(`${N} concurrent POSTs of one new key yield one status: one 201, the rest 200`, (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const owner = await t.user()
        const responses = await Promise.all(
          range(1, N).map((i) =>
            t.request(owner, 'POST', '/v1/status-keys/same-key', { value: `V${i}` }),
          ),
        )
        const codes = responses.map((r) => r.statusCode)
        assert.equal(codes.filter((c) => c === 201).length, 1, `one 201: ${codes}`)
        assert.equal(codes.filter((c) => c === 200).length, N - 1, `the rest 200: ${codes}`)
        const ids = new Set(responses.map((r) => r.json().id))
        assert.equal(ids.size, 1, 'every response is the same status')
        const [id] = [...ids] as [string]

        const list = (await t.request(owner, 'GET', '/v1/user/status')).json()
        assert.equal(list.length, 1, 'the list has one entry')
        assert.equal(list[0].statusId, id)

        const final = (await t.request(owner, 'GET', `/v1/status/${id}`)).json()
        assert.equal(final.changeCount, N)

        // every request's update is its own numbered history row, holding its value
        const rows = await history(t, id)
        assert.deepEqual(
          rows.map((r) => r.change_no),
          range(1, N),
        )
        const counts = responses.map((r) => r.json().changeCount).sort((a, b) => a - b)
        assert.deepEqual(counts, range(1, N), 'each response shows its own update')
        for (const [i, res] of responses.entries()) {
          const row = rows.find((r) => r.change_no === res.json().changeCount)
          assert.equal(row?.value, `V${i + 1}`, 'the history row holds the value sent')
        }
        assert.equal(final.value, rows[N - 1]?.value, 'the last update is the current value')
      }))

    it(`${N} concurrent PATCH value updates are all counted, one history row each`, (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const owner = await t.user()
        const created = await t.request(owner, 'POST', '/v1/status-keys/counter', { value: 'V0' })
        assert.equal(created.statusCode, 201)
        const id = created.json().id
        const responses = await Promise.all(
          range(1, N).map((i) => t.request(owner, 'PATCH', `/v1/status/${id}`, { value: `V${i}` })),
        )
        assert.deepEqual(
          responses.map((r) => r.statusCode),
          Array(N).fill(200),
        )
        const final = (await t.request(owner, 'GET', `/v1/status/${id}`)).json()
        assert.equal(final.changeCount, 1 + N, 'changeCount +50')
        const rows = await history(t, id)
        assert.deepEqual(
          rows.map((r) => r.change_no),
          range(1, N + 1),
        )
        const counts = responses.map((r) => r.json().changeCount).sort((a, b) => a - b)
        assert.deepEqual(counts, range(2, N + 1), 'no two updates got the same number')
        assert.equal(final.value, rows[N]?.value)
      }))

    it(`${N} concurrent updates of the same value are all counted`, (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const owner = await t.user()
        const id = (
          await t.request(owner, 'POST', '/v1/status-keys/same', { value: 'SAME' })
        ).json().id
        await Promise.all(
          range(1, N).map(() =>
            t.request(owner, 'POST', '/v1/status-keys/same', { value: 'SAME' }),
          ),
        )
        assert.equal((await t.request(owner, 'GET', `/v1/status/${id}`)).json().changeCount, N + 1)
        assert.equal((await history(t, id)).length, N + 1)
      }))

    it('concurrent creates of one key by two owners make one status each', (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const one = await t.user()
        const two = await t.user()
        const responses = await Promise.all(
          range(1, 20).map((i) =>
            t.request(i % 2 ? one : two, 'POST', '/v1/status-keys/shared-name', { value: 'X' }),
          ),
        )
        assert.equal(responses.filter((r) => r.statusCode === 201).length, 2)
        for (const [user, count] of [
          [one, 10],
          [two, 10],
        ] as const) {
          const list = (await t.request(user, 'GET', '/v1/user/status')).json()
          assert.equal(list.length, 1)
          const status = (await t.request(user, 'GET', `/v1/status/${list[0].statusId}`)).json()
          assert.equal(status.changeCount, count)
        }
      }))

    it('concurrent creates never exceed maxStatuses', (ctx) =>
      withApp(
        ctx,
        engine.url(),
        async (t) => {
          const owner = await t.user({ plan: 'five' })
          const responses = await Promise.all(
            range(1, 20).map((i) =>
              t.request(owner, 'POST', `/v1/status-keys/key-${i}`, { value: 'X' }),
            ),
          )
          const codes = responses.map((r) => r.statusCode)
          assert.equal(codes.filter((c) => c === 201).length, 5, `${codes}`)
          assert.equal(codes.filter((c) => c === 402).length, 15, `${codes}`)
          assert.equal((await t.request(owner, 'GET', '/v1/user/status')).json().length, 5)
        },
        {
          five: {
            descriptionLinks: false,
            accessSettings: false,
            maxStatuses: 5,
            requestsPerMinute: null,
            historyDays: 7,
          },
        },
      ))

    it('concurrent creates of one key with one place left under maxStatuses: one 201, the rest update it (200)', (ctx) =>
      withApp(
        ctx,
        engine.url(),
        async (t) => {
          const owner = await t.user({ plan: 'two' })
          await t.request(owner, 'POST', '/v1/status-keys/first', { value: 'X' })
          for (let round = 0; round < 3; round++) {
            const key = `last-${round}`
            const responses = await Promise.all(
              range(1, 6).map((i) =>
                t.request(owner, 'POST', `/v1/status-keys/${key}`, { value: `V${i}` }),
              ),
            )
            const codes = responses.map((r) => r.statusCode).sort()
            assert.deepEqual(codes, [200, 200, 200, 200, 200, 201], `round ${round}: ${codes}`)
            // and the place is free again for the next round
            assert.equal(
              (await t.request(owner, 'DELETE', `/v1/status-keys/${key}`)).statusCode,
              204,
            )
          }
        },
        {
          two: {
            descriptionLinks: false,
            accessSettings: false,
            maxStatuses: 2,
            requestsPerMinute: null,
            historyDays: 7,
          },
        },
      ))

    it('concurrent deletes of one status: one 204, the rest 404', (ctx) =>
      withApp(ctx, engine.url(), async (t) => {
        const owner = await t.user()
        const id = (await t.request(owner, 'POST', '/v1/status-keys/gone', { value: 'X' })).json()
          .id
        const responses = await Promise.all(
          range(1, 10).map((i) =>
            i % 2
              ? t.request(owner, 'DELETE', `/v1/status/${id}`)
              : t.request(owner, 'DELETE', '/v1/status-keys/gone'),
          ),
        )
        const codes = responses.map((r) => r.statusCode).sort()
        assert.deepEqual(codes, [204, ...Array(9).fill(404)])
        // its history goes after the delete, swept in batches (docs/api.md#delete-a-status)
        await waitUntil(async () => (await history(t, id)).length === 0, 'its history is swept')
      }))
  })
}

describe('file-backed SQLite', () => {
  it('runs in WAL mode', async (ctx) => {
    const file = join(dir, 'wal.db')
    const t = await makeApp(ctx, { databaseUrl: `sqlite:${file}` })
    const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(t.database.db)
    assert.equal(rows[0]?.journal_mode, 'wal')
    const owner = await t.user()
    await t.request(owner, 'POST', '/v1/status-keys/x-1', { value: 'X' })
    assert.ok(existsSync(`${file}-wal`), 'a write-ahead log beside the database')
  })

  it('keeps statuses across a restart on the same file', async (ctx) => {
    const url = `sqlite:${join(dir, 'restart.db')}`
    const first = await makeApp(ctx, { databaseUrl: url })
    const owner = await first.user()
    await Promise.all(
      range(1, 10).map((i) =>
        first.request(owner, 'POST', '/v1/status-keys/kept', { value: `V${i}` }),
      ),
    )
    const id = (await first.request(owner, 'GET', '/v1/status-keys/kept')).json().id
    await first.close() // the restart
    // migrations run again on start and must leave existing data alone
    const t = await makeApp(ctx, { databaseUrl: url })
    const res = await t.request(owner, 'GET', `/v1/status/${id}`)
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().changeCount, 10)
    assert.equal((await history(t, id)).length, 10)
  })
})
