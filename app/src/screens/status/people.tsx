import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../../api.ts'
import { ConfirmButton } from '../../components/confirm.tsx'
import { CopyField } from '../../components/copy.tsx'
import { Field, FormError, fieldError } from '../../components/form.tsx'
import type {
  CreatedInvitationLink,
  InvitationLink,
  RoleInvitation,
  StatusUser,
} from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// The people tab (docs/app.md#people-and-invitations): who has which role, inviting by
// e-mail or by link, the invitations still open, changing and removing roles. A role is never
// imposed: raising someone is an invitation they accept (docs/accounts.md#invitations).

type Role = 'updater' | 'subscriber'
const ROLE_TEXT = { owner: 'Owner', updater: 'Updater', subscriber: 'Subscriber' } as const
const ROLE_HINT = 'Updaters may set the value; subscribers see it and its updates.'

const when = (iso: string): string =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export default function PeopleTab(props: StatusTabProps) {
  const statusId = props.status.id
  const isOwner = props.role === 'owner'
  const [users, setUsers] = useState<StatusUser[] | null>(null)
  const [pending, setPending] = useState<RoleInvitation[]>([])
  const [links, setLinks] = useState<InvitationLink[]>([])
  const [error, setError] = useState<unknown>(null)
  const [announce, setAnnounce] = useState('')

  async function load() {
    try {
      const list = await api<StatusUser[]>('GET', apiPath`/v1/status/${statusId}/users`)
      setUsers(list)
      if (isOwner) {
        const [p, l] = await Promise.all([
          api<RoleInvitation[]>('GET', apiPath`/v1/status/${statusId}/invitations/pending`),
          api<InvitationLink[]>('GET', apiPath`/v1/status/${statusId}/invitations`),
        ])
        setPending(p)
        setLinks(l)
      }
    } catch (e) {
      setError(e)
    }
  }
  useEffect(() => {
    load()
  }, [statusId])

  if (error && !users) {
    if (error instanceof ApiError && error.status === 403)
      return <p>The owner keeps the list of people on this status to themselves.</p>
    return <FormError error={error} />
  }
  if (!users)
    return (
      <p class="loading" aria-live="polite">
        Loading…
      </p>
    )
  const done = async (message: string) => {
    setAnnounce(message)
    setError(null)
    await load()
  }
  return (
    <div class="people-tab">
      <p class="sr-only" aria-live="polite">
        {announce}
      </p>
      <FormError error={error} />
      <section aria-labelledby="people-roles">
        <h2 id="people-roles">People</h2>
        <ul class="people-list">
          {users.map((user) => (
            <li key={user.userId} class="person">
              <span class="person-name">{user.name}</span>
              {isOwner && user.role !== 'owner' ? (
                <span class="person-actions">
                  <label class="sr-only" for={`role-${user.userId}`}>
                    Role of {user.name}
                  </label>
                  <select
                    id={`role-${user.userId}`}
                    value={user.role}
                    onChange={async (event) => {
                      const role = event.currentTarget.value as Role
                      try {
                        const res = await fetchRole(statusId, user.userId, role)
                        await done(
                          res === 'invited'
                            ? `${user.name} is invited to be ${role === 'updater' ? 'an updater' : 'a subscriber'}; the role is theirs once they accept.`
                            : `${user.name} is now ${role === 'updater' ? 'an updater' : 'a subscriber'}.`,
                        )
                      } catch (e) {
                        setError(e)
                      }
                    }}
                  >
                    <option value="updater">Updater</option>
                    <option value="subscriber">Subscriber</option>
                  </select>
                  <ConfirmButton
                    label="Remove"
                    ariaLabel={`Remove ${user.name}`}
                    title={`Remove ${user.name}?`}
                    confirmLabel="Remove"
                    onConfirm={async () => {
                      await api('DELETE', apiPath`/v1/status/${statusId}/users/${user.userId}`)
                      await done(`${user.name} no longer has a role on this status.`)
                    }}
                  >
                    <p>
                      They lose their role at once; a private status is no longer theirs to see.
                    </p>
                  </ConfirmButton>
                  <ConfirmButton
                    label="Hand over"
                    ariaLabel={`Hand over to ${user.name}`}
                    title={`Offer ${user.name} this status?`}
                    confirmLabel="Offer it"
                    buttonClass="quiet"
                    onConfirm={async () => {
                      await api('POST', apiPath`/v1/status/${statusId}/transfer`, {
                        body: { userId: user.userId },
                      })
                      await done(
                        `${user.name} is offered this status; it is theirs once they accept.`,
                      )
                    }}
                  >
                    <p>
                      Once they accept, they own it and you become an updater: you may still set its
                      value, but no longer change its settings or who sees it.
                    </p>
                  </ConfirmButton>
                </span>
              ) : (
                <span class="role-chip">{ROLE_TEXT[user.role]}</span>
              )}
            </li>
          ))}
        </ul>
      </section>
      {isOwner && (
        <>
          <Invite statusId={statusId} onDone={done} />
          <Pending
            statusId={statusId}
            pending={pending}
            links={links}
            onDone={done}
            onError={setError}
          />
        </>
      )}
    </div>
  )
}

async function fetchRole(statusId: string, userId: string, role: Role): Promise<'invited' | 'set'> {
  const answer = await api<{ invitedBy?: unknown }>(
    'PUT',
    apiPath`/v1/status/${statusId}/users/${userId}`,
    { body: { role } },
  )
  // 202 answers an invitation (it has invitedBy), 200 the user-list entry
  return answer && 'invitedBy' in answer ? 'invited' : 'set'
}

function Invite(props: { statusId: string; onDone: (message: string) => Promise<void> }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [made, setMade] = useState<CreatedInvitationLink | null>(null)
  return (
    <section aria-labelledby="people-invite">
      <h2 id="people-invite">Invite</h2>
      <p class="hint">
        An invitation link offers a role to whoever opens it: they sign in or sign up, and accept.
        With an e-mail address, only that person may accept it, and it is mailed to them when this
        service sends mail.
      </p>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          const email = String(form.get('email') ?? '').trim()
          const maxUses = Number(form.get('maxUses'))
          const days = Number(form.get('days'))
          setBusy(true)
          setError(null)
          try {
            const link = await api<CreatedInvitationLink>(
              'POST',
              apiPath`/v1/status/${props.statusId}/invitations`,
              {
                body: {
                  role: form.get('role'),
                  ...(email && { email }),
                  ...(!email && { maxUses }),
                  expiresAt: new Date(Date.now() + days * 24 * 60 * 60_000).toISOString(),
                },
              },
            )
            setMade(link)
            ;(event.target as HTMLFormElement).reset()
            await props.onDone(
              link.mailed
                ? `Invitation mailed to ${link.email}. The link is also shown below, once.`
                : 'Invitation link made. Copy it now: it is shown only once.',
            )
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <div class="field">
          <label for="invite-role">Role</label>
          <p class="hint" id="invite-role-hint">
            {ROLE_HINT}
          </p>
          <select id="invite-role" name="role" aria-describedby="invite-role-hint">
            <option value="subscriber">Subscriber</option>
            <option value="updater">Updater</option>
          </select>
        </div>
        <Field
          label="E-mail (optional)"
          name="email"
          type="email"
          autocomplete="off"
          hint="Only this person may accept; they get the link by e-mail."
          error={fieldError(error, 'email')}
        />
        <div class="invite-numbers">
          <Field
            label="Uses"
            name="maxUses"
            type="number"
            min={1}
            max={100}
            value="1"
            required
            hint="How many people may accept (ignored with an e-mail address)."
            error={fieldError(error, 'maxUses')}
          />
          <Field
            label="Open for (days)"
            name="days"
            type="number"
            min={1}
            max={30}
            value="7"
            required
            error={fieldError(error, 'expiresAt')}
          />
        </div>
        <FormError error={error} />
        <button type="submit" class="button primary" disabled={busy}>
          Make invitation
        </button>
      </form>
      {made && (
        <div class="once">
          <p>
            {made.mailed ? (
              <>
                Mailed to <strong>{made.email}</strong>.{' '}
              </>
            ) : null}
            <strong>Copy this link now:</strong> it is shown only once.
          </p>
          <CopyField label="Invitation link" text={made.url} buttonLabel="Copy invitation link" />
          <button type="button" class="button quiet" onClick={() => setMade(null)}>
            Done
          </button>
        </div>
      )}
    </section>
  )
}

function Pending(props: {
  statusId: string
  pending: RoleInvitation[]
  links: InvitationLink[]
  onDone: (message: string) => Promise<void>
  onError: (error: unknown) => void
}) {
  const { statusId } = props
  const open = props.links.filter((l) => l.state === 'active')
  return (
    <section aria-labelledby="people-pending">
      <h2 id="people-pending">Open invitations</h2>
      {props.pending.length === 0 && open.length === 0 && (
        <p class="muted">No invitation is waiting.</p>
      )}
      <ul class="people-list">
        {props.pending.map((inv) => (
          <li key={inv.id} class="person">
            <span class="person-name">
              {inv.role === 'owner'
                ? `This status offered to a new owner since ${when(inv.createdAt)}`
                : `${ROLE_TEXT[inv.role]} role offered to a user since ${when(inv.createdAt)}`}
            </span>
            <ConfirmButton
              label="Withdraw"
              ariaLabel={`Withdraw the invitation of ${when(inv.createdAt)}`}
              title="Withdraw this invitation?"
              confirmLabel="Withdraw"
              onConfirm={async () => {
                // a transfer is withdrawn on its own: the user keeps the role they have
                await api(
                  'DELETE',
                  inv.role === 'owner'
                    ? apiPath`/v1/status/${statusId}/transfer`
                    : apiPath`/v1/status/${statusId}/users/${inv.userId}`,
                )
                await props.onDone('Invitation withdrawn.')
              }}
            />
          </li>
        ))}
        {open.map((link) => (
          <li key={link.id} class="person">
            <span class="person-name">
              {ROLE_TEXT[link.role]} link
              {link.email ? ` for ${link.email}` : ''}: {link.usesLeft} of {link.maxUses} uses left,
              open until {when(link.expiresAt)}
            </span>
            <ConfirmButton
              label="Revoke"
              ariaLabel={`Revoke the ${link.role} link${link.email ? ` for ${link.email}` : ''} made ${when(link.createdAt)}`}
              title="Revoke this invitation link?"
              confirmLabel="Revoke"
              onConfirm={async () => {
                await api('DELETE', apiPath`/v1/status/${statusId}/invitations/${link.id}`)
                await props.onDone('Invitation link revoked.')
              }}
            >
              <p>Nobody can accept it any more; roles given through it stay.</p>
            </ConfirmButton>
          </li>
        ))}
      </ul>
    </section>
  )
}
