import { useEffect, useState } from 'preact/hooks'
import { apiPage, apiPath } from '../../api.ts'
import { FormError } from '../../components/form.tsx'
import { ValueChip } from '../../components/status-bits.tsx'
import { fullTime, now, relativeTime } from '../../time.ts'
import type { HistoryEntry, Status } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'
import ValueChart from './value-chart.tsx'

// A status's history (docs/app.md#history-and-chart): the value updates as a timeline,
// newest first, 100 at a time, and a chart of the same entries over time. This tab is its
// own chunk with uPlot in it, so nobody downloads the chart library before opening it.

const PAGE = 100

export default function History({ status }: StatusTabProps) {
  const [entries, setEntries] = useState<HistoryEntry[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(false)

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
      <h2>History</h2>
      <FormError error={error} />
      {entries && entries.length === 0 && <p>No value has been set yet.</p>}
      {entries && entries.length > 0 && (
        <>
          <ValueChart entries={entries} />
          <ol class="timeline" aria-label="Value updates, newest first">
            {entries.map((entry, i) => (
              <li key={`${entry.at}-${i}`} class="timeline-entry">
                <ValueChip value={entry.value} colorNo={colourOf(status, entry.value)} />
                <span>
                  <time dateTime={entry.at} title={fullTime(entry.at)}>
                    {relativeTime(entry.at, now.value)}
                  </time>
                  {entry.by && <span class="muted"> by {entry.by.name}</span>}
                  {entry.via === 'schedule' && <span class="muted"> as scheduled</span>}
                  {entry.via && entry.via !== 'schedule' && (
                    <span class="muted">
                      {entry.via.label === null
                        ? ' with an API key'
                        : ` with the key “${entry.via.label}”`}
                    </span>
                  )}
                </span>
              </li>
            ))}
          </ol>
          {next && (
            <div class="actions">
              <button type="button" class="button" disabled={loading} onClick={more}>
                Show older updates
              </button>
            </div>
          )}
        </>
      )}
      {!entries && !error && (
        <p class="loading" aria-live="polite">
          Loading…
        </p>
      )}
    </>
  )
}

/** A past value's colour: its palette entry's, else the status's own. */
const colourOf = (status: Status, value: string): number =>
  status.palette.find((e) => e.value === value)?.colorNo ?? status.colorNo
