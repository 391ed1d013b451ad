import assert from 'node:assert/strict'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/api.md#validation-rules (Status fields, lengths and text, strict validation), rule by rule.
// Every rejected body is sent three ways — PATCH by id, POST to the existing key, POST to a
// new key — and afterwards the stored data must be exactly as before. Every accepted one is
// sent by PATCH and by POST to a new key, and read back.

const READ_ONLY = [
  'id',
  'shareId',
  'shareID',
  'statusKey',
  'changeCount',
  'createdAt',
  'updatedAt',
  'valueUpdatedAt',
] as const

/** One owner with one status (`room-4`), some fields away from their defaults. */
async function withStatus(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', {
    name: 'Meeting room 4',
    value: 'OCCUPIED',
    description: 'Floor 2',
    colorNo: 4,
    accessTypeUserList: 'private',
  })
  assert.equal(res.statusCode, 201, res.body)
  return { t, users: { owner }, vars: { statusId: res.json().id, before: res.body } }
}

async function readBack(ctx: ScenarioContext) {
  const res = await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars.statusId}`)
  assert.equal(res.statusCode, 200)
  return res.json()
}

async function assertUnchanged(ctx: ScenarioContext): Promise<void> {
  assert.deepEqual(
    await readBack(ctx),
    JSON.parse(ctx.vars.before ?? ''),
    'stored status unchanged',
  )
  const list = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/status')
  assert.equal(list.json().length, 1, 'no status created')
}

function assertFieldError(body: { errors?: { field: string; message: string }[] }, field: string) {
  assert.ok(Array.isArray(body.errors), 'errors[] present')
  for (const e of body.errors) {
    assert.equal(typeof e.field, 'string')
    assert.equal(typeof e.message, 'string')
  }
  const hit = body.errors.find((e) => e.field === field)
  assert.ok(hit, `an error names ${field}: ${JSON.stringify(body.errors)}`)
  return hit
}

/**
 * `body` is rejected by PATCH by id (the scenario's own request), then by POST to the
 * existing key and POST to a new key; each names `field`, and nothing changes.
 */
function rejected(rule: string, body: unknown, field: string, message?: RegExp): Scenario[] {
  const check = (res: { errors?: { field: string; message: string }[] }, via: string) => {
    const hit = assertFieldError(res, field)
    if (message) assert.match(hit.message, message, via)
  }
  return [
    {
      name: rule,
      method: 'PATCH',
      url: '/v1/status/{statusId}',
      body,
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: async (res, ctx) => {
        check(res, 'PATCH by id')
        await assertUnchanged(ctx)
        for (const key of ['room-4', 'new-key']) {
          const via = `POST /v1/status-keys/${key}`
          const post = await ctx.t.request(ctx.users.owner ?? null, 'POST', via.slice(5), body)
          assert.equal(post.statusCode, 400, `${via}: ${post.body}`)
          assert.equal(post.json().errorCode, 'validationError', via)
          check(post.json(), via)
          await assertUnchanged(ctx)
        }
      },
    },
  ]
}

/** PATCH `body`, then POST it to a new key; responses and stored statuses hold `expected`. */
function accepted(rule: string, body: unknown, expected: Record<string, unknown>): Scenario[] {
  const holds = (status: Record<string, unknown>, what: string) => {
    for (const [field, value] of Object.entries(expected))
      assert.deepEqual(status[field], value, `${what} ${field}`)
  }
  return [
    {
      name: rule,
      method: 'PATCH',
      url: '/v1/status/{statusId}',
      body,
      expectStatus: 200,
      expect: async (res, ctx) => {
        const owner = ctx.users.owner ?? null
        holds(res, 'PATCH response')
        holds(await readBack(ctx), 'stored after PATCH')
        const created = await ctx.t.request(owner, 'POST', '/v1/status-keys/new-key', body)
        assert.equal(created.statusCode, 201, created.body)
        holds(created.json(), 'POST response')
        const again = await ctx.t.request(owner, 'GET', `/v1/status/${created.json().id}`)
        holds(again.json(), 'stored after POST')
      },
    },
  ]
}

runScenarios('strict validation: no type coercion', withStatus, [
  ...rejected('"3" is not a colorNo', { colorNo: '3' }, 'colorNo', /integer/),
  ...rejected('true is not a colorNo', { colorNo: true }, 'colorNo'),
  ...rejected('[3] is not a colorNo', { colorNo: [3] }, 'colorNo'),
  ...rejected('3 is not a value (number for string)', { value: 3 }, 'value', /string/),
  ...rejected('true is not a value', { value: true }, 'value'),
  ...rejected('an array is not a value', { value: ['ON'] }, 'value'),
  ...rejected('an object is not a value', { value: { text: 'ON' } }, 'value'),
  ...rejected('a number is not a name', { name: 12345 }, 'name'),
  ...rejected('an array is not a name', { name: ['Room 4'] }, 'name'),
  ...rejected('false is not a description', { description: false }, 'description'),
  ...rejected('an array is not a type', { type: ['text'] }, 'type'),
  ...rejected('true is not an accessType', { accessType: true }, 'accessType'),
  ...rejected('1 is not an accessTypeUserList', { accessTypeUserList: 1 }, 'accessTypeUserList'),
  ...rejected('true is not an accessTypeHistory', { accessTypeHistory: true }, 'accessTypeHistory'),
])

runScenarios('strict validation: no null for any field', withStatus, [
  ...[
    'name',
    'type',
    'value',
    'accessType',
    'description',
    'colorNo',
    'accessTypeUserList',
    'accessTypeHistory',
  ].flatMap((field) => rejected(`null is not a ${field}`, { [field]: null }, field)),
])

runScenarios('strict validation: unknown and read-only properties', withStatus, [
  ...rejected(
    'an unknown property is rejected, naming it',
    { value: 'ON', foo: 1 },
    'foo',
    /known/,
  ),
  ...rejected(
    'property names are case-sensitive (Value is unknown)',
    { Value: 'ON' },
    'Value',
    /known/,
  ),
  ...rejected('a misspelt property is unknown', { colour: 3 }, 'colour', /known/),
  ...rejected('the list entry field statusId is not settable', { statusId: 'x' }, 'statusId'),
  ...READ_ONLY.flatMap((field) =>
    rejected(
      `read-only ${field} is rejected as read-only, by name`,
      { value: 'ON', [field]: field === 'changeCount' ? 99 : 'x' },
      field,
      /read-only/,
    ),
  ),
  {
    name: 'every offending property is reported, not only the first',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'ON', colorNo: 0, name: 'ab', foo: 1, id: 'x' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: async (body, ctx) => {
      for (const field of ['colorNo', 'name', 'foo', 'id']) assertFieldError(body, field)
      await assertUnchanged(ctx)
    },
  },
])

runScenarios('lengths are counted in code points', withStatus, [
  ...accepted('"80%" is 3 characters', { value: '80%' }, { value: '80%' }),
  ...accepted('a 10-character value is fine', { value: 'ABCDEFGHIJ' }, { value: 'ABCDEFGHIJ' }),
  ...accepted(
    'an emoji is 1 character: 10 emoji are a valid value',
    {
      value: '🟢'.repeat(10),
    },
    { value: '🟢'.repeat(10) },
  ),
  ...rejected('11 emoji are too long for a value', { value: '🟢'.repeat(11) }, 'value', /10/),
  ...rejected('an 11-character value is too long', { value: 'ABCDEFGHIJK' }, 'value', /10/),
  ...rejected('an empty value is too short', { value: '' }, 'value'),
  ...accepted('a 3-character name is fine', { name: 'Abc' }, { name: 'Abc' }),
  ...accepted('a 42-character name is fine', { name: 'N'.repeat(42) }, { name: 'N'.repeat(42) }),
  ...accepted('42 emoji are a valid name', { name: '🟢'.repeat(42) }, { name: '🟢'.repeat(42) }),
  ...rejected('a 2-character name is too short', { name: 'Ab' }, 'name', /3/),
  ...rejected('a 43-character name is too long', { name: 'N'.repeat(43) }, 'name', /42/),
  ...rejected('43 emoji are too long for a name', { name: '🟢'.repeat(43) }, 'name', /42/),
  ...accepted('an empty description is fine', { description: '' }, { description: '' }),
  ...accepted(
    'a 400-character description is fine',
    {
      description: 'd'.repeat(400),
    },
    { description: 'd'.repeat(400) },
  ),
  ...accepted(
    '400 emoji are a valid description',
    {
      description: '🟢'.repeat(400),
    },
    { description: '🟢'.repeat(400) },
  ),
  ...rejected(
    'a 401-character description is too long',
    {
      description: 'd'.repeat(401),
    },
    'description',
    /400/,
  ),
])

runScenarios('names and values hold visible text, no control characters', withStatus, [
  ...rejected('a blank name is rejected', { name: '     ' }, 'name'),
  ...rejected('a name of no-break spaces is blank', { name: '\u00a0\u00a0\u00a0' }, 'name'),
  ...rejected('a blank value is rejected', { value: ' ' }, 'value'),
  ...rejected('a value of ideographic spaces is blank', { value: '\u3000\u3000' }, 'value'),
  ...rejected('a tab is not a value', { value: '\t' }, 'value'),
  ...rejected('a name with a NUL is rejected', { name: 'Room\u00004' }, 'name'),
  ...rejected('a name with a line break is rejected', { name: 'Room\n4' }, 'name'),
  ...rejected('a value with a line break is rejected', { value: 'A\r\nB' }, 'value'),
  ...rejected('a value with an escape sequence is rejected', { value: '\u001b[31mRED' }, 'value'),
  ...rejected('a value with DEL is rejected', { value: 'A\u007f' }, 'value'),
  ...rejected('a name with a C1 control is rejected', { name: 'Room\u00854' }, 'name'),
  ...accepted(
    'a description may contain newlines and tabs',
    {
      description: 'line 1\nline 2\r\n\tline 3\n',
    },
    { description: 'line 1\nline 2\r\n\tline 3\n' },
  ),
  ...rejected('a description with a NUL is rejected', { description: 'a\u0000b' }, 'description'),
  ...rejected(
    'a description with an escape is rejected',
    { description: '\u001b[2J' },
    'description',
  ),
])

runScenarios('lone surrogates are not text', withStatus, [
  ...rejected('a lone high surrogate is not a value', '{"value":"\\ud800"}', 'value'),
  ...rejected('a lone low surrogate in a name is rejected', '{"name":"Room \\udfff"}', 'name'),
  ...rejected(
    'a lone surrogate in a description is rejected',
    '{"description":"x\\ud83d"}',
    'description',
  ),
  ...accepted('an escaped surrogate pair is one emoji', '{"value":"\\ud83d\\udfe2"}', {
    value: '🟢',
  }),
])

runScenarios('enumerations and ranges', withStatus, [
  ...accepted('type text is fine', { type: 'text' }, { type: 'text' }),
  ...rejected('type is only text', { type: 'number' }, 'type', /text/),
  ...rejected('type is case-sensitive', { type: 'TEXT' }, 'type'),
  ...accepted('colorNo 1 is fine', { colorNo: 1 }, { colorNo: 1 }),
  ...accepted('colorNo 12 is fine', { colorNo: 12 }, { colorNo: 12 }),
  ...accepted('colorNo 12.0 is the integer 12 (JSON Schema)', '{"colorNo":12.0}', { colorNo: 12 }),
  ...rejected('colorNo 0 is out of range', { colorNo: 0 }, 'colorNo', /1/),
  ...rejected('colorNo 13 is out of range', { colorNo: 13 }, 'colorNo', /12/),
  ...rejected('colorNo -1 is out of range', { colorNo: -1 }, 'colorNo'),
  ...rejected('colorNo 1.5 is not an integer', { colorNo: 1.5 }, 'colorNo', /integer/),
  ...accepted('accessType public is fine', { accessType: 'public' }, { accessType: 'public' }),
  ...accepted('accessType private is fine', { accessType: 'private' }, { accessType: 'private' }),
  ...rejected('accessType is public or private', { accessType: 'shared' }, 'accessType'),
  ...rejected('accessType is case-sensitive', { accessType: 'PUBLIC' }, 'accessType'),
  ...accepted(
    'accessTypeUserList "owners" is an alias, answered as owner',
    {
      accessTypeUserList: 'owners',
    },
    { accessTypeUserList: 'owner' },
  ),
  ...accepted(
    'accessTypeUserList public is fine',
    {
      accessTypeUserList: 'public',
    },
    { accessTypeUserList: 'public' },
  ),
  ...rejected(
    'accessTypeUserList is an enumeration',
    {
      accessTypeUserList: 'everyone',
    },
    'accessTypeUserList',
  ),
  ...accepted(
    'accessTypeHistory owner is fine',
    {
      accessTypeHistory: 'owner',
    },
    { accessTypeHistory: 'owner' },
  ),
  ...rejected(
    'the "owners" alias is for accessTypeUserList only',
    {
      accessTypeHistory: 'owners',
    },
    'accessTypeHistory',
  ),
  ...rejected(
    'accessTypeHistory is an enumeration',
    {
      accessTypeHistory: 'nobody',
    },
    'accessTypeHistory',
  ),
])

runScenarios('values are stored exactly as sent', withStatus, [
  ...accepted('no trimming of a value', { value: ' OK ' }, { value: ' OK ' }),
  ...accepted('no case change of a value', { value: 'ok' }, { value: 'ok' }),
  ...accepted('no trimming of a name', { name: '  Room 4  ' }, { name: '  Room 4  ' }),
  ...accepted('no Unicode normalisation', { value: 'Cafe\u0301' }, { value: 'Cafe\u0301' }),
  ...accepted(
    'no trimming of a description',
    {
      description: '  padded\n\n',
    },
    { description: '  padded\n\n' },
  ),
  ...accepted(
    'markup is stored as text, not escaped',
    {
      description: '<b>"Tom" & \'Jerry\'</b>',
    },
    { description: '<b>"Tom" & \'Jerry\'</b>' },
  ),
])

runScenarios('a rejected request changes nothing', withStatus, [
  ...rejected(
    'a valid value next to an invalid field is not applied',
    { value: 'FREE', colorNo: 13 },
    'colorNo',
  ),
  ...rejected(
    'a valid value next to a read-only field is not applied',
    { value: 'FREE', changeCount: 0 },
    'changeCount',
    /read-only/,
  ),
  {
    name: 'a rejected value does not count as a value update',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: '' },
    expectStatus: 400,
    expect: async (_body, ctx) => {
      const rows = await ctx.t.database.db
        .selectFrom('status_history')
        .select('change_no')
        .where('status_id', '=', ctx.vars.statusId ?? '')
        .execute()
      assert.equal(rows.length, 1, 'only the creation is in the history')
      assert.equal((await readBack(ctx)).changeCount, 1)
    },
  },
])
