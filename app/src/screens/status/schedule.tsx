import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../../api.ts'
import { ConfirmButton } from '../../components/confirm.tsx'
import { FormError, fieldError } from '../../components/form.tsx'
import { ValueChip } from '../../components/status-bits.tsx'
import type { Schedule, ScheduleInput } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// A status's Schedule tab (docs/app.md#schedule), for its owner: the values it takes at set
// times — cron entries read in a time zone — and the next fires, shown in the viewer's time.

type Entry = ScheduleInput['entries'][number]

/** At most this many entries (docs/api.md#schedules). */
const MAX_ENTRIES = 20

/** The viewer's own time zone, which a new schedule starts from. */
const viewerZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone

/** A fire's moment in the viewer's time and language, with the weekday. */
const FIRE_FORMAT = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
})

const EXAMPLES: [string, string][] = [
  ['0 9 * * 1-5', '09:00 on weekdays'],
  ['30 17 * * 5', '17:30 on Fridays'],
  ['0 0 1 * *', 'midnight on the 1st of each month'],
]

export default function ScheduleTab(props: StatusTabProps) {
  const { status } = props
  const [schedule, setSchedule] = useState<Schedule | null>(null)
  const [loaded, setLoaded] = useState(false)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [timezone, setTimezone] = useState(viewerZone())
  const [entries, setEntries] = useState<Entry[]>([])
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')

  const show = (s: Schedule | null) => {
    const set = s && s.entries.length > 0 ? s : null
    setSchedule(set)
    setTimezone(set?.timezone ?? viewerZone())
    setEntries(set ? set.entries.map((e) => ({ ...e })) : [{ cron: '', value: '' }])
  }
  useEffect(() => {
    api<Schedule>('GET', apiPath`/v1/status/${status.id}/schedule`)
      .then(show, setLoadError)
      .finally(() => setLoaded(true))
  }, [status.id])

  // a fire (or any change) moves the value: the list of next changes is read again
  useEffect(() => {
    if (!schedule) return
    api<Schedule>('GET', apiPath`/v1/status/${status.id}/schedule`).then(
      (read) =>
        setSchedule((before) =>
          before && read.entries.length > 0 ? { ...before, next: read.next } : before,
        ),
      () => {},
    )
  }, [status.id, status.valueUpdatedAt])

  if (loadError) return <FormError error={loadError} />
  if (!loaded) return <p class="loading">Loading…</p>

  const palette = status.palette ?? []
  const colourOf = (value: string) =>
    palette.find((p) => p.value === value)?.colorNo ?? status.colorNo
  const at = (i: number, part: string) => fieldError(error, `entries.${i}.${part}`)
  const whole = fieldError(error, 'entries')
  const zoneError = fieldError(error, 'timezone')
  const set = (i: number, patch: Partial<Entry>) =>
    setEntries(entries.map((e, j) => (j === i ? { ...e, ...patch } : e)))

  return (
    <div class="schedule-tab">
      <p>
        At the times you set here, {status.name} takes a value by itself — as if you set it
        (history, live views and notifications see an ordinary change). A fire ends a value set “for
        a while”.
      </p>
      {schedule && schedule.next.length > 0 && (
        <section aria-labelledby="schedule-next">
          <h2 id="schedule-next">Next changes</h2>
          <p class="hint">In your time ({viewerZone()}).</p>
          <ol class="schedule-next">
            {schedule.next.map((fire) => (
              <li key={fire.at}>
                <time dateTime={fire.at}>{FIRE_FORMAT.format(new Date(fire.at))}</time>{' '}
                <ValueChip value={fire.value} colorNo={colourOf(fire.value)} />
              </li>
            ))}
          </ol>
        </section>
      )}
      <form
        class="schedule-form"
        onSubmit={async (event) => {
          event.preventDefault()
          setBusy(true)
          setError(null)
          setNotice('')
          try {
            const saved = await api<Schedule>('PUT', apiPath`/v1/status/${status.id}/schedule`, {
              body: { timezone: timezone.trim(), entries } satisfies ScheduleInput,
            })
            show(saved)
            setNotice('Schedule saved.')
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <h2>{schedule ? 'Entries' : 'Set a schedule'}</h2>
        <div class="field">
          <label for="schedule-zone">Time zone the times are in</label>
          <input
            id="schedule-zone"
            list="schedule-zones"
            value={timezone}
            autocomplete="off"
            spellcheck={false}
            onInput={(e) => setTimezone(e.currentTarget.value)}
            aria-invalid={zoneError ? 'true' : undefined}
            aria-describedby={zoneError ? 'schedule-zone-error' : undefined}
          />
          <datalist id="schedule-zones">
            {Intl.supportedValuesOf('timeZone').map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          {zoneError && (
            <p class="field-error" id="schedule-zone-error">
              {zoneError}
            </p>
          )}
        </div>
        <p class="hint" id="schedule-cron-hint">
          Each entry’s “when” is a cron expression of 5 fields: minute, hour, day of month, month,
          day of week (0 or 7 Sunday). For example{' '}
          {EXAMPLES.map(([cron, words], i) => (
            <span key={cron}>
              <code>{cron}</code> {words}
              {i < EXAMPLES.length - 1 ? '; ' : '.'}
            </span>
          ))}
        </p>
        {whole && <p class="field-error">{whole}</p>}
        <ol class="palette-rows">
          {entries.map((entry, i) => {
            const n = i + 1
            const cronError = at(i, 'cron')
            const valueError = at(i, 'value')
            return (
              <li key={i} class="palette-row">
                <div class="palette-cells">
                  <label>
                    <span class="sr-only">When, entry {n}</span>
                    <input
                      class="cron"
                      value={entry.cron}
                      placeholder="0 9 * * 1-5"
                      autocomplete="off"
                      spellcheck={false}
                      aria-describedby="schedule-cron-hint"
                      aria-invalid={cronError ? 'true' : undefined}
                      onInput={(e) => set(i, { cron: e.currentTarget.value })}
                    />
                  </label>
                  <span aria-hidden="true">→</span>
                  <label>
                    <span class="sr-only">Value, entry {n}</span>
                    <input
                      value={entry.value}
                      list={palette.length > 0 ? 'schedule-values' : undefined}
                      aria-invalid={valueError ? 'true' : undefined}
                      onInput={(e) => set(i, { value: e.currentTarget.value })}
                    />
                  </label>
                </div>
                <div class="palette-moves">
                  <button
                    type="button"
                    class="button quiet"
                    aria-label={`Remove entry ${n}`}
                    onClick={() => setEntries(entries.filter((_, j) => j !== i))}
                  >
                    Remove
                  </button>
                </div>
                {cronError && (
                  <p class="field-error">
                    Entry {n}, when: {cronError}
                  </p>
                )}
                {valueError && (
                  <p class="field-error">
                    Entry {n}, value: {valueError}
                  </p>
                )}
              </li>
            )
          })}
        </ol>
        {palette.length > 0 && (
          <datalist id="schedule-values">
            {palette.map((p) => (
              <option key={p.value} value={p.value} />
            ))}
          </datalist>
        )}
        <div class="actions">
          <button
            type="button"
            class="button"
            disabled={entries.length >= MAX_ENTRIES}
            onClick={() => setEntries([...entries, { cron: '', value: '' }])}
          >
            Add an entry
          </button>
        </div>
        <FormError error={error instanceof ApiError && error.errors.length > 0 ? null : error} />
        <p class="notice" aria-live="polite">
          {notice}
        </p>
        <button type="submit" class="button primary" disabled={busy || entries.length === 0}>
          Save the schedule
        </button>
      </form>
      {schedule && (
        <div class="danger-zone">
          <ConfirmButton
            label="Remove the schedule"
            title="Remove the schedule?"
            confirmLabel="Remove"
            onConfirm={async () => {
              await api('DELETE', apiPath`/v1/status/${status.id}/schedule`)
              show(null)
              setNotice('The schedule is removed: the value stays as it is.')
            }}
          >
            <p>{status.name} keeps its value; no entry fires any more.</p>
          </ConfirmButton>
        </div>
      )}
    </div>
  )
}
