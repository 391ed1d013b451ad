import { useEffect, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { CopyField } from '../components/copy.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { loadMyStatuses, type MyStatus } from '../my-statuses.ts'
import { Link, navigate } from '../router.tsx'
import type { Board } from '../types.ts'
import { AccessChoice, boardPath } from './boards.tsx'
import NotFound from './not-found.tsx'

// One board (docs/app.md#boards-screens): its name, its wall's link, which statuses it shows
// and in what order, public or private; deleting it asks first (its statuses stay).

export default function BoardEdit(props: { params: Record<string, string> }) {
  const id = props.params.id ?? ''
  const [board, setBoard] = useState<Board | null>(null)
  const [mine, setMine] = useState<MyStatus[]>([])
  const [order, setOrder] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [saved, setSaved] = useState('')
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    api<Board>('GET', boardPath(id)).then((b) => {
      setBoard(b)
      setOrder(b.statusIds)
    }, setError)
    loadMyStatuses().then(setMine, () => {})
  }, [id])
  if (!board) {
    if (error) return <NotFound />
    return (
      <p class="loading" aria-live="polite">
        Loading…
      </p>
    )
  }
  const nameOf = (statusId: string) => mine.find((s) => s.statusId === statusId)?.name ?? statusId
  const move = (index: number, by: -1 | 1) => {
    const next = [...order]
    const [item] = next.splice(index, 1)
    next.splice(index + by, 0, item as string)
    setOrder(next)
  }
  return (
    <>
      <p class="breadcrumb">
        <Link href="/boards">Walls</Link>
      </p>
      <h1 class="user-text">{board.name}</h1>
      <CopyField label="Wall link" text={board.url} buttonLabel="Copy wall link" />
      <p>
        <a class="button quiet" href={board.url} target="_blank" rel="noopener">
          Open the wall
        </a>
      </p>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          setBusy(true)
          setError(null)
          setSaved('')
          try {
            const changed = await api<Board>('PATCH', boardPath(id), {
              body: {
                name: form.get('name'),
                statusIds: order,
                accessType: form.get('accessType'),
              },
            })
            setBoard(changed)
            setOrder(changed.statusIds)
            setSaved('Board saved.')
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label="Name"
          name="name"
          required
          maxLength={60}
          defaultValue={board.name}
          error={fieldError(error, 'name')}
        />
        <fieldset class="choice">
          <legend>Statuses, in the wall's order</legend>
          {fieldError(error, 'statusIds') && (
            <p class="field-error">{fieldError(error, 'statusIds')}</p>
          )}
          <ol class="board-order">
            {order.map((statusId, i) => (
              <li key={statusId}>
                <span class="user-text">{nameOf(statusId)}</span>
                <span class="actions">
                  <button
                    type="button"
                    class="button quiet"
                    disabled={i === 0}
                    aria-label={`Move ${nameOf(statusId)} up`}
                    onClick={() => move(i, -1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    disabled={i === order.length - 1}
                    aria-label={`Move ${nameOf(statusId)} down`}
                    onClick={() => move(i, 1)}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    onClick={() => setOrder(order.filter((s) => s !== statusId))}
                  >
                    Remove<span class="sr-only"> {nameOf(statusId)} from the board</span>
                  </button>
                </span>
              </li>
            ))}
          </ol>
          {mine.some((s) => !order.includes(s.statusId)) && (
            <div class="field">
              <label for="board-add">Add a status</label>
              <select
                id="board-add"
                value=""
                onChange={(event) => {
                  const value = event.currentTarget.value
                  if (value) setOrder([...order, value])
                }}
              >
                <option value="">Choose…</option>
                {mine
                  .filter((s) => !order.includes(s.statusId))
                  .map((s) => (
                    <option key={s.statusId} value={s.statusId}>
                      {s.name}
                    </option>
                  ))}
              </select>
            </div>
          )}
        </fieldset>
        <AccessChoice value={board.accessType} />
        <FormError error={error} />
        <p class="sr-only" aria-live="polite">
          {saved}
        </p>
        <div class="actions">
          <button type="submit" class="button primary" disabled={busy}>
            Save
          </button>
          {saved && <span class="copy-note">{saved}</span>}
        </div>
      </form>
      <h2>Delete</h2>
      <ConfirmButton
        label="Delete board"
        title={`Delete the board ${board.name}?`}
        confirmLabel="Delete"
        onConfirm={async () => {
          await api('DELETE', boardPath(id))
          navigate('/boards', { replace: true })
        }}
      >
        <p>Its wall page ends. The statuses on it stay as they are.</p>
      </ConfirmButton>
    </>
  )
}
