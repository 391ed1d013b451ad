import { locale } from '../i18n.ts'

// A moment from the API (RFC 3339, UTC) in the reader's own time and language, with the
// exact value in the markup for machines and tooltips.

const formats = new Map<string, Intl.DateTimeFormat>()

/** The moment in the language shown (`locale`), in the reader's time zone. */
export const formatTime = (iso: string): string => {
  let format = formats.get(locale.value)
  if (!format) {
    format = new Intl.DateTimeFormat(locale.value, { dateStyle: 'medium', timeStyle: 'short' })
    formats.set(locale.value, format)
  }
  return format.format(new Date(iso))
}

export function When(props: { iso: string | null; never?: string }) {
  if (props.iso === null) return <>{props.never ?? '—'}</>
  return (
    <time dateTime={props.iso} title={props.iso}>
      {formatTime(props.iso)}
    </time>
  )
}
