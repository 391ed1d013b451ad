import { useEffect, useState } from 'preact/hooks'
import { escapeHtml } from '../../../../src/lib/html.ts'
import { api, apiPath } from '../../api.ts'
import { ConfirmButton } from '../../components/confirm.tsx'
import { CopyField } from '../../components/copy.tsx'
import { FormError } from '../../components/form.tsx'
import { SharedLink } from '../../components/shared-link.tsx'
import { t } from '../../i18n.ts'
import { Link } from '../../router.tsx'
import { shortDateTime, dateTime as when } from '../../time.ts'
import type { Board, NewShareLink, ShareLink, Status } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// The share tab (docs/app.md#sharing-a-status): who may see the status, its link, QR code
// and badge, private links for people without an account, and the walls it is on.

/** Who may see a part of the status, in the language shown. */
const levelText = (level: 'public' | 'private' | 'owner'): string =>
  ({
    public: t('app.status.share.levels.public'),
    private: t('app.status.share.levels.private'),
    owner: t('app.status.share.levels.owner'),
  })[level]

/** How long a new private link lasts; '' is the plan's longest (the API's default). */
const linkDurations = () => [
  { value: '', label: t('app.status.share.private.durations.plan') },
  { value: String(60 * 60_000), label: t('app.status.share.private.durations.hour') },
  { value: String(24 * 60 * 60_000), label: t('app.status.share.private.durations.day') },
  { value: String(3 * 24 * 60 * 60_000), label: t('app.status.share.private.durations.days3') },
]

/** Text for Markdown's image alt: brackets and backslashes would end or bend it. */
const escapeMarkdown = (text: string): string => text.replace(/[\\[\]]/g, (c) => `\\${c}`)

export default function ShareTab(props: StatusTabProps) {
  const { status, role } = props
  const owner = role === 'owner'
  return (
    <div class="share-tab">
      {owner && <Visibility status={status} onChange={props.onChange} />}
      <ShareLinkSection status={status} />
      <Badge status={status} />
      <Embed status={status} />
      {owner && <PrivateLinks statusId={status.id} />}
      <BoardMembership statusId={status.id} />
    </div>
  )
}

function Visibility(props: { status: Status; onChange: (status: Status) => void }) {
  const { status } = props
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  // the choice just made shows while it is saved (a controlled input would otherwise flip back
  // to the old value until the answer comes); a refusal puts the old value back
  const [pending, setPending] = useState<Partial<Status>>({})
  const shown = { ...status, ...pending }
  async function patch(body: Partial<Status>) {
    setPending(body)
    setBusy(true)
    setError(null)
    try {
      props.onChange(await api<Status>('PATCH', apiPath`/v1/status/${status.id}`, { body }))
    } catch (e) {
      setError(e)
    } finally {
      setPending({})
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="share-visibility">
      <h2 id="share-visibility">{t('app.status.share.visibility.title')}</h2>
      <fieldset class="choice" disabled={busy}>
        <legend>{t('app.status.share.visibility.page')}</legend>
        <label>
          <input
            type="radio"
            name="accessType"
            checked={shown.accessType === 'public'}
            onChange={() => patch({ accessType: 'public' })}
          />{' '}
          {t('app.status.share.visibility.public')}
        </label>
        <label>
          <input
            type="radio"
            name="accessType"
            checked={shown.accessType === 'private'}
            onChange={() => patch({ accessType: 'private' })}
          />{' '}
          {t('app.status.share.visibility.private')}
        </label>
      </fieldset>
      <div class="share-levels">
        {(
          [
            ['accessTypeHistory', t('app.status.share.visibility.history')],
            ['accessTypeUserList', t('app.status.share.visibility.people')],
          ] as const
        ).map(([field, label]) => (
          <div class="field" key={field}>
            <label for={`share-${field}`}>{label}</label>
            <select
              id={`share-${field}`}
              value={shown[field]}
              disabled={busy}
              onChange={(event) =>
                patch({ [field]: event.currentTarget.value as Status[typeof field] })
              }
            >
              {(['public', 'private', 'owner'] as const).map((level) => (
                <option key={level} value={level}>
                  {levelText(level)}
                </option>
              ))}
            </select>
          </div>
        ))}
      </div>
      <FormError error={error} />
      <p class="sr-only" aria-live="polite">
        {busy
          ? t('app.status.share.visibility.saving')
          : status.accessType === 'public'
            ? t('app.status.share.visibility.isPublic')
            : t('app.status.share.visibility.isPrivate')}
      </p>
    </section>
  )
}

function ShareLinkSection(props: { status: Status }) {
  const { status } = props
  const url = `${location.origin}/s/${status.shareId}`
  return (
    <section aria-labelledby="share-link">
      <h2 id="share-link">{t('app.status.share.link.title')}</h2>
      {status.accessType === 'private' && (
        <p class="hint">{t('app.status.share.link.privateHint')}</p>
      )}
      <SharedLink
        label={t('app.status.share.link.title')}
        url={url}
        copyLabel={t('app.status.share.link.copy')}
        openLabel={t('app.status.share.link.open')}
      />
    </section>
  )
}

function Badge(props: { status: Status }) {
  const { status } = props
  const page = `${location.origin}/s/${status.shareId}`
  const badge = `${page}/badge.svg`
  const markdown = `[![${escapeMarkdown(status.name)}](${badge})](${page})`
  const html = `<a href="${page}"><img src="${badge}" alt="${escapeHtml(status.name)}"></a>`
  return (
    <section aria-labelledby="share-badge">
      <h2 id="share-badge">{t('app.status.share.badge.title')}</h2>
      <p class="hint">{t('app.status.share.badge.what')}</p>
      {status.accessType === 'public' ? (
        <p class="badge-preview">
          {/* The browser keeps an image of the same address for the whole page, so the
              preview's address names the status's version: given a new value, the preview
              is read again instead of staying as it was until a reload. The badge route
              ignores a parameter it does not know. */}
          <img
            src={`/s/${status.shareId}/badge.svg?preview=${encodeURIComponent(status.updatedAt)}`}
            alt={t('app.status.share.badge.preview', { name: status.name })}
          />
        </p>
      ) : (
        // a private status's badge answers 404 (a grey "not found" image), which a browser
        // logs as a failed request: say what others would see instead of asking for it
        <p class="badge-preview">{t('app.status.share.badge.noPreview')}</p>
      )}
      <CopyField
        label={t('app.status.share.badge.markdown')}
        text={markdown}
        buttonLabel={t('app.status.share.badge.copyMarkdown')}
      />
      <CopyField
        label={t('app.status.share.badge.html')}
        text={html}
        buttonLabel={t('app.status.share.badge.copyHtml')}
      />
    </section>
  )
}

/**
 * The embed snippet (docs/sharing.md#embeds): `/embed.js` and the element, for `share` (the
 * status's share id, public only) or `link` (a private link's token), on one line (a text
 * field holds no line breaks).
 */
const embedSnippet = (attribute: 'share' | 'link', id: string): string =>
  `<script type="module" src="${location.origin}/embed.js"></script> <statusd-status ${attribute}="${escapeHtml(id)}"></statusd-status>`

/** A private link's token: the last part of its URL (`…/l/<token>`). */
const linkToken = (url: string): string => url.slice(url.lastIndexOf('/') + 1)

function Embed(props: { status: Status }) {
  const { status } = props
  return (
    <section aria-labelledby="share-embed">
      <h2 id="share-embed">{t('app.status.share.embed.title')}</h2>
      <p class="hint">
        {t('app.status.share.embed.what')}
        {status.accessType === 'public' ? '' : ` ${t('app.status.share.embed.privateHint')}`}
      </p>
      <CopyField
        label={t('app.status.share.embed.code')}
        text={embedSnippet('share', status.shareId)}
        buttonLabel={t('app.status.share.embed.copy')}
      />
    </section>
  )
}

function PrivateLinks(props: { statusId: string }) {
  const { statusId } = props
  const [links, setLinks] = useState<ShareLink[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [made, setMade] = useState<NewShareLink | null>(null)
  const [busy, setBusy] = useState(false)
  const [duration, setDuration] = useState('')
  const [announce, setAnnounce] = useState('')
  const load = () =>
    api<ShareLink[]>('GET', apiPath`/v1/status/${statusId}/share-links`).then(setLinks, setError)
  useEffect(() => {
    load()
  }, [statusId])
  return (
    <section aria-labelledby="share-private">
      <h2 id="share-private">{t('app.status.share.private.title')}</h2>
      <p class="hint">{t('app.status.share.private.what')}</p>
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault()
          setBusy(true)
          setError(null)
          try {
            const body = duration
              ? { expiresAt: new Date(Date.now() + Number(duration)).toISOString() }
              : {}
            const link = await api<NewShareLink>(
              'POST',
              apiPath`/v1/status/${statusId}/share-links`,
              { body },
            )
            setMade(link)
            setAnnounce(t('app.status.share.private.made'))
            await load()
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <div class="field">
          <label for="share-duration">{t('app.status.share.private.lasts')}</label>
          <select
            id="share-duration"
            value={duration}
            onChange={(event) => setDuration(event.currentTarget.value)}
          >
            {linkDurations().map((d) => (
              <option key={d.value} value={d.value}>
                {d.label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.status.share.private.make')}
        </button>
      </form>
      <FormError error={error} />
      <p class="sr-only" aria-live="polite">
        {announce}
      </p>
      {made && (
        <div class="once">
          <p>
            <strong>{t('app.status.share.private.copyNow')}</strong>{' '}
            {t('app.status.share.private.worksUntil', { until: when(made.expiresAt) })}
          </p>
          <CopyField
            label={t('app.status.share.private.link')}
            text={made.url}
            buttonLabel={t('app.status.share.private.copyLink')}
          />
          <CopyField
            label={t('app.status.share.private.embedCode')}
            text={embedSnippet('link', linkToken(made.url))}
            buttonLabel={t('app.status.share.embed.copy')}
          />
          <button type="button" class="button quiet" onClick={() => setMade(null)}>
            {t('app.status.share.private.done')}
          </button>
        </div>
      )}
      {links && links.length === 0 && <p class="muted">{t('app.status.share.private.none')}</p>}
      {links && links.length > 0 && (
        <table class="links-table">
          <caption class="sr-only">{t('app.status.share.private.title')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('app.status.share.private.columns.made')}</th>
              <th scope="col">{t('app.status.share.private.columns.ends')}</th>
              <th scope="col">{t('app.status.share.private.columns.state')}</th>
              <th scope="col">
                <span class="sr-only">{t('app.status.share.private.columns.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.map((link) => (
              <tr key={link.id}>
                <td>{shortDateTime(link.createdAt)}</td>
                <td>{shortDateTime(link.revokedAt ?? link.expiresAt)}</td>
                <td>
                  {link.active
                    ? t('app.status.share.private.states.works')
                    : link.revokedAt
                      ? t('app.status.share.private.states.revoked')
                      : t('app.status.share.private.states.expired')}
                </td>
                <td>
                  {link.active && (
                    <ConfirmButton
                      label={t('app.status.share.private.revoke.label')}
                      ariaLabel={t('app.status.share.private.revoke.aria', {
                        made: when(link.createdAt),
                      })}
                      title={t('app.status.share.private.revoke.title')}
                      confirmLabel={t('app.status.share.private.revoke.confirm')}
                      onConfirm={async () => {
                        await api('DELETE', apiPath`/v1/status/${statusId}/share-links/${link.id}`)
                        setAnnounce(t('app.status.share.private.revoke.done'))
                        await load()
                      }}
                    >
                      <p>{t('app.status.share.private.revoke.what')}</p>
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/** Which of my walls show this status; a checkbox adds it to a wall or takes it off. */
function BoardMembership(props: { statusId: string }) {
  const { statusId } = props
  const [boards, setBoards] = useState<Board[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [announce, setAnnounce] = useState('')
  useEffect(() => {
    api<Board[]>('GET', '/v1/boards').then(setBoards, setError)
  }, [statusId])
  async function toggle(board: Board, on: boolean) {
    setError(null)
    try {
      const statusIds = on
        ? [...board.statusIds, statusId]
        : board.statusIds.filter((id) => id !== statusId)
      const changed = await api<Board>('PATCH', apiPath`/v1/boards/${board.id}`, {
        body: { statusIds },
      })
      setBoards((list) => list?.map((b) => (b.id === changed.id ? changed : b)) ?? null)
      setAnnounce(
        on
          ? t('app.status.share.walls.added', { name: board.name })
          : t('app.status.share.walls.removed', { name: board.name }),
      )
    } catch (e) {
      setError(e)
    }
  }
  return (
    <section aria-labelledby="share-boards">
      <h2 id="share-boards">{t('app.status.share.walls.title')}</h2>
      <FormError error={error} />
      <p class="sr-only" aria-live="polite">
        {announce}
      </p>
      {boards && boards.length === 0 && (
        <p class="muted">
          {t('app.status.share.walls.noneBefore')}{' '}
          <Link href="/walls">{t('app.status.share.walls.noneLink')}</Link>{' '}
          {t('app.status.share.walls.noneAfter')}
        </p>
      )}
      {boards && boards.length > 0 && (
        <fieldset class="choice">
          <legend>{t('app.status.share.walls.mine')}</legend>
          {boards.map((board) => (
            <label key={board.id}>
              <input
                type="checkbox"
                checked={board.statusIds.includes(statusId)}
                onChange={(event) => toggle(board, event.currentTarget.checked)}
              />{' '}
              <span class="user-text">{board.name}</span>
            </label>
          ))}
        </fieldset>
      )}
    </section>
  )
}
