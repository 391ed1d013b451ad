import { useState } from 'preact/hooks'
import { t } from '../i18n.ts'
import { lazy } from '../lazy.tsx'
import { CopyField } from './copy.tsx'

// A link to hand out (a status's share page, a wall): copy it, open it, or show it as a QR
// code for a phone to scan (docs/app.md#sharing-a-status).

const QrCode = lazy(() => import('./qr-code.tsx'))

export function SharedLink(props: {
  label: string
  url: string
  copyLabel: string
  openLabel: string
}) {
  const { url } = props
  const [showQr, setShowQr] = useState(false)
  return (
    <>
      <CopyField label={props.label} text={url} buttonLabel={props.copyLabel} />
      <div class="actions">
        <a class="button quiet" href={url} target="_blank" rel="noopener">
          {props.openLabel}
        </a>
        <button
          type="button"
          class="button"
          aria-expanded={showQr}
          onClick={() => setShowQr(!showQr)}
        >
          {showQr ? t('app.sharedLink.hideQr') : t('app.sharedLink.showQr')}
        </button>
      </div>
      {showQr && (
        <div class="qr">
          <QrCode text={url} alt={t('app.sharedLink.qrAlt', { url })} />
        </div>
      )}
    </>
  )
}
