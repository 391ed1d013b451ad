import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PUBLIC_PAGE_SIZE } from '../../src/modules/statuses/share.routes.ts'
import { MAX_PAGE_SIZE } from '../../src/modules/statuses/statuses.schemas.ts'
import { makeApp } from '../helpers/app.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'

const DAY_MS = 24 * 60 * 60 * 1000
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString()

test('history: newest first, the creation value is the oldest entry, each with by', async (ctx) => {
  const t = await makeApp(ctx)
  const { owner, updater } = await makeCast(t)
  const s = await createStatus(t, owner, 'build', { value: 'PASSING' })
  await grant(t, owner, s.id, updater, 'updater')
  await t.request(updater, 'PATCH', `/v1/status/${s.id}`, { value: 'FAILING' })
  await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { colorNo: 3 }) // not a value update
  await t.request(owner, 'POST', '/v1/status-keys/build', { value: 'FAILING' }) // same value: an update
  const res = await t.request(owner, 'GET', `/v1/status/${s.id}/history`)
  assert.equal(res.statusCode, 200)
  const body = res.json()
  assert.deepEqual(
    body.map((e: { value: string; by: { userId: string; name: string } }) => [
      e.value,
      e.by.userId,
      e.by.name,
    ]),
    [
      ['FAILING', owner.id, 'Olivia Owner'],
      ['FAILING', updater.id, 'Uma Updater'],
      ['PASSING', owner.id, 'Olivia Owner'],
    ],
  )
  assert.deepEqual(Object.keys(body[0]).sort(), ['at', 'by', 'value', 'via'])
  assert.ok(body[0].at >= body[1].at && body[1].at >= body[2].at)
  assert.equal(body[2].at, s.createdAt, 'the creation value is dated at creation')
})

test('history names the API key that wrote each value (via), to the writer alone', async (ctx) => {
  const t = await makeApp(ctx)
  const { owner, updater } = await makeCast(t)
  const s = await createStatus(t, owner, 'door', {
    value: 'SHUT',
    accessType: 'public',
    accessTypeHistory: 'public',
    accessTypeUserList: 'public',
  })
  await grant(t, owner, s.id, updater, 'updater')
  const [ownerKey] = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()
  const made = await t.request(owner, 'POST', '/v1/user/api-keys', {
    label: 'door sensor',
    scopes: ['status:read', 'status:value'],
    statusIds: [s.id],
  })
  assert.equal(made.statusCode, 201, made.body)
  const device = { id: owner.id, key: made.json().key as string }
  const deviceVia = { type: 'key', keyId: made.json().id, label: 'door sensor' }
  // by id and by key
  assert.equal(
    (await t.request(device, 'PATCH', `/v1/status/${s.id}`, { value: 'OPEN' })).statusCode,
    200,
  )
  assert.equal(
    (await t.request(device, 'POST', '/v1/status-keys/door', { value: 'AJAR' })).statusCode,
    200,
  )
  assert.equal(
    (await t.request(updater, 'PATCH', `/v1/status/${s.id}`, { value: 'SHUT' })).statusCode,
    200,
  )
  const [updaterKey] = (await t.request(updater, 'GET', '/v1/user/api-keys')).json()
  const seen = async (who: typeof owner | null, url = `/v1/status/${s.id}/history`) =>
    (await t.request(who, 'GET', url))
      .json()
      .map((e: { value: string; via: unknown }) => [e.value, e.via])
  assert.deepEqual(await seen(owner), [
    ['SHUT', null],
    ['AJAR', deviceVia],
    ['OPEN', deviceVia],
    ['SHUT', { type: 'key', keyId: ownerKey.id, label: null }],
  ])
  assert.deepEqual(
    await seen(updater),
    [
      ['SHUT', { type: 'key', keyId: updaterKey.id, label: null }],
      ['AJAR', null],
      ['OPEN', null],
      ['SHUT', null],
    ],
    "another user's keys are not named to the updater",
  )
  assert.deepEqual(
    await seen(null, `/v1/share/${s.shareId}/history`),
    [
      ['SHUT', null],
      ['AJAR', null],
      ['OPEN', null],
      ['SHUT', null],
    ],
    'nor to anyone anonymous',
  )
})

test('history of a status created without a value starts at its first value', async (ctx) => {
  const t = await makeApp(ctx)
  const { owner } = await makeCast(t)
  const s = await createStatus(t, owner, 'later', { colorNo: 2 })
  assert.deepEqual((await t.request(owner, 'GET', `/v1/status/${s.id}/history`)).json(), [])
  await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'NOW' })
  const body = (await t.request(owner, 'GET', `/v1/status/${s.id}/history`)).json()
  assert.deepEqual(
    body.map((e: { value: string }) => e.value),
    ['NOW'],
  )
})

test('history pages like the list: ?limit, Link rel="next", the same entries', async (ctx) => {
  const t = await makeApp(ctx)
  const { owner } = await makeCast(t)
  const s = await createStatus(t, owner, 'counter', { value: 'v0' })
  for (let i = 1; i <= 6; i++)
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: `v${i}` })
  const all = (await t.request(owner, 'GET', `/v1/status/${s.id}/history`)).json()
  assert.deepEqual(
    all.map((e: { value: string }) => e.value),
    ['v6', 'v5', 'v4', 'v3', 'v2', 'v1', 'v0'],
  )
  const seen: unknown[] = []
  let url: string | undefined = `/v1/status/${s.id}/history?limit=3`
  let pages = 0
  while (url) {
    const res = await t.request(owner, 'GET', url)
    assert.equal(res.statusCode, 200, res.body)
    seen.push(...res.json())
    const link = res.headers.link as string | undefined
    url = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined
    pages += 1
  }
  assert.equal(pages, 3)
  assert.deepEqual(seen, all)
  const cursor = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url')
  for (const bad of ['nonsense', cursor(['0']), cursor(['-3']), cursor(['1e3']), cursor([7])]) {
    const res = await t.request(owner, 'GET', `/v1/status/${s.id}/history?limit=2&cursor=${bad}`)
    assert.equal(res.statusCode, 400, bad)
    assert.equal(res.json().errorCode, 'validationError')
  }
})

test("history follows the owner's plan retention: pruned on write, filtered on read", async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user({ plan: 'free', name: 'Free Owner' }) // historyDays 7
  const s = await createStatus(t, owner, 'door', { value: 'OPEN' })
  const db = t.database.db
  const backdate = (changeNo: number, at: string) =>
    db
      .updateTable('status_history')
      .set({ at })
      .where('status_id', '=', s.id)
      .where('change_no', '=', changeNo)
      .execute()
  const stored = async () =>
    (
      await db
        .selectFrom('status_history')
        .select('change_no')
        .where('status_id', '=', s.id)
        .orderBy('change_no')
        .execute()
    ).map((r) => r.change_no)
  const values = async () =>
    (await t.request(owner, 'GET', `/v1/status/${s.id}/history`))
      .json()
      .map((e: { value: string }) => e.value)

  await backdate(1, daysAgo(30))
  await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'CLOSED' })
  assert.deepEqual(await stored(), [2], 'the write pruned the 30-day-old entry')
  assert.deepEqual(await values(), ['CLOSED'])

  await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'LOCKED' })
  await backdate(2, daysAgo(10))
  await backdate(3, daysAgo(9))
  assert.deepEqual(await stored(), [2, 3], 'no write since: nothing pruned yet')
  assert.deepEqual(
    await values(),
    ['LOCKED'],
    'past retention, hidden on read; the entry that set the current value stays',
  )
})

test("an updater's write prunes by the owner's plan, not the updater's", async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user({ plan: 'unlimited', name: 'Rich Owner' }) // keeps forever
  const updater = await t.user({ plan: 'free', name: 'Free Updater' })
  const s = await createStatus(t, owner, 'door', { value: 'OPEN' })
  await grant(t, owner, s.id, updater, 'updater')
  await t.database.db
    .updateTable('status_history')
    .set({ at: daysAgo(400) })
    .where('status_id', '=', s.id)
    .execute()
  await t.request(updater, 'PATCH', `/v1/status/${s.id}`, { value: 'SHUT' })
  const body = (await t.request(owner, 'GET', `/v1/status/${s.id}/history`)).json()
  assert.deepEqual(
    body.map((e: { value: string }) => e.value),
    ['SHUT', 'OPEN'],
  )
})

test('history never reveals who has a role: by is null unless the caller may see the user list', async (ctx) => {
  const t = await makeApp(ctx)
  const { owner, stranger } = await makeCast(t)
  const s = await createStatus(t, owner, 'lamp', {
    value: 'ON',
    accessType: 'public',
    accessTypeHistory: 'public',
    accessTypeUserList: 'owner',
  })
  const theirs = (await t.request(stranger, 'GET', `/v1/status/${s.id}/history`)).json()
  assert.deepEqual(theirs, [{ value: 'ON', at: s.createdAt, by: null, via: null }])
  const anonymous = (await t.request(null, 'GET', `/v1/share/${s.shareId}/history`)).json()
  assert.deepEqual(anonymous, [{ value: 'ON', at: s.createdAt, by: null, via: null }])
  const mine = (await t.request(owner, 'GET', `/v1/status/${s.id}/history`)).json()
  assert.deepEqual(mine[0].by, { userId: owner.id, name: 'Olivia Owner' })
})

test(`the public history is always paged: ${PUBLIC_PAGE_SIZE} entries without limit, and a Link to the rest`, async (ctx) => {
  const t = await makeApp(ctx)
  const { owner } = await makeCast(t)
  const s = await createStatus(t, owner, 'lamp', {
    value: 'V0',
    accessType: 'public',
    accessTypeHistory: 'public',
  })
  for (let i = 1; i <= PUBLIC_PAGE_SIZE; i++)
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: `V${i}` })
  const first = await t.request(null, 'GET', `/v1/share/${s.shareId}/history`)
  assert.equal(first.json().length, PUBLIC_PAGE_SIZE)
  assert.equal(first.json()[0].value, `V${PUBLIC_PAGE_SIZE}`, 'newest first')
  const next = String(first.headers.link).match(/^<([^>]+)>; rel="next"$/)?.[1]
  assert.ok(next?.includes(`limit=${PUBLIC_PAGE_SIZE}`), String(first.headers.link))
  const rest = await t.request(null, 'GET', next as string)
  assert.deepEqual(
    rest.json().map((e: { value: string }) => e.value),
    ['V0'],
  )
  assert.equal(rest.headers.link, undefined)
  // the owner's own history pages at 1 000 without limit
  const mine = await t.request(owner, 'GET', `/v1/status/${s.id}/history`)
  assert.equal(mine.json().length, PUBLIC_PAGE_SIZE + 1)
  assert.equal(mine.headers.link, undefined)
})

test(`a history without limit answers ${MAX_PAGE_SIZE} entries, newest first, and a Link to the rest`, async (ctx) => {
  const t = await makeApp(ctx)
  const { owner } = await makeCast(t)
  const s = await createStatus(t, owner, 'meter', { value: 'V1' })
  // the entries written straight into the table: 1 001 updates over HTTP would be slow
  const entries = Array.from({ length: MAX_PAGE_SIZE }, (_, i) => ({
    status_id: s.id,
    change_no: i + 2,
    value: `V${i + 2}`,
    at: new Date().toISOString(),
    by_user_id: owner.id,
  }))
  for (let i = 0; i < entries.length; i += 200)
    await t.database.db
      .insertInto('status_history')
      .values(entries.slice(i, i + 200))
      .execute()
  await t.database.db
    .updateTable('statuses')
    .set({ change_count: MAX_PAGE_SIZE + 1, value: `V${MAX_PAGE_SIZE + 1}` })
    .where('id', '=', s.id)
    .execute()
  const first = await t.request(owner, 'GET', `/v1/status/${s.id}/history`)
  assert.equal(first.json().length, MAX_PAGE_SIZE)
  assert.equal(first.json()[0].value, `V${MAX_PAGE_SIZE + 1}`)
  const next = String(first.headers.link).match(/^<([^>]+)>; rel="next"$/)?.[1]
  assert.ok(next, String(first.headers.link))
  const rest = await t.request(owner, 'GET', next as string)
  assert.deepEqual(
    rest.json().map((e: { value: string }) => e.value),
    ['V1'],
  )
})
