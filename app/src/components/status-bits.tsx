import { useState } from 'preact/hooks'
import { colorOf } from '../../../src/web/palette.ts'
import { api, apiPath } from '../api.ts'
import { publish } from '../live.ts'
import { fullTime, now, relativeTime } from '../time.ts'
import type { Staleness, Status } from '../types.ts'

// Pieces the board and the status screen share: a value in its colour, when it last
// changed, the stale mark, and the palette's one-tap buttons (docs/app.md#the-board).

/** The value in its colour (text on colour, never colour alone). */
export function ValueChip(props: { value: string | null; colorNo: number; class?: string }) {
  return (
    <span
      class={`value-chip ${props.class ?? ''}`}
      style={{ '--status-color': colorOf(props.colorNo) }}
    >
      {props.value ?? 'no value'}
    </span>
  )
}

/** "5 min ago", refreshed with the app's clock; the exact time as its title. */
export function LastChange(props: { at: string | null }) {
  if (!props.at) return <span class="muted">never set</span>
  return (
    <time dateTime={props.at} title={fullTime(props.at)}>
      {relativeTime(props.at, now.value)}
    </time>
  )
}

/** "Stale" when the status has not heard a value for its staleAfter (when the API has it). */
export function StaleMark(props: { status: Status }) {
  const { stale, staleSince } = props.status as Status & Staleness
  if (!stale) return null
  return (
    <span class="stale-mark" title={staleSince ? `Stale since ${fullTime(staleSince)}` : undefined}>
      Stale
    </span>
  )
}

/**
 * The palette as buttons: one tap sets that value (its colour follows, the API applies it).
 * Only for who may set the value; the current value's button is pressed.
 */
export function ValueButtons(props: { status: Status; label: string }) {
  const { status } = props
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  if (status.palette.length === 0) return null
  const set = async (value: string) => {
    setBusy(value)
    setError(null)
    try {
      publish(await api<Status>('PATCH', apiPath`/v1/status/${status.id}`, { body: { value } }))
    } catch (err) {
      setError((err as Error).message)
    } finally {
      setBusy(null)
    }
  }
  return (
    <div class="value-buttons">
      <ul class="value-button-list" aria-label={props.label}>
        {status.palette.map((entry) => (
          <li key={entry.value}>
            <button
              type="button"
              class="value-button"
              style={{ '--status-color': colorOf(entry.colorNo) }}
              aria-pressed={status.value === entry.value ? 'true' : 'false'}
              disabled={busy !== null}
              onClick={() => set(entry.value)}
            >
              {entry.value}
            </button>
          </li>
        ))}
      </ul>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}
