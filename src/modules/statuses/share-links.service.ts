import type { Static } from 'typebox'
import { Type } from 'typebox'
import type { Db, StatusRow } from '../../db/database.ts'
import { writerOf } from '../../db/writer.ts'
import { systemClock } from '../../lib/clock.ts'
import type { Page } from '../../lib/cursor.ts'
import { ApiError, forbidden, notFound, validationError } from '../../lib/errors.ts'
import { hashApiKey, newId, newToken } from '../../lib/ids.ts'
import { Timestamp } from '../../lib/schema.ts'
import { creationIso, parseIsoInstant } from '../../lib/time.ts'
import { turnOnDefaultRule } from '../outbox/default-rules.service.ts'
import { planOf } from '../plans/plan-of.ts'
import { shareLinkDaysOf } from '../plans/plans.ts'
import type { ServiceDeps } from '../service-deps.ts'
import type { HistoryEntry } from './history.schemas.ts'
import { listStatusHistory } from './history.service.ts'
import type { ShareBadge, SharePage } from './share.service.ts'
import { badgeOf, shareViewOf } from './share.service.ts'
import {
  countValidShareLinks,
  deleteShareLinksEndedBefore,
  findShareLink,
  findValidShareLink,
  insertShareLink,
  listRecentShareLinks,
  markShareLinkRevoked,
  type ShareLinkRow,
  validShareLinkIds,
} from './share-links.repository.ts'
import type { ShareView } from './share-view.ts'
import { insertRoleUnlessPresent } from './sharing.repository.ts'
import type { StatusUser } from './sharing.schemas.ts'
import { accessById, listStatusUsers, type PageRequest } from './sharing.service.ts'
import { announcedWrite } from './status-events.ts'
import { mayReadDetail, roleOn, withinReach } from './statuses.access.ts'
import { findStatusById, findStatusByIdForWrite } from './statuses.repository.ts'
import type { AccessLevel, Status } from './statuses.schemas.ts'
import { type Caller, subscriberCountFor, toStatus } from './statuses.service.ts'

// Private share links (docs/accounts.md#private-share-links): a bearer token that shows one
// status, read-only, to whoever holds it, whatever the status's accessType, until it expires
// or its owner revokes it.

const DAY_MS = 24 * 60 * 60 * 1000
/** Links of a status that work at once, at most: each is a way in to keep track of. */
export const MAX_ACTIVE_SHARE_LINKS = 100
/** How long an ended link stays in the owner's list. */
export const ENDED_SHARE_LINK_LIST_DAYS = 7
/** The most links the owner's list shows (newest first). */
export const SHARE_LINK_LIST_LIMIT = 200
/** The shape of a token newToken('sdp_') makes; anything else is not looked up. */
const TOKEN = /^sdp_[A-Za-z0-9]{43}$/

export const CreateShareLinkBodySchema = Type.Object(
  {
    expiresAt: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "ISO 8601 date or date-time; by default, and at most, the owner's plan's shareLinkDays from now",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ expiresAt: '2030-12-31T23:59:59Z' }] },
)
export type CreateShareLinkBody = Static<typeof CreateShareLinkBodySchema>

export const NewShareLinkSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String({ description: 'The link, with its token: shown this once' }),
    expiresAt: Timestamp(),
    createdAt: Timestamp(),
  },
  {
    $id: 'NewShareLink',
    additionalProperties: false,
    description: 'A private share link just made (docs/accounts.md#private-share-links)',
    examples: [
      {
        id: 'Lk3vQ9dTxhRMpO5YH1z4I',
        url: 'https://status.example.com/l/sdp_6GmkVh1X0Zk7rY2Q9cA4bT8nWfE3uJ5sLdP1oR7qKx2',
        expiresAt: '2026-12-05T10:00:00.000Z',
        createdAt: '2026-11-28T10:00:00.000Z',
      },
    ],
  },
)
export type NewShareLink = Static<typeof NewShareLinkSchema>

export const ShareLinkSchema = Type.Object(
  {
    id: Type.String(),
    createdAt: Timestamp(),
    expiresAt: Timestamp(),
    revokedAt: Type.Union([Timestamp(), Type.Null()]),
    active: Type.Boolean({ description: 'Neither revoked nor expired' }),
  },
  {
    $id: 'ShareLink',
    additionalProperties: false,
    description: 'A private share link as its owner lists it: never its token',
    examples: [
      {
        id: 'Lk3vQ9dTxhRMpO5YH1z4I',
        createdAt: '2026-11-28T10:00:00.000Z',
        expiresAt: '2026-12-05T10:00:00.000Z',
        revokedAt: null,
        active: true,
      },
    ],
  },
)
export type ShareLink = Static<typeof ShareLinkSchema>

export const ShareLinkParamsSchema = Type.Object({ statusId: Type.String(), linkId: Type.String() })
export const ShareLinkTokenParamsSchema = Type.Object({ token: Type.String() })

const nowMs = (deps: Pick<ServiceDeps, 'clock'>): number => deps.clock?.now() ?? Date.now()
const nowIsoOf = (deps: Pick<ServiceDeps, 'clock'>): string => new Date(nowMs(deps)).toISOString()

// note: 409, as the other refusals of a well-formed request that clashes with the state
const tooManyLinks = () =>
  new ApiError(
    409,
    'conflict',
    `A status has at most ${MAX_ACTIVE_SHARE_LINKS} links that work at once; revoke one first`,
  )

/** The status the caller owns (locked for this transaction): 403 for another role, 404 unseen. */
async function ownedForWrite(db: Db, caller: Caller, statusId: string): Promise<StatusRow> {
  const { status, role } = await accessById(db, caller, statusId, { forWrite: true })
  if (role !== 'owner') throw forbidden('Only the owner may manage the share links of this status')
  return status
}

/** The expiry asked for, held to the plan's cap; the cap itself when none is asked for. */
function expiryOf(input: string | undefined, now: number, days: number): string {
  const latest = now + days * DAY_MS
  if (input === undefined) return new Date(latest).toISOString()
  const at = parseIsoInstant(input)
  if (!at)
    throw validationError([
      {
        field: 'expiresAt',
        message: 'is not an ISO 8601 date (e.g. 2030-12-31 or 2030-12-31T23:59:59Z)',
      },
    ])
  if (at.getTime() <= now)
    throw validationError([{ field: 'expiresAt', message: 'must be in the future' }])
  if (at.getTime() > latest)
    throw validationError(
      [
        {
          field: 'expiresAt',
          message: `must be at most ${days} days from now (the plan's shareLinkDays)`,
        },
      ],
      `A share link lasts at most ${days} days on your plan (shareLinkDays)`,
    )
  return at.toISOString()
}

const toShareLink = (row: ShareLinkRow, now: string): ShareLink => ({
  id: row.id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  active: row.revoked_at === null && row.expires_at > now,
})

/** POST /v1/status/:statusId/share-links — the owner makes a link; its token is shown once. */
export async function createShareLink(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  input: CreateShareLinkBody,
  publicUrl: string | null,
): Promise<NewShareLink> {
  const now = nowMs(deps)
  const expiresAt = expiryOf(input.expiresAt, now, shareLinkDaysOf(planOf(deps.plans, caller.plan)))
  const { token, hash } = newToken('sdp_')
  const row = await writerOf(deps).run(async (tx) => {
    const status = await ownedForWrite(tx, caller, statusId)
    if (
      (await countValidShareLinks(tx, status.id, new Date(now).toISOString())) >=
      MAX_ACTIVE_SHARE_LINKS
    )
      throw tooManyLinks()
    const row = {
      id: newId(),
      status_id: status.id,
      token_hash: hash,
      created_by: caller.userId,
      created_at: creationIso(),
      expires_at: expiresAt,
      revoked_at: null,
    }
    await insertShareLink(tx, row)
    return row
  })
  return {
    id: row.id,
    url: `${publicUrl ?? ''}/l/${token}`,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  }
}

/** GET /v1/status/:statusId/share-links — the owner's links: working, and recently ended. */
export async function listShareLinks(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
): Promise<ShareLink[]> {
  const { status, role } = await accessById(deps.db, caller, statusId)
  if (role !== 'owner') throw forbidden('Only the owner may manage the share links of this status')
  const now = nowMs(deps)
  const endedSince = new Date(now - ENDED_SHARE_LINK_LIST_DAYS * DAY_MS).toISOString()
  const rows = await listRecentShareLinks(deps.db, status.id, endedSince, SHARE_LINK_LIST_LIMIT)
  const nowIso = new Date(now).toISOString()
  return rows.map((r) => toShareLink(r, nowIso))
}

/**
 * DELETE /v1/status/:statusId/share-links/:linkId — the link stops working at once, and so
 * do the streams opened through it, on every instance: the revocation is announced as a
 * change of who may see the status, and each stream's feed checks its link again.
 */
export async function revokeShareLink(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  linkId: string,
): Promise<void> {
  const at = nowIsoOf(deps)
  await announcedWrite(
    deps,
    async (tx) => {
      const status = await ownedForWrite(tx, caller, statusId)
      if (!(await findShareLink(tx, status.id, linkId))) throw notFound('Share link not found')
      await markShareLinkRevoked(tx, linkId, at)
      return status
    },
    (status) => ({ statusId: status.id, version: Number(status.version), kind: 'access' }),
  )
}

/**
 * Deletes the links that ended (revoked or expired) before the owner's list stops showing
 * them (housekeeping, src/server.ts): the table holds working links and recent ones only.
 */
export const pruneEndedShareLinks = (db: Db, now: number = Date.now()): Promise<number> =>
  deleteShareLinksEndedBefore(db, new Date(now - ENDED_SHARE_LINK_LIST_DAYS * DAY_MS).toISOString())

/** Of these links, those that still work: live streams opened through them check with it. */
export const validLinkIds = (
  deps: Pick<ServiceDeps, 'db' | 'clock'>,
  ids: readonly string[],
): Promise<Set<string>> => validShareLinkIds(deps.db, ids, nowIsoOf(deps))

/** What a working link leads to. */
export interface LinkedStatus {
  status: StatusRow
  linkId: string
  /** When the link ends (epoch ms). */
  expiresAt: number
}

/**
 * The status a token leads to while its link works. Forged, revoked, expired, or a status
 * gone: the same 404, so that a token cannot be probed.
 */
export async function linkedStatus(
  deps: ServiceDeps,
  token: string,
  { db = deps.db, forWrite = false }: { db?: Db; forWrite?: boolean } = {},
): Promise<LinkedStatus> {
  const missing = () => notFound('This link does not work: it may have expired or been revoked')
  if (!TOKEN.test(token)) throw missing()
  const link = await findValidShareLink(db, hashApiKey(token), nowIsoOf(deps))
  if (!link) throw missing()
  const status = await (forWrite ? findStatusByIdForWrite : findStatusById)(db, link.status_id)
  if (!status) throw missing()
  return { status, linkId: link.id, expiresAt: Date.parse(link.expires_at) }
}

/**
 * The status as the holder of a link reads its details: as an anonymous viewer of a public
 * status (docs/accounts.md#private-share-links). History and user list show when their
 * level is `public`, whatever the status's own accessType.
 */
const asSeenThroughLink = (status: StatusRow): StatusRow => ({ ...status, access_type: 'public' })

/** GET /v1/share-links/:token — the share view of the linked status. */
export async function linkView(deps: ServiceDeps, token: string): Promise<ShareView> {
  const { status } = await linkedStatus(deps, token)
  return shareViewOf(deps, status)
}

/** GET /v1/share-links/:token/history — when the status's accessTypeHistory is public (403 otherwise). */
export async function linkHistory(
  deps: ServiceDeps,
  token: string,
  page: PageRequest,
): Promise<Page<HistoryEntry>> {
  const { status } = await linkedStatus(deps, token)
  return listStatusHistory(deps, { status: asSeenThroughLink(status), role: null }, page)
}

/** GET /v1/share-links/:token/users — when the status's accessTypeUserList is public (403 otherwise). */
export async function linkUsers(
  deps: ServiceDeps,
  token: string,
  page: PageRequest,
): Promise<Page<StatusUser>> {
  const { status } = await linkedStatus(deps, token)
  return listStatusUsers(deps, { status: asSeenThroughLink(status), role: null }, page)
}

/** The page a link opens (`/l/:token`): as the share page, by the link's rules. */
export async function linkPage(
  deps: ServiceDeps,
  token: string,
  limits: { history: number; users: number },
): Promise<SharePage> {
  const { status } = await linkedStatus(deps, token)
  const seen = asSeenThroughLink(status)
  const anyone = (level: string) => mayReadDetail(level as AccessLevel, seen, null)
  const access = { status: seen, role: null }
  return {
    view: await shareViewOf(deps, status),
    history: anyone(status.access_type_history)
      ? (await listStatusHistory(deps, access, { limit: limits.history })).items
      : null,
    users: anyone(status.access_type_user_list)
      ? (await listStatusUsers(deps, access, { limit: limits.users })).items
      : null,
    version: Number(status.version),
    statusId: status.id,
  }
}

/** The badge a link shows (`/l/:token/badge.svg`). */
export async function linkBadge(deps: ServiceDeps, token: string): Promise<ShareBadge> {
  const { status } = await linkedStatus(deps, token)
  return badgeOf(status, (deps.clock ?? systemClock).now())
}

/**
 * POST /v1/share-links/:token/follow — the signed-in holder becomes a subscriber (they asked:
 * granted at once) and keeps the role when the link ends. A role held already is kept as it
 * is; the owner gets 409, as when subscribing.
 */
export async function followLink(
  deps: ServiceDeps,
  caller: Caller,
  token: string,
): Promise<{ status: Status; created: boolean }> {
  // a role gained: the user's streams that hid the status look again (as invitations do)
  return announcedWrite(
    deps,
    async (tx) => {
      const { status } = await linkedStatus(deps, token, { db: tx, forWrite: true })
      // a key confined to other statuses (a device key) does not reach this one: as forged
      if (!withinReach(status, caller.limits))
        throw notFound('This link does not work: it may have expired or been revoked')
      const role = await roleOn(tx, status, caller.userId)
      if (role === 'owner') throw new ApiError(409, 'conflict', 'You own this status')
      const created =
        role === null &&
        (await insertRoleUnlessPresent(tx, {
          status_id: status.id,
          user_id: caller.userId,
          role: 'subscriber',
          created_at: creationIso(),
        }))
      // a new subscriber is notified of every change by default (docs/notifications.md#rules)
      if (created) await turnOnDefaultRule(tx, status.id, caller.userId, creationIso())
      const subscribers = await subscriberCountFor(
        tx,
        status,
        role ?? (created ? 'subscriber' : null),
      )
      return { status: toStatus(status, caller.userId, Date.now(), subscribers), created }
    },
    (followed) => ({ statusId: followed.status.id, version: 0, kind: 'access' }),
  )
}
