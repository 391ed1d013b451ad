// A moment from the API (RFC 3339, UTC) in the reader's own time and language, with the
// exact value in the markup for machines and tooltips.

const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export const formatTime = (iso: string): string => FORMAT.format(new Date(iso))

export function When(props: { iso: string | null; never?: string }) {
  if (props.iso === null) return <>{props.never ?? '—'}</>
  return (
    <time dateTime={props.iso} title={props.iso}>
      {formatTime(props.iso)}
    </time>
  )
}
