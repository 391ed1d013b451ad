import assert from 'node:assert/strict'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import {
  runReadOnlyScenarios,
  runScenarios,
  type Scenario,
  type ScenarioContext,
} from '../helpers/scenarios.ts'
import {
  ACCESS_TYPES,
  type AccessType,
  createStatus,
  grant,
  LEVELS,
  type Level,
  makeCast,
} from '../helpers/sharing.ts'

/**
 * One status per (accessType, level), with accessTypeHistory and accessTypeUserList both at
 * that level; the updater and the subscriber hold their roles on every one of them.
 * Variables: `{public_owner}` is the status id, `{share_public_owner}` its share id.
 */
async function world(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const cast = await makeCast(t)
  const vars: Record<string, string> = {}
  for (const accessType of ACCESS_TYPES)
    for (const level of LEVELS) {
      const status = await createStatus(t, cast.owner, `${accessType}-${level}`, {
        value: 'FIRST',
        accessType,
        accessTypeHistory: level,
        accessTypeUserList: level,
      })
      await grant(t, cast.owner, status.id, cast.updater, 'updater')
      await grant(t, cast.owner, status.id, cast.subscriber, 'subscriber')
      vars[`${accessType}_${level}`] = status.id
      vars[`share_${accessType}_${level}`] = status.shareId
    }
  const unverified = await t.user({ verified: false })
  return { t, users: { ...cast, unverified }, vars }
}

type Who = 'owner' | 'updater' | 'subscriber' | 'stranger' | 'anonymous'
const WHO: Who[] = ['owner', 'updater', 'subscriber', 'stranger', 'anonymous']

/**
 * Who sees the history and the user list (docs/sharing.md#roles), written out rather than computed:
 * `public` = whoever can see the status (anonymous share viewers of a public status too), `private`
 * = users with a role, `owner` = the owner only; 403 for those who see the status, 404 for those
 * who do not.
 */
const DETAIL: Record<`${AccessType}/${Level}`, Record<Who, 200 | 403 | 404>> = {
  'public/public': { owner: 200, updater: 200, subscriber: 200, stranger: 200, anonymous: 200 },
  'public/private': { owner: 200, updater: 200, subscriber: 200, stranger: 403, anonymous: 403 },
  'public/owner': { owner: 200, updater: 403, subscriber: 403, stranger: 403, anonymous: 403 },
  'private/public': { owner: 200, updater: 200, subscriber: 200, stranger: 404, anonymous: 404 },
  'private/private': { owner: 200, updater: 200, subscriber: 200, stranger: 404, anonymous: 404 },
  'private/owner': { owner: 200, updater: 403, subscriber: 403, stranger: 404, anonymous: 404 },
}

const CODES = { 403: 'forbidden', 404: 'notFound' } as const

function detailScenarios(what: 'history' | 'users'): Scenario[] {
  const scenarios: Scenario[] = []
  for (const accessType of ACCESS_TYPES)
    for (const level of LEVELS)
      for (const who of WHO) {
        const expectStatus = DETAIL[`${accessType}/${level}`][who]
        const anonymous = who === 'anonymous'
        scenarios.push({
          name: `${what}: ${who} on a ${accessType} status with ${what === 'history' ? 'accessTypeHistory' : 'accessTypeUserList'}=${level} → ${expectStatus}`,
          as: anonymous ? null : who,
          method: 'GET',
          // anonymous viewers have no key: they read through the share id
          url: anonymous
            ? `/v1/share/{share_${accessType}_${level}}/${what}`
            : `/v1/status/{${accessType}_${level}}/${what}`,
          expectStatus,
          ...(expectStatus !== 200 && { expectErrorCode: CODES[expectStatus] }),
          expect: (body) => {
            if (expectStatus !== 200) return
            if (what === 'history') {
              assert.deepEqual(
                body.map((e: { value: string }) => e.value),
                ['FIRST'],
              )
              assert.equal(body[0].by.name, 'Olivia Owner', 'same level for both: by is shown')
            } else {
              const entries = body.map((u: { name: string; role: string }) => `${u.role}:${u.name}`)
              assert.equal(entries[0], 'owner:Olivia Owner', 'the owner comes first')
              // grants made within one millisecond are ordered by user id: compare as a set
              assert.deepEqual(entries.slice(1).sort(), [
                'subscriber:Sam Subscriber',
                'updater:Uma Updater',
              ])
            }
          },
        })
      }
  return scenarios
}

runReadOnlyScenarios('history visibility: every role × every accessTypeHistory', world, [
  ...detailScenarios('history'),
  {
    name: 'history without an API key on the authenticated route → 401',
    as: null,
    method: 'GET',
    url: '/v1/status/{public_public}/history',
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'history needs a verified user → 403 notVerified',
    as: 'unverified',
    method: 'GET',
    url: '/v1/status/{public_public}/history',
    expectStatus: 403,
    expectErrorCode: 'notVerified',
  },
])

runReadOnlyScenarios('user list visibility: every role × every accessTypeUserList', world, [
  ...detailScenarios('users'),
])

/** Reading and changing the status itself, per role (docs/sharing.md#roles). */
const STATUS: Record<AccessType, Record<Who, { read: number; value: number }>> = {
  public: {
    owner: { read: 200, value: 200 },
    updater: { read: 200, value: 200 },
    subscriber: { read: 200, value: 403 },
    stranger: { read: 200, value: 403 },
    anonymous: { read: 200, value: 401 },
  },
  private: {
    owner: { read: 200, value: 200 },
    updater: { read: 200, value: 200 },
    subscriber: { read: 200, value: 403 },
    stranger: { read: 404, value: 404 },
    anonymous: { read: 404, value: 401 },
  },
}

/**
 * Deleting a status, and changing a setting, per role: the owner's alone (docs/sharing.md#roles).
 */
const OWNER_ONLY: Record<AccessType, Record<Who, number>> = {
  public: { owner: 204, updater: 403, subscriber: 403, stranger: 403, anonymous: 401 },
  private: { owner: 204, updater: 403, subscriber: 403, stranger: 404, anonymous: 401 },
}

function ownerOnlyScenarios(): Scenario[] {
  const scenarios: Scenario[] = []
  for (const accessType of ACCESS_TYPES)
    for (const who of WHO) {
      const code = OWNER_ONLY[accessType][who]
      const as = who === 'anonymous' ? null : who
      const stillThere = async (ctx: ScenarioContext) => {
        const res = await ctx.t.request(
          ctx.users.owner ?? null,
          'GET',
          `/v1/status/${ctx.vars[`${accessType}_owner`]}`,
        )
        if (code === 204) assert.equal(res.statusCode, 404, 'deleted')
        else assert.equal(res.json().value, 'FIRST', 'not deleted')
      }
      scenarios.push(
        {
          name: `delete: ${who} on a ${accessType} status → ${code}`,
          as,
          method: 'DELETE',
          url: `/v1/status/{${accessType}_owner}`,
          expectStatus: code,
          ...(code === 403 && { expectErrorCode: 'forbidden' }),
          ...(code === 404 && { expectErrorCode: 'notFound' }),
          expect: (_body, ctx) => stillThere(ctx),
        },
        {
          name: `change a setting (colorNo): ${who} on a ${accessType} status → ${code === 204 ? 200 : code}`,
          as,
          method: 'PATCH',
          url: `/v1/status/{${accessType}_owner}`,
          body: { colorNo: 5 },
          expectStatus: code === 204 ? 200 : code,
          ...(code === 403 && { expectErrorCode: 'forbidden' }),
          ...(code === 404 && { expectErrorCode: 'notFound' }),
          expect: async (_body, ctx) => {
            const res = await ctx.t.request(
              ctx.users.owner ?? null,
              'GET',
              `/v1/status/${ctx.vars[`${accessType}_owner`]}`,
            )
            assert.equal(res.json().colorNo, code === 204 ? 5 : 1)
          },
        },
      )
    }
  return scenarios
}

function statusScenarios(): Scenario[] {
  const scenarios: Scenario[] = []
  for (const accessType of ACCESS_TYPES)
    for (const who of WHO) {
      const { read, value } = STATUS[accessType][who]
      const anonymous = who === 'anonymous'
      scenarios.push(
        {
          name: `read: ${who} on a ${accessType} status → ${read}`,
          as: anonymous ? null : who,
          method: 'GET',
          url: anonymous
            ? `/v1/share/{share_${accessType}_owner}`
            : `/v1/status/{${accessType}_owner}`,
          expectStatus: read,
          ...(read === 404 && { expectErrorCode: 'notFound' }),
          expect: (body) => {
            if (read === 200) assert.equal(body.value, 'FIRST')
          },
        },
        {
          name: `set value: ${who} on a ${accessType} status → ${value}`,
          as: anonymous ? null : who,
          method: 'PATCH',
          url: `/v1/status/{${accessType}_owner}`,
          body: { value: 'NEXT' },
          expectStatus: value,
          expect: async (body, ctx) => {
            const stored = await ctx.t.request(
              ctx.users.owner ?? null,
              'GET',
              `/v1/status/${ctx.vars[`${accessType}_owner`]}`,
            )
            assert.equal(stored.json().value, value === 200 ? 'NEXT' : 'FIRST')
            if (value === 403) assert.equal(body.errorCode, 'forbidden')
          },
        },
      )
    }
  return scenarios
}

runScenarios('roles: reading and changing a status', world, [
  ...statusScenarios(),
  ...ownerOnlyScenarios(),
  {
    name: 'an updater may set only value: a name change → 403 forbidden',
    as: 'updater',
    method: 'PATCH',
    url: '/v1/status/{private_owner}',
    body: { name: 'Renamed' },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'an updater may set only value: value plus colorNo → 403 forbidden, nothing changes',
    as: 'updater',
    method: 'PATCH',
    url: '/v1/status/{private_owner}',
    body: { value: 'NEXT', colorNo: 3 },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
    expect: async (_body, ctx) => {
      const res = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/status/${ctx.vars.private_owner}`,
      )
      assert.equal(res.json().value, 'FIRST')
    },
  },
  {
    name: 'an updater may not delete the status → 403 forbidden',
    as: 'updater',
    method: 'DELETE',
    url: '/v1/status/{private_owner}',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'a subscriber may not delete the status → 403 forbidden',
    as: 'subscriber',
    method: 'DELETE',
    url: '/v1/status/{public_owner}',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: "an updater's value update is history, by the updater",
    as: 'updater',
    method: 'PATCH',
    url: '/v1/status/{private_private}',
    body: { value: 'NEXT' },
    expectStatus: 200,
    expect: async (_body, ctx) => {
      const res = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/status/${ctx.vars.private_private}/history`,
      )
      assert.deepEqual(
        res.json().map((e: { value: string; by: { name: string } }) => `${e.value}/${e.by.name}`),
        ['NEXT/Uma Updater', 'FIRST/Olivia Owner'],
      )
    },
  },
  {
    name: 'the share view of a private status is 404, even with the owner key',
    as: 'owner',
    method: 'GET',
    url: '/v1/share/{share_private_public}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
])
