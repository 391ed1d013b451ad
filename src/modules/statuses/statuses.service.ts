import type { Db, NewHistoryRow, StatusRow, StatusRowUpdate } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { writerOf } from '../../db/writer.ts'
import { systemClock } from '../../lib/clock.ts'
import { decodePosition, type Page, toPage } from '../../lib/cursor.ts'
import {
  ApiError,
  invalidStatusKey,
  notFound,
  preconditionFailed,
  validationError,
} from '../../lib/errors.ts'
import { etagMatches, versionEtag } from '../../lib/etag.ts'
import { newId, newShareId } from '../../lib/ids.ts'
import { creationIso, nowIso } from '../../lib/time.ts'
import { type Settled, turnBatcher } from '../../lib/turn-batcher.ts'
import type { CredentialLimits } from '../keys/scopes.ts'
import { turnOnCreatorRule } from '../outbox/default-rules.service.ts'
import {
  liveChangeRow,
  type NotifiedStatus,
  notificationRuleExists,
  type OutboxEventInsert,
  recordOutboxRows,
  recordStatusEvent,
  STATUS_CHANGED,
  statusChangedRow,
  statusesNotified,
} from '../outbox/outbox.service.ts'
import { planOf } from '../plans/plan-of.ts'
import { assertPlanAllows, assertUnderStatusLimit } from '../plans/plan-rules.ts'
import { notificationRulesOf } from '../plans/plans.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { pruneHistories } from './history.repository.ts'
import { ownerPlanOf, retentionCutoff } from './history.service.ts'
import { assertUniquePalette, paletteColor, parsePalette, storedPalette } from './palette.ts'
import { staleAtOf, staleChanges, staleFieldsOf } from './staleness.ts'
import { announceCommitted, announcedWrite, type StatusChange } from './status-events.ts'
import { assertMayChange, assertOwnKeyReached, assertVisible, roleOn } from './statuses.access.ts'
import {
  countOwnedStatuses,
  countSubscribers,
  deleteStatusRow,
  deleteStatusRows,
  findStatusById,
  findStatusByIdForWrite,
  findStatusByKey,
  findStatusByKeyForWrite,
  findStatusesForWrite,
  findStatusWithSubscribers,
  insertHistory,
  insertHistoryRows,
  insertStatusUnlessKeyTaken,
  listOwnedStatuses,
  ownedStatusesForWrite,
  userPlans,
  writeStatusRows,
} from './statuses.repository.ts'
import {
  type AccessLevel,
  type AccessType,
  STATUS_KEY_PATTERN,
  type Status,
  type StatusInput,
  type StatusListEntry,
} from './statuses.schemas.ts'
import { endChanges, endFieldsOf } from './value-end.ts'
import { assertWriteScopes } from './write-scopes.ts'

/** The authenticated user a request acts for. */
export interface Caller {
  userId: string
  plan: string
  /**
   * What the API key the caller presented is limited to: its scopes, and the statuses it is
   * confined to (docs/accounts.md#scoped-keys). Absent for a session, the CLI and anonymous
   * readers: they act with all their user may.
   */
  limits?: CredentialLimits
  /** The API key the caller presented, if any: history notes which key wrote a value. */
  keyId?: string
  /**
   * True when the caller signed in with a session (the app): a status they create gives
   * them the creator's notification rule (docs/notifications.md#rules).
   */
  session?: boolean
}

/** A status as the API answers it, with its entity tag. */
export interface TaggedStatus {
  status: Status
  etag: string
}

/** What a write did: the status as it now stands, and whether the write created it. */
export interface WriteResult extends TaggedStatus {
  created: boolean
}

/** Conditions and hooks of a write (docs/api.md#conditional-requests-etag-if-match). */
export interface WriteOptions {
  /** `If-Match`: the write happens only if the status's current ETag matches. */
  ifMatch?: string
  /** `If-None-Match`: `*` makes create-or-update create-only. */
  ifNoneMatch?: string
  /** Runs inside the write's transaction before it commits (e.g. to store an idempotent response). */
  onWrite?: (tx: Db, result: WriteResult) => Promise<void>
}

/**
 * The ETag of a stored status: its id and its version, which every write moves
 * (docs/api.md#conditional-requests-etag-if-match). note: the version alone would not do: a
 * status deleted and created again under the same key starts again at version 1, and a tag
 * of the deleted one must never match it; ids are never reused.
 */
export const statusEtag = (row: Pick<StatusRow, 'id' | 'version'>): string =>
  versionEtag(row.id, Number(row.version))

/**
 * The API's view of a stored status for one reader at a time, and its tag, mapped once;
 * `subscribers`: its subscriber count when the reader may see its user list, else null.
 */
const tagged = (
  row: StatusRow,
  readerId: string,
  nowMs: number,
  subscribers: number | null,
): TaggedStatus => ({
  status: toStatus(row, readerId, nowMs, subscribers),
  etag: statusEtag(row),
})

/**
 * Whether someone with this role on the status (or none) may see its user list, and so its
 * `subscriberCount` (docs/api.md#the-status-object): per `accessTypeUserList`, `public`
 * everyone who sees the status, `private` users with a role on it, `owner` the owner.
 */
export function maySeeUserList(row: StatusRow, role: string | null): boolean {
  if (role === 'owner') return true
  if (row.access_type_user_list === 'public') return true
  return row.access_type_user_list === 'private' && role !== null
}

/** The status's `subscriberCount` for a reader with this role: null when they may not see it. */
export const subscriberCountFor = async (
  db: Db,
  row: StatusRow,
  role: string | null,
): Promise<number | null> => (maySeeUserList(row, role) ? countSubscribers(db, row.id) : null)

/** The time by the service's clock (staleness is judged by it). */
const nowOf = (deps: ServiceDeps): number => (deps.clock ?? systemClock).now()
const clockIso = (deps: ServiceDeps): string => new Date(nowOf(deps)).toISOString()

/** Throws 412 unless the preconditions hold for the current state (null: no status yet). */
function assertPreconditions(current: StatusRow | null, options: WriteOptions): void {
  if (options.ifMatch === undefined && options.ifNoneMatch === undefined) return
  const tag = current === null ? null : statusEtag(current)
  if (options.ifMatch !== undefined && !etagMatches(options.ifMatch, tag))
    throw preconditionFailed()
  if (options.ifNoneMatch !== undefined && etagMatches(options.ifNoneMatch, tag, true))
    throw preconditionFailed()
}

/** Defaults of a status created by key (docs/api.md#the-status-object). */
export const STATUS_DEFAULTS = {
  type: 'text',
  accessType: 'private',
  description: '',
  colorNo: 1,
  accessTypeUserList: 'owner',
  accessTypeHistory: 'private',
} as const

/**
 * Maps a stored row to the API's Status object as `readerId` may read it; the one place names
 * change case. The status key is the owner's own name for the status: null for everyone else
 * (docs/api.md#the-status-object).
 */
export function toStatus(
  row: StatusRow,
  readerId: string,
  nowMs: number = Date.now(),
  subscriberCount: number | null = null,
): Status {
  return {
    id: row.id,
    shareId: row.share_id,
    statusKey: row.owner_id === readerId ? row.status_key : null,
    name: row.name,
    type: row.type as 'text',
    value: row.value,
    accessType: row.access_type as AccessType,
    description: row.description,
    colorNo: row.color_no,
    accessTypeUserList: row.access_type_user_list as AccessLevel,
    accessTypeHistory: row.access_type_history as AccessLevel,
    listed: Number(row.listed) === 1,
    palette: parsePalette(row.palette),
    // computed from the clock at read time, so a read is right before the detector runs
    ...staleFieldsOf(row, nowMs),
    changeCount: Number(row.change_count),
    subscriberCount,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    valueUpdatedAt: row.value_updated_at,
    ...endFieldsOf(row),
  }
}

const normaliseLevel = (level: string): string => (level === 'owners' ? 'owner' : level)

function toRowChanges(input: StatusInput, now: string): StatusRowUpdate {
  const changes: StatusRowUpdate = { updated_at: now }
  if (input.name !== undefined) changes.name = input.name
  if (input.type !== undefined) changes.type = input.type
  if (input.value !== undefined) {
    changes.value = input.value
    changes.value_updated_at = now
  }
  if (input.accessType !== undefined) changes.access_type = input.accessType
  if (input.description !== undefined) changes.description = input.description
  if (input.colorNo !== undefined) changes.color_no = input.colorNo
  if (input.accessTypeUserList !== undefined)
    changes.access_type_user_list = normaliseLevel(input.accessTypeUserList)
  if (input.accessTypeHistory !== undefined) changes.access_type_history = input.accessTypeHistory
  if (input.listed !== undefined) changes.listed = input.listed ? 1 : 0
  if (input.palette !== undefined) changes.palette = storedPalette(input.palette)
  return changes
}

/**
 * The colour a write leaves (docs/app.md#value-palette): an explicit `colorNo` wins; else a
 * value in the palette (the one sent with the write, or the stored one) takes the palette's
 * colour; else undefined: the colour stays. Applied after every scope and role check, which
 * judge only the fields sent: the colour the palette implies is the owner's setting at work,
 * not a settings change by the writer (an updater or a `status:value` key may cause it).
 */
function impliedColor(input: StatusInput, storedPaletteText: string | null): number | undefined {
  if (input.colorNo !== undefined || input.value === undefined) return undefined
  const palette =
    input.palette !== undefined ? (input.palette ?? []) : parsePalette(storedPaletteText)
  return paletteColor(palette, input.value)
}

/**
 * A name as search compares it (docs/accounts.md#discovery): compatibility-normalised and in
 * lower case, by the application, so both engines find the same statuses (search.ts folds
 * the query the same way).
 */
export const searchableName = (name: string): string => name.normalize('NFKC').toLowerCase()

/**
 * Normalised input: the alias `owners` is `owner` before any rule looks at it. Also checks
 * what the schema cannot say (a palette's values unique), before any write begins.
 */
function normaliseInput(input: StatusInput): StatusInput {
  assertUniquePalette(input.palette)
  return input.accessTypeUserList === 'owners' ? { ...input, accessTypeUserList: 'owner' } : input
}

/**
 * The row an update leaves (docs/api.md#the-status-object): the fields sent, the colour the
 * palette implies, the silence re-timed, the search name; the version moves on every update,
 * the change counter on a value write (a value equal to the stored one included). `clockNow`
 * is the service's clock, by which silences are timed (the same clock as `now` but in tests,
 * which move it by hand).
 */
function updatedRow(
  status: StatusRow,
  input: StatusInput,
  now: string,
  clockNow: string,
): StatusRow {
  const valueChanged = input.value !== undefined
  const changes = toRowChanges(input, now)
  const color = impliedColor(input, status.palette)
  if (color !== undefined) changes.color_no = color
  Object.assign(changes, staleChanges(status, input.staleAfter, valueChanged, clockNow))
  // note: a value write (the hot path) leaves the search name alone; a status stored before
  // search came gets one when it is renamed or listed
  if (input.name !== undefined || input.listed !== undefined)
    changes.name_search = searchableName(input.name ?? status.name)
  return {
    ...status,
    ...(changes as Partial<StatusRow>),
    version: Number(status.version) + 1,
    change_count: Number(status.change_count) + (valueChanged ? 1 : 0),
  }
}

/** What one update writes, computed from the row it read: what the engine stores. */
interface UpdatePlan {
  /** The row the update was planned on. */
  read: StatusRow
  written: Written
  /** The value's history row (a value write). */
  history?: NewHistoryRow
  /** History before this time goes (the owner's retention; a value write); null: kept. */
  cutoff: string | null
  /** The `status.changed` event (a value write on a status with a notification rule). */
  event?: OutboxEventInsert
  options: WriteOptions
}

/**
 * Checks an update of `status`, a row read for writing in this transaction, by `caller`, and
 * computes what it writes. A value equal to the stored one is still an update: the counter
 * moves and a history row is written. `notified`: someone has a notification rule on the
 * status.
 */
async function planUpdate(
  tx: Db,
  deps: ServiceDeps,
  caller: Caller,
  status: StatusRow,
  input: StatusInput,
  options: WriteOptions,
  notified: boolean,
  subscribers: number,
  via: 'schedule' | null = null,
): Promise<UpdatePlan> {
  const role = await roleOn(tx, status, caller.userId)
  assertVisible(status, role, caller.limits)
  assertWriteScopes(caller.limits, { kind: 'update', fields: Object.keys(input) })
  assertMayChange(role, input)
  assertPreconditions(status, options)
  assertPlanAllows(planOf(deps.plans, caller.plan), input, {
    accessTypeUserList: status.access_type_user_list,
    accessTypeHistory: status.access_type_history,
  })
  const now = nowIso()
  const ends = endChanges(status, input, caller.userId, nowOf(deps))
  const row = { ...updatedRow(status, input, now, clockIso(deps)), ...ends }
  const written: Written = {
    row,
    ...tagged(row, caller.userId, nowOf(deps), maySeeUserList(row, role) ? subscribers : null),
    created: false,
  }
  if (input.value === undefined) return { read: status, written, cutoff: null, options }
  // retention follows the owner's plan; an updater's plan does not matter
  const ownerPlan =
    role === 'owner' ? planOf(deps.plans, caller.plan) : await ownerPlanOf(tx, deps.plans, row)
  return {
    read: status,
    written,
    options,
    history: {
      status_id: row.id,
      change_no: Number(row.change_count),
      value: row.value as string,
      at: now,
      by_user_id: caller.userId,
      by_key_id: caller.keyId ?? null,
      via,
    },
    cutoff: retentionCutoff(ownerPlan),
    // committed with the write, so an acknowledged update's notification survives a crash
    // (docs/notifications.md#rules): on every value write on a status with a rule, the same
    // value again included; none on a status without one (nobody would be notified)
    // `by`: who the change is made for (a timed change: the user who set it), for byOthers
    ...(notified && {
      event: statusChangedRow(notifiedStatus(deps, row, status.value), now, caller.userId),
    }),
  }
}

/**
 * Stores the plans of one transaction, a few statements for all of them: the statuses' new
 * rows, the history rows, history past retention, the outbox rows (with `liveRelay`, a
 * `live.status` row for each write that records no status event: announcedWrite says why),
 * then each write's own hook (an idempotent response).
 */
async function writePlans(
  tx: Db,
  deps: ServiceDeps,
  plans: readonly UpdatePlan[],
  liveRelay: boolean,
): Promise<void> {
  // a status several plans changed: its last row holds every change
  const rows = new Map(plans.map((plan) => [plan.written.row.id, plan.written.row]))
  const columns = new Set<keyof StatusRow>()
  for (const { written, read } of plans)
    for (const column of Object.keys(written.row) as (keyof StatusRow)[])
      if (written.row[column] !== read[column]) columns.add(column)
  await writeStatusRows(tx, [...rows.values()], [...columns])
  await insertHistoryRows(
    tx,
    plans.flatMap((plan) => (plan.history ? [plan.history] : [])),
  )
  const pruned = new Map<string, string>()
  for (const plan of plans)
    if (plan.history && plan.cutoff !== null) pruned.set(plan.written.row.id, plan.cutoff)
  await pruneHistories(
    tx,
    // the entry that set the current value always stays
    [...pruned].map(([statusId, cutoff]) => ({
      statusId,
      cutoff,
      keepChangeNo: Number((rows.get(statusId) as StatusRow).change_count),
    })),
  )
  const at = clockIso(deps)
  await recordOutboxRows(
    tx,
    plans.flatMap((plan) =>
      plan.event ? [plan.event] : liveRelay ? [liveChangeRow(changed(plan.written.row), at)] : [],
    ),
  )
  for (const plan of plans) await plan.options.onWrite?.(tx, plan.written)
}

/**
 * Applies an update to a status read for writing in this transaction, alone (a create by key
 * that found the status created meanwhile): announcedWrite records its live change.
 */
async function applyUpdate(
  tx: Db,
  deps: ServiceDeps,
  caller: Caller,
  status: StatusRow,
  input: StatusInput,
  options: WriteOptions,
): Promise<Written> {
  const notified = (await statusesNotified(tx, [status.id])).has(status.id)
  const subscribers = await countSubscribers(tx, status.id)
  const plan = await planUpdate(tx, deps, caller, status, input, options, notified, subscribers)
  await writePlans(tx, deps, [plan], false)
  return plan.written
}

/** An update of one status, by id or by its owner's key, waiting for its batch. */
interface UpdateUnit {
  caller: Caller
  target: { id: string } | { key: string }
  input: StatusInput
  options: WriteOptions
}

/**
 * The updates of one batch in one transaction: their rows read (and locked) in one
 * statement, each checked and planned in turn (a later update of a status sees the earlier
 * one's row), then stored together (writePlans). An update the rules refuse fails alone and
 * writes nothing. By key, a status that does not exist is undefined: the caller creates it.
 */
async function updatesIn(
  tx: Db,
  deps: ServiceDeps,
  units: readonly UpdateUnit[],
): Promise<Settled<Written | undefined>[]> {
  const ids = units.flatMap((unit) => ('id' in unit.target ? [unit.target.id] : []))
  const keys = units.flatMap((unit) =>
    'key' in unit.target ? [{ ownerId: unit.caller.userId, key: unit.target.key }] : [],
  )
  // whether anyone has a notification rule on each status, read with the rows
  const read = await findStatusesForWrite(tx, ids, keys, notificationRuleExists)
  const latest = new Map(read.map(({ row }) => [row.id, row]))
  const byKey = new Map(read.map(({ row }) => [`${row.owner_id}\n${row.status_key}`, row.id]))
  const notified = new Set(read.flatMap(({ row, flagged }) => (flagged ? [row.id] : [])))
  const subscribers = new Map(read.map(({ row, subscribers }) => [row.id, subscribers]))
  const plans: UpdatePlan[] = []
  const outcomes: Settled<Written | undefined>[] = []
  for (const { caller, target, input, options } of units) {
    try {
      const id = 'id' in target ? target.id : byKey.get(`${caller.userId}\n${target.key}`)
      const current = id === undefined ? undefined : latest.get(id)
      if ('key' in target) {
        // a confined key updates one of its statuses, or is told it reaches no status by this key
        if (caller.limits?.statusIds != null)
          assertOwnKeyReached(current, target.key, caller.limits)
        if (current === undefined) {
          outcomes.push({ ok: true, value: undefined })
          continue
        }
      } else if (current === undefined) throw notFound('Status not found')
      const plan = await planUpdate(
        tx,
        deps,
        caller,
        current,
        input,
        options,
        notified.has(current.id),
        subscribers.get(current.id) ?? 0,
      )
      latest.set(current.id, plan.written.row)
      plans.push(plan)
      outcomes.push({ ok: true, value: plan.written })
    } catch (error) {
      outcomes.push({ ok: false, error })
    }
  }
  await writePlans(tx, deps, plans, deps.events?.relayedByOutbox === true)
  return outcomes
}

/**
 * Runs a batch of updates in one transaction and announces each change once it committed.
 * Should a statement fail (a value the engine cannot store, a deadlock), nothing was
 * written and each update runs again alone, so that it fails alone; a commit that failed
 * fails them all.
 */
async function runUpdates(
  deps: ServiceDeps,
  units: UpdateUnit[],
): Promise<Settled<Written | undefined>[]> {
  let planned = false
  let outcomes: Settled<Written | undefined>[]
  try {
    outcomes = await writerOf(deps).run(async (tx) => {
      const settled = await updatesIn(tx, deps, units)
      planned = true
      return settled
    })
  } catch (error) {
    if (planned || units.length === 1) return units.map(() => ({ ok: false, error }))
    return (await Promise.all(units.map((unit) => runUpdates(deps, [unit])))).flat()
  }
  for (const outcome of outcomes) {
    if (!outcome.ok || outcome.value === undefined) continue
    const change = changed(outcome.value.row)
    deps.committed?.(change)
    await announceCommitted(deps.events, change)
  }
  return outcomes
}

/** A value the timed worker writes (src/modules/timed): an end, a schedule's fire. */
export interface TimedWrite {
  statusId: string
  /** The user the change is made for: who set the end or the schedule. */
  userId: string
  value: string
  /** The colour written with the value; absent: as a value write without one. */
  colorNo?: number
}

/**
 * Writes timed values in the caller's transaction, each as an ordinary value update by its
 * user (the same rules, history, `status.changed` event and live relay as PATCH), marked
 * `via: 'schedule'` in history. A write the rules now refuse (its user lost their role, the
 * status or the user is gone) is dropped. Returns the changes to announce once the
 * transaction has committed (announceTimedWrites).
 */
export async function applyTimedWrites(
  tx: Db,
  deps: ServiceDeps,
  writes: readonly TimedWrite[],
): Promise<StatusChange[]> {
  if (writes.length === 0) return []
  const ids = [...new Set(writes.map((w) => w.statusId))]
  const read = await findStatusesForWrite(tx, ids, [], notificationRuleExists)
  const latest = new Map(read.map(({ row }) => [row.id, row]))
  const notified = new Set(read.flatMap(({ row, flagged }) => (flagged ? [row.id] : [])))
  const subscribers = new Map(read.map(({ row, subscribers }) => [row.id, subscribers]))
  const planOfUser = await userPlans(tx, [...new Set(writes.map((w) => w.userId))])
  const plans: UpdatePlan[] = []
  for (const write of writes) {
    const current = latest.get(write.statusId)
    const plan = planOfUser.get(write.userId)
    if (current === undefined || plan === undefined) continue
    const input: StatusInput = {
      value: write.value,
      ...(write.colorNo !== undefined && { colorNo: write.colorNo }),
    }
    try {
      const caller: Caller = { userId: write.userId, plan }
      const planned = await planUpdate(
        tx,
        deps,
        caller,
        current,
        input,
        {},
        notified.has(current.id),
        subscribers.get(current.id) ?? 0,
        'schedule',
      )
      latest.set(current.id, planned.written.row)
      plans.push(planned)
    } catch (error) {
      // refused by the rules: dropped, as a request would be refused
      if (!(error instanceof ApiError)) throw error
    }
  }
  await writePlans(tx, deps, plans, deps.events?.relayedByOutbox === true)
  return [...latest.values()].filter((row) => plans.some((p) => p.written.row === row)).map(changed)
}

/** After applyTimedWrites committed: this instance's caches and live streams hear of it. */
export async function announceTimedWrites(
  deps: ServiceDeps,
  changes: readonly StatusChange[],
): Promise<void> {
  for (const change of changes) {
    deps.committed?.(change)
    await announceCommitted(deps.events, change)
  }
}

// Updates that arrive together share a transaction and its statements
// (docs/postgres.md#how-a-write-reaches-postgresql): one batcher per service.
const updateBatchers = new WeakMap<
  ServiceDeps,
  (unit: UpdateUnit) => Promise<Written | undefined>
>()

/** Updates a status in the next batch of `deps`'s updates. */
function batchedUpdate(deps: ServiceDeps, unit: UpdateUnit): Promise<Written | undefined> {
  let update = updateBatchers.get(deps)
  if (update === undefined) {
    update = turnBatcher((units: UpdateUnit[]) => runUpdates(deps, units), { concurrency: 4 })
    updateBatchers.set(deps, update)
  }
  return update(unit)
}

/** The status as its notifications carry it (docs/notifications.md#payloads). */
export const notifiedStatus = (
  deps: Pick<ServiceDeps, 'linkBase'>,
  row: StatusRow,
  previousValue: string | null,
): NotifiedStatus => ({
  id: row.id,
  shareId: row.share_id,
  name: row.name,
  value: row.value,
  previousValue,
  colorNo: row.color_no,
  changeCount: Number(row.change_count),
  url: `${deps.linkBase?.() ?? ''}/s/${row.share_id}`,
})

/** Records a created status's `status.changed` event, made by `by` (see planUpdate). */
const recordChange = async (
  tx: Db,
  deps: ServiceDeps,
  row: StatusRow,
  previousValue: string | null,
  at: string,
  by: string,
): Promise<void> => {
  await recordStatusEvent(tx, STATUS_CHANGED, notifiedStatus(deps, row, previousValue), at, by)
}

/** A write's result, with the row it left for the live-update event. */
interface Written extends WriteResult {
  row: StatusRow
}

/** PATCH /v1/status/:statusId — partial update by the service's id. */
export async function updateStatusById(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  rawInput: StatusInput,
  options: WriteOptions = {},
): Promise<TaggedStatus> {
  const input = normaliseInput(rawInput)
  const written = await batchedUpdate(deps, { caller, target: { id: statusId }, input, options })
  if (written === undefined) throw notFound('Status not found')
  return { status: written.status, etag: written.etag }
}

/** The change live streams hear of a write (the status's new version). */
const changed = (row: StatusRow): StatusChange => ({
  statusId: row.id,
  version: Number(row.version),
  kind: 'status',
})

/** The change of a delete: the version moves once more, so the event id still grows. */
const deleted = (row: StatusRow): StatusChange => ({
  statusId: row.id,
  version: Number(row.version) + 1,
  kind: 'deleted',
})

/** Throws 400 invalidStatusKey unless the key has the documented format. */
export function assertStatusKey(key: string): void {
  if (!STATUS_KEY_PATTERN.test(key)) throw invalidStatusKey()
}

const codePoints = (text: string): number => [...text].length

/** A status key doubles as the default name when it fits a name's length. */
function defaultName(key: string): string {
  const length = codePoints(key)
  if (length >= 3 && length <= 42) return key
  throw validationError(
    [{ field: 'name', message: 'is required when the status key is not 3 to 42 characters long' }],
    'Request body is invalid',
  )
}

// Share ids have 40 bits: a clash is rare but possible, so creation retries a few times.
const CREATE_ATTEMPTS = 5

/**
 * POST /v1/status-keys/:statusKey — updates the caller's status with this key, or creates
 * it. Concurrent creates of one key yield one status: the losers update it.
 */
export async function setStatusByKey(
  deps: ServiceDeps,
  caller: Caller,
  key: string,
  rawInput: StatusInput,
  options: WriteOptions = {},
): Promise<WriteResult> {
  assertStatusKey(key)
  const input = normaliseInput(rawInput)
  const updated = await batchedUpdate(deps, { caller, target: { key }, input, options })
  if (updated !== undefined) return { status: updated.status, etag: updated.etag, created: false }
  const { status, etag, created } = await announcedWrite(
    deps,
    async (tx): Promise<Written> => {
      for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
        const existing = await findStatusByKeyForWrite(tx, caller.userId, key)
        // a confined key updates one of its statuses, or is told it reaches no status by this key
        if (caller.limits?.statusIds != null) assertOwnKeyReached(existing, key, caller.limits)
        if (existing) return applyUpdate(tx, deps, caller, existing, input, options)
        assertMayCreate(caller, input)
        assertPreconditions(null, options)
        const plan = planOf(deps.plans, caller.plan)
        const name = input.name ?? defaultName(key)
        assertPlanAllows(plan, input)
        // one owner's creates take turns, so concurrent ones cannot all pass the plan's limit
        await lockForTransaction(tx, `statusd:create:${caller.userId}`)
        // created by a request this one waited for (PostgreSQL): update it rather than count it
        // against the limit (402), as docs/api.md#set-a-status-by-key-create-or-update says
        if (await findStatusByKey(tx, caller.userId, key)) continue
        assertUnderStatusLimit(plan, await countOwnedStatuses(tx, caller.userId))
        const ends = endChanges(null, input, caller.userId, nowOf(deps))
        const inserted = await insertStatusUnlessKeyTaken(tx, {
          ...newStatusRow(caller, key, name, input, clockIso(deps)),
          ...ends,
        })
        if (!inserted) continue // the key was taken meanwhile, or the share id clashed: look again
        if (inserted.value !== null) {
          await insertHistory(tx, {
            status_id: inserted.id,
            change_no: 1,
            value: inserted.value,
            at: inserted.created_at,
            by_user_id: caller.userId,
            by_key_id: caller.keyId ?? null,
          })
          await recordChange(tx, deps, inserted, null, inserted.created_at, caller.userId)
        }
        // made after the first value's event: the creator's own first value tells no one
        if (caller.session === true)
          await turnOnCreatorRule(
            tx,
            inserted.id,
            caller.userId,
            inserted.created_at,
            notificationRulesOf(plan),
          )
        const written: Written = {
          row: inserted,
          // a status just made has no subscribers
          ...tagged(inserted, caller.userId, nowOf(deps), 0),
          created: true,
        }
        await options.onWrite?.(tx, written)
        return written
      }
      throw new Error(`could not create status after ${CREATE_ATTEMPTS} attempts`)
    },
    (result) => changed(result.row),
  )
  return { status, etag, created }
}

/**
 * Throws 403 insufficientScope unless the caller's API key may create a status: it needs
 * `status:write` (and `status:manage` for access settings). A key confined to some statuses
 * creates none: it is told so before (assertOwnKeyReached).
 */
function assertMayCreate(caller: Caller, input: StatusInput): void {
  assertWriteScopes(caller.limits, { kind: 'create', fields: Object.keys(input) })
}

/** A new status's row; `clockNow` starts its first silence (docs/notifications.md#staleness). */
function newStatusRow(
  caller: Caller,
  key: string,
  name: string,
  input: StatusInput,
  clockNow: string,
): StatusRow {
  const now = creationIso()
  const hasValue = input.value !== undefined
  return {
    id: newId(),
    share_id: newShareId(),
    owner_id: caller.userId,
    status_key: key,
    name,
    type: input.type ?? STATUS_DEFAULTS.type,
    value: input.value ?? null,
    access_type: input.accessType ?? STATUS_DEFAULTS.accessType,
    description: input.description ?? STATUS_DEFAULTS.description,
    color_no: input.colorNo ?? impliedColor(input, null) ?? STATUS_DEFAULTS.colorNo,
    access_type_user_list: input.accessTypeUserList ?? STATUS_DEFAULTS.accessTypeUserList,
    access_type_history: input.accessTypeHistory ?? STATUS_DEFAULTS.accessTypeHistory,
    change_count: hasValue ? 1 : 0,
    created_at: now,
    updated_at: now,
    value_updated_at: hasValue ? now : null,
    version: 1,
    listed: input.listed ? 1 : 0,
    name_search: searchableName(name),
    palette: input.palette === undefined ? null : storedPalette(input.palette),
    stale_after: input.staleAfter ?? null,
    // a silence starts at creation, value or not (docs/notifications.md#staleness)
    stale_at: staleAtOf(clockNow, input.staleAfter ?? null),
    stale_notified_at: null,
    value_until: null,
    value_after: null,
    value_until_by: null,
  }
}

/** GET /v1/status/:statusId — anyone who may see the status. */
export async function getStatusById(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
): Promise<TaggedStatus> {
  const status = await findStatusById(deps.db, statusId)
  const role = status ? await roleOn(deps.db, status, caller.userId) : null
  const visible = assertVisible(status, role, caller.limits)
  return tagged(
    visible,
    caller.userId,
    nowOf(deps),
    await subscriberCountFor(deps.db, visible, role),
  )
}

/** GET /v1/status-keys/:statusKey — the caller's own status with this key. */
export async function getStatusByKey(
  deps: ServiceDeps,
  caller: Caller,
  key: string,
): Promise<TaggedStatus> {
  assertStatusKey(key)
  const status = await findStatusByKey(deps.db, caller.userId, key)
  const own = assertOwnKeyReached(status, key, caller.limits)
  return tagged(own, caller.userId, nowOf(deps), await countSubscribers(deps.db, own.id))
}

/**
 * The stored status by id, whoever asks: live updates read it once per change for all their
 * viewers, and check each viewer's access themselves.
 */
export const findStatus = (db: Db, statusId: string): Promise<StatusRow | undefined> =>
  findStatusById(db, statusId)

/** A status and its `subscriberCount`, read in one statement (what a live update reads). */
export const findStatusAndSubscribers = (
  db: Db,
  statusId: string,
): Promise<{ row: StatusRow; subscribers: number } | undefined> =>
  findStatusWithSubscribers(db, statusId)

/**
 * DELETE /v1/status/:statusId — owner only. The status is gone for every reader when this
 * returns; its history goes after, in batches (history-sweep.ts, docs/api.md#delete-a-status).
 */
export async function deleteStatusById(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  options: Pick<WriteOptions, 'ifMatch'> = {},
): Promise<void> {
  await announcedWrite(
    deps,
    async (tx) => {
      const status = await findStatusByIdForWrite(tx, statusId)
      const role = status ? await roleOn(tx, status, caller.userId) : null
      const visible = assertVisible(status, role, caller.limits)
      assertWriteScopes(caller.limits, { kind: 'delete' })
      assertMayChange(role, 'delete')
      assertPreconditions(visible, options)
      if (!(await deleteStatusRow(tx, statusId, nowIso()))) throw notFound('Status not found')
      return visible
    },
    deleted,
  )
  deps.historySweep?.kick()
}

/**
 * Deletes the statuses a user owns, every one or the first `limit`, in the caller's
 * transaction (an account deleted, docs/accounts.md#delete-your-account); their history goes
 * after, as for one deleted status. The changes, for `announceDeletedStatuses` once the
 * transaction has committed.
 */
export async function deleteOwnedStatusesIn(
  tx: Db,
  deps: Pick<ServiceDeps, 'events'>,
  ownerId: string,
  limit?: number,
): Promise<StatusChange[]> {
  const at = nowIso()
  const owned = await ownedStatusesForWrite(tx, ownerId, limit)
  const gone = new Set(
    await deleteStatusRows(
      tx,
      owned.map((s) => s.id),
      at,
    ),
  )
  const changes = owned.filter((s) => gone.has(s.id)).map(deleted)
  // the outbox backs the NOTIFY up for the other instances, as for one deleted status
  if (deps.events?.relayedByOutbox && changes.length > 0)
    await recordOutboxRows(
      tx,
      changes.map((change) => liveChangeRow(change, at)),
    )
  return changes
}

/** After `deleteOwnedStatusesIn` commits: streams hear the statuses are gone; their history goes. */
export async function announceDeletedStatuses(
  deps: ServiceDeps,
  changes: readonly StatusChange[],
): Promise<void> {
  for (const change of changes) {
    deps.committed?.(change)
    await announceCommitted(deps.events, change)
  }
  if (changes.length > 0) deps.historySweep?.kick()
}

/** DELETE /v1/status-keys/:statusKey — the caller's own status with this key. */
export async function deleteStatusByKey(
  deps: ServiceDeps,
  caller: Caller,
  key: string,
  options: Pick<WriteOptions, 'ifMatch'> = {},
): Promise<void> {
  assertStatusKey(key)
  await announcedWrite(
    deps,
    async (tx) => {
      const status = assertOwnKeyReached(
        await findStatusByKeyForWrite(tx, caller.userId, key),
        key,
        caller.limits,
      )
      assertWriteScopes(caller.limits, { kind: 'delete' })
      assertPreconditions(status, options)
      if (!(await deleteStatusRow(tx, status.id, nowIso()))) throw notFound('Status not found')
      return status
    },
    deleted,
  )
  deps.historySweep?.kick()
}

/**
 * GET /v1/user/status — the caller's statuses in creation order; all of them, or a page
 * with the cursor of the next one (null on the last page).
 */
export async function listOwned(
  deps: ServiceDeps,
  caller: Caller,
  page: { limit?: number; cursor?: string },
): Promise<Page<StatusListEntry>> {
  const after = page.cursor === undefined ? undefined : decodePosition(page.cursor)
  // one row more than asked tells whether another page follows
  const limit = page.limit === undefined ? undefined : page.limit + 1
  // a key confined to some statuses lists only those (docs/accounts.md#scoped-keys)
  const among = caller.limits?.statusIds ?? undefined
  const rows = await listOwnedStatuses(deps.db, caller.userId, { limit, after, among })
  return toPage(
    rows,
    page.limit,
    (r) => [r.created_at, r.id],
    (r) => ({ statusId: r.id, statusKey: r.status_key, shareId: r.share_id, name: r.name }),
  )
}
