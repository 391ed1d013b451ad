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

// Backups (docs/app.md#backups), for operators: the backups of BACKUP_DIR newest first, each
// to download (GET /v1/admin/backups/:name), the schedule, and a button that takes one now
// (POST /v1/admin/backups). Restoring one is `statusd restore` (docs/operations.md#restore).

type Backup = Static<typeof BackupSchema>
type BackupList = Static<typeof BackupListSchema>

const SIZE = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 })

/** 48312320 as "48.3 MB". */
function size(bytes: number): string {
  if (bytes < 1_000_000) return `${SIZE.format(bytes / 1000)} kB`
  if (bytes < 1_000_000_000) return `${SIZE.format(bytes / 1_000_000)} MB`
  return `${SIZE.format(bytes / 1_000_000_000)} GB`
}

function Schedule({ list }: { list: BackupList }) {
  if (!list.enabled)
    return (
      <p>
        Backups are off: set <code>BACKUP_DIR</code> (and <code>BACKUP_EVERY</code> for a schedule)
        and restart statusd.
      </p>
    )
  if (list.every === null)
    return (
      <p class="muted">
        No schedule: set <code>BACKUP_EVERY</code> (e.g. <code>24h</code>) to take them on one.
      </p>
    )
  return (
    <p class="muted">
      A backup every {list.every}
      {list.keep === null ? ', all kept.' : `, the newest ${list.keep} kept.`}
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
      announce(`Backup taken: ${taken.name}`)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <>
      <h1>Backups</h1>
      <AdminNav />
      {list && <Schedule list={list} />}
      {list?.enabled && (
        <button type="button" class="button primary" disabled={busy} onClick={backUpNow}>
          {busy ? 'Backing up…' : 'Back up now'}
        </button>
      )}
      <FormError error={error} />
      {list === null && error === null && (
        <p class="loading" aria-live="polite">
          Loading…
        </p>
      )}
      {list?.enabled && list.backups.length === 0 && <p class="muted">No backup yet.</p>}
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
                  aria-label={`Download the backup ${backup.name}`}
                >
                  Download
                </a>
              </span>
            </li>
          ))}
        </ul>
      )}
      <p class="muted">
        To restore one, stop statusd and run <code>statusd restore FILE</code> on the server (see
        the operations guide, “Restore”).
      </p>
    </>
  )
}
