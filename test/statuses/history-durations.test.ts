import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DURATIONS_BATCH } from '../../src/modules/statuses/history-durations.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { testClock } from '../helpers/clock.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'

// GET /v1/status/:id/history/durations (docs/api.md#time-in-each-value): time in each value
// over a range, summed from the history, on the app's clock.

const H = 60 * 60 * 1000
/** The app's clock stands here; entries and ranges are given in hours from it. */
const NOW = Date.parse('2026-06-01T12:00:00.000Z')
const at = (hours: number) => new Date(NOW + hours * H).toISOString()

async function world(ctx: Parameters<typeof makeApp>[0], plan = 'unlimited') {
  const t = await makeApp(ctx, { deps: { clock: testClock(NOW) } })
  const cast = await makeCast(t)
  const owner = await t.user({ name: 'Olivia Owner', plan })
  return { t, cast, owner }
}

/** A status whose history is exactly `entries` ([value, hours from now], oldest first). */
async function statusWith(
  t: TestApp,
  owner: TestUser,
  entries: [string, number][],
  body: Record<string, unknown> = {},
): Promise<string> {
  const s = await createStatus(t, owner, `s${Math.random().toString(36).slice(2, 10)}`, {
    value: 'X',
    ...body,
  })
  const db = t.database.db
  await db.deleteFrom('status_history').where('status_id', '=', s.id).execute()
  for (let i = 0; i < entries.length; i += 1000)
    await db
      .insertInto('status_history')
      .values(
        entries.slice(i, i + 1000).map(([value, hours], j) => ({
          status_id: s.id,
          change_no: i + j + 1,
          value,
          at: at(hours),
          by_user_id: owner.id,
        })),
      )
      .execute()
  await db
    .updateTable('statuses')
    .set({ change_count: entries.length, value: entries.at(-1)?.[0] ?? null })
    .where('id', '=', s.id)
    .execute()
  return s.id
}

const durations = (t: TestApp, who: TestUser | null, id: string, query: string) =>
  t.request(who, 'GET', `/v1/status/${id}/history/durations?${query}`)

const range = (from: number, to?: number) =>
  new URLSearchParams({ from: at(from), ...(to !== undefined && { to: at(to) }) }).toString()

describe(`time in each value over a range [${TEST_ENGINE}]`, () => {
  const scenarios: {
    rule: string
    entries: [string, number][]
    from: number
    to?: number
    /** Hours in each value, the longest first; the answered end (hours from now). */
    expect: [string, number][]
    answeredTo?: number
  }[] = [
    {
      rule: 'the value in force before from counts from from',
      entries: [
        ['OPEN', -10],
        ['SHUT', -2],
      ],
      from: -4,
      expect: [
        ['OPEN', 2],
        ['SHUT', 2],
      ],
    },
    {
      rule: 'a range with no change in it is all the value in force',
      entries: [
        ['OPEN', -10],
        ['SHUT', -1],
      ],
      from: -8,
      to: -4,
      expect: [['OPEN', 4]],
    },
    {
      rule: 'now inside the range: the current value counts until now, and to answers now',
      entries: [
        ['OPEN', -3],
        ['SHUT', -1],
      ],
      from: -2,
      to: 5,
      // a tie: in the values' order
      expect: [
        ['OPEN', 1],
        ['SHUT', 1],
      ],
      answeredTo: 0,
    },
    {
      rule: 'an entry exactly at from starts the range; the one before adds nothing',
      entries: [
        ['OPEN', -6],
        ['SHUT', -4],
      ],
      from: -4,
      expect: [['SHUT', 4]],
    },
    {
      rule: 'entries after to add nothing',
      entries: [
        ['OPEN', -6],
        ['SHUT', -1],
      ],
      from: -6,
      to: -2,
      expect: [['OPEN', 4]],
    },
    {
      rule: 'time before the status existed has no value and is not tracked',
      entries: [
        ['OPEN', -3],
        ['SHUT', -1],
      ],
      from: -5,
      expect: [
        ['OPEN', 2],
        ['SHUT', 1],
      ],
    },
    {
      rule: 'a range before the first entry has no time in any value',
      entries: [['OPEN', -3]],
      from: -10,
      to: -5,
      expect: [],
    },
    {
      rule: 'the same value set again is one value, its times added',
      entries: [
        ['OPEN', -6],
        ['SHUT', -5],
        ['OPEN', -4],
        ['OPEN', -2],
      ],
      from: -6,
      expect: [
        ['OPEN', 5],
        ['SHUT', 1],
      ],
    },
  ]

  for (const s of scenarios)
    it(s.rule, async (ctx) => {
      const { t, owner } = await world(ctx)
      const id = await statusWith(t, owner, s.entries)
      const res = await durations(t, owner, id, range(s.from, s.to))
      assert.equal(res.statusCode, 200, res.body)
      const body = res.json()
      const trackedHours = s.expect.reduce((sum, [, h]) => sum + h, 0)
      assert.deepEqual(
        body.values,
        s.expect.map(([value, hours]) => ({
          value,
          seconds: hours * 3600,
          share: hours / trackedHours,
        })),
      )
      assert.equal(body.trackedSeconds, trackedHours * 3600)
      assert.equal(body.from, at(s.from))
      assert.equal(body.to, at(s.answeredTo ?? s.to ?? 0))
    })

  it("entries past the owner's retention count no time, except the current value's", async (ctx) => {
    // the free plan keeps a week: OPEN (10 days ago) is gone, SHUT (3 days ago) is current
    const { t, owner } = await world(ctx, 'free')
    const id = await statusWith(t, owner, [
      ['OPEN', -10 * 24],
      ['SHUT', -3 * 24],
    ])
    const res = await durations(t, owner, id, range(-5 * 24))
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json().values, [{ value: 'SHUT', seconds: 3 * 24 * 3600, share: 1 }])
    const old = await statusWith(t, owner, [['OPEN', -10 * 24]])
    assert.deepEqual((await durations(t, owner, old, range(-24))).json().values, [
      { value: 'OPEN', seconds: 24 * 3600, share: 1 },
    ])
  })

  it('a history longer than one read is summed across reads, to the entry in force at from', async (ctx) => {
    // a change a minute, alternating, over more than two reads' worth of entries
    const { t, owner } = await world(ctx)
    const count = 2 * DURATIONS_BATCH + 3
    const entries = Array.from({ length: count }, (_, i): [string, number] => [
      i % 2 === 0 ? 'A' : 'B',
      (i - count) / 60,
    ])
    const id = await statusWith(t, owner, entries)
    // from the oldest entry on: every minute counted, the newest until now
    const body = (await durations(t, owner, id, range(-count / 60 - 1))).json()
    const minutes = Object.fromEntries(
      body.values.map((v: { value: string; seconds: number }) => [v.value, v.seconds / 60]),
    )
    assert.deepEqual(minutes, { A: Math.ceil(count / 2), B: Math.floor(count / 2) })
  })

  it('answers per accessTypeHistory, like the history', async (ctx) => {
    const { t, cast, owner } = await world(ctx)
    const id = await statusWith(t, owner, [['OPEN', -1]], {
      accessType: 'public',
      accessTypeHistory: 'owner',
    })
    await grant(t, owner, id, cast.updater, 'updater')
    const q = range(-2)
    assert.equal((await durations(t, owner, id, q)).statusCode, 200)
    const codes = [
      (await durations(t, cast.updater, id, q)).statusCode,
      (await t.request(cast.updater, 'GET', `/v1/status/${id}/history`)).statusCode,
    ]
    assert.equal(codes[0], codes[1])
    assert.equal(codes[0], 403)
    const hidden = await statusWith(t, owner, [['OPEN', -1]])
    assert.equal((await durations(t, cast.stranger, hidden, q)).statusCode, 404)
    assert.equal((await durations(t, null, hidden, q)).statusCode, 401)
  })

  it('refuses a range that is not one: from not before to or now, a time that is none', async (ctx) => {
    const { t, owner } = await world(ctx)
    const id = await statusWith(t, owner, [['OPEN', -1]])
    for (const [query, field] of [
      [range(1), 'from'],
      [range(-1, -2), 'to'],
      [range(-1, -1), 'to'],
      ['from=yesterday', 'from'],
      ['from=2026-02-30T00:00:00Z', 'from'],
      ['from=2026-05-31T23:59:60Z', 'from'],
      [`from=${encodeURIComponent(at(-1))}&to=soon`, 'to'],
      ['', 'from'],
    ] as const) {
      const res = await durations(t, owner, id, query)
      assert.equal(res.statusCode, 400, query)
      assert.equal(res.json().errorCode, 'validationError', query)
      assert.ok(
        res.json().errors.some((e: { field: string }) => e.field.includes(field)),
        `${query}: ${res.body}`,
      )
    }
  })
})
