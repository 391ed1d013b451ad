import { useEffect, useState } from 'preact/hooks'
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
      <h1>statusd cannot be reached</h1>
      <p>
        The server does not answer: it may be restarting, or this device may be offline. You are
        still signed in; nothing is lost.
      </p>
      {props.reason && <p class="muted">{props.reason}</p>}
      <button type="button" class="button primary" disabled={busy} onClick={retry}>
        {busy ? 'Trying…' : 'Try again'}
      </button>
    </Plain>
  )
}
