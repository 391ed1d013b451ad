import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// docs/api.md#the-status-object: `subscriberCount`, the users holding the subscriber role,
// shown to whoever may see the status's user list (accessTypeUserList) and null to everyone
// else. One public status per user-list setting, each with two subscribers and an updater.

type Reader = 'owner' | 'subscriber' | 'updater' | 'stranger'
type Level = 'owner' | 'private' | 'public'

const TABLE: [level: Level, reader: Reader, count: number | null][] = [
  ['owner', 'owner', 2],
  ['owner', 'updater', null],
  ['owner', 'subscriber', null],
  ['owner', 'stranger', null],
  ['private', 'owner', 2],
  ['private', 'updater', 2],
  ['private', 'subscriber', 2],
  ['private', 'stranger', null],
  ['public', 'owner', 2],
  ['public', 'updater', 2],
  ['public', 'subscriber', 2],
  ['public', 'stranger', 2],
]

describe(`subscriberCount [${TEST_ENGINE}]`, () => {
  let t: TestApp
  const users = {} as Record<Reader, TestUser>
  const ids = {} as Record<Level, string>

  const lifetime = suiteLifetime()
  before(async () => {
    t = await makeApp(lifetime)
    users.owner = await t.user({ name: 'Olivia Owner', plan: 'pro' })
    users.subscriber = await t.user({ name: 'Sam Subscriber' })
    users.updater = await t.user({ name: 'Uma Updater' })
    users.stranger = await t.user({ name: 'Stan Stranger' })
    const second = await t.user({ name: 'Sue Subscriber' })
    for (const level of ['owner', 'private', 'public'] as const) {
      const s = await createStatus(t, users.owner, `list-${level}`, {
        name: `List ${level}`,
        value: 'FREE',
        accessType: 'public',
        accessTypeUserList: level,
      })
      ids[level] = s.id
      await grant(t, users.owner, s.id, users.subscriber, 'subscriber')
      await grant(t, users.owner, s.id, second, 'subscriber')
      await grant(t, users.owner, s.id, users.updater, 'updater')
    }
  })

  for (const [level, reader, count] of TABLE)
    it(`accessTypeUserList ${level}: the ${reader} reads ${count ?? 'null'}`, async () => {
      const res = await t.request(users[reader], 'GET', `/v1/status/${ids[level]}`)
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().subscriberCount, count)
    })

  it('a write answers with the count as the writer may see it', async () => {
    const byOwner = await t.request(users.owner, 'PATCH', `/v1/status/${ids.owner}`, {
      value: 'BUSY',
    })
    assert.equal(byOwner.json().subscriberCount, 2)
    const byUpdater = await t.request(users.updater, 'PATCH', `/v1/status/${ids.owner}`, {
      value: 'FREE',
    })
    assert.equal(byUpdater.statusCode, 200, byUpdater.body)
    assert.equal(byUpdater.json().subscriberCount, null, 'the list is the owner’s only')
    const byKey = await t.request(users.owner, 'POST', '/v1/status-keys/list-private', {
      value: 'AWAY',
    })
    assert.equal(byKey.json().subscriberCount, 2)
  })

  it('counts subscribers only, and follows the roles: one left, one followed', async () => {
    const follower = await t.user({ name: 'Fred Follower' })
    const followed = await t.request(follower, 'POST', `/v1/status/${ids.public}/subscription`)
    assert.ok(followed.statusCode < 300, followed.body)
    const left = await t.request(
      users.subscriber,
      'DELETE',
      `/v1/status/${ids.public}/subscription`,
    )
    assert.ok(left.statusCode < 300, left.body)
    const res = await t.request(users.owner, 'GET', `/v1/status/${ids.public}`)
    assert.equal(res.json().subscriberCount, 2, 'Sue and Fred; the updater is no subscriber')
    const created = await createStatus(t, users.owner, 'fresh', { name: 'Fresh' })
    assert.equal(created.subscriberCount, 0, 'a new status has none')
  })
})
