import { useEffect, useState } from 'preact/hooks'
import { colorOf } from '../../../../src/web/palette.ts'
import { api, apiPath } from '../../api.ts'
import { FormError } from '../../components/form.tsx'
import { ValueChip } from '../../components/status-bits.tsx'
import { t } from '../../i18n.ts'
import { intlLocale } from '../../time.ts'
import type { HistoryDurations, Status } from '../../types.ts'

// Time in each value over a range (docs/app.md#time-in-each-value): today, the last 7 or 30
// days, counted from midnight in the viewer's time zone; summed by the server from the whole
// history (docs/api.md#time-in-each-value), so it covers more than the entries on screen.

export const RANGES = [
  { id: 'today', days: 0 },
  { id: '7d', days: 7 },
  { id: '30d', days: 30 },
] as const
type RangeId = (typeof RANGES)[number]['id']

/**
 * The start of a range in the viewer's time zone: today's midnight, or the same time of
 * day that many calendar days ago (a day with a clock change is a day all the same).
 */
export function rangeStart(id: RangeId, now: Date): Date {
  const range = RANGES.find((r) => r.id === id) ?? RANGES[0]
  const start = new Date(now)
  if (range.days === 0) start.setHours(0, 0, 0, 0)
  else start.setDate(start.getDate() - range.days)
  return start
}

/** Each range's name, in the language shown (`lower`: inside a sentence). */
const rangeName = (id: RangeId, lower = false): string =>
  ({
    today: lower
      ? t('app.status.timeInValues.ranges.todayLower')
      : t('app.status.timeInValues.ranges.today'),
    '7d': lower
      ? t('app.status.timeInValues.ranges.days7Lower')
      : t('app.status.timeInValues.ranges.days7'),
    '30d': lower
      ? t('app.status.timeInValues.ranges.days30Lower')
      : t('app.status.timeInValues.ranges.days30'),
  })[id]

const UNITS = ['day', 'hour', 'minute', 'second'] as const

/** The two largest units, in the language shown: "2 days 3 hr", "45 min", "30 sec". */
export function spanText(seconds: number): string {
  const s = Math.round(seconds)
  const amounts = [
    Math.floor(s / 86_400),
    Math.floor((s % 86_400) / 3600),
    Math.floor((s % 3600) / 60),
    s % 60,
  ]
  const unit = (n: number, i: number) =>
    new Intl.NumberFormat(intlLocale(), {
      style: 'unit',
      unit: UNITS[i] as string,
      unitDisplay: 'short',
    }).format(n)
  const first = amounts.findIndex((n) => n > 0)
  if (first < 0) return unit(0, 3)
  const said = amounts
    .map((n, i) => [n, i] as const)
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, i]) => unit(n, i))
  return said.join(' ')
}

/** A share as a whole percentage, "<1 %" for a sliver that is not none. */
const percent = (share: number): string => {
  const format = new Intl.NumberFormat(intlLocale(), { style: 'percent' })
  return share > 0 && share < 0.005 ? `<${format.format(0.01)}` : format.format(share)
}

export function TimeInValues(props: { status: Status; colourOf: (value: string) => number }) {
  const { status } = props
  const [range, setRange] = useState<RangeId>('today')
  // the durations with the range they are of: the list names the range it shows, not the one
  // asked for while its answer is on the way
  const [shown, setShown] = useState<{ range: RangeId; durations: HistoryDurations } | null>(null)
  const durations = shown?.durations ?? null
  const [error, setError] = useState<unknown>(null)

  // a new value (here or elsewhere, live) counts again
  useEffect(() => {
    let cancelled = false
    const from = rangeStart(range, new Date()).toISOString()
    const query = new URLSearchParams({ from }).toString()
    api<HistoryDurations>(
      'GET',
      `${apiPath`/v1/status/${status.id}/history/durations`}?${query}`,
    ).then(
      (body) => {
        if (cancelled) return
        setShown({ range, durations: body })
        setError(null)
      },
      (err) => {
        if (!cancelled) setError(err)
      },
    )
    return () => {
      cancelled = true
    }
  }, [status.id, status.changeCount, range])

  return (
    <section class="time-in-values" aria-labelledby="time-in-values-title">
      <h3 id="time-in-values-title">{t('app.status.timeInValues.title')}</h3>
      <fieldset class="range-choice">
        <legend class="sr-only">{t('app.status.timeInValues.range')}</legend>
        {RANGES.map((r) => (
          <button
            key={r.id}
            type="button"
            class="button"
            aria-pressed={range === r.id}
            onClick={() => setRange(r.id)}
          >
            {rangeName(r.id)}
          </button>
        ))}
      </fieldset>
      <FormError error={error} />
      {durations && durations.values.length === 0 && (
        <p class="muted">{t('app.status.timeInValues.empty')}</p>
      )}
      {durations && durations.values.length > 0 && (
        <>
          <div class="duration-bar" aria-hidden="true">
            {durations.values.map((v) => (
              <span
                key={v.value}
                style={{
                  width: `${v.share * 100}%`,
                  background: colorOf(props.colourOf(v.value)),
                }}
              />
            ))}
          </div>
          <ul
            class="duration-list"
            aria-label={t('app.status.timeInValues.listLabel', {
              range: rangeName(shown?.range ?? range, true),
            })}
          >
            {durations.values.map((v) => (
              <li key={v.value}>
                <ValueChip value={v.value} colorNo={props.colourOf(v.value)} />
                <span>
                  {spanText(v.seconds)} <span class="muted">({percent(v.share)})</span>
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}
