import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../api.ts'
import { Announcer, announce } from '../components/announcer.tsx'
import { FormError } from '../components/form.tsx'
import { t } from '../i18n.ts'
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
            announce(
              event.status.value === null
                ? t('app.status.announce.noValue', { name: event.status.name })
                : t('app.status.announce.value', {
                    name: event.status.name,
                    value: event.status.value,
                  }),
            )
          return event.status
        })
        first = false
      } else
        setGone(
          event.reason === 'deleted'
            ? t('app.status.gone.deleted')
            : t('app.status.gone.outOfReach'),
        )
    })
    return () => {
      cancelled = true
      stop()
    }
  }, [id])

  const current = STATUS_TABS.find((s) => s.tab === tab)
  if (!current) return <NotFound />
  if (error instanceof ApiError && error.status === 404) return <NotFound />
  if (!status || !role)
    return (
      <>
        <h1>{t('app.status.title')}</h1>
        <FormError error={error} />
        {!error && (
          <p class="loading" aria-live="polite">
            {t('app.status.loading')}
          </p>
        )}
      </>
    )
  const tabs = STATUS_TABS.filter((s) => !s.shows || s.shows(role, status))
  const Screen = current.component
  const base = `/statuses/${encodeURIComponent(status.id)}`
  return (
    <>
      <p class="breadcrumb">
        <Link href="/">{t('app.status.board')}</Link>
      </p>
      <h1>{status.name}</h1>
      <Announcer />
      {gone && (
        <p class="form-error" role="alert">
          {gone} <Link href="/">{t('app.status.backToBoard')}</Link>
        </p>
      )}
      <nav aria-label={t('app.status.tabs.label')} class="status-tabs">
        <ul>
          {tabs.map((s) => (
            <li key={s.tab}>
              <Link
                href={s.tab ? `${base}/${s.tab}` : base}
                aria-current={s.tab === current.tab ? 'page' : undefined}
              >
                {s.label()}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <section class="status-tab" aria-label={current.label()}>
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
