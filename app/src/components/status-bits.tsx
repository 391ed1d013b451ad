import { useId, useState } from 'preact/hooks'
import { colorOf } from '../../../src/web/palette.ts'
import { api, apiPath } from '../api.ts'
import { t } from '../i18n.ts'
import { publish } from '../live.ts'
import { clockTime, fullTime, nextClockTime, now, relativeTime } from '../time.ts'
import type { Staleness, Status } from '../types.ts'
import { Rich } from './rich.tsx'

// Pieces the board and the status screen share: a value in its colour, when it last
// changed, the stale mark, and the palette's one-tap buttons (docs/app.md#the-board).

/** The value in its colour (text on colour, never colour alone). */
export function ValueChip(props: { value: string | null; colorNo: number; class?: string }) {
  return (
    <span
      class={`value-chip ${props.class ?? ''}`}
      style={{ '--status-color': colorOf(props.colorNo) }}
    >
      {props.value ?? t('app.statusBits.noValue')}
    </span>
  )
}

/** "5 min ago", refreshed with the app's clock; the exact time as its title. */
export function LastChange(props: { at: string | null }) {
  if (!props.at) return <span class="muted">{t('app.statusBits.neverSet')}</span>
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
    <span
      class="stale-mark"
      title={staleSince ? t('app.statusBits.staleSince', { at: fullTime(staleSince) }) : undefined}
    >
      {t('app.statusBits.stale')}
    </span>
  )
}

/** "Then FREE at 14:45": the value's pending end, when it has one. */
export function PendingEnd(props: { status: Status }) {
  const { valueUntil, valueAfter } = props.status
  if (!valueUntil) return null
  const at = (
    <time dateTime={valueUntil} title={fullTime(valueUntil)}>
      {clockTime(valueUntil, now.value)}
    </time>
  )
  return (
    <p class="value-end">
      <Rich
        text={valueAfter ? t('app.statusBits.then') : t('app.statusBits.ends')}
        parts={{ value: () => <strong>{valueAfter}</strong>, at: () => at }}
      />
    </p>
  )
}

/** How long a tapped value lasts: `valueUntil` as the API takes it (docs/app.md#values-that-end). */
const HOW_LONG = [
  { key: 'changed', label: () => t('app.statusBits.howLong.changed'), until: null },
  { key: '15m', label: () => t('app.statusBits.howLong.15m'), until: 'PT15M' },
  { key: '1h', label: () => t('app.statusBits.howLong.1h'), until: 'PT1H' },
  { key: 'at', label: () => t('app.statusBits.howLong.at'), until: null },
] as const
type HowLong = (typeof HOW_LONG)[number]['key']

/**
 * The palette as buttons: one tap sets that value (its colour follows, the API applies it),
 * until changed or for as long as chosen beside them. Only for who may set the value; the
 * current value's button is pressed.
 */
export function ValueButtons(props: { status: Status; label: string }) {
  const { status } = props
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [howLong, setHowLong] = useState<HowLong>('changed')
  const [until, setUntil] = useState('')
  const id = useId()
  if (status.palette.length === 0) return null
  const set = async (value: string) => {
    let valueUntil: string | undefined
    if (howLong === 'at') {
      if (!/^\d{2}:\d{2}$/.test(until)) {
        setError(t('app.statusBits.chooseTime'))
        return
      }
      valueUntil = nextClockTime(until)
    } else valueUntil = HOW_LONG.find((h) => h.key === howLong)?.until ?? undefined
    setBusy(value)
    setError(null)
    try {
      // an end already pending keeps the value it returns to; else the value before this tap
      const valueAfter = valueUntil !== undefined ? status.valueAfter : null
      const body = {
        value,
        ...(valueUntil !== undefined && { valueUntil }),
        ...(valueAfter && { valueAfter }),
      }
      publish(await api<Status>('PATCH', apiPath`/v1/status/${status.id}`, { body }))
      // the next tap is until changed again, unless chosen anew
      setHowLong('changed')
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
      <div class="value-how-long">
        <label for={`${id}-for`}>
          {t('app.statusBits.keepIt')}
          <span class="sr-only"> ({status.name})</span>
        </label>
        <select
          id={`${id}-for`}
          value={howLong}
          onChange={(event) => setHowLong(event.currentTarget.value as HowLong)}
        >
          {HOW_LONG.map((h) => (
            <option key={h.key} value={h.key}>
              {h.label()}
            </option>
          ))}
        </select>
        {howLong === 'at' && (
          <>
            <label for={`${id}-at`} class="sr-only">
              {t('app.statusBits.endsAtLabel')}
            </label>
            <input
              id={`${id}-at`}
              type="time"
              required
              value={until}
              onInput={(event) => setUntil(event.currentTarget.value)}
            />
          </>
        )}
      </div>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}
