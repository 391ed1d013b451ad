import { useEffect, useState } from 'preact/hooks'
import type { Static } from 'typebox'
import type {
  BackupListSchema,
  BackupSchema,
} from '../../../src/modules/backups/backups.schemas.ts'
import { api, apiPath } from '../api.ts'
import { AdminNav, OperatorsOnly } from '../components/admin-nav.tsx'
import { announce } from '../components/announcer.tsx'
import { FormError } from '../components/form.tsx'
import { When } from '../components/when.tsx'
import { t } from '../i18n.ts'
import { intlLocale } from '../time.ts'

// Backups (docs/app.md#backups), for operators: the backups of BACKUP_DIR newest first, each
// to download (GET /v1/admin/backups/:name), the schedule, and a button that takes one now
// (POST /v1/admin/backups). Restoring one is `statusd restore` (docs/operations.md#restore).

type Backup = Static<typeof BackupSchema>
type BackupList = Static<typeof BackupListSchema>

/** 48312320 as "48.3 MB" (in the language shown: "48,3 MB"). */
function size(bytes: number): string {
  const [amount, unit] =
    bytes < 1_000_000
      ? [bytes / 1000, 'kilobyte']
      : bytes < 1_000_000_000
        ? [bytes / 1_000_000, 'megabyte']
        : [bytes / 1_000_000_000, 'gigabyte']
  return new Intl.NumberFormat(intlLocale(), {
    style: 'unit',
    unit,
    maximumFractionDigits: 1,
  }).format(amount)
}

function Schedule({ list }: { list: BackupList }) {
  if (!list.enabled)
    return (
      <p>
        {t('app.admin.backups.off.before')} <code>BACKUP_DIR</code>{' '}
        {t('app.admin.backups.off.middle')} <code>BACKUP_EVERY</code>{' '}
        {t('app.admin.backups.off.after')}
      </p>
    )
  if (list.every === null)
    return (
      <p class="muted">
        {t('app.admin.backups.noSchedule.before')} <code>BACKUP_EVERY</code>{' '}
        {t('app.admin.backups.noSchedule.middle')} <code>24h</code>
        {t('app.admin.backups.noSchedule.after')}
      </p>
    )
  return (
    <p class="muted">
      {list.keep === null
        ? t('app.admin.backups.everyAllKept', { every: list.every })
        : t('app.admin.backups.everyKept', { every: list.every, count: list.keep })}
    </p>
  )
}

export function AdminBackups() {
  return (
    <OperatorsOnly>
      <BackupsScreen />
    </OperatorsOnly>
  )
}

function BackupsScreen() {
  const [list, setList] = useState<BackupList | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    const controller = new AbortController()
    api<BackupList>('GET', '/v1/admin/backups', { signal: controller.signal }).then(
      setList,
      (e: unknown) => {
        if (!controller.signal.aborted) setError(e)
      },
    )
    return () => controller.abort()
  }, [])

  async function backUpNow() {
    setBusy(true)
    setError(null)
    try {
      const taken = await api<Backup>('POST', '/v1/admin/backups')
      setList((before) => before && { ...before, backups: [taken, ...before.backups] })
      announce(t('app.admin.backups.taken', { name: taken.name }))
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <>
      <h1>{t('app.admin.backups.title')}</h1>
      <AdminNav />
      {list && <Schedule list={list} />}
      {list?.enabled && (
        <button type="button" class="button primary" disabled={busy} onClick={backUpNow}>
          {busy ? t('app.admin.backups.backingUp') : t('app.admin.backups.now')}
        </button>
      )}
      <FormError error={error} />
      {list === null && error === null && (
        <p class="loading" aria-live="polite">
          {t('app.admin.loading')}
        </p>
      )}
      {list?.enabled && list.backups.length === 0 && (
        <p class="muted">{t('app.admin.backups.none')}</p>
      )}
      {list && list.backups.length > 0 && (
        <ul class="item-list backups">
          {list.backups.map((backup) => (
            <li key={backup.name} class="item">
              <span>
                <strong>
                  <When iso={backup.createdAt} />
                </strong>{' '}
                <span class="muted">
                  · {size(backup.bytes)} · {backup.engine} · statusd {backup.statusd}
                </span>
              </span>
              <span class="actions">
                <a
                  class="button"
                  href={apiPath`/v1/admin/backups/${backup.name}`}
                  download={backup.name}
                  aria-label={t('app.admin.backups.downloadAria', { name: backup.name })}
                >
                  {t('app.admin.backups.download')}
                </a>
              </span>
            </li>
          ))}
        </ul>
      )}
      <p class="muted">
        {t('app.admin.backups.restore.before')} <code>statusd restore FILE</code>{' '}
        {t('app.admin.backups.restore.after')}
      </p>
    </>
  )
}
