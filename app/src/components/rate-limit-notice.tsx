import { useEffect, useState } from 'preact/hooks'
import { rateLimitedUntil } from '../api.ts'
import { t } from '../i18n.ts'

// The server's "too many requests" (429, docs/api.md#rate-limits) in words, above every
// screen while it lasts: the app reads again by itself once the wait the server named is
// over (api.ts), so the person only needs to know why the screen is slow to fill.

export function RateLimitNotice() {
  const until = rateLimitedUntil.value
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    if (until === null) return
    setNow(Date.now())
    const timer = setInterval(() => {
      const at = Date.now()
      setNow(at)
      if (at >= until && rateLimitedUntil.value === until) rateLimitedUntil.value = null
    }, 1000)
    return () => clearInterval(timer)
  }, [until])
  const seconds = until === null ? 0 : Math.ceil((until - now) / 1000)
  return (
    <p class="rate-limit-notice" role="status">
      {seconds > 0 && t('app.rateLimit.notice', { seconds })}
    </p>
  )
}
