import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEFAULT_KEY_SCOPES, USER_SCOPES } from '../../src/modules/keys/scopes.ts'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// Scoped keys and device keys (docs/accounts.md#scoped-keys, docs/api.md#key-scopes): what a
// key may do (its scopes), where (the statuses it is confined to), and the minting rule (a key
// never makes a key with more than its own).

/** A key made over the API by `as` (a user's full key unless said otherwise). */
async function makeKey(
  t: TestApp,
  as: TestUser,
  body: Record<string, unknown>,
): Promise<TestUser & { keyId: string }> {
  const res = await t.request(as, 'POST', '/v1/user/api-keys', body)
  assert.equal(res.statusCode, 201, res.body)
  const made = res.json()
  return { id: as.id, key: made.key, keyId: made.id }
}

/**
 * The owner (a key made by the operator: every scope) with two statuses, door and office; a
 * stranger's private status; a stranger's public status the owner is updater on; and keys of
 * the owner's limited in the ways the rules are about.
 */
async function world(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user({ name: 'Owner' })
  const stranger = await t.user({ name: 'Stranger' })
  const door = await createStatus(t, owner, 'door', { value: 'closed' })
  const office = await createStatus(t, owner, 'office', { value: 'in' })
  const hidden = await createStatus(t, stranger, 'hidden', { value: 'x' })
  const shared = await createStatus(t, stranger, 'shared', { value: 'y', accessType: 'public' })
  await grant(t, stranger, shared.id, owner, 'updater')
  const ownerKeyId = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()[0].id
  const users = {
    owner,
    stranger,
    // the device key: reads and sets the value of the door, nothing else
    device: await makeKey(t, owner, {
      label: 'door sensor',
      scopes: ['status:read', 'status:value'],
      statusIds: [door.id],
    }),
    // a device key of two statuses: the door, and the stranger's status the owner updates
    twoStatuses: await makeKey(t, owner, {
      scopes: ['status:read', 'status:value'],
      statusIds: [door.id, shared.id],
    }),
    reader: await makeKey(t, owner, { scopes: ['status:read'] }),
    writer: await makeKey(t, owner, { scopes: ['status:read', 'status:write'] }),
    // the default: status:*, and no `keys`
    statusOnly: await makeKey(t, owner, {}),
    // may make keys, with at most read, value and keys
    minter: await makeKey(t, owner, { scopes: ['status:read', 'status:value', 'keys'] }),
    // may make keys, confined to the door
    confinedMinter: await makeKey(t, owner, { scopes: ['status:*', 'keys'], statusIds: [door.id] }),
    accountOnly: await makeKey(t, owner, { scopes: ['account'] }),
  }
  return {
    t,
    users,
    vars: {
      doorId: door.id,
      officeId: office.id,
      hiddenId: hidden.id,
      sharedId: shared.id,
      strangerId: stranger.id,
      ownerKeyId,
      deviceKeyId: users.device.keyId,
      confinedMinterKeyId: users.confinedMinter.keyId,
    },
  }
}

/** What a key confined to statuses is told of a status key it does not reach. */
const confinedKeyMiss = (key: string) =>
  `None of the statuses this API key is confined to has the key ${key}: a key confined to statuses reaches only those, and cannot create one`

const errorNames = (body: { message: string; errors?: { field: string; message: string }[] }) =>
  `${body.message} ${JSON.stringify(body.errors ?? [])}`

runScenarios('scoped keys: the minting rule', world, [
  {
    name: 'a key without `keys` cannot make a key: 403 insufficientScope naming keys',
    as: 'statusOnly',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: ['status:read'] },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body) => {
      assert.match(body.message, /\bkeys\b/)
      assert.deepEqual(body.errors, [{ field: 'scopes', message: 'must include keys' }])
    },
  },
  {
    name: 'a key without `keys` cannot list keys either',
    as: 'statusOnly',
    method: 'GET',
    url: '/v1/user/api-keys',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'a key without `keys` cannot revoke a key',
    as: 'statusOnly',
    method: 'DELETE',
    url: '/v1/user/api-keys/{deviceKeyId}',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: async (_body, ctx) => {
      const device = ctx.users.device as TestUser
      assert.equal((await ctx.t.request(device, 'GET', '/v1/checkAuth')).statusCode, 200)
    },
  },
  {
    name: 'a key makes a key with a subset of its scopes: 201, and the new key holds just those',
    as: 'minter',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: ['status:read'] },
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.deepEqual(body.scopes, ['status:read'])
      assert.equal(body.statusIds, null)
      const check = await ctx.t.request({ id: '', key: body.key }, 'GET', '/v1/checkAuth')
      assert.deepEqual(check.json().credential, {
        kind: 'key',
        id: body.id,
        scopes: ['status:read'],
        statusIds: null,
      })
    },
  },
  {
    name: 'a key cannot make a key with a scope it lacks: 403 insufficientScope naming it',
    as: 'minter',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: ['status:read', 'status:manage'] },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: async (body, ctx) => {
      assert.match(errorNames(body), /status:manage/)
      assert.doesNotMatch(body.message, /status:read/)
      // nothing was made
      const keys = (await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/api-keys')).json()
      assert.equal(keys.length, 9)
    },
  },
  {
    name: 'a key cannot make a key with the default scopes when they exceed its own: 403 naming them',
    as: 'minter',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: {},
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body) => assert.match(body.message, /status:write, status:manage/),
  },
  {
    name: 'a key cannot make a key holding `keys` or `account` beyond its own (no escalation)',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: ['account'], statusIds: ['{doorId}'] },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'a confined key makes a key confined to its statuses: 201',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: '{"scopes":["status:value"],"statusIds":["{doorId}"]}',
    expectStatus: 201,
    expect: (body, ctx) => {
      assert.deepEqual(body.scopes, ['status:value'])
      assert.deepEqual(body.statusIds, [ctx.vars.doorId])
    },
  },
  {
    name: 'a confined key cannot make an unconfined key: 403 insufficientScope on statusIds',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: ['status:value'] },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body) => assert.equal(body.errors[0].field, 'statusIds'),
  },
  {
    name: 'a confined key cannot make a key for a status beyond its own: 403 naming it',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: '{"scopes":["status:value"],"statusIds":["{doorId}","{officeId}"]}',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body, ctx) => {
      assert.match(body.message, new RegExp(ctx.vars.officeId as string))
      assert.doesNotMatch(body.message, new RegExp(ctx.vars.doorId as string))
    },
  },
  {
    name: 'a key with every scope and no confinement makes any key: 201',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: '{"scopes":["keys","account"],"statusIds":["{officeId}"]}',
    expectStatus: 201,
    expect: (body, ctx) => {
      assert.deepEqual(body.scopes, ['keys', 'account'])
      assert.deepEqual(body.statusIds, [ctx.vars.officeId])
    },
  },
  {
    name: 'a key without scopes named gets status:*, unconfined',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { label: 'default' },
    expectStatus: 201,
    expect: (body) => {
      assert.deepEqual(body.scopes, [...DEFAULT_KEY_SCOPES])
      assert.equal(body.statusIds, null)
    },
  },
  {
    name: '`status:*` stands for the four status scopes, and mixes with others',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: ['keys', 'status:*', 'status:read'] },
    expectStatus: 201,
    expect: (body) =>
      assert.deepEqual(body.scopes, [
        'status:read',
        'status:value',
        'status:write',
        'status:manage',
        'keys',
      ]),
  },
  {
    name: 'an unknown scope is 400 validationError',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: ['superuser'] },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'no scopes at all is 400 validationError (a key that may do nothing is a mistake)',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scopes: [] },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'statusIds of someone else’s private status: 400 validationError naming it',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: '{"statusIds":["{doorId}","{hiddenId}"]}',
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: async (body, ctx) => {
      assert.equal(body.errors[0].field, 'statusIds')
      assert.match(body.errors[0].message, new RegExp(ctx.vars.hiddenId as string))
      // an id that names nothing gets the very same answer: no status's existence leaks
      const unknown = await ctx.t.request(ctx.users.owner ?? null, 'POST', '/v1/user/api-keys', {
        statusIds: ['nosuchstatus000000000'],
      })
      assert.equal(unknown.statusCode, 400)
      assert.equal(
        unknown.json().errors[0].message,
        body.errors[0].message.replace(ctx.vars.hiddenId, 'nosuchstatus000000000'),
      )
    },
  },
  {
    name: 'statusIds may name a status the user holds a role on: 201',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: '{"scopes":["status:value"],"statusIds":["{sharedId}"]}',
    expectStatus: 201,
  },
  {
    name: 'statusIds: more than 100 is 400 validationError',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { statusIds: Array.from({ length: 101 }, (_, i) => `s${i}`) },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'statusIds: one twice is 400 validationError',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: '{"statusIds":["{doorId}","{doorId}"]}',
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'a key cannot rotate a key with more scopes than its own: 403 insufficientScope',
    as: 'minter',
    method: 'POST',
    url: '/v1/user/api-keys/{ownerKeyId}/rotate',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: async (_body, ctx) => {
      const owner = ctx.users.owner as TestUser
      assert.equal((await ctx.t.request(owner, 'GET', '/v1/checkAuth')).statusCode, 200)
    },
  },
  {
    name: 'rotation keeps the scopes and statuses: the successor is as limited',
    method: 'POST',
    url: '/v1/user/api-keys/{deviceKeyId}/rotate',
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.deepEqual(body.scopes, ['status:read', 'status:value'])
      assert.deepEqual(body.statusIds, [ctx.vars.doorId])
      assert.deepEqual(body.replaced.scopes, body.scopes)
      const successor = { id: '', key: body.key as string }
      const office = await ctx.t.request(successor, 'GET', `/v1/status/${ctx.vars.officeId}`)
      assert.equal(office.statusCode, 404)
      const name = await ctx.t.request(successor, 'PATCH', `/v1/status/${ctx.vars.doorId}`, {
        name: 'Front door',
      })
      assert.equal(name.json().errorCode, 'insufficientScope')
    },
  },
])

/** True when the key still authenticates. */
const works = async (ctx: ScenarioContext, who: string) =>
  (await ctx.t.request(ctx.users[who] ?? null, 'GET', '/v1/checkAuth')).statusCode === 200

runScenarios('a key confined to statuses manages no key but itself', world, [
  {
    name: 'a key confined to statuses lists only itself',
    as: 'confinedMinter',
    method: 'GET',
    url: '/v1/user/api-keys',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(
        body.map((k: { id: string }) => k.id),
        [ctx.vars.confinedMinterKeyId],
      ),
  },
  {
    name: 'a key confined to statuses cannot revoke the owner’s unconfined key: 404, it still works',
    as: 'confinedMinter',
    method: 'DELETE',
    url: '/v1/user/api-keys/{ownerKeyId}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => assert.equal(await works(ctx, 'owner'), true),
  },
  {
    name: 'a key confined to statuses cannot revoke another key, even one within its statuses: 404',
    as: 'confinedMinter',
    method: 'DELETE',
    url: '/v1/user/api-keys/{deviceKeyId}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => assert.equal(await works(ctx, 'device'), true),
  },
  {
    name: 'a key confined to statuses cannot rotate another key: 404, the key keeps working',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys/{deviceKeyId}/rotate',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      assert.equal(await works(ctx, 'device'), true)
      const keys = (await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/api-keys')).json()
      assert.equal(keys.length, 9, 'no successor was made')
    },
  },
  {
    name: 'a key confined to statuses cannot rotate the owner’s key: 404',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys/{ownerKeyId}/rotate',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'a key confined to statuses running revoke-all revokes only itself',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: {},
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.deepEqual(body, { revoked: 1 })
      assert.equal(await works(ctx, 'confinedMinter'), false)
      for (const other of ['owner', 'device', 'twoStatuses', 'reader', 'minter'])
        assert.equal(await works(ctx, other), true, `${other} still works`)
    },
  },
  {
    name: 'a key confined to statuses cannot keep another key in revoke-all: 404, nothing revoked',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: '{"keep":"{ownerKeyId}"}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      assert.equal(await works(ctx, 'confinedMinter'), true)
      assert.equal(await works(ctx, 'owner'), true)
    },
  },
  {
    name: 'a key confined to statuses keeping itself in revoke-all revokes nothing',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: '{"keep":"{confinedMinterKeyId}"}',
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.deepEqual(body, { revoked: 0 })
      assert.equal(await works(ctx, 'confinedMinter'), true)
      assert.equal(await works(ctx, 'owner'), true)
    },
  },
  {
    name: 'a key confined to statuses rotates itself: 201, as limited as before',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/user/api-keys/{confinedMinterKeyId}/rotate',
    expectStatus: 201,
    expect: (body, ctx) => {
      assert.deepEqual(body.statusIds, [ctx.vars.doorId])
      assert.equal(body.replaced.id, ctx.vars.confinedMinterKeyId)
    },
  },
  {
    name: 'a key confined to statuses revokes itself: 204',
    as: 'confinedMinter',
    method: 'DELETE',
    url: '/v1/user/api-keys/{confinedMinterKeyId}',
    expectStatus: 204,
    expect: async (_body, ctx) => assert.equal(await works(ctx, 'confinedMinter'), false),
  },
  {
    name: 'an unconfined key with `keys` still manages every key of its user: revokes the device key',
    as: 'owner',
    method: 'DELETE',
    url: '/v1/user/api-keys/{deviceKeyId}',
    expectStatus: 204,
    expect: async (_body, ctx) => assert.equal(await works(ctx, 'device'), false),
  },
  {
    name: 'an unconfined key lists every key of its user',
    as: 'owner',
    method: 'GET',
    url: '/v1/user/api-keys',
    expectStatus: 200,
    expect: (body) => assert.equal(body.length, 9),
  },
])

runScenarios('scoped keys: what each scope allows', world, [
  {
    name: 'a status:value device key sets the value of its status: 200',
    as: 'device',
    method: 'PATCH',
    url: '/v1/status/{doorId}',
    body: { value: 'open' },
    expectStatus: 200,
    expect: (body) => assert.equal(body.value, 'open'),
  },
  {
    name: 'a status:value device key sets the value by key: 200',
    as: 'device',
    method: 'POST',
    url: '/v1/status-keys/door',
    body: { value: 'open' },
    expectStatus: 200,
  },
  {
    name: 'a status:value device key changing the name: 403 insufficientScope naming status:write',
    as: 'device',
    method: 'PATCH',
    url: '/v1/status/{doorId}',
    body: { name: 'Front door' },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body) => {
      assert.match(body.message, /status:write/)
      assert.deepEqual(body.errors, [{ field: 'scopes', message: 'must include status:write' }])
    },
  },
  {
    name: 'a status:value key sending the value and another field: 403, and nothing changes',
    as: 'device',
    method: 'POST',
    url: '/v1/status-keys/door',
    body: { value: 'open', colorNo: 3 },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: async (_body, ctx) => {
      const door = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/status-keys/door')
      assert.equal(door.json().value, 'closed')
      assert.equal(door.json().colorNo, 1)
    },
  },
  {
    name: 'a status:write key changes the name and the value: 200',
    as: 'writer',
    method: 'PATCH',
    url: '/v1/status/{officeId}',
    body: { name: 'Office', value: 'out' },
    expectStatus: 200,
  },
  {
    name: 'a status:write key changing accessType: 403 insufficientScope naming status:manage',
    as: 'writer',
    method: 'PATCH',
    url: '/v1/status/{officeId}',
    body: { accessType: 'public' },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body) => assert.match(body.message, /status:manage/),
  },
  {
    name: 'a status:write key creating a status with accessTypeHistory: 403 naming status:manage',
    as: 'writer',
    method: 'POST',
    url: '/v1/status-keys/garage',
    body: { value: 'shut', accessTypeHistory: 'owner' },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'a status:write key creates a status by key: 201',
    as: 'writer',
    method: 'POST',
    url: '/v1/status-keys/garage',
    body: { value: 'shut' },
    expectStatus: 201,
  },
  {
    name: 'a key without status:write cannot create a status by key: 403 naming status:write',
    as: 'reader',
    method: 'POST',
    url: '/v1/status-keys/garage',
    body: { value: 'shut' },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'a status:read key writing: 403 insufficientScope naming status:value',
    as: 'reader',
    method: 'PATCH',
    url: '/v1/status/{officeId}',
    body: { value: 'out' },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body) => assert.match(body.message, /status:value/),
  },
  {
    name: 'a status:read key reads: 200',
    as: 'reader',
    method: 'GET',
    url: '/v1/status/{officeId}',
    expectStatus: 200,
  },
  {
    name: 'a key without status:read cannot read: 403 naming status:read',
    as: 'accountOnly',
    method: 'GET',
    url: '/v1/user/status',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: (body) => assert.match(body.message, /status:read/),
  },
  {
    name: 'deleting a status needs status:manage: 403 for a status:write key, nothing deleted',
    as: 'writer',
    method: 'DELETE',
    url: '/v1/status/{officeId}',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: async (_body, ctx) => {
      const owner = ctx.users.owner as TestUser
      const office = await ctx.t.request(owner, 'GET', `/v1/status/${ctx.vars.officeId}`)
      assert.equal(office.statusCode, 200)
    },
  },
  {
    name: 'deleting a status by key needs status:manage too',
    as: 'writer',
    method: 'DELETE',
    url: '/v1/status-keys/office',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'granting a role needs status:manage: 403 for a status:write key',
    as: 'writer',
    method: 'PUT',
    url: '/v1/status/{officeId}/users/{strangerId}',
    body: { role: 'subscriber' },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'the default key (status:*) deletes: 204',
    as: 'statusOnly',
    method: 'DELETE',
    url: '/v1/status/{officeId}',
    expectStatus: 204,
  },
  {
    name: 'checkAuth needs no scope: a key with only `account` checks itself: 200',
    as: 'accountOnly',
    method: 'GET',
    url: '/v1/checkAuth',
    expectStatus: 200,
    expect: (body) => {
      assert.equal(body.credential.kind, 'key')
      assert.deepEqual(body.credential.scopes, ['account'])
    },
  },
  {
    name: 'checkAuth shows a device key’s id, scopes and statuses',
    as: 'device',
    method: 'GET',
    url: '/v1/checkAuth',
    expectStatus: 200,
    expect: (body, ctx) => {
      assert.equal(body.name, 'Owner')
      assert.deepEqual(body.credential, {
        kind: 'key',
        id: ctx.vars.deviceKeyId,
        scopes: ['status:read', 'status:value'],
        statusIds: [ctx.vars.doorId],
      })
    },
  },
])

runScenarios('device keys: a confined key reaches only its statuses', world, [
  {
    name: 'a device key reads its own status: 200',
    as: 'device',
    method: 'GET',
    url: '/v1/status/{doorId}',
    expectStatus: 200,
  },
  {
    name: 'a device key reading another status of its user: 404, as if it did not exist',
    as: 'device',
    method: 'GET',
    url: '/v1/status/{officeId}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'a device key reading another status by key: 404',
    as: 'device',
    method: 'GET',
    url: '/v1/status-keys/office',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'a device key reading a public status outside its statuses: 404',
    as: 'device',
    method: 'GET',
    url: '/v1/status/{sharedId}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'a device key reads a status it is confined to that someone else owns: 200',
    as: 'twoStatuses',
    method: 'GET',
    url: '/v1/status/{sharedId}',
    expectStatus: 200,
  },
  {
    name: 'a device key setting another status’s value by id: 404, nothing changes',
    as: 'device',
    method: 'PATCH',
    url: '/v1/status/{officeId}',
    body: { value: 'out' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      const office = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/status-keys/office')
      assert.equal(office.json().value, 'in')
    },
  },
  {
    name: 'a device key setting another status’s value by key: 404',
    as: 'device',
    method: 'POST',
    url: '/v1/status-keys/office',
    body: { value: 'out' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'a key confined to statuses writing a status key none of its statuses has: 404 saying it reaches only its statuses and creates none',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/status-keys/garage',
    body: { value: 'shut' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (body, ctx) => {
      assert.equal(body.message, confinedKeyMiss('garage'))
      const list = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/status')
      assert.equal(list.json().length, 2, 'nothing was created')
    },
  },
  {
    name: 'a key confined to statuses writing the key of a status beyond its reach: the same 404 (which keys exist does not leak)',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/status-keys/office',
    body: { value: 'out' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: (body) => assert.equal(body.message, confinedKeyMiss('office')),
  },
  {
    name: 'a key confined to statuses reading a status key none of its statuses has: 404 saying so',
    as: 'device',
    method: 'GET',
    url: '/v1/status-keys/garage',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: (body) => assert.equal(body.message, confinedKeyMiss('garage')),
  },
  {
    name: 'a key confined to statuses writes by key a status it is confined to: 200',
    as: 'confinedMinter',
    method: 'POST',
    url: '/v1/status-keys/door',
    body: { value: 'open' },
    expectStatus: 200,
  },
  {
    name: 'a device key reading another status’s history: 404',
    as: 'device',
    method: 'GET',
    url: '/v1/status/{officeId}/history',
    expectStatus: 404,
  },
  {
    name: 'a device key reads its own status’s history: 200',
    as: 'device',
    method: 'GET',
    url: '/v1/status/{doorId}/history',
    expectStatus: 200,
  },
  {
    name: 'a device key reading another status’s users: 404',
    as: 'device',
    method: 'GET',
    url: '/v1/status/{officeId}/users',
    expectStatus: 404,
  },
  {
    name: 'a device key opening another status’s events: 404 (before any stream opens)',
    as: 'device',
    method: 'GET',
    url: '/v1/status/{officeId}/events',
    expectStatus: 404,
  },
  {
    name: 'a device key subscribing to a status outside its confinement: 404',
    as: 'device',
    method: 'POST',
    url: '/v1/status/{sharedId}/subscription',
    expectStatus: 404,
  },
  {
    name: 'a device key lists only its statuses: GET /v1/user/status',
    as: 'device',
    method: 'GET',
    url: '/v1/user/status',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(
        body.map((s: { statusId: string }) => s.statusId),
        [ctx.vars.doorId],
      ),
  },
  {
    name: 'a device key lists only its statuses, by pages too',
    as: 'twoStatuses',
    method: 'GET',
    url: '/v1/user/status?limit=1',
    expectStatus: 200,
    expect: (body, ctx, res) => {
      assert.deepEqual(
        body.map((s: { statusId: string }) => s.statusId),
        [ctx.vars.doorId],
      )
      assert.equal(res.headers.link, undefined, 'one status, one page')
    },
  },
  {
    name: 'a device key lists only its subscriptions: none outside its statuses',
    as: 'device',
    method: 'GET',
    url: '/v1/user/subscriptions',
    expectStatus: 200,
    expect: (body) => assert.deepEqual(body, []),
  },
  {
    name: 'a device key confined to a status it has a role on lists that subscription',
    as: 'twoStatuses',
    method: 'GET',
    url: '/v1/user/subscriptions',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(
        body.map((s: { statusId: string }) => s.statusId),
        [ctx.vars.sharedId],
      ),
  },
  {
    name: 'a device key sets the value of a status it has the updater role on: 200',
    as: 'twoStatuses',
    method: 'PATCH',
    url: '/v1/status/{sharedId}',
    body: { value: 'z' },
    expectStatus: 200,
  },
  {
    name: 'the unconfined key of the same user sees every status',
    method: 'GET',
    url: '/v1/user/status',
    expectStatus: 200,
    expect: (body) => assert.equal(body.length, 2),
  },
])

test('legacy keys: a key made before scopes (null in the table) keeps every scope and every status', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const door = await createStatus(t, owner, 'door', { value: 'closed' })
  const [key] = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()
  // as the people migration left every key that existed before it
  await t.database.db
    .updateTable('api_keys')
    .set({ scopes: null, status_ids: null })
    .where('id', '=', key.id)
    .execute()
  const [listed] = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()
  assert.deepEqual(listed.scopes, [...USER_SCOPES])
  assert.equal(listed.statusIds, null)
  const check = (await t.request(owner, 'GET', '/v1/checkAuth')).json()
  assert.deepEqual(check.credential.scopes, [...USER_SCOPES])
  assert.equal(check.credential.statusIds, null)
  const patched = await t.request(owner, 'PATCH', `/v1/status/${door.id}`, {
    name: 'Door',
    accessType: 'public',
  })
  assert.equal(patched.statusCode, 200, patched.body)
  const made = await t.request(owner, 'POST', '/v1/user/api-keys', {
    scopes: [...USER_SCOPES],
    statusIds: [door.id],
  })
  assert.equal(made.statusCode, 201, made.body)
  assert.equal((await t.request(owner, 'DELETE', `/v1/status/${door.id}`)).statusCode, 204)
})

test('scoped keys: a damaged scopes column grants nothing (fails closed)', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const [key] = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()
  await t.database.db
    .updateTable('api_keys')
    .set({ scopes: 'not json', status_ids: '{"x":1}' })
    .where('id', '=', key.id)
    .execute()
  const check = await t.request(owner, 'GET', '/v1/checkAuth')
  assert.equal(check.statusCode, 200)
  assert.deepEqual(check.json().credential.scopes, [])
  assert.deepEqual(check.json().credential.statusIds, [])
  const list = await t.request(owner, 'GET', '/v1/user/status')
  assert.equal(list.json().errorCode, 'insufficientScope')
})

test('scoped keys: the key cache carries a key’s scopes (a cached key is held to them too)', async (ctx) => {
  const t = await makeApp(ctx, { keyCacheTtlMs: 60_000 })
  const owner = await t.user()
  const reader = await makeKey(t, owner, { scopes: ['status:read'] })
  for (let i = 0; i < 2; i++) {
    const res = await t.request(reader, 'POST', '/v1/status-keys/cached', { value: 'x' })
    assert.equal(res.statusCode, 403, `request ${i + 1}`)
    assert.equal(res.json().errorCode, 'insufficientScope')
  }
})

test('a session holds every scope: it makes any key, revokes all, and checkAuth says so', async (ctx) => {
  const t = await makeApp(ctx, { deps: { signup: 'open' } })
  const { id, cookie } = await signUpUser(t)
  const check = (await asSession(t, cookie, 'GET', '/v1/checkAuth')).json()
  assert.equal(check.userId, id)
  assert.equal(check.credential.kind, 'session')
  assert.equal(typeof check.credential.id, 'string')
  assert.deepEqual(check.credential.scopes, [...USER_SCOPES])
  assert.equal(check.credential.statusIds, null)
  const made = await asSession(t, cookie, 'POST', '/v1/user/api-keys', {
    scopes: [...USER_SCOPES],
  })
  assert.equal(made.statusCode, 201, made.body)
  const device = await asSession(t, cookie, 'POST', '/v1/user/api-keys', {
    scopes: ['status:value'],
  })
  assert.equal(device.statusCode, 201, device.body)
  // the session is no key: revoke-all without keep leaves it signed in
  const all = await asSession(t, cookie, 'POST', '/v1/user/api-keys/revoke-all', {})
  assert.deepEqual(all.json(), { revoked: 2 })
  assert.equal((await asSession(t, cookie, 'GET', '/v1/user/api-keys')).statusCode, 200)
})
