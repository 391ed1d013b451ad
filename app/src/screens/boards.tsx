import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { CopyButton } from '../components/copy.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { Rich } from '../components/rich.tsx'
import { t } from '../i18n.ts'
import { subscribe } from '../live.ts'
import { loadMyStatuses, type MyStatus } from '../my-statuses.ts'
import { Link, navigate } from '../router.tsx'
import type { Board, Status } from '../types.ts'

// My walls (docs/app.md#walls-screens): named sets of statuses shown together on a wall
// page (docs/app.md#walls-and-the-wall-page). Listed here with their page's full address;
// made from statuses picked from mine. A person sees "wall" everywhere; the API calls the
// same thing a board (/v1/boards), and "the board" in the app is the home screen's tiles.

/** The wall page's full address: the API gives PUBLIC_URL's, or a path when it is unset. */
export const wallUrl = (board: Board): string => new URL(board.url, location.origin).href

/** The app's address of a wall's screen. */
export const wallPath = (id: string): string => `/walls/${encodeURIComponent(id)}`

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
      <h1>{t('app.boards.title')}</h1>
      <p class="hint">{t('app.boards.intro')}</p>
      <FormError error={error} />
      {boards && boards.length === 0 && <p class="muted">{t('app.boards.none')}</p>}
      {boards && boards.length > 0 && (
        <ul class="boards-list">
          {boards.map((board) => (
            <li key={board.id} class="boards-item">
              <Link href={wallPath(board.id)} class="user-text">
                {board.name}
              </Link>
              <span class="muted">
                {t(
                  board.accessType === 'public'
                    ? 'app.boards.countPublic'
                    : 'app.boards.countPrivate',
                  { count: board.statusIds.length },
                )}
              </span>
              <span class="actions">
                <a class="button quiet" href={wallUrl(board)} target="_blank" rel="noopener">
                  {t('app.boards.open')}
                  <span class="sr-only"> {t('app.boards.openOf', { name: board.name })}</span>
                </a>
                <CopyButton
                  text={wallUrl(board)}
                  label={t('app.boards.copyLink', { name: board.name })}
                />
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
  const [chosen, setChosen] = useState<string[]>([])
  const [access, setAccess] = useState<'public' | 'private'>('public')
  const statuses = useLiveStatuses(chosen)
  return (
    <section aria-labelledby="new-board">
      <h2 id="new-board">{t('app.boards.new.title')}</h2>
      {props.mine.length === 0 ? (
        <p class="muted">{t('app.boards.new.noStatuses')}</p>
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
              navigate(wallPath(board.id))
            } catch (e) {
              setError(e)
            } finally {
              setBusy(false)
            }
          }}
        >
          <Field
            label={t('app.boards.new.name')}
            name="name"
            required
            maxLength={60}
            error={fieldError(error, 'name')}
          />
          <StatusPicker
            mine={props.mine}
            chosen={[]}
            error={fieldError(error, 'statusIds')}
            onChange={setChosen}
          />
          <AccessChoice value="public" onChange={setAccess} />
          <PrivateOnWall ids={chosen} statuses={statuses} wallIsPublic={access === 'public'} />
          <FormError error={error} />
          <button type="submit" class="button primary" disabled={busy}>
            {t('app.boards.new.submit')}
          </button>
        </form>
      )}
    </section>
  )
}

/** Checkboxes of my statuses (name="statusIds"), in the order given. */
export function StatusPicker(props: {
  mine: MyStatus[]
  chosen: string[]
  error?: string
  onChange?: (ids: string[]) => void
}) {
  return (
    <fieldset
      class="choice status-picker"
      onChange={(event) => {
        const boxes = event.currentTarget.querySelectorAll<HTMLInputElement>(
          'input[name="statusIds"]:checked',
        )
        props.onChange?.([...boxes].map((box) => box.value))
      }}
    >
      <legend>{t('app.boards.picker.legend')}</legend>
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

export function AccessChoice(props: {
  value: 'public' | 'private'
  onChange?: (value: 'public' | 'private') => void
}) {
  return (
    <fieldset
      class="choice"
      onChange={(event) => {
        const target = event.target as HTMLInputElement
        if (target.name === 'accessType') props.onChange?.(target.value as 'public' | 'private')
      }}
    >
      <legend>{t('app.boards.access.legend')}</legend>
      <label>
        <input
          type="radio"
          name="accessType"
          value="public"
          defaultChecked={props.value === 'public'}
        />{' '}
        {t('app.boards.access.public')}
      </label>
      <label>
        <input
          type="radio"
          name="accessType"
          value="private"
          defaultChecked={props.value === 'private'}
        />{' '}
        {t('app.boards.access.private')}
      </label>
    </fieldset>
  )
}

export const boardPath = (id: string): string => apiPath`/v1/boards/${id}`

/**
 * The statuses of these ids as they are now, kept live (live.ts): the wall editor warns of
 * the private ones while they are private, and stops when one is made public.
 */
export function useLiveStatuses(ids: string[]): Map<string, Status> {
  const [statuses, setStatuses] = useState<Map<string, Status>>(() => new Map())
  const key = ids.join(' ')
  useEffect(() => {
    const stops = ids.map((id) =>
      subscribe(id, (event) =>
        setStatuses((before) => {
          const next = new Map(before)
          if (event.kind === 'status') next.set(id, event.status)
          else next.delete(id)
          return next
        }),
      ),
    )
    return () => {
      for (const stop of stops) stop()
    }
  }, [key])
  return statuses
}

/**
 * The warning a public wall needs when some of its statuses are private: the wall page shows
 * them as grey "Not available" tiles (nothing of a private status is shown), and the person
 * who made the wall would otherwise find out only in front of the screen.
 */
export function PrivateOnWall(props: {
  ids: string[]
  statuses: Map<string, Status>
  wallIsPublic: boolean
}) {
  const hidden = props.ids
    .map((id) => props.statuses.get(id))
    .filter((s): s is Status => s?.accessType === 'private')
  if (!props.wallIsPublic || hidden.length === 0) return null
  return (
    <div class="warning" role="status">
      <p>
        <Rich
          text={t('app.boards.private.warning', { count: hidden.length })}
          parts={{ strong: (text) => <strong>{text}</strong> }}
        />
      </p>
      <ul class="warning-list">
        {hidden.map((s) => (
          <li key={s.id}>
            {s.statusKey !== null ? (
              <Link href={`/statuses/${encodeURIComponent(s.id)}/share`} class="user-text">
                {s.name}
              </Link>
            ) : (
              <span class="user-text">{s.name}</span>
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}
