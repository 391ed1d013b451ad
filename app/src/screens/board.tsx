import { useEffect, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { FormError } from '../components/form.tsx'
import { Link } from '../router.tsx'
import type { StatusListEntry } from '../types.ts'

// The board (docs/app.md#the-board): my statuses as tiles. A first version that lists what
// I own; the live board with one-tap values replaces it.

export default function Board() {
  const [items, setItems] = useState<StatusListEntry[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api<StatusListEntry[]>('GET', '/v1/user/status').then(setItems, setError)
  }, [])
  return (
    <>
      <h1>Board</h1>
      <FormError error={error} />
      {items && items.length === 0 && <p>No statuses yet.</p>}
      {items && (
        <ul class="tiles">
          {items.map((s) => (
            <li key={s.statusId} class="tile">
              <Link href={`/statuses/${encodeURIComponent(s.statusId)}`}>{s.name}</Link>
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
