import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { CopyButton } from '../components/copy.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { loadMyStatuses, type MyStatus } from '../my-statuses.ts'
import { Link, navigate } from '../router.tsx'
import type { Board } from '../types.ts'

// My boards (docs/app.md#boards-screens): named sets of statuses shown together on a wall
// page (docs/app.md#boards-and-the-wall). Listed here with their wall's link; made from
// statuses picked from mine.

export default function Boards() {
  const [boards, setBoards] = useState<Board[] | null>(null)
  const [mine, setMine] = useState<MyStatus[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    api<Board[]>('GET', '/v1/boards').then(setBoards, setError)
    loadMyStatuses().then(setMine, setError)
  }, [])
  return (
    <>
      <h1>Walls</h1>
      <p class="hint">
        A board shows a set of statuses together on a wall page, made for a screen in a hallway or
        on a door: large type, live, recovering by itself.
      </p>
      <FormError error={error} />
      {boards && boards.length === 0 && <p class="muted">No boards yet.</p>}
      {boards && boards.length > 0 && (
        <ul class="boards-list">
          {boards.map((board) => (
            <li key={board.id} class="boards-item">
              <Link href={`/boards/${encodeURIComponent(board.id)}`} class="user-text">
                {board.name}
              </Link>
              <span class="muted">
                {board.statusIds.length} {board.statusIds.length === 1 ? 'status' : 'statuses'},{' '}
                {board.accessType}
              </span>
              <span class="actions">
                <a class="button quiet" href={board.url} target="_blank" rel="noopener">
                  Open the wall<span class="sr-only"> of {board.name}</span>
                </a>
                <CopyButton text={board.url} label={`Copy the wall link of ${board.name}`} />
              </span>
            </li>
          ))}
        </ul>
      )}
      {mine && <NewBoard mine={mine} />}
    </>
  )
}

function NewBoard(props: { mine: MyStatus[] }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  return (
    <section aria-labelledby="new-board">
      <h2 id="new-board">New board</h2>
      {props.mine.length === 0 ? (
        <p class="muted">A board shows statuses: make or follow one first.</p>
      ) : (
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            const form = new FormData(event.currentTarget)
            setBusy(true)
            setError(null)
            try {
              const board = await api<Board>('POST', '/v1/boards', {
                body: {
                  name: form.get('name'),
                  statusIds: form.getAll('statusIds'),
                  accessType: form.get('accessType'),
                },
              })
              navigate(`/boards/${encodeURIComponent(board.id)}`)
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
            error={fieldError(error, 'name')}
          />
          <StatusPicker mine={props.mine} chosen={[]} error={fieldError(error, 'statusIds')} />
          <AccessChoice value="public" />
          <FormError error={error} />
          <button type="submit" class="button primary" disabled={busy}>
            Make board
          </button>
        </form>
      )}
    </section>
  )
}

/** Checkboxes of my statuses (name="statusIds"), in the order given. */
export function StatusPicker(props: { mine: MyStatus[]; chosen: string[]; error?: string }) {
  return (
    <fieldset class="choice status-picker">
      <legend>Statuses</legend>
      {props.error && <p class="field-error">{props.error}</p>}
      {props.mine.map((s) => (
        <label key={s.statusId}>
          <input
            type="checkbox"
            name="statusIds"
            value={s.statusId}
            defaultChecked={props.chosen.includes(s.statusId)}
          />{' '}
          <span class="user-text">{s.name}</span>
        </label>
      ))}
    </fieldset>
  )
}

export function AccessChoice(props: { value: 'public' | 'private' }) {
  return (
    <fieldset class="choice">
      <legend>Wall page</legend>
      <label>
        <input
          type="radio"
          name="accessType"
          value="public"
          defaultChecked={props.value === 'public'}
        />{' '}
        Public: anyone with the link sees the wall
      </label>
      <label>
        <input
          type="radio"
          name="accessType"
          value="private"
          defaultChecked={props.value === 'private'}
        />{' '}
        Private: the wall page shows nothing
      </label>
    </fieldset>
  )
}

export const boardPath = (id: string): string => apiPath`/v1/boards/${id}`
