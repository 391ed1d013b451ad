import { useEffect, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { SharedLink } from '../components/shared-link.tsx'
import { t } from '../i18n.ts'
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
        {t('app.boardEdit.loading')}
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
        <Link href="/walls">{t('app.boardEdit.walls')}</Link>
      </p>
      <h1 class="user-text">{board.name}</h1>
      {board.accessType === 'private' && <p class="hint">{t('app.boardEdit.privateHint')}</p>}
      <SharedLink
        label={t('app.boardEdit.link')}
        url={url}
        copyLabel={t('app.boardEdit.copyLink')}
        openLabel={t('app.boardEdit.open')}
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
            setSaved(t('app.boardEdit.saved'))
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label={t('app.boardEdit.name')}
          name="name"
          required
          maxLength={60}
          defaultValue={board.name}
          error={fieldError(error, 'name')}
        />
        <fieldset class="choice">
          <legend>{t('app.boardEdit.order')}</legend>
          {fieldError(error, 'statusIds') && (
            <p class="field-error">{fieldError(error, 'statusIds')}</p>
          )}
          <PrivateOnWall ids={order} statuses={statuses} wallIsPublic={access === 'public'} />
          <ol class="board-order">
            {order.map((statusId, i) => (
              <li key={statusId}>
                <span class="user-text">{nameOf(statusId)}</span>
                {access === 'public' && statuses.get(statusId)?.accessType === 'private' && (
                  <span class="private-mark">{t('app.boardEdit.privateMark')}</span>
                )}
                <span class="actions">
                  <button
                    type="button"
                    class="button quiet"
                    disabled={i === 0}
                    aria-label={t('app.boardEdit.up', { name: nameOf(statusId) })}
                    onClick={() => move(i, -1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    disabled={i === order.length - 1}
                    aria-label={t('app.boardEdit.down', { name: nameOf(statusId) })}
                    onClick={() => move(i, 1)}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    onClick={() => setOrder(order.filter((s) => s !== statusId))}
                  >
                    {t('app.boardEdit.remove')}
                    <span class="sr-only">
                      {' '}
                      {t('app.boardEdit.removeWhat', { name: nameOf(statusId) })}
                    </span>
                  </button>
                </span>
              </li>
            ))}
          </ol>
          {mine.some((s) => !order.includes(s.statusId)) && (
            <div class="field">
              <label for="board-add">{t('app.boardEdit.add')}</label>
              <select
                id="board-add"
                value=""
                onChange={(event) => {
                  const value = event.currentTarget.value
                  if (value) setOrder([...order, value])
                }}
              >
                <option value="">{t('app.boardEdit.choose')}</option>
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
            {t('app.boardEdit.save')}
          </button>
          {saved && <span class="copy-note">{saved}</span>}
        </div>
      </form>
      <h2>{t('app.boardEdit.delete.heading')}</h2>
      <ConfirmButton
        label={t('app.boardEdit.delete.label')}
        title={t('app.boardEdit.delete.title', { name: board.name })}
        confirmLabel={t('app.boardEdit.delete.confirm')}
        onConfirm={async () => {
          await api('DELETE', boardPath(id))
          navigate('/walls', { replace: true })
        }}
      >
        <p>{t('app.boardEdit.delete.text')}</p>
      </ConfirmButton>
    </>
  )
}
