import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { DEFAULT_PLANS, type Plan } from '../../src/modules/plans/plans.ts'
import { makeApp, TEST_PLANS, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'
import { SseTestClient } from '../helpers/sse.ts'

// Boards (docs/api.md#boards, docs/app.md#boards-and-the-wall): a named set of statuses; a
// public one has a wall page, its JSON and one stream.

async function makeKey(t: TestApp, as: TestUser, body: Record<string, unknown>): Promise<TestUser> {
  const res = await t.request(as, 'POST', '/v1/user/api-keys', body)
  assert.equal(res.statusCode, 201, res.body)
  return { id: as.id, key: res.json().key }
}

/** An owner with two statuses and a board of them; a stranger's private and public status. */
async function world(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user({ name: 'Owner' })
  const stranger = await t.user({ name: 'Stranger' })
  const door = await createStatus(t, owner, 'door', { value: 'OPEN', accessType: 'public' })
  const office = await createStatus(t, owner, 'office', { value: 'IN' })
  const hidden = await createStatus(t, stranger, 'hidden', { value: 'X' })
  const theirs = await createStatus(t, stranger, 'theirs', { value: 'Y', accessType: 'public' })
  const shared = await createStatus(t, stranger, 'shared', { value: 'Z' })
  await grant(t, stranger, shared.id, owner, 'subscriber')
  const board = await t.request(owner, 'POST', '/v1/boards', {
    name: 'Floor 2',
    statusIds: [door.id, office.id],
    accessType: 'public',
  })
  assert.equal(board.statusCode, 201, board.body)
  return {
    t,
    users: {
      owner,
      stranger,
      reader: await makeKey(t, owner, { scopes: ['status:read'] }),
      writer: await makeKey(t, owner, { scopes: ['status:read', 'status:write'] }),
    },
    vars: {
      door: door.id,
      office: office.id,
      hidden: hidden.id,
      theirs: theirs.id,
      shared: shared.id,
      board: board.json().id,
      boardShare: board.json().shareId,
    },
  }
}

const body = (vars: string) => vars

runScenarios('boards API (docs/api.md#boards)', world, [
  {
    name: 'POST /v1/boards: 201 with the board, its wall url, and a Location',
    method: 'POST',
    url: '/v1/boards',
    body: body('{"name":"Lobby","statusIds":["{office}","{theirs}","{shared}"]}'),
    expectStatus: 201,
    expect: (b, ctx, res) => {
      assert.deepEqual(Object.keys(b).sort(), [
        'accessType',
        'createdAt',
        'id',
        'name',
        'shareId',
        'statusIds',
        'updatedAt',
        'url',
      ])
      assert.deepEqual(b.statusIds, [ctx.vars.office, ctx.vars.theirs, ctx.vars.shared], 'in order')
      assert.equal(b.accessType, 'private', 'private unless said')
      assert.match(b.shareId, /^[a-z2-7]{8}$/)
      assert.equal(b.url, `/b/${b.shareId}`)
      assert.equal(res.headers.location, `/v1/boards/${b.id}`)
    },
  },
  {
    name: 'POST: a status the caller may not see is refused, each named (400)',
    method: 'POST',
    url: '/v1/boards',
    body: body('{"name":"Lobby","statusIds":["{door}","{hidden}","nope"]}'),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: async (b, ctx) => {
      assert.deepEqual(
        b.errors.map((e: { field: string }) => e.field),
        ['statusIds.1', 'statusIds.2'],
      )
      const list = (await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/boards')).json()
      assert.equal(list.length, 1, 'a refused request makes no board')
    },
  },
  {
    name: 'POST: no statuses is refused',
    method: 'POST',
    url: '/v1/boards',
    body: { name: 'Empty', statusIds: [] },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'POST: more than 100 statuses is refused',
    method: 'POST',
    url: '/v1/boards',
    body: { name: 'Big', statusIds: Array.from({ length: 101 }, (_, i) => `s${i}`) },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'POST: a status twice is refused',
    method: 'POST',
    url: '/v1/boards',
    body: body('{"name":"Twice","statusIds":["{door}","{door}"]}'),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'POST: a blank name, an unknown property, a bad accessType are refused',
    method: 'POST',
    url: '/v1/boards',
    body: body('{"name":"\\u200b","statusIds":["{door}"],"accessType":"Public","color":1}'),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (b) =>
      assert.deepEqual(b.errors.map((e: { field: string }) => e.field).sort(), [
        'accessType',
        'color',
        'name',
      ]),
  },
  {
    name: 'POST: a key without status:manage may not make a board (403)',
    as: 'writer',
    method: 'POST',
    url: '/v1/boards',
    body: body('{"name":"Lobby","statusIds":["{door}"]}'),
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'POST: no credential is 401',
    as: null,
    method: 'POST',
    url: '/v1/boards',
    body: body('{"name":"Lobby","statusIds":["{door}"]}'),
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'GET /v1/boards: mine only (status:read is enough)',
    as: 'reader',
    method: 'GET',
    url: '/v1/boards',
    expectStatus: 200,
    expect: (b, ctx) =>
      assert.deepEqual(
        b.map((x: { id: string }) => x.id),
        [ctx.vars.board],
      ),
  },
  {
    name: 'GET /v1/boards: someone else sees none of mine',
    as: 'stranger',
    method: 'GET',
    url: '/v1/boards',
    expectStatus: 200,
    expect: (b) => assert.deepEqual(b, []),
  },
  {
    name: 'GET /v1/boards/:id: the owner reads it',
    method: 'GET',
    url: '/v1/boards/{board}',
    expectStatus: 200,
    expect: (b, ctx) => assert.deepEqual(b.statusIds, [ctx.vars.door, ctx.vars.office]),
  },
  {
    name: "GET /v1/boards/:id: someone else's board is 404",
    as: 'stranger',
    method: 'GET',
    url: '/v1/boards/{board}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'PATCH /v1/boards/:id: name, statuses and access change',
    method: 'PATCH',
    url: '/v1/boards/{board}',
    body: body('{"name":"Floor 2 east","statusIds":["{office}"],"accessType":"private"}'),
    expectStatus: 200,
    expect: (b, ctx) => {
      assert.deepEqual(
        [b.name, b.statusIds, b.accessType],
        ['Floor 2 east', [ctx.vars.office], 'private'],
      )
    },
  },
  {
    name: 'PATCH: {} is refused (emptyBody or validation)',
    method: 'PATCH',
    url: '/v1/boards/{board}',
    body: {},
    expectStatus: 400,
  },
  {
    name: "PATCH: someone else's board is 404 and unchanged",
    as: 'stranger',
    method: 'PATCH',
    url: '/v1/boards/{board}',
    body: { name: 'Mine now' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_b, ctx) => {
      const b = (
        await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/boards/${ctx.vars.board}`)
      ).json()
      assert.equal(b.name, 'Floor 2')
    },
  },
  {
    name: 'DELETE /v1/boards/:id: 204, then 404; its statuses stay',
    method: 'DELETE',
    url: '/v1/boards/{board}',
    expectStatus: 204,
    expect: async (_b, ctx) => {
      const again = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/boards/${ctx.vars.board}`,
      )
      assert.equal(again.statusCode, 404)
      const door = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/status/${ctx.vars.door}`,
      )
      assert.equal(door.statusCode, 200)
      const wall = await ctx.t.request(null, 'GET', `/b/${ctx.vars.boardShare}/json`)
      assert.equal(wall.statusCode, 404)
    },
  },
  {
    name: 'GET /b/:shareId/json: public statuses as share views; a private one is a tile with status null',
    as: null,
    method: 'GET',
    url: '/b/{boardShare}/json',
    expectStatus: 200,
    expect: (b, ctx) => {
      assert.equal(b.name, 'Floor 2')
      assert.deepEqual(
        b.tiles.map((tile: { statusId: string; status: { value: string } | null }) => [
          tile.statusId,
          tile.status?.value ?? null,
        ]),
        [
          [ctx.vars.door, 'OPEN'],
          [ctx.vars.office, null],
        ],
      )
      assert.equal(b.tiles[0].status.id, undefined, 'the share view, not the Status')
    },
  },
  {
    name: 'GET /b/:shareId/json: an unknown board is 404 (JSON)',
    as: null,
    method: 'GET',
    url: '/b/aaaaaaaa/json',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
])

/**
 * The world above, plus a board of the door alone and a key confined to the door that may
 * read and manage (docs/accounts.md#scoped-keys).
 */
async function confinedWorld(ctx: Lifetime): Promise<ScenarioContext> {
  const base = await world(ctx)
  const owner = base.users.owner as TestUser
  const doorBoard = await base.t.request(owner, 'POST', '/v1/boards', {
    name: 'Door',
    statusIds: [base.vars.door],
  })
  assert.equal(doorBoard.statusCode, 201, doorBoard.body)
  return {
    ...base,
    users: {
      ...base.users,
      doorKey: await makeKey(base.t, owner, { scopes: ['status:*'], statusIds: [base.vars.door] }),
    },
    vars: { ...base.vars, doorBoard: doorBoard.json().id },
  }
}

const boardName = async (ctx: ScenarioContext, id: string) =>
  (await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/boards/${id}`)).json().name

runScenarios(
  'a confined key sees and changes only boards whose statuses are all within its reach',
  confinedWorld,
  [
    {
      name: 'a confined key lists only the boards whose statuses are all within its reach',
      as: 'doorKey',
      method: 'GET',
      url: '/v1/boards',
      expectStatus: 200,
      expect: (b, ctx) =>
        assert.deepEqual(
          b.map((x: { id: string }) => x.id),
          [ctx.vars.doorBoard],
        ),
    },
    {
      name: 'a confined key reading a board holding a status beyond its reach: 404',
      as: 'doorKey',
      method: 'GET',
      url: '/v1/boards/{board}',
      expectStatus: 404,
      expectErrorCode: 'notFound',
    },
    {
      name: 'a confined key renaming a board holding a status beyond its reach: 404, unchanged',
      as: 'doorKey',
      method: 'PATCH',
      url: '/v1/boards/{board}',
      body: { name: 'Taken over' },
      expectStatus: 404,
      expectErrorCode: 'notFound',
      expect: async (_b, ctx) =>
        assert.equal(await boardName(ctx, ctx.vars.board as string), 'Floor 2'),
    },
    {
      name: 'a confined key deleting a board holding a status beyond its reach: 404, it stays',
      as: 'doorKey',
      method: 'DELETE',
      url: '/v1/boards/{board}',
      expectStatus: 404,
      expectErrorCode: 'notFound',
      expect: async (_b, ctx) =>
        assert.equal(await boardName(ctx, ctx.vars.board as string), 'Floor 2'),
    },
    {
      name: 'a confined key reads a board of its statuses alone: 200',
      as: 'doorKey',
      method: 'GET',
      url: '/v1/boards/{doorBoard}',
      expectStatus: 200,
    },
    {
      name: 'a confined key renames a board of its statuses alone: 200',
      as: 'doorKey',
      method: 'PATCH',
      url: '/v1/boards/{doorBoard}',
      body: { name: 'Front door' },
      expectStatus: 200,
      expect: (b) => assert.equal(b.name, 'Front door'),
    },
    {
      name: 'a confined key cannot add a status beyond its reach to a board: 400 naming it',
      as: 'doorKey',
      method: 'PATCH',
      url: '/v1/boards/{doorBoard}',
      body: body('{"statusIds":["{door}","{office}"]}'),
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: (b) =>
        assert.deepEqual(
          b.errors.map((e: { field: string }) => e.field),
          ['statusIds.1'],
        ),
    },
    {
      name: 'a confined key deletes a board of its statuses alone: 204',
      as: 'doorKey',
      method: 'DELETE',
      url: '/v1/boards/{doorBoard}',
      expectStatus: 204,
    },
    {
      name: 'an unconfined key of the same user sees every board',
      method: 'GET',
      url: '/v1/boards',
      expectStatus: 200,
      expect: (b) => assert.equal(b.length, 2),
    },
  ],
)

describe('boards: plan limit and privacy', () => {
  it('a plan allows maxBoards boards; one more is 402 planLimitReached (free: 3, pro: 50)', async (ctx) => {
    assert.deepEqual([DEFAULT_PLANS.free?.maxBoards, DEFAULT_PLANS.pro?.maxBoards], [3, 50])
    const t = await makeApp(ctx, {
      plans: { ...TEST_PLANS, two: { ...(TEST_PLANS.unlimited as Plan), maxBoards: 2 } },
    })
    const user = await t.user({ plan: 'two' })
    const s = await createStatus(t, user, 'door', { value: 'OPEN' })
    for (let i = 0; i < 2; i++)
      assert.equal(
        (await t.request(user, 'POST', '/v1/boards', { name: `B${i}`, statusIds: [s.id] }))
          .statusCode,
        201,
      )
    const over = await t.request(user, 'POST', '/v1/boards', { name: 'B3', statusIds: [s.id] })
    assert.equal(over.statusCode, 402)
    assert.equal(over.json().errorCode, 'planLimitReached')
    assert.match(over.json().message, /2 boards/)
  })

  it('a private board has no public JSON', async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user()
    const s = await createStatus(t, user, 'door', { value: 'OPEN', accessType: 'public' })
    const board = (
      await t.request(user, 'POST', '/v1/boards', { name: 'Mine', statusIds: [s.id] })
    ).json()
    assert.equal((await t.request(null, 'GET', `/b/${board.shareId}/json`)).statusCode, 404)
  })
})

describe('the board stream GET /b/:shareId/events, over a real socket', () => {
  async function live(ctx: Lifetime) {
    const t = await makeApp(ctx, { deps: { sse: { heartbeatMs: 50 }, streamsPerClient: 2 } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const open: SseTestClient[] = []
    ctx.after(() => {
      for (const c of open) c.close()
    })
    const connect = async (path: string, headers: Record<string, string> = {}) => {
      const c = await SseTestClient.connect(`${base}${path}`, headers)
      open.push(c)
      return c
    }
    const owner = await t.user()
    const a = await createStatus(t, owner, 'room-a', { value: 'FREE', accessType: 'public' })
    const b = await createStatus(t, owner, 'room-b', { value: 'BUSY', accessType: 'public' })
    const board = (
      await t.request(owner, 'POST', '/v1/boards', {
        name: 'Rooms',
        statusIds: [a.id, b.id],
        accessType: 'public',
      })
    ).json()
    return { t, owner, a, b, board, connect }
  }
  const parsed = (e: { event: string; data: string }) => ({ event: e.event, ...JSON.parse(e.data) })

  it('sends every status, anonymously; a status made private leaves it and comes back when public again, without a reconnect', async (ctx) => {
    const { t, owner, a, b, board, connect } = await live(ctx)
    const stream = await connect(`/b/${board.shareId}/events`)
    assert.equal(stream.status, 200)
    const first = [parsed(await stream.nextEvent()), parsed(await stream.nextEvent())]
    assert.deepEqual(
      first.map((e) => [e.statusId, e.status.value, e.status.statusKey]),
      [
        [a.id, 'FREE', undefined],
        [b.id, 'BUSY', undefined],
      ],
      'share views: no status key, no settings',
    )
    await t.request(owner, 'PATCH', `/v1/status/${a.id}`, { accessType: 'private' })
    const hidden = parsed(await stream.nextEvent())
    assert.deepEqual(
      [hidden.event, hidden.statusId, hidden.reason],
      ['unavailable', a.id, 'notVisible'],
    )
    await t.request(owner, 'PATCH', `/v1/status/${a.id}`, { value: 'SECRET' })
    await t.request(owner, 'PATCH', `/v1/status/${b.id}`, { value: 'FREE' })
    const other = parsed(await stream.nextEvent())
    assert.deepEqual(
      [other.statusId, other.status.value],
      [b.id, 'FREE'],
      'nothing of the private one',
    )
    await t.request(owner, 'PATCH', `/v1/status/${a.id}`, { accessType: 'public' })
    const back = parsed(await stream.nextEvent())
    assert.deepEqual([back.event, back.statusId, back.status.value], ['status', a.id, 'SECRET'])
  })

  it('a change to the board ends its streams with event: board; a private board has no stream', async (ctx) => {
    const { t, owner, a, board, connect } = await live(ctx)
    const stream = await connect(`/b/${board.shareId}/events`)
    await stream.nextEvent()
    await stream.nextEvent()
    await t.request(owner, 'PATCH', `/v1/boards/${board.id}`, { statusIds: [a.id] })
    const ended = await stream.nextEvent()
    assert.deepEqual([ended.event, JSON.parse(ended.data).reason], ['board', 'changed'])
    await stream.ended
    await t.request(owner, 'PATCH', `/v1/boards/${board.id}`, { accessType: 'private' })
    const refused = await connect(`/b/${board.shareId}/events`)
    assert.equal(refused.status, 404)
    assert.equal(JSON.parse(await refused.text()).errorCode, 'notFound')
  })

  it('counts once against STREAMS_PER_CLIENT of the address', async (ctx) => {
    const { board, connect } = await live(ctx)
    const one = await connect(`/b/${board.shareId}/events`)
    const two = await connect(`/b/${board.shareId}/events`)
    assert.deepEqual([one.status, two.status], [200, 200])
    const three = await connect(`/b/${board.shareId}/events`)
    assert.equal(three.status, 429)
  })
})
