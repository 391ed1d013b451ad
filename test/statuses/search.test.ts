import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { runReadOnlyScenarios } from '../helpers/scenarios.ts'
import { createStatus } from '../helpers/sharing.ts'

// docs/accounts.md#discovery and docs/api.md#search: verified users find public statuses
// their owners listed, by words of the name; nothing else is ever found.

const search = (t: TestApp, as: TestUser, q: string, extra = '') =>
  t.request(as, 'GET', `/v1/search/statuses?q=${encodeURIComponent(q)}${extra}`)

const names = (res: { json(): unknown }) =>
  (res.json() as { name: string }[]).map((r) => r.name).sort()

runReadOnlyScenarios(
  `GET /v1/search/statuses: who may search, and what q may be [${TEST_ENGINE}]`,
  async (t) => {
    const app = await makeApp(t)
    const owner = await app.user({ name: 'Olivia Owner' })
    const unverified = await app.user({ verified: false })
    await createStatus(app, owner, 'lib', {
      name: 'Library hours',
      accessType: 'public',
      listed: true,
    })
    return { t: app, users: { owner, unverified }, vars: {} }
  },
  [
    {
      name: 'a verified user searches: the listed public status, in the documented shape',
      method: 'GET',
      url: '/v1/search/statuses?q=library',
      expectStatus: 200,
      expect: (body) => {
        assert.equal(body.length, 1)
        assert.deepEqual(Object.keys(body[0]).sort(), [
          'name',
          'ownerName',
          'shareId',
          'statusId',
          'value',
        ])
        assert.equal(body[0].ownerName, 'Olivia Owner')
      },
    },
    {
      name: 'an unverified user may not search: 403 notVerified',
      as: 'unverified',
      method: 'GET',
      url: '/v1/search/statuses?q=library',
      expectStatus: 403,
      expectErrorCode: 'notVerified',
    },
    {
      name: 'without a key: 401',
      as: null,
      method: 'GET',
      url: '/v1/search/statuses?q=library',
      expectStatus: 401,
    },
    {
      name: 'q is required',
      method: 'GET',
      url: '/v1/search/statuses',
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'q of blanks only holds no word: 400',
      method: 'GET',
      url: '/v1/search/statuses?q=%20%20',
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'q longer than 100 characters: 400',
      method: 'GET',
      url: `/v1/search/statuses?q=${'a'.repeat(101)}`,
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'q of more than 8 words: 400',
      method: 'GET',
      url: `/v1/search/statuses?q=${encodeURIComponent('a b c d e f g h i')}`,
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'a cursor this service did not issue: 400',
      method: 'GET',
      url: '/v1/search/statuses?q=library&cursor=nope',
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'limit above 100: 400',
      method: 'GET',
      url: '/v1/search/statuses?q=library&limit=101',
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
  ],
)

describe(`search finds only listed public statuses [${TEST_ENGINE}]`, () => {
  it('listed public found; private (listed or not) and unlisted public never', async (ctx) => {
    const t = await makeApp(ctx)
    const alice = await t.user({ name: 'Alice' })
    const bob = await t.user({ name: 'Bob' })
    const searcher = await t.user()
    await createStatus(t, alice, 'a1', { name: 'Garden gate', accessType: 'public', listed: true })
    await createStatus(t, alice, 'a2', { name: 'Garden shed', accessType: 'private', listed: true })
    await createStatus(t, bob, 'b1', { name: 'Garden pond', accessType: 'public' })
    await createStatus(t, bob, 'b2', { name: 'Garden hose', accessType: 'private' })
    await createStatus(t, bob, 'b3', { name: 'Garden bench', accessType: 'public', listed: true })
    const res = await search(t, searcher, 'garden')
    assert.equal(res.statusCode, 200)
    assert.deepEqual(names(res), ['Garden bench', 'Garden gate'])
    // the owner finds no more than anyone else
    assert.deepEqual(names(await search(t, alice, 'garden')), ['Garden bench', 'Garden gate'])
  })

  it('a key confined to some statuses (a device key) finds none but those', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const a = await createStatus(t, owner, 'a', {
      name: 'Dock one',
      accessType: 'public',
      listed: true,
    })
    await createStatus(t, owner, 'b', { name: 'Dock two', accessType: 'public', listed: true })
    const made = await t.request(owner, 'POST', '/v1/user/api-keys', { statusIds: [a.id] })
    assert.equal(made.statusCode, 201, made.body)
    const device = { id: owner.id, key: made.json().key as string }
    assert.deepEqual(names(await search(t, device, 'dock')), ['Dock one'])
    assert.deepEqual(names(await search(t, owner, 'dock')), ['Dock one', 'Dock two'])
  })

  it('a listed status made private is no longer found; made public again, it is', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const s = await createStatus(t, owner, 'k', {
      name: 'Ferry times',
      accessType: 'public',
      listed: true,
    })
    assert.deepEqual(names(await search(t, owner, 'ferry')), ['Ferry times'])
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
    assert.deepEqual(names(await search(t, owner, 'ferry')), [])
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'public' })
    assert.deepEqual(names(await search(t, owner, 'ferry')), ['Ferry times'])
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { listed: false })
    assert.deepEqual(names(await search(t, owner, 'ferry')), [])
  })

  it('listed is in the Status, false by default; only the owner sets it (an updater: 403)', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const updater = await t.user()
    const s = await createStatus(t, owner, 'k', { name: 'Lab door', accessType: 'public' })
    assert.equal(s.listed, false)
    await t.request(owner, 'PUT', `/v1/status/${s.id}/users/${updater.id}`, { role: 'updater' })
    const refused = await t.request(updater, 'PATCH', `/v1/status/${s.id}`, { listed: true })
    assert.equal(refused.statusCode, 403)
    const set = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { listed: true })
    assert.equal(set.statusCode, 200)
    assert.equal(set.json().listed, true)
    assert.equal(
      (await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { listed: 'yes' })).statusCode,
      400,
    )
  })

  it('every word must appear in the name, in any case and in any order', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const mk = (key: string, name: string) =>
      createStatus(t, owner, key, { name, accessType: 'public', listed: true })
    await mk('a', 'North Station Lift')
    await mk('b', 'South Station')
    await mk('c', 'ÉCOLE Nord')
    assert.deepEqual(names(await search(t, owner, 'station')), [
      'North Station Lift',
      'South Station',
    ])
    assert.deepEqual(names(await search(t, owner, 'lift STATION')), ['North Station Lift'])
    assert.deepEqual(names(await search(t, owner, 'tat')), ['North Station Lift', 'South Station'])
    assert.deepEqual(names(await search(t, owner, 'station bus')), [])
    // folded by the application, so both engines agree beyond ASCII
    assert.deepEqual(names(await search(t, owner, 'école')), ['ÉCOLE Nord'])
  })

  it('a renamed status is found by its new name only', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const s = await createStatus(t, owner, 'k', {
      name: 'Old name',
      accessType: 'public',
      listed: true,
    })
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { name: 'Fresh title' })
    assert.deepEqual(names(await search(t, owner, 'old')), [])
    assert.deepEqual(names(await search(t, owner, 'fresh')), ['Fresh title'])
  })

  it('LIKE wildcards in q are literal: % and _ match only themselves (and ! too)', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const mk = (key: string, name: string) =>
      createStatus(t, owner, key, { name, accessType: 'public', listed: true })
    await mk('a', '100% up')
    await mk('b', 'load_avg')
    await mk('c', 'Plain text')
    await mk('d', 'Wow! ok')
    assert.deepEqual(names(await search(t, owner, '%')), ['100% up'])
    assert.deepEqual(names(await search(t, owner, '_')), ['load_avg'])
    assert.deepEqual(names(await search(t, owner, 'load_')), ['load_avg'])
    assert.deepEqual(names(await search(t, owner, 'wow!')), ['Wow! ok'])
    assert.deepEqual(names(await search(t, owner, '!')), ['Wow! ok'])
    assert.deepEqual(names(await search(t, owner, 'p%t')), [])
  })

  it('pages: limit, Link rel=next carrying q, every match once, in creation order', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const made: string[] = []
    for (let i = 0; i < 7; i++) {
      const s = await createStatus(t, owner, `k${i}`, {
        name: `Tram stop ${i}`,
        accessType: 'public',
        listed: true,
      })
      made.push(s.id)
      await createStatus(t, owner, `p${i}`, {
        name: `Tram depot ${i}`,
        accessType: 'private',
        listed: true,
      })
    }
    const seen: string[] = []
    let url: string | null = `/v1/search/statuses?q=${encodeURIComponent('tram')}&limit=3`
    let pages = 0
    while (url !== null) {
      const res = await t.request(owner, 'GET', url)
      assert.equal(res.statusCode, 200, res.body)
      pages += 1
      seen.push(...(res.json() as { statusId: string }[]).map((r) => r.statusId))
      const link = res.headers.link as string | undefined
      url = link ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null
      if (url) assert.match(url, /[?&]q=tram&/)
    }
    assert.equal(pages, 3)
    assert.deepEqual(seen, made)
  })
})
