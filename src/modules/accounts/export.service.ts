import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import { toApiKeyView } from '../keys/keys.service.ts'
import { toChannelView } from '../notifications/channels.service.ts'
import { toStatus } from '../statuses/statuses.service.ts'
import { profileOf } from '../users/accounts.service.ts'
import { toSessionView } from '../users/sessions.service.ts'

/** The version of the document's shape (docs/api.md#export-your-data). */
export const EXPORT_FORMAT = 'statusd-export/1'

/** Rows read per query: what the export holds in memory at once. */
export const EXPORT_PAGE = 500

export interface ExportDeps {
  db: Kysely<DB>
  nowMs: number
}

const json = (value: unknown): string => JSON.stringify(value)
const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text))

/**
 * Reads a table in pages by its key, oldest key first: each query starts after the last key
 * of the page before (keyset paging), so no page costs more than the first and a row written
 * meanwhile is neither skipped twice nor read twice.
 */
async function* pages<Row, Key>(
  read: (after: Key | null, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => Key,
): AsyncGenerator<Row[]> {
  let after: Key | null = null
  for (;;) {
    const rows = await read(after, EXPORT_PAGE)
    if (rows.length > 0) yield rows
    if (rows.length < EXPORT_PAGE) return
    after = keyOf(rows[rows.length - 1] as Row)
  }
}

/** A JSON array written a page at a time. */
async function* array<Row>(
  source: AsyncIterable<Row[]>,
  view: (row: Row) => unknown,
): AsyncGenerator<string> {
  yield '['
  let first = true
  for await (const rows of source) {
    yield (first ? '' : ',') + rows.map((row) => json(view(row))).join(',')
    first = false
  }
  yield ']'
}

/** Rows small enough to be read whole, as one page. */
async function* whole<Row>(read: () => Promise<Row[]>): AsyncGenerator<Row[]> {
  yield await read()
}

/**
 * Everything statusd holds about a user (docs/accounts.md#export-your-data), as the text of
 * one JSON document, written as it is read: statuses and their history come in pages, so the
 * document is never held in memory whole, however long the history. Only chosen columns are
 * read: no password hash, token hash, key hash, passkey key or channel secret is ever selected.
 */
export async function* exportDocument(deps: ExportDeps, userId: string): AsyncGenerator<string> {
  const { db, nowMs } = deps
  const profile = await profileOf(db, userId)
  yield `{"format":${json(EXPORT_FORMAT)},"exportedAt":${json(new Date(nowMs).toISOString())},"profile":${json(profile)}`

  // statuses owned, each with its whole history
  yield ',"statuses":['
  let firstStatus = true
  for await (const statuses of pages(
    (after: string | null, limit) =>
      db
        .selectFrom('statuses')
        .selectAll()
        .where('owner_id', '=', userId)
        .$if(after !== null, (q) => q.where('id', '>', after as string))
        .orderBy('id')
        .limit(limit)
        .execute(),
    (row) => row.id,
  )) {
    for (const status of statuses) {
      const head = json(toStatus(status, userId, nowMs))
      yield `${firstStatus ? '' : ','}${head.slice(0, -1)},"history":`
      firstStatus = false
      yield* array(
        pages(
          (after: number | null, limit) =>
            db
              .selectFrom('status_history')
              .select(['change_no', 'value', 'at', 'by_user_id', 'by_key_id', 'via'])
              .where('status_id', '=', status.id)
              .$if(after !== null, (q) => q.where('change_no', '>', after as number))
              .orderBy('change_no')
              .limit(limit)
              .execute(),
          (row) => Number(row.change_no),
        ),
        (row) => ({
          changeNo: Number(row.change_no),
          value: row.value,
          at: row.at,
          byUserId: row.by_user_id,
          byKeyId: row.by_key_id,
          via: row.via,
        }),
      )
      yield '}'
    }
  }
  yield ']'

  yield ',"roles":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('status_roles')
          .select(['status_id', 'role', 'created_at'])
          .where('user_id', '=', userId)
          .$if(after !== null, (q) => q.where('status_id', '>', after as string))
          .orderBy('status_id')
          .limit(limit)
          .execute(),
      (row) => row.status_id,
    ),
    (row) => ({ statusId: row.status_id, role: row.role, createdAt: row.created_at }),
  )

  // invitations to the user, and those the user made (by user, and by link without its token)
  yield ',"invitations":{"received":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('role_invitations')
          .select(['id', 'status_id', 'role', 'invited_by', 'created_at'])
          .where('user_id', '=', userId)
          .$if(after !== null, (q) => q.where('id', '>', after as string))
          .orderBy('id')
          .limit(limit)
          .execute(),
      (row) => row.id,
    ),
    (row) => ({
      id: row.id,
      statusId: row.status_id,
      role: row.role,
      invitedBy: row.invited_by,
      createdAt: row.created_at,
    }),
  )
  yield ',"sent":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('role_invitations')
          .select(['id', 'status_id', 'user_id', 'role', 'created_at'])
          .where('invited_by', '=', userId)
          .$if(after !== null, (q) => q.where('id', '>', after as string))
          .orderBy('id')
          .limit(limit)
          .execute(),
      (row) => row.id,
    ),
    (row) => ({
      id: row.id,
      statusId: row.status_id,
      userId: row.user_id,
      role: row.role,
      createdAt: row.created_at,
    }),
  )
  yield ',"links":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('invitation_links')
          .select([
            'id',
            'status_id',
            'role',
            'email_key',
            'max_uses',
            'uses_left',
            'created_at',
            'expires_at',
            'revoked_at',
          ])
          .where('created_by', '=', userId)
          .$if(after !== null, (q) => q.where('id', '>', after as string))
          .orderBy('id')
          .limit(limit)
          .execute(),
      (row) => row.id,
    ),
    (row) => ({
      id: row.id,
      statusId: row.status_id,
      role: row.role,
      email: row.email_key,
      maxUses: Number(row.max_uses),
      usesLeft: Number(row.uses_left),
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
    }),
  )
  yield '}'

  // private share links the user made, or on statuses the user owns: never their tokens
  yield ',"shareLinks":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('share_links')
          .select([
            'share_links.id',
            'share_links.status_id',
            'share_links.created_by',
            'share_links.created_at',
            'share_links.expires_at',
            'share_links.revoked_at',
          ])
          .where((eb) =>
            eb.or([
              eb('share_links.created_by', '=', userId),
              eb(
                'share_links.status_id',
                'in',
                eb.selectFrom('statuses').select('statuses.id').where('owner_id', '=', userId),
              ),
            ]),
          )
          .$if(after !== null, (q) => q.where('share_links.id', '>', after as string))
          .orderBy('share_links.id')
          .limit(limit)
          .execute(),
      (row) => row.id,
    ),
    (row) => ({
      id: row.id,
      statusId: row.status_id,
      createdBy: row.created_by,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
    }),
  )

  yield ',"boards":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('boards')
          .select([
            'id',
            'share_id',
            'name',
            'access_type',
            'status_ids',
            'created_at',
            'updated_at',
          ])
          .where('owner_id', '=', userId)
          .$if(after !== null, (q) => q.where('id', '>', after as string))
          .orderBy('id')
          .limit(limit)
          .execute(),
      (row) => row.id,
    ),
    (row) => ({
      id: row.id,
      shareId: row.share_id,
      name: row.name,
      accessType: row.access_type,
      statusIds: parsed(row.status_ids),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  )

  // channels: the API's view of them, which never carries a secret or a service's token
  yield ',"channels":'
  yield* array(
    whole(() =>
      db
        .selectFrom('channels')
        .select([
          'id',
          'user_id',
          'type',
          'name',
          'config',
          'enabled',
          'verified_at',
          'failing_since',
          'disabled_reason',
          'created_at',
          'updated_at',
        ])
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    ),
    (row) => toChannelView({ ...row, secret: null }),
  )

  yield ',"rules":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('notification_rules')
          .select([
            'status_id',
            'condition',
            'channel_ids',
            'by_others',
            'created_at',
            'updated_at',
          ])
          .where('user_id', '=', userId)
          .$if(after !== null, (q) => q.where('status_id', '>', after as string))
          .orderBy('status_id')
          .limit(limit)
          .execute(),
      (row) => row.status_id,
    ),
    (row) => ({
      statusId: row.status_id,
      condition: parsed(row.condition),
      channelIds: parsed(row.channel_ids),
      byOthers: Number(row.by_others) === 1,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  )

  // schedules of the statuses the user owns, and those the user set elsewhere
  yield ',"schedules":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('status_schedules')
          .select([
            'status_id',
            'set_by',
            'timezone',
            'entries',
            'next_fire_at',
            'created_at',
            'updated_at',
          ])
          .where((eb) =>
            eb.or([
              eb('set_by', '=', userId),
              eb(
                'status_id',
                'in',
                eb.selectFrom('statuses').select('statuses.id').where('owner_id', '=', userId),
              ),
            ]),
          )
          .$if(after !== null, (q) => q.where('status_id', '>', after as string))
          .orderBy('status_id')
          .limit(limit)
          .execute(),
      (row) => row.status_id,
    ),
    (row) => ({
      statusId: row.status_id,
      setBy: row.set_by,
      timezone: row.timezone,
      entries: parsed(row.entries),
      nextFireAt: row.next_fire_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  )

  // metadata only: a key's hash, a session's token hash, a passkey's key stay unread
  yield ',"apiKeys":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('api_keys')
          .select([
            'id',
            'user_id',
            'prefix',
            'label',
            'created_at',
            'expires_at',
            'revoked_at',
            'replaced_by',
            'scopes',
            'status_ids',
          ])
          .where('user_id', '=', userId)
          .$if(after !== null, (q) => q.where('id', '>', after as string))
          .orderBy('id')
          .limit(limit)
          .execute(),
      (row) => row.id,
    ),
    (row) => toApiKeyView({ ...row, key_hash: '' }),
  )

  yield ',"sessions":'
  yield* array(
    pages(
      (after: string | null, limit) =>
        db
          .selectFrom('sessions')
          .select([
            'id',
            'user_id',
            'created_at',
            'last_seen_at',
            'expires_at',
            'user_agent',
            'ip',
            'method',
          ])
          .where('user_id', '=', userId)
          .$if(after !== null, (q) => q.where('id', '>', after as string))
          .orderBy('id')
          .limit(limit)
          .execute(),
      (row) => row.id,
    ),
    (row) => toSessionView({ ...row, token_hash: '' }),
  )

  yield ',"passkeys":'
  yield* array(
    whole(() =>
      db
        .selectFrom('passkeys')
        .select(['id', 'name', 'transports', 'created_at', 'last_used_at'])
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    ),
    (row) => ({
      id: row.id,
      name: row.name,
      transports: parsed(row.transports) ?? [],
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
    }),
  )

  // the user's own security log (docs/accounts.md#security-log)
  yield ',"securityEvents":'
  yield* array(
    pages(
      (after: { at: string; id: string } | null, limit) =>
        db
          .selectFrom('security_events')
          .select(['id', 'at', 'actor_id', 'kind', 'ip', 'user_agent', 'detail'])
          .where('user_id', '=', userId)
          .$if(after !== null, (q) =>
            q.where((eb) => {
              const { at, id } = after as { at: string; id: string }
              return eb.or([eb('at', '>', at), eb.and([eb('at', '=', at), eb('id', '>', id)])])
            }),
          )
          // oldest first, as the log happened
          .orderBy('at')
          .orderBy('id')
          .limit(limit)
          .execute(),
      (row) => ({ at: row.at, id: row.id }),
    ),
    (row) => ({
      id: row.id,
      at: row.at,
      actorId: row.actor_id,
      kind: row.kind,
      ip: row.ip,
      userAgent: row.user_agent,
      detail: parsed(row.detail),
    }),
  )
  yield '}\n'
}
