import { useEffect, useState } from 'preact/hooks'
import { escapeHtml } from '../../../../src/lib/html.ts'
import { api, apiPath } from '../../api.ts'
import { ConfirmButton } from '../../components/confirm.tsx'
import { CopyField } from '../../components/copy.tsx'
import { FormError } from '../../components/form.tsx'
import { SharedLink } from '../../components/shared-link.tsx'
import { Link } from '../../router.tsx'
import type { Board, NewShareLink, ShareLink, Status } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// The share tab (docs/app.md#sharing-a-status): who may see the status, its link, QR code
// and badge, private links for people without an account, and the walls it is on.

const LEVEL_TEXT = {
  public: 'Anyone who can see the status',
  private: 'People with a role on it',
  owner: 'Only me',
} as const

/** How long a new private link lasts; '' is the plan's longest (the API's default). */
const LINK_DURATIONS = [
  { value: '', label: 'As long as my plan allows' },
  { value: String(60 * 60_000), label: '1 hour' },
  { value: String(24 * 60 * 60_000), label: '1 day' },
  { value: String(3 * 24 * 60 * 60_000), label: '3 days' },
] as const

const when = (iso: string): string =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })

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
      <h2 id="share-visibility">Who can see it</h2>
      <fieldset class="choice" disabled={busy}>
        <legend>Status page</legend>
        <label>
          <input
            type="radio"
            name="accessType"
            checked={shown.accessType === 'public'}
            onChange={() => patch({ accessType: 'public' })}
          />{' '}
          Public: anyone with the link sees it
        </label>
        <label>
          <input
            type="radio"
            name="accessType"
            checked={shown.accessType === 'private'}
            onChange={() => patch({ accessType: 'private' })}
          />{' '}
          Private: only people with a role, and private links
        </label>
      </fieldset>
      <div class="share-levels">
        {(
          [
            ['accessTypeHistory', 'Who sees its history'],
            ['accessTypeUserList', 'Who sees its people'],
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
                  {LEVEL_TEXT[level]}
                </option>
              ))}
            </select>
          </div>
        ))}
      </div>
      <FormError error={error} />
      <p class="sr-only" aria-live="polite">
        {busy ? 'Saving…' : `The status is ${status.accessType}.`}
      </p>
    </section>
  )
}

function ShareLinkSection(props: { status: Status }) {
  const { status } = props
  const url = `${location.origin}/s/${status.shareId}`
  return (
    <section aria-labelledby="share-link">
      <h2 id="share-link">Share link</h2>
      {status.accessType === 'private' && (
        <p class="hint">
          The status is private: this link shows “not available” until it is public again. Use a
          private link below to show it to someone without a role.
        </p>
      )}
      <SharedLink
        label="Share link"
        url={url}
        copyLabel="Copy link"
        openLabel="Open the share page"
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
      <h2 id="share-badge">Badge</h2>
      <p class="hint">An image of the current value for a README or a web page.</p>
      {status.accessType === 'public' ? (
        <p class="badge-preview">
          {/* The browser keeps an image of the same address for the whole page, so the
              preview's address names the status's version: given a new value, the preview
              is read again instead of staying as it was until a reload. The badge route
              ignores a parameter it does not know. */}
          <img
            src={`/s/${status.shareId}/badge.svg?preview=${encodeURIComponent(status.updatedAt)}`}
            alt={`Badge preview: ${status.name}`}
          />
        </p>
      ) : (
        // a private status's badge answers 404 (a grey "not found" image), which a browser
        // logs as a failed request: say what others would see instead of asking for it
        <p class="badge-preview">
          No preview while the status is private: others see a grey “not found” badge until it is
          public.
        </p>
      )}
      <CopyField label="Markdown" text={markdown} buttonLabel="Copy Markdown" />
      <CopyField label="HTML" text={html} buttonLabel="Copy HTML" />
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
      <h2 id="share-embed">Embed</h2>
      <p class="hint">
        The status on your own web page, live, in the page's light or dark colours. It asks nothing
        of anyone but this statusd.
        {status.accessType === 'public'
          ? ''
          : ' While the status is private it shows “not available”: embed a private link instead (below).'}
      </p>
      <CopyField
        label="Embed code"
        text={embedSnippet('share', status.shareId)}
        buttonLabel="Copy embed code"
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
      <h2 id="share-private">Private links</h2>
      <p class="hint">
        A private link shows this status read-only to whoever holds it, public or private, until it
        expires or you revoke it. No account needed.
      </p>
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
            setAnnounce('Private link made. Copy it now: it is shown only once.')
            await load()
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <div class="field">
          <label for="share-duration">Lasts</label>
          <select
            id="share-duration"
            value={duration}
            onChange={(event) => setDuration(event.currentTarget.value)}
          >
            {LINK_DURATIONS.map((d) => (
              <option key={d.value} value={d.value}>
                {d.label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="button primary" disabled={busy}>
          Make a private link
        </button>
      </form>
      <FormError error={error} />
      <p class="sr-only" aria-live="polite">
        {announce}
      </p>
      {made && (
        <div class="once">
          <p>
            <strong>Copy this link now:</strong> it is shown only once. It works until{' '}
            {when(made.expiresAt)}.
          </p>
          <CopyField label="Private link" text={made.url} buttonLabel="Copy private link" />
          <CopyField
            label="Embed code for this link"
            text={embedSnippet('link', linkToken(made.url))}
            buttonLabel="Copy embed code"
          />
          <button type="button" class="button quiet" onClick={() => setMade(null)}>
            Done
          </button>
        </div>
      )}
      {links && links.length === 0 && <p class="muted">No private links.</p>}
      {links && links.length > 0 && (
        <table class="links-table">
          <caption class="sr-only">Private links</caption>
          <thead>
            <tr>
              <th scope="col">Made</th>
              <th scope="col">Ends</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.map((link) => (
              <tr key={link.id}>
                <td>{when(link.createdAt)}</td>
                <td>{when(link.revokedAt ?? link.expiresAt)}</td>
                <td>{link.active ? 'Works' : link.revokedAt ? 'Revoked' : 'Expired'}</td>
                <td>
                  {link.active && (
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke the link made ${when(link.createdAt)}`}
                      title="Revoke this private link?"
                      confirmLabel="Revoke link"
                      onConfirm={async () => {
                        await api('DELETE', apiPath`/v1/status/${statusId}/share-links/${link.id}`)
                        setAnnounce('Link revoked. Pages open through it end now.')
                        await load()
                      }}
                    >
                      <p>Whoever holds it loses sight of the status at once, open pages too.</p>
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
      setAnnounce(on ? `Added to ${board.name}.` : `Taken off ${board.name}.`)
    } catch (e) {
      setError(e)
    }
  }
  return (
    <section aria-labelledby="share-boards">
      <h2 id="share-boards">Walls</h2>
      <FormError error={error} />
      <p class="sr-only" aria-live="polite">
        {announce}
      </p>
      {boards && boards.length === 0 && (
        <p class="muted">
          No walls yet: <Link href="/walls">make one</Link> to show statuses on a screen by the
          door.
        </p>
      )}
      {boards && boards.length > 0 && (
        <fieldset class="choice">
          <legend>On my walls</legend>
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
