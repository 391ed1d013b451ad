import { useEffect, useState } from 'preact/hooks'
import { toDataURL } from 'qrcode'

// A QR code of a link (docs/app.md#sharing-a-status), drawn as a data: URL image (the CSP
// allows img data:). This module is only ever imported lazily: qrcode stays out of the first
// load (docs/app.md#how-it-is-built).

export default function QrCode(props: { text: string; alt: string }) {
  const [src, setSrc] = useState<string | null>(null)
  useEffect(() => {
    let current = true
    // dark on white whatever the colour scheme: scanners read dark modules on a light ground
    toDataURL(props.text, { margin: 2, width: 240, errorCorrectionLevel: 'M' }).then(
      (url) => current && setSrc(url),
      () => current && setSrc(null),
    )
    return () => {
      current = false
    }
  }, [props.text])
  if (!src) return null
  return <img class="qr-code" src={src} alt={props.alt} width="240" height="240" />
}
