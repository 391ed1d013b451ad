import { useEffect, useState } from 'preact/hooks'
import { api } from '../api.ts'
import {
  AdminNav,
  NotAllowed,
  OperatorsOnly,
  refusedAsNoOperator,
} from '../components/admin-nav.tsx'
import { FormError } from '../components/form.tsx'
import { When } from '../components/when.tsx'
import type { Instance } from '../types.ts'

// The instance, for operators (docs/app.md#operators): what runs, on what, since when, what is
// set up, and what is waiting (GET /v1/admin/instance), read when the screen opens and again
// on "Refresh".

export default function AdminInstance() {
  return (
    <OperatorsOnly>
      <InstanceScreen />
    </OperatorsOnly>
  )
}

const ENGINE_TEXT: Record<string, string> = {
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
}

const BYTES = new Intl.NumberFormat(undefined, {
  style: 'unit',
  unit: 'megabyte',
  maximumFractionDigits: 1,
})
const COUNT = new Intl.NumberFormat()

/** A duration in the largest units that say it: "3 days 4 hours", "12 minutes". */
function duration(seconds: number): string {
  const parts: [number, string][] = [
    [Math.floor(seconds / 86_400), 'day'],
    [Math.floor((seconds % 86_400) / 3600), 'hour'],
    [Math.floor((seconds % 3600) / 60), 'minute'],
  ]
  const said = parts
    .filter(([n]) => n > 0)
    .slice(0, 2)
    .map(([n, unit]) => `${n} ${unit}${n === 1 ? '' : 's'}`)
  return said.length ? said.join(' ') : 'less than a minute'
}

const setUp = (on: boolean) => (on ? 'set up' : 'not set up')

function InstanceScreen() {
  const [instance, setInstance] = useState<Instance | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  async function load(signal?: AbortSignal) {
    setBusy(true)
    try {
      setInstance(await api<Instance>('GET', '/v1/admin/instance', { ...(signal && { signal }) }))
      setError(null)
    } catch (e) {
      if ((e as Error).name !== 'AbortError') setError(e)
    } finally {
      setBusy(false)
    }
  }
  useEffect(() => {
    const controller = new AbortController()
    void load(controller.signal)
    return () => controller.abort()
  }, [])

  if (refusedAsNoOperator(error)) return <NotAllowed />
  return (
    <>
      <h1>Instance</h1>
      <AdminNav />
      <FormError error={error} />
      {instance === null && !error && <p class="loading">Loading…</p>}
      {instance && (
        <>
          <section aria-labelledby="instance-running">
            <h2 id="instance-running">Running</h2>
            <dl class="facts">
              <dt>Version</dt>
              <dd>statusd {instance.version}</dd>
              <dt>Database</dt>
              <dd>{ENGINE_TEXT[instance.engine] ?? instance.engine}</dd>
              <dt>Database size</dt>
              <dd>
                {instance.databaseBytes === null
                  ? 'unknown'
                  : BYTES.format(instance.databaseBytes / 1_000_000)}
              </dd>
              <dt>Up for</dt>
              <dd>
                {duration(instance.uptimeSeconds)} (since <When iso={instance.startedAt} />)
              </dd>
              <dt>Users</dt>
              <dd>{COUNT.format(instance.users)}</dd>
            </dl>
          </section>
          <section aria-labelledby="instance-settings">
            <h2 id="instance-settings">Settings</h2>
            <dl class="facts">
              <dt>Sign-up</dt>
              <dd>{instance.signup === 'open' ? 'open to anyone' : 'by invitation'}</dd>
              <dt>E-mail (SMTP)</dt>
              <dd>{setUp(instance.smtp)}</dd>
              <dt>Web push</dt>
              <dd>{setUp(instance.push)}</dd>
              <dt>MQTT</dt>
              <dd>{setUp(instance.mqtt)}</dd>
            </dl>
          </section>
          <section aria-labelledby="instance-work">
            <h2 id="instance-work">Now</h2>
            <dl class="facts">
              <dt>Notifications waiting to go out</dt>
              <dd>{COUNT.format(instance.outboxBacklog)}</dd>
              <dt>Open live streams</dt>
              <dd>{COUNT.format(instance.openStreams)}</dd>
            </dl>
          </section>
          <p>
            <button type="button" class="button" disabled={busy} onClick={() => load()}>
              Refresh
            </button>
          </p>
        </>
      )}
    </>
  )
}
