import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../../api.ts'
import { ConfirmButton } from '../../components/confirm.tsx'
import { FormError, fieldError } from '../../components/form.tsx'
import { ValueChip } from '../../components/status-bits.tsx'
import { t } from '../../i18n.ts'
import { intlLocale } from '../../time.ts'
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
const fireTime = (iso: string): string =>
  new Intl.DateTimeFormat(intlLocale(), {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  }).format(new Date(iso))

const examples = (): [string, string][] => [
  ['0 9 * * 1-5', t('app.status.schedule.examples.weekdays')],
  ['30 17 * * 5', t('app.status.schedule.examples.fridays')],
  ['0 0 1 * *', t('app.status.schedule.examples.monthly')],
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
  if (!loaded) return <p class="loading">{t('app.status.loading')}</p>

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
      <p>{t('app.status.schedule.what', { name: status.name })}</p>
      {schedule && schedule.next.length > 0 && (
        <section aria-labelledby="schedule-next">
          <h2 id="schedule-next">{t('app.status.schedule.next')}</h2>
          <p class="hint">{t('app.status.schedule.yourTime', { zone: viewerZone() })}</p>
          <ol class="schedule-next">
            {schedule.next.map((fire) => (
              <li key={fire.at}>
                <time dateTime={fire.at}>{fireTime(fire.at)}</time>{' '}
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
            setNotice(t('app.status.schedule.saved'))
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <h2>{schedule ? t('app.status.schedule.entries') : t('app.status.schedule.set')}</h2>
        <div class="field">
          <label for="schedule-zone">{t('app.status.schedule.zone')}</label>
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
          {t('app.status.schedule.cronHint')}{' '}
          {examples().map(([cron, words], i, all) => (
            <span key={cron}>
              <code>{cron}</code> {words}
              {i < all.length - 1 ? '; ' : '.'}
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
                    <span class="sr-only">{t('app.status.schedule.entry.when', { n })}</span>
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
                    <span class="sr-only">{t('app.status.schedule.entry.value', { n })}</span>
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
                    aria-label={t('app.status.schedule.entry.remove', { n })}
                    onClick={() => setEntries(entries.filter((_, j) => j !== i))}
                  >
                    {t('app.status.schedule.entry.removeShort')}
                  </button>
                </div>
                {cronError && (
                  <p class="field-error">
                    {t('app.status.schedule.entry.whenError', { n, error: cronError })}
                  </p>
                )}
                {valueError && (
                  <p class="field-error">
                    {t('app.status.schedule.entry.valueError', { n, error: valueError })}
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
            {t('app.status.schedule.add')}
          </button>
        </div>
        <FormError error={error instanceof ApiError && error.errors.length > 0 ? null : error} />
        <p class="notice" aria-live="polite">
          {notice}
        </p>
        <button type="submit" class="button primary" disabled={busy || entries.length === 0}>
          {t('app.status.schedule.save')}
        </button>
      </form>
      {schedule && (
        <div class="danger-zone">
          <ConfirmButton
            label={t('app.status.schedule.remove.label')}
            title={t('app.status.schedule.remove.title')}
            confirmLabel={t('app.status.schedule.remove.confirm')}
            onConfirm={async () => {
              await api('DELETE', apiPath`/v1/status/${status.id}/schedule`)
              show(null)
              setNotice(t('app.status.schedule.remove.done'))
            }}
          >
            <p>{t('app.status.schedule.remove.what', { name: status.name })}</p>
          </ConfirmButton>
        </div>
      )}
    </div>
  )
}
