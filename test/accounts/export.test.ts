import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EXPORT_PAGE } from '../../src/modules/accounts/export.service.ts'
import { USER_SCOPES } from '../../src/modules/keys/scopes.ts'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// docs/accounts.md#export-your-data, docs/api.md#export-your-data

const GOTIFY_TOKEN = 'AbCdEfGhIjKlMnO'

/** The token at the end of a link the API made. */
const tokenOf = (url: string): string => {
  const token = url.split('/').at(-1)
  assert.ok(token && token.length >= 20, url)
  return token
}

/** A key of the signed-in user, made through the API: its secret is known to the test. */
async function keyOf(t: TestApp, cookie: string, scopes?: string[]): Promise<string> {
  const res = await asSession(t, cookie, 'POST', '/v1/user/api-keys', {
    label: 'export test',
    ...(scopes && { scopes }),
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().key
}

/**
 * A user with something in every part of the export, and every secret the test made on the
 * way (keys, the session cookie, tokens of links, a channel's secret and token).
 */
async function fullAccount(ctx: Lifetime) {
  const t = await makeApp(ctx, { deps: { signup: 'open' } })
  const { id, cookie } = await signUpUser(t, { email: 'ada@example.com', name: 'Ada' })
  const me: TestUser = { id, key: await keyOf(t, cookie, [...USER_SCOPES]) }
  const other = await t.user({ name: 'Grace' })
  const secrets: string[] = [cookie, me.key]

  const room = await createStatus(t, me, 'room', { name: 'Room', value: 'FREE' })
  for (const value of ['BUSY', 'FREE', 'BUSY']) {
    const res = await t.request(me, 'POST', '/v1/status-keys/room', { value })
    assert.equal(res.statusCode, 200, res.body)
  }
  // and older history, seeded as rows: longer than a page, so it is read in more than one
  const seeded = Array.from({ length: EXPORT_PAGE + 2 }, (_, i) => ({
    status_id: room.id,
    change_no: -(i + 1),
    value: `OLD${i}`,
    at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    by_user_id: id,
    by_key_id: null,
  }))
  await t.database.db.insertInto('status_history').values(seeded).execute()
  const door = await createStatus(t, me, 'door', { name: 'Door', value: 'OPEN' })

  // a role held on another's status, an invitation received, one sent
  const theirs = await createStatus(t, other, 'desk', { name: 'Desk', value: 'IN' })
  await grant(t, other, theirs.id, me, 'updater')
  const pending = await createStatus(t, other, 'lab', { name: 'Lab', value: 'IN' })
  const offered = await t.request(other, 'PUT', `/v1/status/${pending.id}/users/${me.id}`, {
    role: 'subscriber',
  })
  assert.equal(offered.statusCode, 202, offered.body)
  const sent = await t.request(me, 'PUT', `/v1/status/${door.id}/users/${other.id}`, {
    role: 'subscriber',
  })
  assert.equal(sent.statusCode, 202, sent.body)

  const link = await t.request(me, 'POST', `/v1/status/${room.id}/invitations`, {
    role: 'subscriber',
    maxUses: 5,
  })
  assert.equal(link.statusCode, 201, link.body)
  secrets.push(tokenOf(link.json().url))
  const share = await t.request(me, 'POST', `/v1/status/${room.id}/share-links`, {})
  assert.equal(share.statusCode, 201, share.body)
  secrets.push(tokenOf(share.json().url))

  const board = await t.request(me, 'POST', '/v1/boards', {
    name: 'Floor',
    statusIds: [room.id, door.id],
    accessType: 'public',
  })
  assert.equal(board.statusCode, 201, board.body)
  const webhook = await t.request(me, 'POST', '/v1/user/channels', {
    type: 'webhook',
    name: 'Ops',
    config: { url: 'https://hooks.example.com/statusd', format: 'standard' },
  })
  assert.equal(webhook.statusCode, 201, webhook.body)
  secrets.push(webhook.json().secret)
  const gotify = await t.request(me, 'POST', '/v1/user/channels', {
    type: 'gotify',
    name: 'Phone',
    config: { server: 'https://gotify.example.com/', token: GOTIFY_TOKEN },
  })
  assert.equal(gotify.statusCode, 201, gotify.body)
  secrets.push(GOTIFY_TOKEN)
  const rule = await t.request(me, 'PUT', `/v1/status/${room.id}/notifications`, {
    when: 'any',
  })
  assert.equal(rule.statusCode, 200, rule.body)
  const schedule = await t.request(me, 'PUT', `/v1/status/${door.id}/schedule`, {
    timezone: 'Europe/Berlin',
    entries: [{ cron: '0 18 * * 1-5', value: 'CLOSED' }],
  })
  assert.equal(schedule.statusCode, 200, schedule.body)
  // a passkey as its registration stores it (the ceremony is docs/api.md#passkeys' own test)
  await t.database.db
    .insertInto('passkeys')
    .values({
      id: 'pk-export-test',
      user_id: me.id,
      credential_id: 'Y3JlZGVudGlhbC1pZC1vZi1hZGE',
      public_key: 'cHVibGljLWtleS1vZi1hZGEtcGFzc2tleQ',
      counter: 0,
      transports: '["internal"]',
      name: 'Laptop',
      created_at: '2026-11-29T08:00:00.000Z',
      last_used_at: null,
    })
    .execute()
  return { t, me, other, cookie, secrets, room, door, theirs, pending }
}

/** Every stored secret and hash of any row: none may be in an export. */
async function storedSecrets(t: TestApp): Promise<string[]> {
  const db = t.database.db
  const found = [
    ...(await db.selectFrom('users').select('password_hash as s').execute()),
    ...(await db.selectFrom('api_keys').select('key_hash as s').execute()),
    ...(await db.selectFrom('sessions').select('token_hash as s').execute()),
    ...(await db.selectFrom('share_links').select('token_hash as s').execute()),
    ...(await db.selectFrom('invitation_links').select('token_hash as s').execute()),
    ...(await db.selectFrom('auth_tokens').select('token_hash as s').execute()),
    ...(await db.selectFrom('channels').select('secret as s').execute()),
    ...(await db.selectFrom('passkeys').select('public_key as s').execute()),
    ...(await db.selectFrom('passkeys').select('credential_id as s').execute()),
  ]
  return found.map((row) => row.s).filter((s): s is string => s !== null && s !== '')
}

describe('GET /v1/user/export', () => {
  it('holds every part of the account, each history whole, as an attachment', async (ctx) => {
    const { t, me, cookie, room, door, theirs, pending } = await fullAccount(ctx)
    const res = await asSession(t, cookie, 'GET', '/v1/user/export')
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    assert.match(
      String(res.headers['content-disposition']),
      /^attachment; filename="statusd-export-\d{4}-\d{2}-\d{2}\.json"$/,
    )
    const doc = res.json()
    assert.equal(doc.format, 'statusd-export/1')
    assert.equal(doc.profile.id, me.id)
    assert.equal(doc.profile.email, 'ada@example.com')

    assert.deepEqual(
      doc.statuses.map((s: { id: string }) => s.id).sort(),
      [room.id, door.id].sort(),
    )
    const exportedRoom = doc.statuses.find((s: { id: string }) => s.id === room.id)
    assert.equal(exportedRoom.statusKey, 'room')
    const changeNos = exportedRoom.history.map((h: { changeNo: number }) => h.changeNo)
    const stored = await t.database.db
      .selectFrom('status_history')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status_id', '=', room.id)
      .executeTakeFirstOrThrow()
    assert.equal(changeNos.length, Number(stored.n))
    assert.ok(changeNos.length > EXPORT_PAGE, 'the history spans more than one page')
    assert.deepEqual(
      changeNos,
      [...changeNos].sort((a: number, b: number) => a - b),
      'oldest first, none twice',
    )
    assert.equal(new Set(changeNos).size, changeNos.length)
    assert.equal(exportedRoom.history.at(-1).value, exportedRoom.value)

    assert.deepEqual(
      doc.roles.map((r: { statusId: string; role: string }) => [r.statusId, r.role]),
      [[theirs.id, 'updater']],
    )
    assert.deepEqual(
      doc.invitations.received.map((i: { statusId: string }) => i.statusId),
      [pending.id],
    )
    assert.deepEqual(
      doc.invitations.sent.map((i: { statusId: string }) => i.statusId),
      [door.id],
    )
    assert.equal(doc.invitations.links.length, 1)
    assert.equal(doc.invitations.links[0].maxUses, 5)
    assert.equal(doc.shareLinks.length, 1)
    assert.equal(doc.shareLinks[0].statusId, room.id)
    assert.deepEqual(
      doc.boards.map((b: { name: string; statusIds: string[] }) => [b.name, b.statusIds]),
      [['Floor', [room.id, door.id]]],
    )
    assert.deepEqual(doc.channels.map((c: { name: string }) => c.name).sort(), ['Ops', 'Phone'])
    assert.deepEqual(
      doc.rules.map((r: { statusId: string }) => r.statusId),
      [room.id],
    )
    assert.deepEqual(
      doc.schedules.map((s: { statusId: string; timezone: string }) => [s.statusId, s.timezone]),
      [[door.id, 'Europe/Berlin']],
    )
    assert.equal(doc.apiKeys.length, 1)
    assert.equal(doc.apiKeys[0].label, 'export test')
    assert.equal(doc.sessions.length, 1)
    assert.deepEqual(
      doc.passkeys.map((p: { name: string; transports: string[] }) => [p.name, p.transports]),
      [['Laptop', ['internal']]],
    )
    const times = doc.securityEvents.map((e: { at: string }) => e.at)
    assert.deepEqual(times, [...times].sort(), 'the security log oldest first')
    assert.ok(
      doc.securityEvents.some((e: { kind: string }) => e.kind === 'keyCreated'),
      JSON.stringify(doc.securityEvents.map((e: { kind: string }) => e.kind)),
    )
  })

  it('holds no secret, token or hash: none stored, none the user was ever shown', async (ctx) => {
    const { t, cookie, secrets } = await fullAccount(ctx)
    const res = await asSession(t, cookie, 'GET', '/v1/user/export')
    assert.equal(res.statusCode, 200, res.body)
    const stored = await storedSecrets(t)
    assert.ok(stored.length >= 9, 'the search has something to look for')
    for (const secret of [...secrets, ...stored]) {
      assert.ok(!res.body.includes(secret), `the export holds a secret (${secret.slice(0, 6)}…)`)
    }
  })

  it('holds only the caller: what another user owns or holds is not in it', async (ctx) => {
    const { t, other } = await fullAccount(ctx)
    const res = await t.request(other, 'GET', '/v1/user/export')
    assert.equal(res.statusCode, 200, res.body)
    const doc = res.json()
    assert.equal(doc.profile.id, other.id)
    assert.deepEqual(doc.statuses.map((s: { name: string }) => s.name).sort(), ['Desk', 'Lab'])
    assert.equal(doc.passkeys.length, 0)
    assert.equal(doc.channels.length, 0)
    assert.equal(doc.boards.length, 0)
  })
})

runScenarios(
  'GET /v1/user/export: who may call',
  async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie } = await signUpUser(t)
    return {
      t,
      users: {
        account: { id: '', key: await keyOf(t, cookie, ['account']) },
        valueOnly: { id: '', key: await keyOf(t, cookie, ['status:value']) },
      },
      vars: { cookie },
    }
  },
  [
    {
      name: 'a session may export',
      as: null,
      method: 'GET',
      url: '/v1/user/export',
      headers: { cookie: 'statusd_session={cookie}' },
      expectStatus: 200,
    },
    {
      name: 'a key with `account` may export',
      as: 'account',
      method: 'GET',
      url: '/v1/user/export',
      expectStatus: 200,
    },
    {
      name: 'a key without `account` may not',
      as: 'valueOnly',
      method: 'GET',
      url: '/v1/user/export',
      expectStatus: 403,
      expectErrorCode: 'insufficientScope',
    },
    {
      name: 'no one may not',
      as: null,
      method: 'GET',
      url: '/v1/user/export',
      expectStatus: 401,
      expectErrorCode: 'unauthorized',
    },
  ],
)
