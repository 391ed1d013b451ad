import { useEffect, useState } from 'preact/hooks'
import { t } from '../i18n.ts'
import { loadMe } from '../session.ts'
import { Plain } from './layout.tsx'

// The app could not ask the server who is signed in (docs/app.md#when-the-server-cannot-be-reached):
// it says so and tries again when asked, or when the device comes back online, instead of
// looking signed out.

export function Unreachable(props: { reason: string }) {
  const [busy, setBusy] = useState(false)
  const retry = async () => {
    setBusy(true)
    try {
      await loadMe()
    } finally {
      setBusy(false)
    }
  }
  useEffect(() => {
    const online = () => void retry()
    addEventListener('online', online)
    return () => removeEventListener('online', online)
  }, [])
  return (
    <Plain>
      <h1>{t('app.unreachable.title')}</h1>
      <p>{t('app.unreachable.text')}</p>
      {props.reason && <p class="muted">{props.reason}</p>}
      <button type="button" class="button primary" disabled={busy} onClick={retry}>
        {busy ? t('app.unreachable.trying') : t('app.unreachable.retry')}
      </button>
    </Plain>
  )
}
