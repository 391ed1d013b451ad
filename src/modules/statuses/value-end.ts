import { fullFormats } from 'ajv-formats/dist/formats.js'
import { end as durationEnd, parse as parseDuration } from 'iso8601-duration'
import type { StatusRow } from '../../db/database.ts'
import { validationError } from '../../lib/errors.ts'
import type { StatusInput } from './statuses.schemas.ts'

// Values that end (docs/api.md#values-that-end): a write may give the value an end
// (`valueUntil`, an instant or an ISO 8601 duration from the write) and the value written
// then (`valueAfter`, by default the value before the write). The row keeps the pending end
// in value_until / value_after / value_until_by; the timed worker (src/modules/timed) writes
// it when it falls due. A later value write without `valueUntil`, or `valueUntil: null`,
// cancels it.

/** The nearest and the farthest an end may be from the write. */
export const VALUE_UNTIL_MIN_MS = 60 * 1000
export const VALUE_UNTIL_MAX_MS = 366 * 24 * 60 * 60 * 1000

const DATE_TIME = fullFormats['date-time'] as { validate: (text: string) => boolean }
const DURATION = fullFormats.duration as RegExp

/** The fields of a write that belong to its value: the value and its end. */
export const VALUE_FIELDS: ReadonlySet<string> = new Set(['value', 'valueUntil', 'valueAfter'])

/** The end columns a write sets. */
type EndColumns = Pick<StatusRow, 'value_until' | 'value_after' | 'value_until_by'>

const NO_END: EndColumns = { value_until: null, value_after: null, value_until_by: null }

const invalid = (field: string, message: string) =>
  validationError([{ field, message }], 'Request body is invalid')

/**
 * The instant `valueUntil` names, as an ISO timestamp: an instant with its offset, or a
 * duration counted from `nowMs`; between 1 minute and 366 days after `nowMs`. Throws 400
 * validationError naming `valueUntil` otherwise.
 */
export function valueUntilAt(text: string, nowMs: number): string {
  let at: number
  if (DURATION.test(text)) at = durationEnd(parseDuration(text), new Date(nowMs)).getTime()
  else if (DATE_TIME.validate(text)) at = Date.parse(text)
  else
    throw invalid(
      'valueUntil',
      'must be an instant with its offset (2026-05-04T18:00:00Z) or an ISO 8601 duration (PT45M)',
    )
  if (!Number.isFinite(at) || at - nowMs < VALUE_UNTIL_MIN_MS || at - nowMs > VALUE_UNTIL_MAX_MS)
    throw invalid('valueUntil', 'must be between 1 minute and 366 days from now')
  return new Date(at).toISOString()
}

/**
 * The end columns a write of `input` by `userId` sets on `current` (null: a status it
 * creates), judged at `nowMs`; {} when it leaves them as they are. Throws 400 before
 * anything is written when the end is invalid.
 */
export function endChanges(
  current: StatusRow | null,
  input: StatusInput,
  userId: string,
  nowMs: number,
): Partial<EndColumns> {
  const { valueUntil, valueAfter } = input
  if (valueAfter !== undefined && (valueUntil === undefined || valueUntil === null))
    throw invalid('valueAfter', 'needs valueUntil in the same write')
  if (valueUntil === null) return NO_END
  if (valueUntil === undefined) {
    // a value written without an end cancels the pending one
    if (input.value !== undefined && current !== null && current.value_until !== null) return NO_END
    return {}
  }
  const until = valueUntilAt(valueUntil, nowMs)
  const after = valueAfter ?? current?.value ?? null
  if (after === null)
    throw invalid('valueAfter', 'is needed: the status has no value before this write')
  return { value_until: until, value_after: after, value_until_by: userId }
}

/** What a reader sees of a row's pending end. */
export const endFieldsOf = (
  row: Pick<StatusRow, 'value_until' | 'value_after'>,
): { valueUntil: string | null; valueAfter: string | null } => ({
  valueUntil: row.value_until,
  valueAfter: row.value_until === null ? null : row.value_after,
})
