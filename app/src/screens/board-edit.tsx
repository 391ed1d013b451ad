import { useEffect, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { SharedLink } from '../components/shared-link.tsx'
import { loadMyStatuses, type MyStatus } from '../my-statuses.ts'
import { Link, navigate } from '../router.tsx'
import type { Board } from '../types.ts'
import { AccessChoice, boardPath, PrivateOnWall, useLiveStatuses, wallUrl } from './boards.tsx'
import NotFound from './not-found.tsx'

// One wall (docs/app.md#walls-screens): its name, its page's full address and QR code (for
// the phone or the screen by the door), which statuses it shows and in what order, public or
// private, and a warning while a status on a public wall is private (a grey tile there);
// deleting it asks first (its statuses stay).

export default function BoardEdit(props: { params: Record<string, string> }) {
  const id = props.params.id ?? ''
  const [board, setBoard] = useState<Board | null>(null)
  const [mine, setMine] = useState<MyStatus[]>([])
  const [order, setOrder] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [saved, setSaved] = useState('')
  const [busy, setBusy] = useState(false)
  const [access, setAccess] = useState<'public' | 'private'>('public')
  const statuses = useLiveStatuses(order)
  useEffect(() => {
    api<Board>('GET', boardPath(id)).then((b) => {
      setBoard(b)
      setOrder(b.statusIds)
      setAccess(b.accessType)
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
  const nameOf = (statusId: string) =>
    mine.find((s) => s.statusId === statusId)?.name ?? statuses.get(statusId)?.name ?? statusId
  const url = wallUrl(board)
  const move = (index: number, by: -1 | 1) => {
    const next = [...order]
    const [item] = next.splice(index, 1)
    next.splice(index + by, 0, item as string)
    setOrder(next)
  }
  return (
    <>
      <p class="breadcrumb">
        <Link href="/walls">Walls</Link>
      </p>
      <h1 class="user-text">{board.name}</h1>
      {board.accessType === 'private' && (
        <p class="hint">The wall is private: its page shows nothing until it is public.</p>
      )}
      <SharedLink
        label="Wall link"
        url={url}
        copyLabel="Copy wall link"
        openLabel="Open the wall page"
      />
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
            setSaved('Wall saved.')
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
          <PrivateOnWall ids={order} statuses={statuses} wallIsPublic={access === 'public'} />
          <ol class="board-order">
            {order.map((statusId, i) => (
              <li key={statusId}>
                <span class="user-text">{nameOf(statusId)}</span>
                {access === 'public' && statuses.get(statusId)?.accessType === 'private' && (
                  <span class="private-mark">Private: grey on the wall</span>
                )}
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
                    Remove<span class="sr-only"> {nameOf(statusId)} from the wall</span>
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
        <AccessChoice value={board.accessType} onChange={setAccess} />
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
        label="Delete wall"
        title={`Delete the wall ${board.name}?`}
        confirmLabel="Delete"
        onConfirm={async () => {
          await api('DELETE', boardPath(id))
          navigate('/walls', { replace: true })
        }}
      >
        <p>Its wall page ends. The statuses on it stay as they are.</p>
      </ConfirmButton>
    </>
  )
}
