import type { StorageErrorKind, WriteRefusal } from './engine.ts'
import { allEngines } from './engines.ts'

/** What one error (not its causes) means, asking every engine: their codes do not overlap. */
function kindOfOne(err: unknown): StorageErrorKind | undefined {
  if (!err || typeof err !== 'object') return undefined
  for (const engine of allEngines()) {
    const kind = engine.classifyError(err as { code?: unknown; message?: unknown })
    if (kind !== undefined) return kind
  }
  return undefined
}

/** True when an error means storage cannot serve right now (→ 503), not a bug (→ 500). */
export function isStorageUnavailable(err: unknown): boolean {
  // note: a connect to several addresses (localhost → ::1 and 127.0.0.1) fails with an
  // AggregateError; a wrapped error keeps the original as its cause
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    if (kindOfOne(e) === 'unavailable') return true
    const nested = (e as { errors?: unknown }).errors
    if (Array.isArray(nested) && nested.some((one) => kindOfOne(one) === 'unavailable')) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}

/**
 * What an error means for storage (engine.ts, StorageErrorKind): unavailable when it or
 * anything it wraps says so, else what the error itself says; undefined for a bug.
 */
export function storageErrorKind(err: unknown): StorageErrorKind | undefined {
  if (isStorageUnavailable(err)) return 'unavailable'
  return kindOfOne(err)
}

/** Why one error (not its causes) says storage refuses writes, asking every engine. */
function refusalOfOne(err: unknown): WriteRefusal | undefined {
  if (!err || typeof err !== 'object') return undefined
  for (const engine of allEngines()) {
    const why = engine.writeRefusal(err as { code?: unknown; message?: unknown })
    if (why !== undefined) return why
  }
  return undefined
}

/**
 * Why an error says storage refuses writes (engine.ts, WriteRefusal), looking through what it
 * wraps as isStorageUnavailable does; undefined for any other error.
 */
export function writeRefusalOf(err: unknown): WriteRefusal | undefined {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    const why = refusalOfOne(e)
    if (why !== undefined) return why
    const nested = (e as { errors?: unknown }).errors
    if (Array.isArray(nested))
      for (const one of nested) {
        const inner = refusalOfOne(one)
        if (inner !== undefined) return inner
      }
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}
