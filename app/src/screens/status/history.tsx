import { useCallback, useEffect, useState } from 'preact/hooks'
import { colorOf } from '../../../../src/web/palette.ts'
import { apiPage, apiPath } from '../../api.ts'
import { FormError } from '../../components/form.tsx'
import { ValueChip } from '../../components/status-bits.tsx'
import { t } from '../../i18n.ts'
import { fullTime, now, relativeTime } from '../../time.ts'
import type { HistoryEntry, Status } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'
import { TimeInValues } from './time-in-values.tsx'
import ValueChart from './value-chart.tsx'

// A status's history (docs/app.md#history-and-chart): the value updates as a timeline,
// newest first, 100 at a time, a chart of the same entries over time in the palette's
// colours, and beside it the time in each value over a range. This tab is its own chunk
// with uPlot in it, so nobody downloads the chart library before opening it.

const PAGE = 100

export default function History({ status }: StatusTabProps) {
  const [entries, setEntries] = useState<HistoryEntry[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(false)
  const colourNo = useCallback((value: string) => colourOf(status, value), [status])
  const hex = useCallback((value: string) => colorOf(colourOf(status, value)), [status])

  // a new value (here or elsewhere, live) reloads the newest page
  useEffect(() => {
    let cancelled = false
    apiPage<HistoryEntry>(`${apiPath`/v1/status/${status.id}/history`}?limit=${PAGE}`).then(
      (page) => {
        if (cancelled) return
        setEntries(page.items)
        setNext(page.next)
      },
      (err) => {
        if (!cancelled) setError(err)
      },
    )
    return () => {
      cancelled = true
    }
  }, [status.id, status.changeCount])

  const more = async () => {
    if (!next) return
    setLoading(true)
    try {
      const page = await apiPage<HistoryEntry>(next)
      setEntries((all) => [...(all ?? []), ...page.items])
      setNext(page.next)
    } catch (err) {
      setError(err)
    } finally {
      setLoading(false)
    }
  }

  return (
    <>
      <h2>{t('app.status.history.title')}</h2>
      <FormError error={error} />
      {entries && entries.length === 0 && <p>{t('app.status.history.empty')}</p>}
      {entries && entries.length > 0 && (
        <>
          <div class="history-overview">
            <ValueChart entries={entries} colourOf={hex} />
            <TimeInValues status={status} colourOf={colourNo} />
          </div>
          <ol class="timeline" aria-label={t('app.status.history.timeline')}>
            {entries.map((entry, i) => (
              <li key={`${entry.at}-${i}`} class="timeline-entry">
                <ValueChip value={entry.value} colorNo={colourNo(entry.value)} />
                <span>
                  <time dateTime={entry.at} title={fullTime(entry.at)}>
                    {relativeTime(entry.at, now.value)}
                  </time>
                  {entry.by && (
                    <span class="muted">
                      {' '}
                      {t('app.status.history.by', { name: entry.by.name })}
                    </span>
                  )}
                  {entry.via === 'schedule' && (
                    <span class="muted"> {t('app.status.history.scheduled')}</span>
                  )}
                  {entry.via && entry.via !== 'schedule' && (
                    <span class="muted">
                      {' '}
                      {entry.via.label === null
                        ? t('app.status.history.withKey')
                        : t('app.status.history.withNamedKey', { label: entry.via.label })}
                    </span>
                  )}
                </span>
              </li>
            ))}
          </ol>
          {next && (
            <div class="actions">
              <button type="button" class="button" disabled={loading} onClick={more}>
                {t('app.status.history.older')}
              </button>
            </div>
          )}
        </>
      )}
      {!entries && !error && (
        <p class="loading" aria-live="polite">
          {t('app.status.loading')}
        </p>
      )}
    </>
  )
}

/** A past value's colour: its palette entry's, else the status's own. */
const colourOf = (status: Status, value: string): number =>
  status.palette.find((e) => e.value === value)?.colorNo ?? status.colorNo
