import { useEffect, useMemo, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Announcer, announce } from '../components/announcer.tsx'
import { FormError } from '../components/form.tsx'
import { Rich } from '../components/rich.tsx'
import {
  LastChange,
  PendingEnd,
  StaleMark,
  ValueButtons,
  ValueChip,
} from '../components/status-bits.tsx'
import { t } from '../i18n.ts'
import { subscribe } from '../live.ts'
import { loadMyStatuses, type MyStatus, maySetValue, type Relation } from '../my-statuses.ts'
import { Link } from '../router.tsx'
import { me } from '../session.ts'
import type { Staleness, Status } from '../types.ts'

// The board (docs/app.md#the-board): every status I own, was given a role on, or follow, as
// tiles that stay live over one event stream per 100 statuses (live.ts). The stream's first
// event of each status is its current state, so the tiles need no read of their own.

type Show = 'all' | Relation | 'stale'

const RELATION_LABEL: Record<Relation, () => string> = {
  owned: () => t('app.board.relation.owned'),
  shared: () => t('app.board.relation.shared'),
  followed: () => t('app.board.relation.followed'),
}

export default function Board() {
  // an address not confirmed yet may not list statuses (403 notVerified): say what to do
  if (me.value && me.value.authLevel !== 'verified') return <ConfirmFirst email={me.value.email} />
  return <Statuses />
}

/**
 * The board of an account whose address is not confirmed yet (docs/accounts.md#until-the-address-is-confirmed):
 * where the link went and a new one on request; the invitations it may answer show above.
 */
function ConfirmFirst(props: { email: string | null }) {
  const [sent, setSent] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  async function sendAgain() {
    setBusy(true)
    setError(null)
    try {
      const answer = await api<{ email: string }>('POST', '/v1/user/email/verification')
      setSent(answer.email)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return (
    <>
      <h1>{t('app.board.title')}</h1>
      <section class="confirm-address" aria-labelledby="confirm-heading">
        <h2 id="confirm-heading">{t('app.board.confirm.title')}</h2>
        <p>
          <Rich
            text={t('app.board.confirm.text')}
            parts={{ email: () => <strong class="user-text">{props.email}</strong> }}
          />
        </p>
        <button type="button" class="button" disabled={busy} onClick={sendAgain}>
          {t('app.board.confirm.sendAgain')}
        </button>
        <p aria-live="polite">{sent && t('app.board.confirm.sent', { email: sent })}</p>
        <FormError error={error} />
      </section>
    </>
  )
}

function Statuses() {
  const [mine, setMine] = useState<MyStatus[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [statuses, setStatuses] = useState<Record<string, Status | 'gone'>>({})
  const [query, setQuery] = useState('')
  const [show, setShow] = useState<Show>('all')

  useEffect(() => {
    const controller = new AbortController()
    loadMyStatuses(controller.signal).then(setMine, (err) => {
      if ((err as Error).name !== 'AbortError') setError(err)
    })
    return () => controller.abort()
  }, [])

  useEffect(() => {
    if (!mine) return
    const seen = new Set<string>()
    const stops = mine.map((entry) =>
      subscribe(entry.statusId, (event) => {
        if (event.kind === 'status') {
          const status = event.status
          setStatuses((all) => {
            const before = all[entry.statusId]
            // the first state of each tile is not news; later value changes are
            if (seen.has(entry.statusId) && before !== 'gone' && before?.value !== status.value)
              announce(
                t('app.board.announce', {
                  name: status.name,
                  value: status.value ?? t('app.board.noValue'),
                }),
              )
            return { ...all, [entry.statusId]: status }
          })
          seen.add(entry.statusId)
        } else setStatuses((all) => ({ ...all, [entry.statusId]: 'gone' }))
      }),
    )
    return () => {
      for (const stop of stops) stop()
    }
  }, [mine])

  const visible = useMemo(() => {
    if (!mine) return []
    const words = query.trim().toLocaleLowerCase()
    return mine.filter((entry) => {
      const status = statuses[entry.statusId]
      if (status === 'gone') return false
      const name = status?.name ?? entry.name
      if (words && !name.toLocaleLowerCase().includes(words)) return false
      if (show === 'all') return true
      if (show === 'stale') return Boolean(status && (status as Status & Staleness).stale)
      return entry.relation === show
    })
  }, [mine, statuses, query, show])

  return (
    <>
      <h1>{t('app.board.title')}</h1>
      <Announcer />
      <FormError error={error} />
      {mine && mine.length === 0 && (
        <div class="board-empty">
          <p>{t('app.board.empty')}</p>
          <Link href="/statuses/new" class="button primary">
            {t('app.board.create')}
          </Link>{' '}
          <Link href="/find" class="button">
            {t('app.board.find')}
          </Link>
        </div>
      )}
      {mine && mine.length > 0 && (
        <>
          <div class="board-tools">
            <div class="field">
              <label for="board-search">{t('app.board.search')}</label>
              <input
                id="board-search"
                type="search"
                value={query}
                onInput={(event) => setQuery(event.currentTarget.value)}
              />
            </div>
            <div class="field">
              <label for="board-show">{t('app.board.show.label')}</label>
              <select
                id="board-show"
                value={show}
                onChange={(event) => setShow(event.currentTarget.value as Show)}
              >
                <option value="all">{t('app.board.show.all')}</option>
                <option value="owned">{t('app.board.show.owned')}</option>
                <option value="shared">{t('app.board.show.shared')}</option>
                <option value="followed">{t('app.board.show.followed')}</option>
                <option value="stale">{t('app.board.show.stale')}</option>
              </select>
            </div>
            <Link href="/statuses/new" class="button primary">
              {t('app.board.create')}
            </Link>
            <Link href="/find" class="button">
              {t('app.board.find')}
            </Link>
          </div>
          <p class="muted" aria-live="polite">
            {visible.length === mine.length
              ? t('app.board.count', { count: mine.length })
              : t('app.board.countOf', { count: mine.length, shown: visible.length })}
          </p>
          <ul class="tiles board-tiles">
            {visible.map((entry) => (
              <Tile
                key={entry.statusId}
                entry={entry}
                status={statuses[entry.statusId] as Status | undefined}
              />
            ))}
          </ul>
        </>
      )}
      {!mine && !error && (
        <p class="loading" aria-live="polite">
          {t('app.board.loading')}
        </p>
      )}
    </>
  )
}

function Tile(props: { entry: MyStatus; status: Status | undefined }) {
  const { entry, status } = props
  const name = status?.name ?? entry.name
  return (
    <li class="tile board-tile" data-status-id={entry.statusId}>
      <h2 class="tile-name">
        <Link href={`/statuses/${encodeURIComponent(entry.statusId)}`}>{name}</Link>
      </h2>
      {status ? (
        <>
          <p class="tile-value">
            <ValueChip value={status.value} colorNo={status.colorNo} />
            <StaleMark status={status} />
          </p>
          <PendingEnd status={status} />
          <p class="tile-meta muted">
            <LastChange at={status.valueUpdatedAt} /> · {RELATION_LABEL[entry.relation]()}
          </p>
          {maySetValue(entry.role) && (
            <ValueButtons status={status} label={t('app.board.setLabel', { name })} />
          )}
        </>
      ) : (
        <>
          {/* the value's line, held empty until the value comes, so the tile does not grow */}
          <p class="tile-value" aria-hidden="true">
            <span class="value-chip placeholder">&nbsp;</span>
          </p>
          <p class="tile-meta muted">{RELATION_LABEL[entry.relation]()}</p>
        </>
      )}
    </li>
  )
}
