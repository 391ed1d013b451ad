import assert from 'node:assert/strict'
import { test } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// The value palette (docs/app.md#value-palette): a write that sets a value in the palette
// without colorNo takes the palette's colour, whoever writes it and however; an explicit
// colorNo wins; setting the palette itself is a settings change (status:write, the owner).

const PALETTE = [
  { value: 'FREE', colorNo: 3 },
  { value: 'OCCUPIED', colorNo: 2 },
]
// the room's colour before each write: none of the palette's, so a change shows
const START_COLOR = 5

async function makeKey(t: TestApp, as: TestUser, body: Record<string, unknown>): Promise<TestUser> {
  const res = await t.request(as, 'POST', '/v1/user/api-keys', body)
  assert.equal(res.statusCode, 201, res.body)
  return { id: as.id, key: res.json().key }
}

/** An owner's room with the palette, an updater on it, a device key and a writer key. */
async function world(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user({ name: 'Owner' })
  const updater = await t.user({ name: 'Updater' })
  const room = await createStatus(t, owner, 'room', {
    value: 'OCCUPIED',
    colorNo: START_COLOR,
    palette: PALETTE,
  })
  await grant(t, owner, room.id, updater, 'updater')
  return {
    t,
    users: {
      owner,
      updater,
      device: await makeKey(t, owner, {
        scopes: ['status:read', 'status:value'],
        statusIds: [room.id],
      }),
      writer: await makeKey(t, owner, { scopes: ['status:read', 'status:write'] }),
    },
    vars: { room: room.id },
  }
}

/** A write and the colour it must leave (or the error it must meet). */
function colourRule(
  name: string,
  as: string,
  how: 'PATCH by id' | 'POST by key',
  body: Record<string, unknown>,
  expected: number | { status: number; errorCode: string },
): Scenario {
  const [method, url] =
    how === 'PATCH by id' ? ['PATCH', '/v1/status/{room}'] : ['POST', '/v1/status-keys/room']
  if (typeof expected !== 'number')
    return {
      name,
      as,
      method,
      url,
      body,
      expectStatus: expected.status,
      expectErrorCode: expected.errorCode,
      // a refused write changes nothing
      expect: async (_body, ctx) => {
        const now = (
          await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars.room}`)
        ).json()
        assert.equal(now.colorNo, START_COLOR)
        assert.equal(now.value, 'OCCUPIED')
      },
    }
  return {
    name,
    as,
    method,
    url,
    body,
    expectStatus: 200,
    expect: async (status, ctx) => {
      assert.equal(status.colorNo, expected, 'the colour the write answers with')
      const stored = (
        await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars.room}`)
      ).json()
      assert.equal(stored.colorNo, expected, 'the colour stored')
      if (body.value !== undefined) assert.equal(stored.value, body.value)
    },
  }
}

runScenarios('palette colour rule (docs/app.md#value-palette)', world, [
  colourRule(
    'owner: a palette value takes its colour (by id)',
    'owner',
    'PATCH by id',
    { value: 'FREE' },
    3,
  ),
  colourRule(
    'owner: a palette value takes its colour (by key)',
    'owner',
    'POST by key',
    { value: 'FREE' },
    3,
  ),
  colourRule(
    'owner: an explicit colorNo wins (by id)',
    'owner',
    'PATCH by id',
    { value: 'FREE', colorNo: 7 },
    7,
  ),
  colourRule(
    'owner: an explicit colorNo wins (by key)',
    'owner',
    'POST by key',
    { value: 'FREE', colorNo: 9 },
    9,
  ),
  colourRule(
    'owner: a value not in the palette keeps the colour',
    'owner',
    'PATCH by id',
    { value: 'AWAY' },
    START_COLOR,
  ),
  colourRule(
    'owner: values match exactly (case counts)',
    'owner',
    'PATCH by id',
    { value: 'free' },
    START_COLOR,
  ),
  colourRule(
    'owner: a palette value with another field still takes its colour',
    'owner',
    'PATCH by id',
    { value: 'FREE', name: 'Room 2' },
    3,
  ),
  colourRule(
    'owner: the palette sent with the value is the one that counts',
    'owner',
    'PATCH by id',
    { value: 'BUSY', palette: [{ value: 'BUSY', colorNo: 8 }] },
    8,
  ),
  colourRule(
    'owner: a palette cleared in the same write colours nothing',
    'owner',
    'PATCH by id',
    { value: 'FREE', palette: [] },
    START_COLOR,
  ),
  colourRule(
    'owner: a palette set to null in the same write colours nothing',
    'owner',
    'PATCH by id',
    { value: 'FREE', palette: null },
    START_COLOR,
  ),
  colourRule(
    'owner: setting the palette alone leaves the colour',
    'owner',
    'PATCH by id',
    { palette: [{ value: 'OCCUPIED', colorNo: 11 }] },
    START_COLOR,
  ),
  colourRule('owner: colorNo alone is as before', 'owner', 'PATCH by id', { colorNo: 10 }, 10),
  colourRule(
    'updater: a palette value takes its colour',
    'updater',
    'PATCH by id',
    { value: 'FREE' },
    3,
  ),
  colourRule(
    'updater: a value not in the palette keeps the colour',
    'updater',
    'PATCH by id',
    { value: 'AWAY' },
    START_COLOR,
  ),
  colourRule(
    'updater: an explicit colorNo is still refused (value only)',
    'updater',
    'PATCH by id',
    { value: 'FREE', colorNo: 7 },
    { status: 403, errorCode: 'forbidden' },
  ),
  colourRule(
    "updater: the palette is the owner's setting",
    'updater',
    'PATCH by id',
    { palette: [] },
    { status: 403, errorCode: 'forbidden' },
  ),
  colourRule(
    'device key (status:value): a palette value takes its colour (by id)',
    'device',
    'PATCH by id',
    { value: 'FREE' },
    3,
  ),
  colourRule(
    'device key (status:value): a palette value takes its colour (by key)',
    'device',
    'POST by key',
    { value: 'FREE' },
    3,
  ),
  colourRule(
    'device key (status:value): a value not in the palette keeps the colour',
    'device',
    'PATCH by id',
    { value: 'AWAY' },
    START_COLOR,
  ),
  colourRule(
    'device key (status:value): an explicit colorNo needs status:write',
    'device',
    'PATCH by id',
    { value: 'FREE', colorNo: 7 },
    { status: 403, errorCode: 'insufficientScope' },
  ),
  colourRule(
    'device key (status:value): setting the palette needs status:write',
    'device',
    'PATCH by id',
    { palette: [] },
    { status: 403, errorCode: 'insufficientScope' },
  ),
  colourRule(
    'status:write key: may set the palette',
    'writer',
    'PATCH by id',
    { palette: [{ value: 'FREE', colorNo: 12 }], value: 'FREE' },
    12,
  ),
])

/** A validation row: the palette sent, and the field the 400 names (none when accepted). */
const invalid = (name: string, palette: unknown, field: string): Scenario => ({
  name,
  method: 'PATCH',
  url: '/v1/status/{room}',
  body: { palette },
  expectStatus: 400,
  expectErrorCode: 'validationError',
  expect: async (body, ctx) => {
    assert.ok(
      body.errors.some((e: { field: string }) => e.field === field),
      `an error names ${field}: ${JSON.stringify(body.errors)}`,
    )
    const stored = (
      await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars.room}`)
    ).json()
    assert.deepEqual(stored.palette, PALETTE, 'a refused palette changes nothing')
  },
})
const accepted = (name: string, palette: unknown, stored: unknown): Scenario => ({
  name,
  method: 'PATCH',
  url: '/v1/status/{room}',
  body: { palette },
  expectStatus: 200,
  expect: (body) => assert.deepEqual(body.palette, stored),
})
const entries = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ value: `V${i}`, colorNo: (i % 12) + 1 }))

runScenarios('palette validation (docs/api.md#validation-rules)', world, [
  accepted('12 entries are allowed', entries(12), entries(12)),
  invalid('13 entries are too many', entries(13), 'palette'),
  accepted('null clears the palette', null, []),
  accepted('[] clears the palette', [], []),
  invalid(
    'a value twice is refused',
    [
      { value: 'A', colorNo: 1 },
      { value: 'A', colorNo: 2 },
    ],
    'palette.1.value',
  ),
  invalid('an empty value is refused', [{ value: '', colorNo: 1 }], 'palette.0.value'),
  invalid(
    'a value over 10 characters is refused',
    [{ value: 'ELEVENCHARS', colorNo: 1 }],
    'palette.0.value',
  ),
  invalid(
    'a value with a control character is refused',
    [{ value: 'A\u0007', colorNo: 1 }],
    'palette.0.value',
  ),
  invalid(
    'a value of only zero-width characters is refused',
    [{ value: '\u200b', colorNo: 1 }],
    'palette.0.value',
  ),
  invalid('colorNo 0 is refused', [{ value: 'A', colorNo: 0 }], 'palette.0.colorNo'),
  invalid('colorNo 13 is refused', [{ value: 'A', colorNo: 13 }], 'palette.0.colorNo'),
  invalid('a fractional colorNo is refused', [{ value: 'A', colorNo: 1.5 }], 'palette.0.colorNo'),
  invalid(
    'a colorNo as a string is refused (no coercion)',
    [{ value: 'A', colorNo: '1' }],
    'palette.0.colorNo',
  ),
  invalid('an entry without colorNo is refused', [{ value: 'A' }], 'palette.0.colorNo'),
  invalid(
    'an unknown property in an entry is refused',
    [{ value: 'A', colorNo: 1, label: 'x' }],
    'palette.0.label',
  ),
  invalid('a palette that is not an array is refused', 'FREE', 'palette'),
])

test('the palette is in every representation: the status, the share view, a new status without one', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const room = await createStatus(t, owner, 'room', {
    value: 'FREE',
    palette: PALETTE,
    accessType: 'public',
  })
  assert.deepEqual(room.palette, PALETTE)
  assert.equal(room.colorNo, 3, 'created with a palette value: its colour')
  const share = (await t.request(null, 'GET', `/v1/share/${room.shareId}`)).json()
  assert.deepEqual(share.palette, PALETTE)
  const plain = await createStatus(t, owner, 'plain', { value: 'FREE' })
  assert.deepEqual(plain.palette, [])
  assert.equal(plain.colorNo, 1, 'no palette: the default colour')
})

test('ETags and idempotent replays work for palette writes as for any other', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const room = await createStatus(t, owner, 'room', { value: 'OCCUPIED', palette: PALETTE })
  const first = await t.request(owner, 'GET', `/v1/status/${room.id}`)
  const etag = String(first.headers.etag)
  const write = await t.request(
    owner,
    'PATCH',
    `/v1/status/${room.id}`,
    { value: 'FREE' },
    {
      'idempotency-key': 'k1',
      'if-match': etag,
    },
  )
  assert.equal(write.statusCode, 200)
  assert.notEqual(write.headers.etag, etag, 'a write that takes a palette colour moves the ETag')
  assert.equal(write.json().colorNo, 3)
  const replay = await t.request(
    owner,
    'PATCH',
    `/v1/status/${room.id}`,
    { value: 'FREE' },
    {
      'idempotency-key': 'k1',
      'if-match': etag,
    },
  )
  assert.equal(replay.statusCode, 200)
  assert.equal(replay.headers['idempotent-replayed'], 'true')
  assert.deepEqual(replay.json(), write.json())
  assert.equal(replay.json().changeCount, 2, 'the replay made no second update')
  const stale = await t.request(
    owner,
    'PATCH',
    `/v1/status/${room.id}`,
    { palette: [] },
    { 'if-match': etag },
  )
  assert.equal(stale.statusCode, 412, 'If-Match guards palette writes')
  const paletteOnly = await t.request(
    owner,
    'PATCH',
    `/v1/status/${room.id}`,
    { palette: [] },
    {
      'if-match': String(write.headers.etag),
    },
  )
  assert.equal(paletteOnly.statusCode, 200)
  assert.notEqual(paletteOnly.headers.etag, write.headers.etag, 'a palette change moves the ETag')
  assert.equal(paletteOnly.json().changeCount, 2, 'a palette change is not a value update')
})
