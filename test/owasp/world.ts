import type { LightMyRequestResponse } from 'fastify'
import { newId } from '../../src/lib/ids.ts'
import { startSession } from '../../src/modules/users/sessions.service.ts'
import type { RouteEntry } from '../../src/plugins/inventory.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { snapshotTables } from '../helpers/tables.ts'

/**
 * A small world for the OWASP API Top 10 tests: an owner with a private and a public status
 * and a key, a stranger with a status and a key of their own, an unverified user.
 */
export interface World {
  t: TestApp
  owner: TestUser
  stranger: TestUser
  unverified: TestUser
  /** The owner's objects, by kind: the ids a stranger must not reach. */
  ownerIds: {
    privateStatus: string
    publicStatus: string
    keyId: string
    sessionId: string
    passkeyId: string
    /** A public board of the public status (docs/api.md#boards). */
    boardId: string
  }
  strangerIds: { status: string; keyId: string }
}

export async function makeWorld(ctx: Lifetime): Promise<World> {
  const t = await makeApp(ctx)
  const owner = await t.user({ name: 'Owner' })
  const stranger = await t.user({ name: 'Stranger' })
  const unverified = await t.user({ verified: false, name: 'Unverified' })
  const privateStatus = (
    await t.request(owner, 'POST', '/v1/status-keys/secret-room', {
      value: 'SECRET',
      description: 'private',
    })
  ).json().id
  const publicStatus = (
    await t.request(owner, 'POST', '/v1/status-keys/open-room', {
      value: 'OPEN',
      accessType: 'public',
    })
  ).json().id
  const keyId = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()[0].id
  const strangerStatus = (
    await t.request(stranger, 'POST', '/v1/status-keys/their-room', { value: 'MINE' })
  ).json().id
  const strangerKeyId = (await t.request(stranger, 'GET', '/v1/user/api-keys')).json()[0].id
  // a browser the owner signed in with (docs/accounts.md#sessions)
  const { session } = await startSession(t.database.db, { userId: owner.id, method: 'password' })
  // a passkey as a registration leaves it (registering one takes a browser: test/browser)
  const passkeyId = newId()
  await t.database.db
    .insertInto('passkeys')
    .values({
      id: passkeyId,
      user_id: owner.id,
      credential_id: 'b3duZXItY3JlZGVudGlhbA',
      public_key: 'bm90LWEta2V5',
      counter: 0,
      transports: null,
      name: 'Owner laptop',
      created_at: new Date().toISOString(),
      last_used_at: null,
    })
    .execute()
  const boardId = (
    await t.request(owner, 'POST', '/v1/boards', {
      name: 'Rooms',
      statusIds: [publicStatus],
      accessType: 'public',
    })
  ).json().id
  return {
    t,
    owner,
    stranger,
    unverified,
    ownerIds: { privateStatus, publicStatus, keyId, sessionId: session.id, passkeyId, boardId },
    strangerIds: { status: strangerStatus, keyId: strangerKeyId },
  }
}

/**
 * The anonymous views of a public status (docs/sharing.md#public-views-no-api-key) and signing
 * up, in and out (docs/accounts.md#signing-in): the parts of /v1 that need no key.
 */
export const ANONYMOUS =
  /^\/v1\/(share|auth)\/|^\/v1\/invitations\/:token$|^\/v1\/share-links\/:token(\/(history|users|events))?$/

/** Streams (Server-Sent Events) never end by themselves: a request to one does not return. */
export const isStream = (route: RouteEntry): boolean => route.url.endsWith('/events')

/**
 * The authenticated API's routes: under /v1, no HEAD twins, nothing hidden from the OpenAPI
 * document, not the anonymous share views (docs/sharing.md#public-views-no-api-key).
 */
export const apiRoutes = (t: TestApp): RouteEntry[] =>
  t.app
    .routeInventory()
    .filter(
      (r) => r.method !== 'HEAD' && !r.hidden && r.url.startsWith('/v1/') && !ANONYMOUS.test(r.url),
    )

/** Values for every route parameter the API has or will have, naming the owner's objects. */
export const ownerParams = (w: World): Record<string, string> => ({
  statusId: w.ownerIds.publicStatus,
  statusKey: 'open-room',
  keyId: w.ownerIds.keyId,
  sessionId: w.ownerIds.sessionId,
  passkeyId: w.ownerIds.passkeyId,
  userId: w.stranger.id,
  shareId: 'zzzzzzzz',
  // an invitation or invitation link (docs/accounts.md#invitations) that does not exist
  id: 'Xdoesnotexist00000000',
  token: FORGED_TOKEN,
  // a private share link id no link has (the token above fails as a share link's too)
  linkId: 'zzzzzzzzzzzzzzzzzzzzz',
  boardId: w.ownerIds.boardId,
  // a backup (docs/operations.md#backup-and-restore) that does not exist
  name: 'statusd-20260101-000000-000000.tar',
})

/** An invitation link token of the right shape that no link has. */
export const FORGED_TOKEN = `sdi_${'x'.repeat(43)}`

/** Fills `:param`s of a route URL. */
export const fillUrl = (url: string, params: Record<string, string>): string =>
  url.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name]
    if (value === undefined) throw new Error(`no value for :${name} in ${url}`)
    return encodeURIComponent(value)
  })

/** A body the route accepts in shape, so that a refusal is about who asks, not what. */
export function plausibleBody(route: RouteEntry): unknown {
  if (route.method === 'GET' || route.method === 'DELETE') return undefined
  if (route.url.includes('/api-keys')) return {}
  if (route.url.includes('/users/') || route.url.endsWith('/invitations'))
    return { role: 'updater' }
  if (/\/(accept|decline)$/.test(route.url)) return undefined
  return { value: 'HACKED' }
}

/** Every row of every table (tables added later included): to prove a refused request changed nothing. */
export const snapshot = (t: TestApp): Promise<string> => snapshotTables(t.database.db as never)

/** The error body (docs/api.md#errors), or a message saying what is wrong with it. */
export function errorShapeProblem(res: LightMyRequestResponse): string | null {
  try {
    const body = res.json()
    if (typeof body.message !== 'string') return 'no message'
    if (typeof body.errorCode !== 'string') return 'no errorCode'
    if (typeof body.requestId !== 'string') return 'no requestId'
    return null
  } catch {
    return `not JSON: ${res.body.slice(0, 100)}`
  }
}
