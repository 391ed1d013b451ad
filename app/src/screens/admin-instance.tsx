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
import { t } from '../i18n.ts'
import { intlLocale } from '../time.ts'
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

const megabytes = (bytes: number): string =>
  new Intl.NumberFormat(intlLocale(), {
    style: 'unit',
    unit: 'megabyte',
    maximumFractionDigits: 1,
  }).format(bytes / 1_000_000)
const count = (n: number): string => new Intl.NumberFormat(intlLocale()).format(n)

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
    .map(([n, unit]) =>
      new Intl.NumberFormat(intlLocale(), { style: 'unit', unit, unitDisplay: 'long' }).format(n),
    )
  return said.length ? said.join(' ') : t('app.admin.instance.underAMinute')
}

const setUp = (on: boolean) =>
  on ? t('app.admin.instance.setUp') : t('app.admin.instance.notSetUp')

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
      <h1>{t('app.admin.instance.title')}</h1>
      <AdminNav />
      <FormError error={error} />
      {instance === null && !error && <p class="loading">{t('app.admin.loading')}</p>}
      {instance && (
        <>
          <section aria-labelledby="instance-running">
            <h2 id="instance-running">{t('app.admin.instance.running')}</h2>
            <dl class="facts">
              <dt>{t('app.admin.instance.version')}</dt>
              <dd>statusd {instance.version}</dd>
              <dt>{t('app.admin.instance.database')}</dt>
              <dd>{ENGINE_TEXT[instance.engine] ?? instance.engine}</dd>
              <dt>{t('app.admin.instance.databaseSize')}</dt>
              <dd>
                {instance.databaseBytes === null
                  ? t('app.admin.instance.unknown')
                  : megabytes(instance.databaseBytes)}
              </dd>
              <dt>{t('app.admin.instance.upFor')}</dt>
              <dd>
                {duration(instance.uptimeSeconds)} ({t('app.admin.instance.since')}{' '}
                <When iso={instance.startedAt} />)
              </dd>
              <dt>{t('app.admin.instance.users')}</dt>
              <dd>{count(instance.users)}</dd>
            </dl>
          </section>
          <section aria-labelledby="instance-settings">
            <h2 id="instance-settings">{t('app.admin.instance.settings')}</h2>
            <dl class="facts">
              <dt>{t('app.admin.instance.signup')}</dt>
              <dd>
                {instance.signup === 'open'
                  ? t('app.admin.instance.signupOpen')
                  : t('app.admin.instance.signupInvited')}
              </dd>
              <dt>{t('app.admin.instance.smtp')}</dt>
              <dd>{setUp(instance.smtp)}</dd>
              <dt>{t('app.admin.instance.push')}</dt>
              <dd>{setUp(instance.push)}</dd>
              <dt>MQTT</dt>
              <dd>{setUp(instance.mqtt)}</dd>
            </dl>
          </section>
          <section aria-labelledby="instance-work">
            <h2 id="instance-work">{t('app.admin.instance.now')}</h2>
            <dl class="facts">
              <dt>{t('app.admin.instance.outbox')}</dt>
              <dd>{count(instance.outboxBacklog)}</dd>
              <dt>{t('app.admin.instance.streams')}</dt>
              <dd>{count(instance.openStreams)}</dd>
            </dl>
          </section>
          <p>
            <button type="button" class="button" disabled={busy} onClick={() => load()}>
              {t('app.admin.instance.refresh')}
            </button>
          </p>
        </>
      )}
    </>
  )
}
