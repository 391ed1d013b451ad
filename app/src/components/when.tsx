import { dateTime } from '../time.ts'

// A moment from the API (RFC 3339, UTC) in the reader's own time and language, with the
// exact value in the markup for machines and tooltips.

export const formatTime = (iso: string): string => dateTime(iso)

export function When(props: { iso: string | null; never?: string }) {
  if (props.iso === null) return <>{props.never ?? '—'}</>
  return (
    <time dateTime={props.iso} title={props.iso}>
      {formatTime(props.iso)}
    </time>
  )
}
