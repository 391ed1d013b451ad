import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../api.ts'
import { Announcer, announce } from '../components/announcer.tsx'
import { FormError } from '../components/form.tsx'
import { publish, subscribe } from '../live.ts'
import { type Role, roleOn } from '../my-statuses.ts'
import { Link } from '../router.tsx'
import type { Status } from '../types.ts'
import NotFound from './not-found.tsx'
import { STATUS_TABS } from './status/tabs.ts'

// A status (docs/app.md#a-status): its frame (name, tabs) around the tab's screen. The
// status stays live (live.ts): a write made elsewhere shows here without a reload.

export default function StatusScreen(props: { params: Record<string, string> }) {
  const id = props.params.id as string
  const tab = props.params.tab ?? ''
  const [status, setStatus] = useState<Status | null>(null)
  const [role, setRole] = useState<Role | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [gone, setGone] = useState<string | null>(null)

  useEffect(() => {
    setStatus(null)
    setGone(null)
    setError(null)
    let cancelled = false
    api<Status>('GET', apiPath`/v1/status/${id}`)
      .then(async (read) => {
        const mine = await roleOn(read)
        if (cancelled) return
        setStatus((live) => live ?? read)
        setRole(mine)
      })
      .catch((err) => {
        if (!cancelled) setError(err)
      })
    let first = true
    const stop = subscribe(id, (event) => {
      if (event.kind === 'status') {
        setStatus((before) => {
          if (!first && before && before.value !== event.status.value)
            announce(`${event.status.name} is now ${event.status.value ?? 'without a value'}.`)
          return event.status
        })
        first = false
      } else
        setGone(
          event.reason === 'deleted'
            ? 'This status was deleted.'
            : 'You may no longer see this status.',
        )
    })
    return () => {
      cancelled = true
      stop()
    }
  }, [id])

  const current = STATUS_TABS.find((t) => t.tab === tab)
  if (!current) return <NotFound />
  if (error instanceof ApiError && error.status === 404) return <NotFound />
  if (!status || !role)
    return (
      <>
        <h1>Status</h1>
        <FormError error={error} />
        {!error && (
          <p class="loading" aria-live="polite">
            Loading…
          </p>
        )}
      </>
    )
  const tabs = STATUS_TABS.filter((t) => !t.shows || t.shows(role, status))
  const Screen = current.component
  const base = `/statuses/${encodeURIComponent(status.id)}`
  return (
    <>
      <p class="breadcrumb">
        <Link href="/">Board</Link>
      </p>
      <h1>{status.name}</h1>
      <Announcer />
      {gone && (
        <p class="form-error" role="alert">
          {gone} <Link href="/">Back to the board</Link>
        </p>
      )}
      <nav aria-label="Status" class="status-tabs">
        <ul>
          {tabs.map((t) => (
            <li key={t.tab}>
              <Link
                href={t.tab ? `${base}/${t.tab}` : base}
                aria-current={t.tab === current.tab ? 'page' : undefined}
              >
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <section class="status-tab" aria-label={current.label}>
        <Screen
          status={status}
          role={role}
          onChange={(changed) => {
            setStatus(changed)
            publish(changed)
          }}
        />
      </section>
    </>
  )
}
